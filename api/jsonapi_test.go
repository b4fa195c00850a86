package api

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/schema"
)

const (
	vndJSON   = "application/vnd.api+json"
	patchJSON = "application/json-patch+json"
)

// apiServer serves the JSON API on a fresh Redis database; change adjusts the options.
func apiServer(t *testing.T, change func(*Options)) (*httptest.Server, *testredis.DB) {
	t.Helper()
	db := testredis.New(t)
	o := Options{MaxBody: 1 << 16, Pool: db.Pool, Keys: schema.NewKeys(""), JSONAPI: true,
		BaseURL: "http://flapjack.example:3081/"}
	if change != nil {
		change(&o)
	}
	srv := httptest.NewServer(Handler(o))
	t.Cleanup(srv.Close)
	return srv, db
}

type answer struct {
	status int
	header http.Header
	body   []byte
}

// json decodes the body.
func (a answer) json(t *testing.T) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(a.body, &v); err != nil {
		t.Fatalf("body %q is not JSON: %v", a.body, err)
	}
	return v
}

// errors are the messages of an {"errors":[...]} body.
func (a answer) errors(t *testing.T) []string {
	t.Helper()
	var e struct{ Errors []string }
	if err := json.Unmarshal(a.body, &e); err != nil || e.Errors == nil {
		t.Fatalf("body %q is not {\"errors\":[...]}", a.body)
	}
	return e.Errors
}

func call(t *testing.T, srv *httptest.Server, method, path, ctype, body string, header ...string) answer {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, srv.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, b}
}

func expect(t *testing.T, what string, a answer, status int) answer {
	t.Helper()
	if a.status != status {
		t.Fatalf("%s: status %d, want %d; body %s", what, a.status, status, a.body)
	}
	if len(a.body) > 0 && a.header.Get("Content-Type") != jsonAPIType {
		t.Fatalf("%s: content type %q", what, a.header.Get("Content-Type"))
	}
	if status == 204 && len(a.body) > 0 {
		t.Fatalf("%s: 204 with a body %q", what, a.body)
	}
	return a
}

func expectErrors(t *testing.T, what string, a answer, status int, want ...string) {
	t.Helper()
	expect(t, what, a, status)
	got := a.errors(t)
	for _, w := range want {
		found := false
		for _, g := range got {
			if strings.Contains(g, w) {
				found = true
			}
		}
		if !found {
			t.Fatalf("%s: errors %q do not mention %q", what, got, w)
		}
	}
}

const twoContacts = `{"contacts":[{"id":"abc","first_name":"Ada","last_name":"Lovelace","email":"ada@example.com","timezone":"Europe/London"},
	{"id":"872","first_name":"Bob","last_name":"Smith","email":"bob@example.com"}]}`

