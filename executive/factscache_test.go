package executive

import (
	"context"
	"reflect"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/schema"
)

// cacheStep is one step of a timeline run with and without the facts cache: events sent at
// offset, or an outside tool's write (raw commands on the documented keys, our revision left
// alone) before them.
type cacheStep struct {
	offset  int64
	outside [][]any
	events  []string
}

// TestFactsCacheDecidesAsAReadWould runs one timeline through an executive remembering facts and
// one reading them for every event, and requires the same notifications after each step and the
// same database at the end: ok repeats with summaries, details and delays that change or stay,
// events older than the newest applied, failures held back by their delays and notified again,
// failures changing severity and recovering, acknowledgements, and windows and check fields
// written by an outside tool between two ok results.
func TestFactsCacheDecidesAsAReadWould(t *testing.T) {
	t.Parallel()
	web := func(state string, extra ...string) string {
		return `{"entity":"web-01.example.com","check":"Web","type":"service","state":"` + state + `"` + joinExtra(extra) + `}`
	}
	disk := func(state string) string {
		return `{"entity":"db-01.example.com","check":"Disk","type":"service","state":"` + state + `"}`
	}
	keys := schema.NewKeys("")
	http, webID := schema.CheckID("app-01.example.com", "HTTP"), schema.CheckID("web-01.example.com", "Web")
	diskID := schema.CheckID("db-01.example.com", "Disk")
	api := func(summary string) string {
		return `{"entity":"api-01.example.com","check":"API","type":"service","state":"ok","summary":"` + summary + `"}`
	}
	apiID := schema.CheckID("api-01.example.com", "API")
	mq := func(state string, extra ...string) string {
		if state == schema.StateAcknowledgement {
			return `{"entity":"mq-01.example.com","check":"Queue","type":"action","state":"` + state + `"` + joinExtra(extra) + `}`
		}
		return `{"entity":"mq-01.example.com","check":"Queue","type":"service","state":"` + state + `"` +
			joinExtra(append([]string{`"initial_failure_delay":20`, `"repeat_failure_delay":30`}, extra...)) + `}`
	}
	steps := []cacheStep{
		{offset: 0, events: []string{event("ok", `"summary":"fine"`), web("ok"), disk("ok")}},
		{offset: 10, events: []string{event("ok", `"summary":"fine"`), web("ok", `"details":"d1"`), disk("ok")}},
		{offset: 20, events: []string{event("ok", `"summary":"fine 2"`, `"initial_failure_delay":5`), web("ok", `"details":"d1"`)}},
		{offset: 30, events: []string{event("ok", `"summary":"fine 2"`, `"initial_failure_delay":5`, `"time":1767607230`), web("ok")}},
		{offset: 40, events: []string{event("ok", `"summary":"older"`, `"time":1767607200`), web("ok", `"repeat_failure_delay":7`)}},
		{offset: 50, events: []string{event("ok", `"time":1767607250`), event("ok", `"summary":"same second"`, `"time":1767607250`)}},
		{offset: 60, events: []string{event("critical", `"summary":"down"`), web("ok", `"summary":""`)}},
		{offset: 70, events: []string{event("critical", `"summary":"down"`), web("ok")}},
		{offset: 100, events: []string{event("critical", `"summary":"down"`)}},
		{offset: 110, events: []string{event("acknowledgement", `"summary":"mine"`, `"duration":60`)}},
		// a failing check held back by its delays, remembered between the notifications it
		// repeats; each notification is decided on a read (it says the previous state)
		{offset: 111, events: []string{mq("critical", `"summary":"q down"`)}},
		{offset: 115, events: []string{mq("critical", `"summary":"q down"`)}},
		{offset: 120, events: []string{mq("critical", `"summary":"q still down"`)}},
		{offset: 125, events: []string{mq("critical", `"summary":"q still down"`, `"details":"d"`)}},
		{offset: 132, events: []string{mq("critical", `"summary":"q still down"`)}},
		{offset: 140, events: []string{mq("critical", `"summary":"q still down"`)}},
		{offset: 150, events: []string{mq("critical", `"summary":"q still down"`, `"time":1767607350`)}},
		{offset: 152, events: []string{mq("critical", `"summary":"older"`, `"time":1767607340`)}},
		{offset: 163, events: []string{mq("critical", `"summary":"q still down"`)}},
		{offset: 165, events: []string{mq("warning", `"summary":"q slow"`)}},
		{offset: 170, events: []string{mq("warning", `"summary":"q slow"`)}},
		{offset: 175, events: []string{mq("warning", `"summary":"q slow"`, `"repeat_failure_delay":5`)}},
		{offset: 186, events: []string{mq("warning", `"summary":"q slow"`, `"repeat_failure_delay":5`)}},
		{offset: 188, events: []string{mq("warning", `"summary":"q slow"`, `"repeat_failure_delay":5`), mq("ok", `"summary":"q back"`)}},
		{offset: 190, events: []string{mq("unknown", `"summary":"q?"`, `"initial_failure_delay":0`)}},
		{offset: 192, events: []string{mq("unknown", `"summary":"q?"`, `"initial_failure_delay":0`)}},
		{offset: 194, events: []string{mq("acknowledgement", `"summary":"looking"`, `"duration":60`)}},
		{offset: 196, events: []string{mq("unknown", `"summary":"q?"`, `"initial_failure_delay":0`)}},
		{offset: 200, events: []string{event("ok", `"summary":"back"`)}},
		{offset: 210, events: []string{event("ok", `"summary":"back"`)}},
		// an ok check remembered, then given a newer event than ours by an outside tool that moved
		// the revision: the remembered decision conflicts, and decided again on a read ours is
		// stale and changes nothing, not even the indexes the first decision would have touched
		// (before the window below, whose conflict makes the cache step aside)
		{offset: 212, events: []string{api("fine")}},
		{offset: 213, events: []string{api("fine")}},
		{offset: 214, events: []string{api("fine")}},
		{offset: 215, outside: [][]any{{"HSET", keys.Check(apiID), "last_sequence", 1_000_000_000, "revision", 600}},
			events: []string{api("late")}},
		{offset: 216, events: []string{api("later")}},
		// a scheduled window written by an outside tool: the next ok result must see it
		{offset: 220, outside: [][]any{
			{"ZADD", keys.Maintenances(schema.Scheduled, http), 600, t0.Unix() + 220},
			{"ZADD", keys.SortedMaintenanceTimestamps(schema.Scheduled, http), t0.Unix() + 220, t0.Unix() + 220},
		}, events: []string{event("ok", `"summary":"back"`)}},
		{offset: 230, events: []string{event("critical", `"summary":"in maintenance"`)}},
		// an outside tool's acknowledgement window on a check remembered as ok
		{offset: 240, outside: [][]any{
			{"ZADD", keys.Maintenances(schema.Unscheduled, webID), 300, t0.Unix() + 240},
			{"ZADD", keys.SortedMaintenanceTimestamps(schema.Unscheduled, webID), t0.Unix() + 240, t0.Unix() + 240},
		}, events: []string{web("ok"), web("critical")}},
		{offset: 300, events: []string{web("critical"), web("ok")}},
		// the check hash rewritten by an outside tool that moved the revision
		{offset: 310, outside: [][]any{{"HSET", keys.Check(diskID), "state", "warning", "revision", 1000}},
			events: []string{disk("ok")}},
		{offset: 320, events: []string{disk("ok"), web("ok"), disk("warning")}},
	}

	cached, reading := runWithAndWithoutCache(t, steps)
	if n := testutil.ToFloat64(cached.x.metrics.factsCached); n < 17 {
		t.Errorf("%v events decided on cached facts; the timeline has 12 ok repeats and 5 failing results held back", n)
	}
	if n := testutil.ToFloat64(reading.x.metrics.factsCached); n != 0 {
		t.Errorf("%v events decided on cached facts with the cache off", n)
	}
}

