package api

import (
	"encoding/json"
	"net/url"
	"reflect"
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/schema"
)

// reportT0 is the start of the reports' window; the window is [T0, T0+10000].
var reportT0 = time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC).Unix()

type seedState struct {
	at                      int64
	state, summary, details string
}

type seedWindow struct {
	kind            string
	start, duration int64
	summary         string
}

// seedCheck writes a check's history through checkstate's writers, as the executive does: each
// state change, the check hash, the current indexes, the entity and the maintenance windows.
func seedCheck(t *testing.T, db *testredis.DB, keys schema.Keys, entity, entityID, check string, states []seedState, windows []seedWindow) {
	t.Helper()
	var ops model.Ops
	w := checkstate.NewCheckWriter(keys, entity, check, &ops)
	w.CreateEntity(entityID)
	var f checkstate.CheckFacts
	for _, s := range states {
		w.StateChange(s.at, s.state, s.summary, s.details, 1)
		w.ServiceUpdate(checkstate.Update{Now: s.at, Summary: s.summary, Details: s.details, InitialFailureDelay: 30, RepeatFailureDelay: 60}, &f)
		f.State, f.Summary, f.Details = s.state, s.summary, s.details
	}
	w.TouchIndexes(states[len(states)-1].at)
	for _, m := range windows {
		w.StoreMaintenance(m.kind, m.start, m.duration, m.summary, false)
	}
	w.Notified(reportT0+8010, "problem", "critical")
	w.Flush(1)
	c := db.Conn(t)
	defer c.Close()
	if _, err := model.Apply(c, model.ApplyTarget{}, []model.Record{{Ops: ops}}); err != nil {
		t.Fatal(err)
	}
}

func seedReports(t *testing.T, db *testredis.DB, keys schema.Keys) {
	t0 := reportT0
	seedCheck(t, db, keys, "app-01", "e1", "HTTP", []seedState{
		{t0 - 1000, "critical", "down 1", "d1"}, // in force at the window's start
		{t0 + 1000, "critical", "down 2", ""},   // merges with the one before
		{t0 + 2000, "ok", "up", ""},
		{t0 + 3000, "warning", "slow", ""},
		{t0 + 6000, "ok", "up", ""},
		{t0 + 8000, "critical", "again", ""}, // still open at the window's end
	}, []seedWindow{
		{schema.Scheduled, t0 - 5000, 100, "long ago"},
		{schema.Scheduled, t0 - 500, 1000, "early"},    // began before the window, still running at its start
		{schema.Scheduled, t0 + 4000, 1000, "upgrade"}, // inside the warning: splits it
		{schema.Scheduled, t0 + 20000, 100, "later"},
		{schema.Unscheduled, t0 + 8100, 600, "ack"},
	})
	now := time.Now().Unix()
	seedCheck(t, db, keys, "app-01", "e1", "Ping", []seedState{{t0 - 5000, "ok", "PING OK", ""}},
		[]seedWindow{{schema.Scheduled, now - 60, 3600, "covers now"}})
}

