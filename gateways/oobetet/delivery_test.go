package oobetet

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/events"
	"github.com/flapjackgo/flapjack/gateways/pagerduty"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/schema"
)

// These tests drive one Watcher's ticks by hand, without an XMPP connection (room messages are
// owed and never said): what is paged, and when it is tried again.

func tickingWatcher(t *testing.T, pd *pdServer, clk *clock.Fake, change func(*Config)) *Watcher {
	t.Helper()
	cfg := validConfig()
	cfg.MaxLatency, cfg.PagerDutyContact = testMaxLatency, routingKey
	if change != nil {
		change(&cfg)
	}
	w, _, _ := newWatcher(t, Options{Config: cfg, PagerDuty: pagerduty.Config{EventsBaseURL: pd.srv.URL}, Clock: clk})
	return w
}

func ticks(w *Watcher, n int) {
	for range n {
		w.tick(context.Background())
	}
}

// sees feeds the watcher a room message from the Jabber gateway.
func sees(w *Watcher, kinds ...Kind) {
	for _, k := range kinds {
		w.heard("ops@conference.example.com", "flapjack", canaryText(k))
	}
}

func TestPagerDutyTriedAgainUntilAccepted(t *testing.T) {
	t.Parallel()
	pd := newPDServer(t)
	pd.setFailNext(2)
	clk := clock.NewFake(t0)
	w := tickingWatcher(t, pd, clk, nil)
	clk.Advance(3 * time.Second)
	ticks(w, 2)
	if len(pd.events()) != 0 || pd.refusals() != 2 {
		t.Fatalf("after two ticks in an outage: accepted %v, refused %d", pd.actions(), pd.refusals())
	}
	ticks(w, 5)
	if got := pd.actions(); len(got) != 1 || got[0] != "trigger" {
		t.Fatalf("PagerDuty events %v, want one trigger", got)
	}
	if got := alarms(w, channelPagerDuty, actionTrigger, resultFailed); got != 2 {
		t.Errorf("failed triggers counted: %v, want 2", got)
	}
	clk.Advance(time.Second)
	sees(w, Problem, Recovery)
	ticks(w, 3)
	if got := pd.actions(); len(got) != 2 || got[1] != "resolve" {
		t.Errorf("PagerDuty events %v, want trigger then resolve", got)
	}
	if got := alarms(w, channelRooms, actionResolve, resultFailed) + alarms(w, channelRooms, actionResolve, resultSent); got != 0 {
		t.Errorf("the rooms, never told of the breach, were told of its end (%v attempts)", got)
	}
}

func TestPagerDutyRefusalNotRepeated(t *testing.T) {
	t.Parallel()
	pd := newPDServer(t)
	pd.setStatus(400)
	clk := clock.NewFake(t0)
	w := tickingWatcher(t, pd, clk, nil)
	clk.Advance(3 * time.Second)
	ticks(w, 5)
	if pd.refusals() != 1 {
		t.Errorf("a refused trigger was sent %d times, want once", pd.refusals())
	}
	sees(w, Problem, Recovery)
	ticks(w, 3)
	if pd.refusals() != 1 || len(pd.events()) != 0 {
		t.Errorf("after recovery: refused %d, accepted %v; an incident never opened needs no resolve", pd.refusals(), pd.actions())
	}
}

func TestWithoutPagerDutyContact(t *testing.T) {
	t.Parallel()
	pd := newPDServer(t)
	clk := clock.NewFake(t0)
	w := tickingWatcher(t, pd, clk, func(c *Config) { c.PagerDutyContact = "" })
	clk.Advance(3 * time.Second)
	ticks(w, 3)
	if len(pd.events()) != 0 || pd.refusals() != 0 {
		t.Errorf("PagerDuty called without pagerduty_contact")
	}
	if err := w.Health(); err == nil {
		t.Errorf("healthy during a breach")
	}
	if got := alarms(w, channelRooms, actionTrigger, resultFailed); got == 0 {
		t.Errorf("the rooms were not tried")
	}
}

// TestInjection: with inject_interval, a failure of the canary is queued on `events` every
// interval and its recovery half an interval later, with delays of 0 so each alerts at once.
func TestInjection(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	keys := schema.NewKeys("")
	pub := events.NewPublisher(db.Pool, keys, "")
	clk := clock.NewFake(t0)
	cfg := validConfig()
	cfg.MaxLatency, cfg.InjectInterval = 10*time.Second, 4*time.Second
	w, _, _ := newWatcher(t, Options{Config: cfg, Events: pub, Clock: clk})
	queued := func() []schema.Event {
		raws, err := redis.Strings(db.Do(t, "LRANGE", pub.Key(), 0, -1), nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []schema.Event
		for i := len(raws) - 1; i >= 0; i-- { // LPUSHed: oldest last
			ev, err := schema.ParseEvent([]byte(raws[i]))
			if err != nil {
				t.Fatalf("queued event %s: %v", raws[i], err)
			}
			out = append(out, ev)
		}
		return out
	}
	steps := []struct {
		at     time.Duration
		states []string // every event queued so far
	}{
		{0, []string{"critical"}},
		{1 * time.Second, []string{"critical"}},
		{2 * time.Second, []string{"critical", "ok"}},
		{3 * time.Second, []string{"critical", "ok"}},
		{4 * time.Second, []string{"critical", "ok", "critical"}},
		{6 * time.Second, []string{"critical", "ok", "critical", "ok"}},
	}
	for _, s := range steps {
		clk.Set(t0.Add(s.at))
		ticks(w, 2)
		got := queued()
		var states []string
		for _, ev := range got {
			states = append(states, ev.State)
		}
		if len(states) != len(s.states) {
			t.Fatalf("at +%s: queued %v, want %v", s.at, states, s.states)
		}
		for i := range states {
			if states[i] != s.states[i] {
				t.Fatalf("at +%s: queued %v, want %v", s.at, states, s.states)
			}
		}
	}
	for _, ev := range queued() {
		if ev.Entity != "canary" || ev.Check != "oobetet canary" || ev.Type != schema.TypeService ||
			!ev.HasInitialDelay || ev.InitialFailureDelay != 0 || !ev.HasRepeatDelay || ev.RepeatFailureDelay != 0 || !ev.HasTime {
			t.Errorf("injected event %+v", ev)
		}
	}
}
