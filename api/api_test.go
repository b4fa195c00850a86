package api

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/flapjackgo/flapjack/events"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/schema"
)

func server(t *testing.T, token string, ready func() error) (*httptest.Server, *testredis.DB) {
	t.Helper()
	db := testredis.New(t)
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: "flapjack_test_total", Help: "test"}))
	h := Handler(Options{Token: token, MaxBody: 4096, Pool: db.Pool, Keys: schema.NewKeys(""),
		Events: events.NewPublisher(db.Pool, schema.NewKeys(""), ""), Gatherer: reg, Ready: ready, EventsEnabled: true})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, db
}

func post(t *testing.T, url, token, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("POST", url+"/events", strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

const good = `{"entity":"Web-01","check":"HTTP","type":"service","state":"critical"}`

func TestPostEvents(t *testing.T) {
	t.Parallel()
	srv, db := server(t, "", nil)
	code, body := post(t, srv.URL, "", good)
	if code != 202 || body["queued"] != 1.0 {
		t.Fatalf("%d %v", code, body)
	}
	code, _ = post(t, srv.URL, "", "["+good+`,{"entity":"b","check":"c","type":"service","state":"ok"}]`)
	if code != 202 {
		t.Fatalf("array: %d", code)
	}
	items, _ := redis.Strings(db.Do(t, "LRANGE", "events", 0, -1), nil)
	if len(items) != 3 {
		t.Fatalf("%d queued", len(items))
	}
	// consumers take from the right: the first event of the array comes out first
	var first map[string]any
	json.Unmarshal([]byte(items[1]), &first)
	if first["entity"] != "web-01" {
		t.Fatalf("order or normalisation: %v", items)
	}
}

func TestPostEventsRejectsTheWholeRequestListingEveryError(t *testing.T) {
	t.Parallel()
	srv, db := server(t, "", nil)
	code, body := post(t, srv.URL, "", "["+good+`,{"entity":"a"},42]`)
	if code != 400 {
		t.Fatalf("code %d", code)
	}
	errs, _ := body["errors"].([]any)
	if len(errs) != 2 {
		t.Fatalf("errors %v", body)
	}
	second := errs[0].(map[string]any)
	if second["index"] != 1.0 || !strings.Contains(strings.Join(toStrings(second["reasons"]), " "), "check is required") {
		t.Fatalf("first error %v", second)
	}
	if n, _ := redis.Int(db.Do(t, "LLEN", "events"), nil); n != 0 {
		t.Fatalf("%d events queued from an invalid request", n)
	}
	for _, bad := range []string{"not json", "", `"x"`} {
		if code, _ := post(t, srv.URL, "", bad); code != 400 {
			t.Errorf("%q: %d", bad, code)
		}
	}
	if code, _ := post(t, srv.URL, "", "["+strings.Repeat(good+",", 60)+good+"]"); code != 413 {
		t.Errorf("oversized body: %d", code)
	}
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

func TestTokenProtectsWrites(t *testing.T) {
	t.Parallel()
	srv, _ := server(t, "s3cret", nil)
	if code, _ := post(t, srv.URL, "", good); code != 401 {
		t.Fatalf("no token: %d", code)
	}
	if code, _ := post(t, srv.URL, "wrong", good); code != 401 {
		t.Fatalf("wrong token: %d", code)
	}
	if code, _ := post(t, srv.URL, "s3cret", good); code != 202 {
		t.Fatalf("right token: %d", code)
	}
	resp, err := http.Get(srv.URL + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("reads need no token: %v %v", resp, err)
	}
}

func TestReadinessAndMetrics(t *testing.T) {
	t.Parallel()
	var notReady error
	srv, _ := server(t, "", func() error { return notReady })
	get := func(path string) (int, string) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get("/readyz"); code != 200 {
		t.Fatalf("readyz %d", code)
	}
	notReady = errors.New("stages stopped: notifier")
	if code, body := get("/readyz"); code != 503 || !strings.Contains(body, "notifier") {
		t.Fatalf("readyz %d %s", code, body)
	}
	if code, body := get("/metrics"); code != 200 || !strings.Contains(body, "flapjack_test_total") {
		t.Fatalf("metrics %d", code)
	}
}

func TestNonLoopbackNeedsAToken(t *testing.T) {
	t.Parallel()
	cases := []struct {
		addr, token string
		ok          bool
	}{
		{"127.0.0.1:3081", "", true},
		{"[::1]:3081", "", true},
		{"localhost:3081", "", true},
		{"0.0.0.0:3081", "", false},
		{"0.0.0.0:3081", "t", true},
		{"nonsense", "", false},
	}
	for _, c := range cases {
		err := Options{Addr: c.addr, Token: c.token, EventsEnabled: true}.Validate()
		if (err == nil) != c.ok {
			t.Errorf("%s token=%q: %v", c.addr, c.token, err)
		}
	}
}