func reportURL(path string, start, end int64) string {
	q := url.Values{}
	if start != 0 {
		// with an offset, as flapjack-diner sends Time#iso8601
		q.Set("start_time", time.Unix(start, 0).In(time.FixedZone("", -7*3600)).Format(time.RFC3339))
	}
	if end != 0 {
		q.Set("end_time", time.Unix(end, 0).UTC().Format(time.RFC3339))
	}
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

// decodeReport decodes a body into v.
func decodeReport(t *testing.T, a answer, v any) {
	t.Helper()
	if err := json.Unmarshal(a.body, v); err != nil {
		t.Fatalf("body %s: %v", a.body, err)
	}
}

func TestReports(t *testing.T) {
	t.Parallel()
	srv, db := apiServer(t, nil)
	seedReports(t, db, schema.NewKeys(""))
	t0, t1 := reportT0, reportT0+10000
	i := func(n int64) *int64 { return &n }

	t.Run("outage", func(t *testing.T) {
		a := expect(t, "outage report", call(t, srv, "GET", reportURL("/outage_report/checks/app-01:HTTP", t0, t1), "", ""), 200)
		var body struct {
			Reports []struct {
				Outages []outage
				Links   map[string][]string
			} `json:"outage_reports"`
			Linked struct {
				Entities []struct {
					ID, Name string
					Links    map[string][]string
				}
				Checks []struct{ ID, Name string }
			}
		}
		decodeReport(t, a, &body)
		want := []outage{
			{State: "critical", StartTime: t0, EndTime: i(t0 + 2000), Duration: i(2000), Summary: "down 1 / down 2", Details: "d1"},
			{State: "warning", StartTime: t0 + 3000, EndTime: i(t0 + 6000), Duration: i(3000), Summary: "slow"},
			{State: "critical", StartTime: t0 + 8000, EndTime: i(t1), Duration: i(2000), Summary: "again"},
		}
		if len(body.Reports) != 1 || !reflect.DeepEqual(body.Reports[0].Outages, want) {
			t.Fatalf("outages %s", a.body)
		}
		if !reflect.DeepEqual(body.Reports[0].Links, map[string][]string{"entity": {"e1"}, "check": {"app-01:HTTP"}}) {
			t.Fatalf("links %v", body.Reports[0].Links)
		}
		if len(body.Linked.Entities) != 1 || body.Linked.Entities[0].ID != "e1" || body.Linked.Entities[0].Name != "app-01" ||
			len(body.Linked.Checks) != 1 || body.Linked.Checks[0].ID != "app-01:HTTP" || body.Linked.Checks[0].Name != "HTTP" {
			t.Fatalf("linked %s", a.body)
		}

		// Without a window: the whole history, the last outage open.
		a = expect(t, "outage report, no window", call(t, srv, "GET", "/outage_report/checks/app-01:HTTP", "", ""), 200)
		decodeReport(t, a, &body)
		if o := body.Reports[0].Outages; len(o) != 3 || o[0].StartTime != t0-1000 || o[2].EndTime != nil || o[2].Duration != nil {
			t.Fatalf("outages without window %s", a.body)
		}
	})

	t.Run("maintenance", func(t *testing.T) {
		a := expect(t, "scheduled", call(t, srv, "GET", reportURL("/scheduled_maintenance_report/checks/app-01:HTTP", t0, t1), "", ""), 200)
		var body struct {
			Reports []struct {
				Scheduled []maintenanceReport `json:"scheduled_maintenances"`
			} `json:"scheduled_maintenance_reports"`
		}
		decodeReport(t, a, &body)
		want := []maintenanceReport{
			{StartTime: t0 - 500, EndTime: t0 + 500, Duration: 1000, Summary: "early"},
			{StartTime: t0 + 4000, EndTime: t0 + 5000, Duration: 1000, Summary: "upgrade"},
		}
		if len(body.Reports) != 1 || !reflect.DeepEqual(body.Reports[0].Scheduled, want) {
			t.Fatalf("scheduled %s", a.body)
		}
		a = expect(t, "unscheduled", call(t, srv, "GET", reportURL("/unscheduled_maintenance_report/checks/app-01:HTTP", t0, t1), "", ""), 200)
		var un struct {
			Reports []struct {
				Unscheduled []maintenanceReport `json:"unscheduled_maintenances"`
			} `json:"unscheduled_maintenance_reports"`
		}
		decodeReport(t, a, &un)
		if len(un.Reports) != 1 || !reflect.DeepEqual(un.Reports[0].Unscheduled, []maintenanceReport{{StartTime: t0 + 8100, EndTime: t0 + 8700, Duration: 600, Summary: "ack"}}) {
			t.Fatalf("unscheduled %s", a.body)
		}
	})

	t.Run("downtime", func(t *testing.T) {
		type downtimeBody struct {
			Reports []struct {
				Total    map[string]int64    `json:"total_seconds"`
				Percent  map[string]*float64 `json:"percentages"`
				Downtime []outage
			} `json:"downtime_reports"`
		}
		a := expect(t, "downtime", call(t, srv, "GET", reportURL("/downtime_report/checks/app-01:HTTP,app-01:Ping", t0, t1), "", ""), 200)
		var body downtimeBody
		decodeReport(t, a, &body)
		if len(body.Reports) != 2 {
			t.Fatalf("downtime %s", a.body)
		}
		http := body.Reports[0]
		want := []outage{
			// trimmed by "early", which ran until t0+500
			{State: "critical", StartTime: t0 + 500, EndTime: i(t0 + 2000), Duration: i(1500), Summary: "down 1 / down 2", Details: "d1"},
			{State: "warning", StartTime: t0 + 3000, EndTime: i(t0 + 4000), Duration: i(1000), Summary: "slow [split start]"},
			{State: "warning", StartTime: t0 + 5000, EndTime: i(t0 + 6000), Duration: i(1000), Summary: "slow [split finish]"},
			{State: "critical", StartTime: t0 + 8000, EndTime: i(t1), Duration: i(2000), Summary: "again"},
		}
		if !reflect.DeepEqual(http.Downtime, want) {
			t.Fatalf("downtime pieces %s", a.body)
		}
		if !reflect.DeepEqual(http.Total, map[string]int64{"critical": 3500, "warning": 2000, "ok": 4500}) {
			t.Fatalf("total seconds %v", http.Total)
		}
		for st, p := range map[string]float64{"critical": 35, "warning": 20, "ok": 45} {
			if got := http.Percent[st]; got == nil || *got != p {
				t.Fatalf("percentage of %s = %v, want %v (%s)", st, got, p, a.body)
			}
		}
		ping := body.Reports[1]
		if len(ping.Downtime) != 0 || !reflect.DeepEqual(ping.Total, map[string]int64{"ok": 10000}) || ping.Percent["ok"] == nil || *ping.Percent["ok"] != 100 {
			t.Fatalf("ping downtime %s", a.body)
		}

		// Without an end the percentages are null and the open outage is not counted.
		a = expect(t, "downtime from start", call(t, srv, "GET", reportURL("/downtime_report/checks/app-01:HTTP", t0, 0), "", ""), 200)
		body = downtimeBody{}
		decodeReport(t, a, &body)
		r := body.Reports[0]
		if len(r.Percent) != 2 || r.Percent["critical"] != nil || r.Percent["warning"] != nil {
			t.Fatalf("percentages without an end: %s", a.body)
		}
		if !reflect.DeepEqual(r.Total, map[string]int64{"critical": 1500, "warning": 2000}) {
			t.Fatalf("totals without an end: %v", r.Total)
		}
	})

	t.Run("status", func(t *testing.T) {
		a := expect(t, "status", call(t, srv, "GET", "/status_report/entities/e1", "", ""), 200)
		var body struct {
			Reports []map[string]any `json:"status_reports"`
			Linked  struct {
				Entities []struct {
					ID    string
					Links map[string][]string
				}
			}
		}
		decodeReport(t, a, &body)
		if len(body.Reports) != 2 {
			t.Fatalf("status %s", a.body)
		}
		http, ping := body.Reports[0], body.Reports[1]
		for k, v := range map[string]any{"name": "HTTP", "state": "critical", "summary": "again", "enabled": true,
			"in_scheduled_maintenance": false, "in_unscheduled_maintenance": false, "initial_failure_delay": 30.0,
			"repeat_failure_delay": 60.0, "last_change": float64(t0 + 8000), "last_update": float64(t0 + 8000),
			"last_problem_notification": float64(t0 + 8010), "last_recovery_notification": nil} {
			if !reflect.DeepEqual(http[k], v) {
				t.Errorf("HTTP %s = %#v, want %#v", k, http[k], v)
			}
		}
		if ping["name"] != "Ping" || ping["state"] != "ok" || ping["in_scheduled_maintenance"] != true {
			t.Errorf("Ping status %v", ping)
		}
		if len(body.Linked.Entities) != 1 || !reflect.DeepEqual(body.Linked.Entities[0].Links["checks"], []string{"app-01:HTTP", "app-01:Ping"}) {
			t.Errorf("linked %s", a.body)
		}
		// Every current check.
		a = expect(t, "status of every check", call(t, srv, "GET", "/status_report/checks", "", ""), 200)
		decodeReport(t, a, &body)
		if len(body.Reports) != 2 {
			t.Fatalf("status of every check %s", a.body)
		}
	})

	t.Run("errors", func(t *testing.T) {
		expectErrors(t, "unknown check", call(t, srv, "GET", "/status_report/checks/nope:X", "", ""), 404, "could not find entity checks: 'nope:X'")
		expectErrors(t, "unknown entity", call(t, srv, "GET", "/outage_report/entities/999", "", ""), 404, "could not find entities: '999'")
		expectErrors(t, "bad time", call(t, srv, "GET", "/outage_report/checks/app-01:HTTP?start_time=yesterday", "", ""), 400, "start_time")
		// A known and an unknown check: the known one is reported.
		a := expect(t, "one known", call(t, srv, "GET", "/outage_report/checks/app-01:HTTP,nope:X", "", ""), 200)
		var body struct {
			Reports []any `json:"outage_reports"`
		}
		decodeReport(t, a, &body)
		if len(body.Reports) != 1 {
			t.Fatalf("one known %s", a.body)
		}
	})
}
