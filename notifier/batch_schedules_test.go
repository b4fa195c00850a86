package notifier_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/schema"
)

// scheduledWorld routes web-01 and db-01 through the web-primary schedule (ada's week at
// TO's time) as well as directly, with escalation policies: one matching web-01's checks, one
// matching db-01, and ten matching nothing.
func scheduledWorld(t *testing.T, batch int) *world {
	w := newWorld(t)
	w.ncfg.BatchSize = batch
	w.contact("ada", []string{"email=ada@example.com", "sms=+100"}, interval("email", 120))
	w.contact("bob", []string{"email=bob@example.com"}, interval("email", 30))
	w.contact("lead", []string{"email=lead@example.com"})
	for _, id := range []string{"ada", "bob", "lead"} {
		w.db.Do(t, "SADD", w.keys.AllContacts(), id)
	}
	w.rule("ada", "r", `warning_media=["email"]`, `critical_media=["email","sms"]`)
	// T0 (2026-01-05) is a Monday: ada's and bob's weeks alternate from 2025-12-29, ada first
	w.schedule(`{"id": "web-primary", "timezone": "Europe/London", "layers": [{"name": "weekly",
	  "start": "2025-12-29T09:00:00", "turn": "1 week", "members": ["bob", "ada"]}], "fallback": ["lead"]}`)
	w.entity("web-01", "bob")
	w.entity("db-01")
	w.entitySchedules("web-01", "web-primary")
	w.entitySchedules("db-01", "web-primary")
	policies := []roster.EscalationPolicy{
		{ID: "web", Entities: []string{"web-01"}, Steps: []roster.EscalationStep{{Delay: 600, Contacts: []string{"lead"}}}},
		{ID: "db", Entities: []string{"db-01"}, Steps: []roster.EscalationStep{{Delay: 300, Schedules: []string{"web-primary"}}}},
	}
	for i := 0; i < 10; i++ {
		policies = append(policies, roster.EscalationPolicy{ID: fmt.Sprintf("other-%d", i), Entities: []string{fmt.Sprintf("other-%d", i)},
			Steps: []roster.EscalationStep{{Delay: 0, Contacts: []string{"lead"}}}})
	}
	conn := w.db.Conn(t)
	defer conn.Close()
	if res, err := roster.PutEscalationPolicies(context.Background(), conn, w.keys, policies, roster.ReplaceOptions{}); err != nil || len(res.Problems) > 0 {
		t.Fatalf("put policies: %v %v", err, res.Problems)
	}
	return w
}

// TestBatchesWithSchedulesAndPoliciesRouteAsOneByOne: with schedules and escalation policies
// matching the checks, routing in batches gives the alerts and the database of routing one by
// one, ladders started and schedule_alerted records included.
func TestBatchesWithSchedulesAndPoliciesRouteAsOneByOne(t *testing.T) {
	t.Parallel()
	var lines []string
	for round := int64(0); round < 3; round++ {
		at := round * 60
		for i := 0; i < 20; i++ {
			lines = append(lines, ev(at, "web-01", fmt.Sprintf("c%d", i), "critical"))
		}
		lines = append(lines, ev(at, "db-01", "MySQL", "warning"), ev(at, "db-01", "MySQL", "critical"))
		lines = append(lines, ev(at+1, "web-01", "c3", "ok"), ev(at+1, "web-01", "c4", "acknowledgement"),
			ev(at+1, "web-01", "c5", "critical"), ev(at+1, "db-01", "MySQL", "critical"))
	}
	run := func(batch int) ([]string, map[string]string) {
		w := scheduledWorld(t, batch)
		alerts, _ := w.countedRun(lines)
		return alerts, w.db.Dump(t)
	}
	oneAlerts, oneDump := run(1)
	alerts, dump := run(64)
	if strings.Join(alerts, "\n") != strings.Join(oneAlerts, "\n") {
		t.Fatalf("alerts differ:\none by one:\n%s\nbatched:\n%s", strings.Join(oneAlerts, "\n"), strings.Join(alerts, "\n"))
	}
	joined := strings.Join(oneAlerts, "\n")
	if len(oneAlerts) < 40 || !strings.Contains(joined, "ada:sms:problem") || !strings.Contains(joined, "bob:email:problem") {
		t.Fatalf("the timeline did not reach both the schedule and the direct contact:\n%s", joined)
	}
	if _, ok := oneDump[schema.NewKeys("").ScheduleAlerted("web-01:c0")]; !ok {
		t.Fatalf("no schedule_alerted record for web-01:c0")
	}
	testredis.DiffDumps(t, dump, oneDump)
}

// TestBatchesWithSchedulesAndPoliciesShareRoundTrips: escalation policies matching the checks and
// schedules no longer make a batch route one by one: twelve failures in one second take under
// three quarters of the round trips of claiming them one at a time.
func TestBatchesWithSchedulesAndPoliciesShareRoundTrips(t *testing.T) {
	t.Parallel()
	trips := func(batch int) int64 {
		w := scheduledWorld(t, batch)
		var lines []string
		for i := 0; i < 12; i++ {
			lines = append(lines, ev(0, "web-01", fmt.Sprintf("c%d", i), "critical"))
		}
		alerts, trips := w.countedRun(lines)
		if len(alerts) != 36 { // bob's email, ada's email and sms, each failure
			t.Fatalf("12 failures sent %d alerts, want 36: %v", len(alerts), alerts)
		}
		return trips
	}
	one, together := trips(1), trips(64)
	if together*4 > one*3 {
		t.Fatalf("routed together the replay took %d round trips, one at a time %d", together, one)
	}
}