// runWithAndWithoutCache runs steps through an executive remembering facts and one reading them
// for every event, and requires the same notifications after each step and the same database at
// the end.
func runWithAndWithoutCache(t *testing.T, steps []cacheStep) (cached, reading *harness) {
	t.Helper()
	cached = newHarness(t)
	reading = newHarness(t, func(c *Config) { c.FactsCacheChecks = 0 })
	for _, s := range steps {
		var got [2][]schema.Notification
		for i, h := range []*harness{cached, reading} {
			for _, cmd := range s.outside {
				h.db.Do(t, cmd[0].(string), cmd[1:]...)
			}
			for _, ev := range s.events {
				got[i] = append(got[i], h.at(s.offset).send(ev)...)
			}
		}
		if !reflect.DeepEqual(got[0], got[1]) {
			t.Fatalf("at +%d s: notifications with the cache %+v, without %+v", s.offset, got[0], got[1])
		}
	}
	// got: with the cache; want: without
	testredis.DiffDumps(t, cached.db.Dump(t), reading.db.Dump(t))
	return cached, reading
}

// TestFactsCacheSeesWindowsOfAFailingCheck: an outside tool's scheduled window on a failing
// check remembered between its held-back results makes the next one a conflict, decided again
// on a read: blocked by the maintenance, as without the cache.
func TestFactsCacheSeesWindowsOfAFailingCheck(t *testing.T) {
	t.Parallel()
	keys := schema.NewKeys("")
	id := schema.CheckID("app-01.example.com", "HTTP")
	steps := []cacheStep{
		{offset: 0, events: []string{event("critical", `"summary":"down"`)}},
		{offset: 5, events: []string{event("critical", `"summary":"down"`)}},
		{offset: 10, events: []string{event("critical", `"summary":"down"`)}},
		{offset: 20, outside: [][]any{
			{"ZADD", keys.Maintenances(schema.Scheduled, id), 600, t0.Unix() + 20},
			{"ZADD", keys.SortedMaintenanceTimestamps(schema.Scheduled, id), t0.Unix() + 20, t0.Unix() + 20},
		}, events: []string{event("critical", `"summary":"down"`)}},
		{offset: 40, events: []string{event("critical", `"summary":"down"`)}},
	}
	cached, _ := runWithAndWithoutCache(t, steps)
	if n := testutil.ToFloat64(cached.x.metrics.conflicts); n != 1 {
		t.Errorf("%v conflicts; the window written at +20 s should have made one", n)
	}
}

