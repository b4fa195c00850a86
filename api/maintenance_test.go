package api

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/events"
	"github.com/flapjackgo/flapjack/executive"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/model/views"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/schema"
)

// maintenanceServer is an API with an events publisher and a real executive on the same Redis,
// holding the failing check web-01:HTTP and the ok check web-01:PING.
func maintenanceServer(t *testing.T) (*testredis.DB, func(string, string, string, string) answer, func()) {
	t.Helper()
	srv, db := apiServer(t, func(o *Options) { o.Events = events.NewPublisher(o.Pool, o.Keys, "events") })
	keys := schema.NewKeys("")
	x := executive.New(executive.Options{Pool: db.Pool, Keys: keys, Config: executive.DefaultConfig(), Clock: clock.Real{},
		Identity: queue.Identity{Host: "exec", PID: 1}, Version: "test"})
	if _, err := x.Loop(false).Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	run := func() {
		t.Helper()
		for {
			n, err := x.ProcessNext(context.Background(), 0)
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				return
			}
		}
	}
	db.Do(t, "LPUSH", "events", `{"entity":"web-01","check":"HTTP","type":"service","state":"critical","summary":"down"}`)
	db.Do(t, "LPUSH", "events", `{"entity":"web-01","check":"PING","type":"service","state":"ok"}`)
	run()
	do := func(method, path, ctype, body string) answer { return call(t, srv, method, path, ctype, body) }
	return db, do, run
}

