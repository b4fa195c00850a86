package api

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/model/views"
	"github.com/flapjackgo/flapjack/schema"
)

func TestEntityRoutes(t *testing.T) {
	t.Parallel()
	srv, db := apiServer(t, nil)
	expect(t, "contacts", call(t, srv, "POST", "/contacts", vndJSON, twoContacts), 201)
	expect(t, "empty", call(t, srv, "GET", "/entities", "", ""), 200)
	a := expect(t, "create", call(t, srv, "POST", "/entities", vndJSON, `{"entities":[{"id":"e1","name":"Web-01"},{"id":"e2","name":"db-01"}]}`), 201)
	if !reflect.DeepEqual(a.json(t), []any{"e1", "e2"}) || a.header.Get("Location") != "http://flapjack.example:3081/entities/e1,e2" {
		t.Fatalf("create: %s %v", a.body, a.header)
	}
	for key, want := range map[string]string{"entity_id:web-01": "e1"} {
		if v, _ := db.Do(t, "GET", key).([]byte); string(v) != want {
			t.Fatalf("%s = %q", key, v)
		}
	}
	if v, _ := db.Do(t, "HGET", "all_entity_ids_by_name", "db-01").([]byte); string(v) != "e2" {
		t.Fatalf("all_entity_ids_by_name: %q", v)
	}
	expectErrors(t, "nil id", call(t, srv, "POST", "/entities", vndJSON, `{"entities":[{"name":"x"}]}`), 403, "Entity with a nil id detected")
	expectErrors(t, "no array", call(t, srv, "POST", "/entities", vndJSON, `{}`), 403, "No 'entities' object received")
	expectErrors(t, "no name", call(t, srv, "POST", "/entities", vndJSON, `{"entities":[{"id":"e3"}]}`), 422, "entities[0].name")
	expectErrors(t, "bad JSON", call(t, srv, "POST", "/entities", vndJSON, `{"entities":`), 400, "not a JSON object")
	expectErrors(t, "wrong content type", call(t, srv, "POST", "/entities", "text/plain", `x`), 405, "Content-Type")
	expectErrors(t, "name of another", call(t, srv, "POST", "/entities", vndJSON, `{"entities":[{"id":"e3","name":"db-01"}]}`), 409, "db-01")
	expect(t, "rename by POST", call(t, srv, "POST", "/entities", vndJSON, `{"entities":[{"id":"e2","name":"db-02"}]}`), 201)
	if n := db.Do(t, "EXISTS", "entity_id:db-01").(int64); n != 0 {
		t.Fatal("old name left")
	}

	expect(t, "PATCH links", call(t, srv, "PATCH", "/entities/e1,e2", patchJSON,
		`[{"op":"add","path":"/entities/0/links/contacts","value":"abc"},{"op":"add","path":"/entities/0/links/tags","value":"web"}]`), 204)
	if ok := db.Do(t, "SISMEMBER", "entity_tag:web", "e2").(int64); ok != 1 {
		t.Fatal("tag not linked")
	}
	var got struct{ Entities []entityJSON }
	a = expect(t, "GET several", call(t, srv, "GET", "/entities/e1,nope,e2", "", ""), 200)
	json.Unmarshal(a.body, &got)
	if len(got.Entities) != 2 || got.Entities[0].Name != "web-01" || got.Entities[1].Name != "db-02" ||
		!reflect.DeepEqual(got.Entities[0].Links.Contacts, []string{"abc"}) || got.Entities[0].Links.Checks == nil {
		t.Fatalf("several: %s", a.body)
	}
	a = expect(t, "contact links back", call(t, srv, "GET", "/contacts/abc", "", ""), 200)
	if !json.Valid(a.body) || !reflect.DeepEqual(a.json(t).(map[string]any)["contacts"].([]any)[0].(map[string]any)["links"].(map[string]any)["entities"], []any{"e1", "e2"}) {
		t.Fatalf("contact: %s", a.body)
	}
	expect(t, "PATCH unlink", call(t, srv, "PATCH", "/entities/e2", patchJSON, `[{"op":"remove","path":"/entities/0/links/contacts/abc"}]`), 204)
	expectErrors(t, "GET none", call(t, srv, "GET", "/entities/1234", "", ""), 404, "could not find entities: '1234'")
	expectErrors(t, "PATCH missing", call(t, srv, "PATCH", "/entities/e1,1234", patchJSON, `[{"op":"add","path":"/entities/0/links/tags","value":"x"}]`), 404, "could not find entity '1234'")
	expectErrors(t, "PATCH unknown contact", call(t, srv, "PATCH", "/entities/e1", patchJSON, `[{"op":"add","path":"/entities/0/links/contacts","value":"ghost"}]`), 404, "ghost")
	expectErrors(t, "PATCH not an array", call(t, srv, "PATCH", "/entities/e1", patchJSON, `{}`), 400, "Invalid JSON-Patch request")
	expectErrors(t, "PATCH content type", call(t, srv, "PATCH", "/entities/e1", "application/json", `[]`), 405, "json-patch")

	// A check makes the entity enabled; renaming it then moves the check, and a rename to a
	// taken name merges the two entities.
	a = expect(t, "create check", call(t, srv, "POST", "/checks", vndJSON, `{"checks":[{"entity_id":"e1","name":"HTTP","tags":["web"]}]}`), 201)
	if !reflect.DeepEqual(a.json(t), []any{"web-01:HTTP"}) {
		t.Fatalf("check ids: %s", a.body)
	}
	a = expect(t, "enabled", call(t, srv, "GET", "/entities?enabled=true", "", ""), 200)
	json.Unmarshal(a.body, &got)
	if len(got.Entities) != 1 || got.Entities[0].ID != "e1" || !reflect.DeepEqual(got.Entities[0].Links.Checks, []string{"web-01:HTTP"}) {
		t.Fatalf("enabled: %s", a.body)
	}
	a = expect(t, "disabled", call(t, srv, "GET", "/entities?enabled=no", "", ""), 200)
	json.Unmarshal(a.body, &got)
	if len(got.Entities) != 1 || got.Entities[0].ID != "e2" {
		t.Fatalf("disabled: %s", a.body)
	}
	expect(t, "rename with checks", call(t, srv, "PATCH", "/entities/e1", patchJSON, `[{"op":"replace","path":"/entities/0/name","value":"web-99"}]`), 204)
	expect(t, "rename without checks", call(t, srv, "PATCH", "/entities/e2", patchJSON, `[{"op":"replace","path":"/entities/0/name","value":"db-03"}]`), 204)
	expect(t, "merge", call(t, srv, "PATCH", "/entities/e2", patchJSON, `[{"op":"replace","path":"/entities/0/name","value":"web-99"}]`), 204)
	a = expect(t, "merged", call(t, srv, "GET", "/entities/e2", "", ""), 200)
	json.Unmarshal(a.body, &got)
	if len(got.Entities) != 1 || got.Entities[0].Name != "web-99" || !reflect.DeepEqual(got.Entities[0].Links.Checks, []string{"web-99:HTTP"}) {
		t.Fatalf("merged: %s", a.body)
	}
	expectErrors(t, "merged away", call(t, srv, "GET", "/entities/e1", "", ""), 404, "could not find entities: 'e1'")
	if ok := db.Do(t, "SISMEMBER", "check_tag:web", "web-99:HTTP").(int64); ok != 1 {
		t.Fatal("check tag not moved")
	}
}