func joinExtra(extra []string) string {
	s := ""
	for _, e := range extra {
		s += "," + e
	}
	return s
}

// TestFactsCacheStepsAsideForAnotherExecutive: two executives taking turns on the same checks
// make remembered facts conflict; the cache then stops being used (and counted), and both
// executives' results stay right.
func TestFactsCacheStepsAsideForAnotherExecutive(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	keys := schema.NewKeys("")
	cfg := DefaultConfig()
	cfg.BatchSize = 20
	xs := make([]*Executive, 2)
	for i := range xs {
		xs[i] = New(Options{Pool: db.Pool, Keys: keys, Config: cfg, Clock: clock.NewFake(t0),
			Identity: queue.Identity{Host: "turns", PID: 10 + i}, Version: "test"})
		if _, err := xs[i].Loop(false).Open(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	const checks = 20
	for round := 0; round < 12; round++ {
		var events []string
		for c := 0; c < checks; c++ {
			events = append(events, `{"entity":"host.example.com","check":"c`+string(rune('a'+c))+`","type":"service","state":"ok","summary":"r`+string(rune('a'+round))+`"}`)
		}
		pushAll(t, db, keys.Events(), events)
		x := xs[round%2]
		n, err := x.ProcessNext(context.Background(), 0)
		if err != nil || n != checks {
			t.Fatalf("round %d: %d events, %v", round, n, err)
		}
	}
	for i, x := range xs {
		if x.cache.pausedBatches == 0 {
			t.Errorf("executive %d still uses its cache after its entries kept conflicting", i)
		}
		if n := testutil.ToFloat64(x.metrics.conflicts); n > 2*checks {
			t.Errorf("executive %d: %v conflicts; the cache should have stepped aside after the first", i, n)
		}
	}
	for c := 0; c < checks; c++ {
		id := schema.CheckID("host.example.com", "c"+string(rune('a'+c)))
		if got := db.Do(t, "HGET", keys.Check(id), "summary"); string(got.([]byte)) != "rl" {
			t.Errorf("%s: summary %q, want the last round's", id, got)
		}
	}
}

// TestFactsCacheFailingEntries: a failing check is remembered with its notification times and
// found only for a result failing alike; without its times (dropped when too many failing
// checks are remembered) it is not used.
func TestFactsCacheFailingEntries(t *testing.T) {
	c := newFactsCache(100)
	ev := func(state string) *schema.Event {
		return &schema.Event{Entity: "mq-01.example.com", Check: "Queue", Type: schema.TypeService, State: state, Summary: "q down"}
	}
	d := decision{hasAfter: true, after: factsAfter{state: schema.StateCritical, revision: 8, lastChange: 100,
		summary: "q down", lastNotificationKind: schema.StateCritical, notifiedSeverity: schema.StateCritical,
		lastProblem: 130, lastNotified: schema.StateCritical, lastNotifiedAt: 130}}
	c.applied(ev(schema.StateCritical), &d, model.Applied, false)
	var f checkstate.CheckFacts
	if !c.lookup(ev(schema.StateCritical), &f) {
		t.Fatal("a remembered failing check was not found for a result failing alike")
	}
	if f.State != schema.StateCritical || f.Revision != 8 || f.LastNotified[checkstate.KindProblem] != 130 || f.Summary != "q down" {
		t.Errorf("facts %+v", f)
	}
	if kind, at := lastNotification(&f); kind != schema.StateCritical || at != 130 {
		t.Errorf("last notification %s at %d, want critical at 130", kind, at)
	}
	for _, state := range []string{schema.StateOK, schema.StateWarning} {
		if c.lookup(ev(state), &f) {
			t.Errorf("a check remembered critical was found for a %s result", state)
		}
	}
	clear(c.failing)
	if c.lookup(ev(schema.StateCritical), &f) {
		t.Error("a failing check was found without its notification times")
	}
}
