package api

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/events"
	"github.com/flapjackgo/flapjack/schema"
)

func TestJSONMetrics(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "flapjack_test_events_total", Help: "test"})
	reg.MustRegister(c)
	c.Add(5)
	// The clock is injected: the freshness buckets are counted at 2026-01-05 09:00 UTC, years
	// away from the wall clock.
	now := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC).Unix()
	srv, db := apiServer(t, func(o *Options) { o.Gatherer = reg; o.Clock = clock.NewFake(time.Unix(now, 0)) })
	k := schema.NewKeys("")
	db.Do(t, "HSET", k.EventCounters(), "all", 10, "ok", 7, "failure", 3)
	db.Do(t, "LPUSH", k.Events(), "{}", "{}")
	db.Do(t, "ZADD", k.CurrentEntities(), now, "app-01", now, "db-01")
	db.Do(t, "ZADD", k.CurrentChecks("app-01"), now-10, "HTTP", now-100, "Ping")
	db.Do(t, "ZADD", k.CurrentChecks("db-01"), now-4000, "Disk")
	db.Do(t, "HSET", k.EntityIDsByName(), "app-01", "1", "db-01", "2", "old-01", "3")
	db.Do(t, "ZADD", k.FailedChecks(), now, "app-01:HTTP", now, "gone:X")
	// db-01:Disk's ttl ran out with nothing since; app-01:HTTP's has not; app-01:Ping got a
	// result without ttl since the one that set its ttl; gone:X is not current.
	db.Do(t, "HSET", k.StaleChecks(), "db-01:Disk", fmt.Sprintf(`{"ttl":300,"last":%d}`, now-4000),
		"app-01:HTTP", fmt.Sprintf(`{"ttl":300,"last":%d}`, now-10),
		"app-01:Ping", fmt.Sprintf(`{"ttl":60,"last":%d}`, now-200), "gone:X", `{"ttl":1,"last":1}`)
	keysNow := db.Do(t, "DBSIZE").(int64)

	// A Prometheus scraper, and a client that says nothing, get the exposition.
	for _, accept := range []string{"application/openmetrics-text;version=1.0.0;q=0.5,text/plain;version=0.0.4;q=0.4,*/*;q=0.1", "", "*/*"} {
		a := call(t, srv, "GET", "/metrics", "", "", "Accept", accept)
		if a.status != 200 || !strings.Contains(string(a.body), "flapjack_test_events_total 5") || strings.Contains(a.header.Get("Content-Type"), "json") {
			t.Fatalf("Accept %q: %d %s %s", accept, a.status, a.header.Get("Content-Type"), a.body)
		}
	}

	for _, accept := range []string{"application/json", vndJSON, "application/vnd.api+json, text/plain;q=0.5"} {
		a := expect(t, "JSON metrics with Accept "+accept, call(t, srv, "GET", "/metrics", "", "", "Accept", accept), 200)
		got := a.json(t).(map[string]any)
		host, _ := os.Hostname()
		want := map[string]any{
			"fqdn": host, "pid": float64(os.Getpid()), "total_keys": float64(keysNow),
			"processed_events_all_time": map[string]any{"all_time": map[string]any{"all": 10.0, "ok": 7.0, "failure": 3.0}},
			"event_queue_length":        2.0,
			"check_freshness":           map[string]any{"0": 1.0, "60": 1.0, "300": 0.0, "900": 0.0, "3600": 1.0},
			"entities":                  map[string]any{"all": 3.0, "enabled": 2.0, "failing": 1.0},
			"checks":                    map[string]any{"all": 3.0, "failing": 1.0, "stale": 1.0},
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Accept %q:\n got %v\nwant %v", accept, got, want)
		}
	}

	a := expect(t, "filter", call(t, srv, "GET", "/metrics?filter=entities,event_queue_length", "", "", "Accept", vndJSON), 200)
	if got := a.json(t); !reflect.DeepEqual(got, map[string]any{"event_queue_length": 2.0,
		"entities": map[string]any{"all": 3.0, "enabled": 2.0, "failing": 1.0}}) {
		t.Fatalf("filter: %v", got)
	}
	for path, want := range map[string]any{
		"/metrics/check_freshness": map[string]any{"check_freshness": map[string]any{"from_0_to_60": 1.0, "from_60_to_300": 1.0,
			"from_300_to_900": 0.0, "from_900_to_3600": 0.0, "from_3600_to_∞": 1.0}},
		"/metrics/entities": map[string]any{"entities": map[string]any{"all": 3.0, "enabled": 2.0, "failing": 1.0}},
		"/metrics/checks":   map[string]any{"checks": map[string]any{"all": 3.0, "failing": 1.0, "stale": 1.0}},
		"/metrics/events": map[string]any{"events": map[string]any{"processed": map[string]any{"all": 10.0, "ok": 7.0, "failure": 3.0},
			"queue": map[string]any{"length": 2.0}}},
	} {
		a := expect(t, path, call(t, srv, "GET", path, "", ""), 200)
		if got := a.json(t); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: %v", path, got)
		}
	}
}

func TestWantsJSON(t *testing.T) {
	for accept, want := range map[string]bool{
		"":                                   false,
		"*/*":                                false,
		"text/plain":                         false,
		"application/json":                   true,
		"application/vnd.api+json":           true,
		"text/plain, application/json;q=0.9": false,
		"application/json;q=0":               false,
		"application/json, */*":              true,
	} {
		if got := wantsJSON([]string{accept}); got != want {
			t.Errorf("wantsJSON(%q) = %v, want %v", accept, got, want)
		}
	}
}

// event_queue_length counts the list executive.queue names (the publisher's), not the default
// "events" list.
func TestJSONMetricsCountConfiguredEventsQueue(t *testing.T) {
	t.Parallel()
	var keys schema.Keys
	srv, db := apiServer(t, func(o *Options) { o.Events = events.NewPublisher(o.Pool, o.Keys, "custom_events"); keys = o.Keys })
	db.Do(t, "LPUSH", keys.Queue("custom_events"), "{}", "{}", "{}")
	db.Do(t, "LPUSH", keys.Events(), "{}")
	a := expect(t, "queue length", call(t, srv, "GET", "/metrics/events", "", ""), 200)
	want := map[string]any{"events": map[string]any{"processed": map[string]any{}, "queue": map[string]any{"length": 3.0}}}
	if got := a.json(t); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