func TestContactsRoutes(t *testing.T) {
	t.Parallel()
	srv, db := apiServer(t, nil)

	a := expect(t, "GET on an empty store", call(t, srv, "GET", "/contacts", "", ""), 200)
	if string(a.body) != "{\"contacts\":[]}\n" {
		t.Fatalf("empty store: %s", a.body)
	}
	a = expect(t, "create", call(t, srv, "POST", "/contacts", vndJSON, twoContacts), 201)
	if !reflect.DeepEqual(a.json(t), []any{"abc", "872"}) || a.header.Get("Location") != "http://flapjack.example:3081/contacts/abc,872" {
		t.Fatalf("create: %s %v", a.body, a.header)
	}
	a = expect(t, "create without id, as application/json", call(t, srv, "POST", "/contacts", "application/json", `{"contacts":[{"first_name":"Cy"}]}`), 201)
	uuid := a.json(t).([]any)[0].(string)
	if len(uuid) != 36 {
		t.Fatalf("generated id %q", uuid)
	}

	var got struct{ Contacts []contactJSON }
	a = expect(t, "GET all", call(t, srv, "GET", "/contacts", "", ""), 200)
	json.Unmarshal(a.body, &got)
	byID := map[string]contactJSON{}
	for _, c := range got.Contacts {
		byID[c.ID] = c
	}
	if len(got.Contacts) != 3 || *byID["abc"].Timezone != "Europe/London" || byID["872"].Timezone != nil || byID[uuid].FirstName != "Cy" {
		t.Fatalf("all: %s", a.body)
	}
	a = expect(t, "GET several, one missing, one repeated", call(t, srv, "GET", "/contacts/872,nope,872", "", ""), 200)
	json.Unmarshal(a.body, &got)
	if len(got.Contacts) != 1 || got.Contacts[0].FirstName != "Bob" || got.Contacts[0].Links.Media == nil {
		t.Fatalf("several: %s", a.body)
	}
	expectErrors(t, "GET none found", call(t, srv, "GET", "/contacts/x,y", "", ""), 404, "could not find contacts 'x, y'")

	expectErrors(t, "create an existing id", call(t, srv, "POST", "/contacts", vndJSON, `{"contacts":[{"id":"new"},{"id":"abc"}]}`), 409,
		"Contacts already exist with the following IDs: abc")
	expect(t, "nothing of a refused create", call(t, srv, "GET", "/contacts/new", "", ""), 404)
	expectErrors(t, "no array", call(t, srv, "POST", "/contacts", vndJSON, `{"contact":{}}`), 422, `unknown member "contact"`)
	expectErrors(t, "empty array", call(t, srv, "POST", "/contacts", vndJSON, `{"contacts":[]}`), 422, "No valid contacts were submitted")
	expectErrors(t, "no body", call(t, srv, "POST", "/contacts", "", ""), 422, "No valid contacts were submitted")
	expectErrors(t, "not JSON", call(t, srv, "POST", "/contacts", vndJSON, `{"contacts":`), 400, "not a JSON object")
	expectErrors(t, "wrong content type", call(t, srv, "POST", "/contacts", "text/plain", twoContacts), 405, "Content-Type")
	expectErrors(t, "unknown field", call(t, srv, "POST", "/contacts", vndJSON, `{"contacts":[{"id":"z","first_nam":"Z"}]}`), 422, "contacts[0].first_nam: unknown field")
	expectErrors(t, "invalid timezone", call(t, srv, "POST", "/contacts", vndJSON, `{"contacts":[{"id":"z","timezone":"Mars/Olympus"}]}`), 422, "contacts[0].timezone")
	expectErrors(t, "wrong type", call(t, srv, "POST", "/contacts", vndJSON, `{"contacts":[{"id":"z","email":7}]}`), 422, "contacts[0].email: must be a string")

	patch := `[{"op":"replace","path":"/contacts/0/first_name","value":"Ada B."},{"op":"replace","path":"/contacts/0/timezone","value":"UTC"}]`
	expect(t, "PATCH two", call(t, srv, "PATCH", "/contacts/abc,872", patchJSON, patch), 204)
	a = expect(t, "after PATCH", call(t, srv, "GET", "/contacts/abc,872", "", ""), 200)
	json.Unmarshal(a.body, &got)
	for _, c := range got.Contacts {
		if c.FirstName != "Ada B." || *c.Timezone != "UTC" {
			t.Fatalf("patched: %s", a.body)
		}
	}
	expectErrors(t, "PATCH with one missing", call(t, srv, "PATCH", "/contacts/abc,ghost", patchJSON,
		`[{"op":"replace","path":"/contacts/0/last_name","value":"X"}]`), 404, "could not find contacts 'ghost'")
	if v := db.Do(t, "HGET", "contact:abc", "last_name"); string(v.([]byte)) != "Lovelace" {
		t.Fatalf("a refused PATCH wrote: %s", v)
	}
	expectErrors(t, "PATCH wrong content type", call(t, srv, "PATCH", "/contacts/abc", vndJSON, patch), 405, "json-patch")
	expectErrors(t, "PATCH not an array", call(t, srv, "PATCH", "/contacts/abc", patchJSON, `{"op":"replace"}`), 400, "Invalid JSON-Patch request")
	expectErrors(t, "PATCH move", call(t, srv, "PATCH", "/contacts/abc", patchJSON, `[{"op":"move","from":"/contacts/0/email","path":"/contacts/0/first_name"}]`), 422, `unsupported JSON-Patch operation "move"`)
	expectErrors(t, "PATCH unknown field", call(t, srv, "PATCH", "/contacts/abc", patchJSON, `[{"op":"replace","path":"/contacts/0/nick","value":"x"}]`), 422, "can replace only first_name")
	expectErrors(t, "PATCH bad value", call(t, srv, "PATCH", "/contacts/abc", patchJSON, `[{"op":"replace","path":"/contacts/0/timezone","value":"Nowhere"}]`), 422, "timezone")

	// entities links
	db.Do(t, "HSET", "all_entity_names_by_id", "e1", "web-01")
	expect(t, "link an entity", call(t, srv, "PATCH", "/contacts/abc", patchJSON, `[{"op":"add","path":"/contacts/0/links/entities","value":"e1"}]`), 204)
	a = expect(t, "linked", call(t, srv, "GET", "/contacts/abc", "", ""), 200)
	json.Unmarshal(a.body, &got)
	if !reflect.DeepEqual(got.Contacts[0].Links.Entities, []string{"e1"}) {
		t.Fatalf("links: %s", a.body)
	}
	expectErrors(t, "link an unknown entity", call(t, srv, "PATCH", "/contacts/abc", patchJSON, `[{"op":"add","path":"/contacts/0/links/entities","value":"e9"}]`), 404, "could not find entities 'e9'")
	expect(t, "unlink", call(t, srv, "PATCH", "/contacts/abc", patchJSON, `[{"op":"remove","path":"/contacts/0/links/entities/e1"}]`), 204)
	if n := db.Do(t, "SCARD", "contacts_for:e1"); n.(int64) != 0 {
		t.Fatalf("still linked")
	}

	expectErrors(t, "DELETE with one missing", call(t, srv, "DELETE", "/contacts/abc,ghost", "", ""), 404, "ghost")
	expect(t, "nothing deleted", call(t, srv, "GET", "/contacts/abc", "", ""), 200)
	expect(t, "DELETE two", call(t, srv, "DELETE", "/contacts/abc,872", "", ""), 204)
	expect(t, "deleted", call(t, srv, "GET", "/contacts/abc,872", "", ""), 404)
}