func status(t *testing.T, db *testredis.DB, entity, check string, at time.Time) views.CheckStatus {
	t.Helper()
	c := db.Pool.Get()
	defer c.Close()
	s, err := views.CheckStatusAt(c, schema.NewKeys(""), entity, check, at)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestAcknowledgeThroughExecutive(t *testing.T) {
	t.Parallel()
	db, do, run := maintenanceServer(t)
	if status(t, db, "web-01", "HTTP", time.Now()).InUnscheduledMaintenance() {
		t.Fatal("acknowledged before")
	}
	expect(t, "ack", do("POST", "/unscheduled_maintenances/checks/web-01:HTTP", vndJSON, `{"unscheduled_maintenances":[{"duration":3600,"summary":"on it"}]}`), 204)
	raw, _ := db.Do(t, "LINDEX", "events", 0).([]byte)
	var ev map[string]any
	if json.Unmarshal(raw, &ev) != nil || ev["type"] != "action" || ev["state"] != "acknowledgement" || ev["entity"] != "web-01" || ev["duration"] != float64(3600) {
		t.Fatalf("queued %s", raw)
	}
	run()
	s := status(t, db, "web-01", "HTTP", time.Now())
	if !s.InUnscheduledMaintenance() || s.UnscheduledSummary != "on it" || s.Unscheduled.End-s.Unscheduled.Start != 3600 {
		t.Fatalf("after ack: %+v", s)
	}
	// End it through the API (checkstate.EndUnscheduledMaintenance).
	expect(t, "end", do("PATCH", "/unscheduled_maintenances/checks/web-01:HTTP", patchJSON,
		`[{"op":"replace","path":"/unscheduled_maintenances/0/end_time","value":"`+time.Now().Add(time.Second).Format(time.RFC3339)+`"}]`), 204)
	if s := status(t, db, "web-01", "HTTP", time.Now().Add(2*time.Second)); s.InUnscheduledMaintenance() {
		t.Fatalf("still acknowledged: %+v", s)
	}
	expectErrors(t, "unknown check", do("POST", "/unscheduled_maintenances/checks/web-01:SSH", vndJSON, ``), 404, "could not find entity check 'SSH'")
	expectErrors(t, "unknown entity", do("POST", "/unscheduled_maintenances/entities/nope", vndJSON, ``), 404, "could not find entity 'nope'")
	expectErrors(t, "wrong content type", do("POST", "/unscheduled_maintenances/checks/web-01:HTTP", "text/plain", `x`), 405, "Content-Type")
	expectErrors(t, "bad body", do("POST", "/unscheduled_maintenances/checks/web-01:HTTP", vndJSON, `[`), 400, "not a JSON object")
	expectErrors(t, "PATCH bad time", do("PATCH", "/unscheduled_maintenances/checks/web-01:HTTP", patchJSON,
		`[{"op":"replace","path":"/unscheduled_maintenances/0/end_time","value":"soon"}]`), 422, "end_time")

	// On an entity, with no body: every check of it, the executive's default duration.
	expect(t, "ack entity", do("POST", "/unscheduled_maintenances/entities/"+schema.NewEntityID("web-01"), "", ""), 204)
	if n := db.Do(t, "LLEN", "events").(int64); n != 2 {
		t.Fatalf("%d events queued, want one per check", n)
	}
	run()
	if s := status(t, db, "web-01", "HTTP", time.Now()); !s.InUnscheduledMaintenance() || s.Unscheduled.End-s.Unscheduled.Start != 4*3600 {
		t.Fatalf("entity ack: %+v", s)
	}
}

func TestScheduledMaintenanceRoutes(t *testing.T) {
	t.Parallel()
	db, do, _ := maintenanceServer(t)
	start := time.Now().Add(-time.Minute).Truncate(time.Second)
	body := `{"scheduled_maintenances":[{"start_time":"` + start.In(time.FixedZone("", -7*3600)).Format(time.RFC3339) + `","duration":3600,"summary":"upgrade"}]}`
	expect(t, "schedule two checks", do("POST", "/scheduled_maintenances/checks/web-01:HTTP,web-01:PING", vndJSON, body), 204)
	for _, check := range []string{"HTTP", "PING"} {
		if s := status(t, db, "web-01", check, time.Now()); !s.InScheduledMaintenance() || s.ScheduledSummary != "upgrade" || s.Scheduled.Start != start.Unix() {
			t.Fatalf("%s: %+v", check, s)
		}
	}
	expectErrors(t, "no start", do("POST", "/scheduled_maintenances/checks/web-01:HTTP", vndJSON, `{"scheduled_maintenances":[{"duration":60}]}`), 403, "start time must be provided")
	expectErrors(t, "no duration", do("POST", "/scheduled_maintenances/checks/web-01:HTTP", vndJSON,
		`{"scheduled_maintenances":[{"start_time":"2030-01-01T00:00:00Z"}]}`), 422, "scheduled_maintenances[0].duration")
	expectErrors(t, "a missing check", do("POST", "/scheduled_maintenances/checks/web-01:HTTP,web-01:SSH", vndJSON, body), 404, "could not find entity check 'SSH'")
	expectErrors(t, "no array", do("POST", "/scheduled_maintenances/checks/web-01:HTTP", vndJSON, `{}`), 422, "No valid scheduled maintenances")
	expectErrors(t, "DELETE without start", do("DELETE", "/scheduled_maintenances/checks/web-01:HTTP", "", ""), 403, "start time must be provided")
	expect(t, "end on the entity", do("DELETE", "/scheduled_maintenances/entities/"+schema.NewEntityID("web-01")+"?start_time="+start.UTC().Format(time.RFC3339), "", ""), 204)
	for _, check := range []string{"HTTP", "PING"} {
		if s := status(t, db, "web-01", check, time.Now().Add(time.Second)); s.InScheduledMaintenance() {
			t.Fatalf("%s still in maintenance: %+v", check, s)
		}
	}
}

func TestTestNotificationRoutes(t *testing.T) {
	t.Parallel()
	db, do, _ := maintenanceServer(t)
	expect(t, "default summary", do("POST", "/test_notifications/checks/web-01:HTTP", "", ""), 204)
	expect(t, "two", do("POST", "/test_notifications/entities/"+schema.NewEntityID("web-01"), vndJSON, `{"test_notifications":[{"summary":"hello"}]}`), 204)
	raws, _ := db.Do(t, "LRANGE", "events", 0, -1).([]any)
	if len(raws) != 3 {
		t.Fatalf("%d events", len(raws))
	}
	var first map[string]any
	json.Unmarshal(raws[2].([]byte), &first)
	if first["type"] != "action" || first["state"] != "test_notifications" || first["summary"] != "Testing notifications to all contacts interested in entity web-01" {
		t.Fatalf("event %v", first)
	}
	expectErrors(t, "missing", do("POST", "/test_notifications/checks/web-02:HTTP", "", ""), 404, "could not find entity 'web-02'")
}