func TestCheckRoutes(t *testing.T) {
	t.Parallel()
	srv, db := apiServer(t, nil)
	expect(t, "entities", call(t, srv, "POST", "/entities", vndJSON, `{"entities":[{"id":"e1","name":"www.example.com"}]}`), 201)
	a := expect(t, "create", call(t, srv, "POST", "/checks", vndJSON, `{"checks":[{"entity_id":"e1","name":"SSH"},{"entity_id":"e1","name":"HTTP: /a b","tags":["web","prod"]}]}`), 201)
	if !reflect.DeepEqual(a.json(t), []any{"www.example.com:SSH", "www.example.com:HTTP: /a b"}) ||
		a.header.Get("Location") != "http://flapjack.example:3081/checks/www.example.com:SSH,www.example.com:HTTP:%20%2Fa%20b" {
		t.Fatalf("create: %s %v", a.body, a.header)
	}
	if s := db.Do(t, "ZSCORE", "current_checks:www.example.com", "SSH"); s == nil {
		t.Fatal("not current")
	}
	expectErrors(t, "unknown entity", call(t, srv, "POST", "/checks", vndJSON, `{"checks":[{"entity_id":"nope","name":"SSH"}]}`), 404, "could not find entity 'nope'")
	expectErrors(t, "no array", call(t, srv, "POST", "/checks", vndJSON, `{"checks":{}}`), 422, "No valid checks were submitted")
	expectErrors(t, "wrong content type", call(t, srv, "POST", "/checks", "text/xml", `<x/>`), 405, "Content-Type")

	var got struct{ Checks []checkJSON }
	a = expect(t, "GET all", call(t, srv, "GET", "/checks", "", ""), 200)
	json.Unmarshal(a.body, &got)
	if len(got.Checks) != 2 || got.Checks[0].ID != "www.example.com:HTTP: /a b" || !reflect.DeepEqual(got.Checks[0].Tags, []string{"prod", "web"}) ||
		!got.Checks[1].Enabled || got.Checks[1].EntityName != "www.example.com" || got.Checks[1].Links.Entities[0] != "e1" {
		t.Fatalf("all: %s", a.body)
	}
	a = expect(t, "GET several", call(t, srv, "GET", "/checks/www.example.com:SSH,www2.example.com:PING", "", ""), 200)
	json.Unmarshal(a.body, &got)
	if len(got.Checks) != 1 || got.Checks[0].Name != "SSH" {
		t.Fatalf("several: %s", a.body)
	}
	expectErrors(t, "GET none", call(t, srv, "GET", "/checks/www.example.com:PING", "", ""), 404, "could not find entity checks: 'www.example.com:PING'")

	expect(t, "disable", call(t, srv, "PATCH", "/checks/www.example.com:SSH,www.example.com:HTTP%3A%20%2Fa%20b", patchJSON,
		`[{"op":"replace","path":"/checks/0/enabled","value":false},{"op":"remove","path":"/checks/0/links/tags/web"}]`), 204)
	a = expect(t, "after", call(t, srv, "GET", "/checks", "", ""), 200)
	json.Unmarshal(a.body, &got)
	if len(got.Checks) != 2 || got.Checks[0].Enabled || got.Checks[1].Enabled || !reflect.DeepEqual(got.Checks[0].Tags, []string{"prod"}) {
		t.Fatalf("disabled: %s", a.body)
	}
	expect(t, "enable", call(t, srv, "PATCH", "/checks/www.example.com:SSH", patchJSON, `[{"op":"replace","path":"/checks/0/enabled","value":true}]`), 204)
	if s := db.Do(t, "ZSCORE", "current_checks:www.example.com", "SSH"); s == nil {
		t.Fatal("not enabled again")
	}
	expectErrors(t, "PATCH unknown entity", call(t, srv, "PATCH", "/checks/x.example.com:SSH", patchJSON, `[{"op":"replace","path":"/checks/0/enabled","value":true}]`), 404, "could not find entity 'x.example.com'")
	expectErrors(t, "PATCH unknown check", call(t, srv, "PATCH", "/checks/www.example.com:SSH,www.example.com:PING", patchJSON, `[{"op":"replace","path":"/checks/0/enabled","value":true}]`), 404, "could not find entity check 'PING'")
	expectErrors(t, "PATCH not a boolean", call(t, srv, "PATCH", "/checks/www.example.com:SSH", patchJSON, `[{"op":"replace","path":"/checks/0/enabled","value":"yes"}]`), 422, "enabled")
}