func TestConcurrentPatchesOfOneContactEndConsistent(t *testing.T) {
	t.Parallel()
	srv, db := apiServer(t, nil)
	expect(t, "create", call(t, srv, "POST", "/contacts", vndJSON, twoContacts), 201)
	patch := func(first, last string) string {
		return `[{"op":"replace","path":"/contacts/0/first_name","value":"` + first + `"},{"op":"replace","path":"/contacts/0/last_name","value":"` + last + `"}]`
	}
	var wg sync.WaitGroup
	for _, p := range [][2]string{{"Ada", "Lovelace"}, {"Grace", "Hopper"}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 25 {
				a := call(t, srv, "PATCH", "/contacts/abc", patchJSON, patch(p[0], p[1]))
				if a.status != 204 && a.status != 423 {
					t.Errorf("PATCH: %d %s", a.status, a.body)
				}
			}
		}()
	}
	wg.Wait()
	first, _ := db.Do(t, "HGET", "contact:abc", "first_name").([]byte)
	last, _ := db.Do(t, "HGET", "contact:abc", "last_name").([]byte)
	if got := string(first) + " " + string(last); got != "Ada Lovelace" && got != "Grace Hopper" {
		t.Fatalf("mixed writes: %q", got)
	}
}

func TestUnknownPathsCORSAndOptions(t *testing.T) {
	t.Parallel()
	srv, _ := apiServer(t, nil)
	expectErrors(t, "unknown path", call(t, srv, "GET", "/nothing/here", "", ""), 404, "not routable")
	a := call(t, srv, "OPTIONS", "/contacts", "", "", "Origin", "https://ui.example")
	if a.status != 204 || a.header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("no CORS configured: %d %v", a.status, a.header)
	}

	srv, _ = apiServer(t, func(o *Options) { o.CORSOrigins = []string{"https://ui.example"} })
	a = call(t, srv, "GET", "/contacts", "", "", "Origin", "https://ui.example")
	if a.header.Get("Access-Control-Allow-Origin") != "https://ui.example" || a.header.Get("Access-Control-Max-Age") != "1728000" ||
		!strings.Contains(a.header.Get("Access-Control-Allow-Methods"), "PATCH") {
		t.Fatalf("CORS: %v", a.header)
	}
	if a = call(t, srv, "GET", "/contacts", "", "", "Origin", "https://evil.example"); a.header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("other origin allowed: %v", a.header)
	}
	srv, _ = apiServer(t, func(o *Options) { o.CORSOrigins = []string{"*"} })
	if a = call(t, srv, "OPTIONS", "/anything", "", ""); a.status != 204 || a.header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("CORS *: %d %v", a.status, a.header)
	}
}

func TestTokensGuardReadsAndWritesAndStayOutOfLogs(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zap.DebugLevel)
	srv, _ := apiServer(t, func(o *Options) { o.Token, o.ReadToken, o.Log = "write-secret", "read-secret", zap.New(core) })
	expectErrors(t, "read without token", call(t, srv, "GET", "/contacts", "", ""), 401, "bearer token")
	expect(t, "read with read token", call(t, srv, "GET", "/contacts", "", "", "Authorization", "Bearer read-secret"), 200)
	expect(t, "read with write token", call(t, srv, "GET", "/contacts", "", "", "Authorization", "Bearer write-secret"), 200)
	expectErrors(t, "write with read token", call(t, srv, "POST", "/contacts", vndJSON, twoContacts, "Authorization", "Bearer read-secret"), 401, "bearer token")
	expect(t, "write with write token", call(t, srv, "POST", "/contacts", vndJSON, twoContacts, "Authorization", "Bearer write-secret"), 201)
	for _, e := range logs.All() {
		if text := e.Message + " " + fmtFields(e.ContextMap()); strings.Contains(text, "secret") {
			t.Fatalf("a token was logged: %s", text)
		}
	}
	if err := (Options{Addr: "0.0.0.0:3081", JSONAPI: true}).Validate(); err == nil {
		t.Fatal("the JSON API off loopback without http.token was accepted")
	}
}

func fmtFields(m map[string]any) string {
	b, _ := json.Marshal(m)
	return string(b)
}