// TestRenameThroughExecutive renames, as flapjack-diner sends it, an entity the executive
// created, then renames it back by POST and merges another entity into it.
func TestRenameThroughExecutive(t *testing.T) {
	t.Parallel()
	db, do, run := maintenanceServer(t)
	id := schema.NewEntityID("web-01")
	before := []views.CheckStatus{status(t, db, "web-01", "HTTP", time.Now()), status(t, db, "web-01", "PING", time.Now())}
	expect(t, "rename", do("PATCH", "/entities/"+id, patchJSON, `[{"op":"replace","path":"/entities/0/name","value":"NEW"}]`), 204)
	var got struct{ Entities []entityJSON }
	a := expect(t, "renamed", do("GET", "/entities/"+id, "", ""), 200)
	json.Unmarshal(a.body, &got)
	if len(got.Entities) != 1 || got.Entities[0].Name != "new" || !reflect.DeepEqual(got.Entities[0].Links.Checks, []string{"new:HTTP", "new:PING"}) {
		t.Fatalf("renamed: %s", a.body)
	}
	for i, c := range []string{"HTTP", "PING"} {
		s := status(t, db, "new", c, time.Now())
		s.Entity = "web-01"
		if s != before[i] {
			t.Errorf("%s after rename: %+v, want %+v", c, s, before[i])
		}
	}
	if n := len(db.Do(t, "KEYS", "*web-01*").([]any)); n != 0 {
		t.Errorf("%d keys left under the old name", n)
	}
	a = expect(t, "check", do("GET", "/checks/new:HTTP", "", ""), 200)
	if !strings.Contains(string(a.body), `"new:HTTP"`) {
		t.Errorf("check: %s", a.body)
	}

	// POST with the id under another name renames too; then web-02's checks merge into it.
	expect(t, "rename by POST", do("POST", "/entities", vndJSON, `{"entities":[{"id":"`+id+`","name":"web-03"}]}`), 201)
	db.Do(t, "LPUSH", "events", `{"entity":"web-02","check":"DISK","type":"service","state":"ok"}`)
	run()
	expect(t, "merge", do("PATCH", "/entities/"+schema.NewEntityID("web-02"), patchJSON, `[{"op":"replace","path":"/entities/0/name","value":"web-03"}]`), 204)
	a = expect(t, "merged", do("GET", "/entities/"+schema.NewEntityID("web-02"), "", ""), 200)
	json.Unmarshal(a.body, &got)
	if len(got.Entities) != 1 || got.Entities[0].Name != "web-03" || !reflect.DeepEqual(got.Entities[0].Links.Checks, []string{"web-03:DISK", "web-03:HTTP", "web-03:PING"}) {
		t.Fatalf("merged: %s", a.body)
	}
	if s := status(t, db, "web-03", "HTTP", time.Now()); s.State != "critical" || s.Summary != "down" {
		t.Errorf("HTTP after merge: %+v", s)
	}
}
