package oobetet

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/gateways/pagerduty"
	"github.com/flapjackgo/flapjack/internal/testing/testprosody"
)

// TestAlarmOncePerBreach runs oobetet against a real prosody and the PagerDuty contract server,
// on a fake clock (max_latency 2s): while the canary's alerts arrive regularly nothing is
// raised; when they stop, exactly one PagerDuty trigger and one room message go out however
// long the breach lasts; when they resume, the incident is resolved and the room told.
func TestAlarmOncePerBreach(t *testing.T) {
	t.Parallel()
	rm := newRoom(t)
	pd := newPDServer(t)
	clk := clock.NewFake(t0)
	r := runWatcher(t, Options{Config: rm.config(), PagerDuty: pagerduty.Config{EventsBaseURL: pd.srv.URL},
		Clock: clk, Version: "test", CheckEvery: 10 * time.Millisecond})
	rm.expectFromOobetet("Self-monitoring (oobetet) started at 2026-03-01 12:00:00 UTC")
	waitUntil(t, "oobetet healthy", func() bool { return r.w.Health() == nil })

	// The Jabber gateway, played by a person with its account and nick.
	bot := testprosody.Connect(t, rm.xmpp, "flapjack", botPass)
	bot.Join(rm.jid, "flapjack")

	// (1) Alerts arrive regularly: a problem or a recovery every 0.5s of the clock, 6s in all
	// (three times max_latency).
	for i := range 12 {
		kind := []Kind{Problem, Recovery}[i%2]
		clk.Advance(500 * time.Millisecond)
		bot.Say(rm.jid, "groupchat", canaryText(kind))
		r.seen(kind, clk.Now())
	}
	r.looked() // the watcher has decided at the clock's last time
	if got := pd.events(); len(got) != 0 {
		t.Fatalf("PagerDuty got %d events while alerts flowed: %+v", len(got), got)
	}
	if n := rm.countFromOobetet("Self-monitoring CRITICAL"); n != 0 {
		t.Fatalf("the room was told of a breach while alerts flowed")
	}
	if err := r.w.Health(); err != nil {
		t.Fatalf("Health while alerts flow: %v", err)
	}
	if got := gauge(t, r.reg, "flapjack_oobetet_breached"); got != 0 {
		t.Fatalf("flapjack_oobetet_breached = %v while alerts flow", got)
	}

	// (2) The alerts stop. Past max_latency since the last problem, the alarm goes out once.
	clk.Advance(testMaxLatency) // last problem 2.5s ago
	evs := pd.waitEvents(1)
	tr := evs[0]
	if tr.EventAction != "trigger" || tr.RoutingKey != routingKey || tr.Payload == nil || tr.Payload.Severity != "critical" ||
		!strings.Contains(tr.Payload.Summary, `alerts of "oobetet canary" on canary not getting through: no problem alert seen for 2.5s (max_latency 2s)`) {
		t.Errorf("trigger = %+v (payload %+v)", tr, tr.Payload)
	}
	if tr.DedupKey == nil || !strings.Contains(*tr.DedupKey, "self-monitoring of canary:oobetet canary") {
		t.Errorf("dedup_key = %v, want one naming the canary", tr.DedupKey)
	}
	msg := rm.expectFromOobetet("Self-monitoring CRITICAL")
	if want := `the alerts of "oobetet canary" on canary are not getting through: no problem alert seen for 2.5s`; !strings.Contains(msg.Text, want) {
		t.Errorf("room message %q does not say %q", msg.Text, want)
	}
	if err := r.w.Health(); err == nil || !strings.Contains(err.Error(), "not getting through") {
		t.Errorf("Health during the breach = %v", err)
	}
	if got := gauge(t, r.reg, "flapjack_oobetet_breached"); got != 1 {
		t.Errorf("flapjack_oobetet_breached = %v during the breach", got)
	}
	// The breach goes on for a long time: no second alarm, though the watcher decides at each
	// minute (the first alarm above came the same way).
	for range 5 {
		clk.Advance(time.Minute)
		r.looked()
	}
	if got := pd.actions(); len(got) != 1 {
		t.Errorf("PagerDuty events during one breach: %v, want one trigger", got)
	}
	if n := rm.countFromOobetet("Self-monitoring CRITICAL"); n != 1 {
		t.Errorf("the room was told of the breach %d times, want once", n)
	}

	// (3) The alerts resume: one of each kind resolves the incident.
	bot.Say(rm.jid, "groupchat", canaryText(Problem))
	r.seen(Problem, clk.Now())
	if len(pd.events()) != 1 {
		t.Errorf("resolved after a problem alert alone; recoveries are still missing")
	}
	bot.Say(rm.jid, "groupchat", canaryText(Recovery))
	evs = pd.waitEvents(2)
	if res := evs[1]; res.EventAction != "resolve" || res.RoutingKey != routingKey || res.DedupKey == nil || *res.DedupKey != *tr.DedupKey {
		t.Errorf("resolve = %+v, want a resolve with the trigger's dedup_key %q", res, *tr.DedupKey)
	}
	msg = rm.expectFromOobetet("Self-monitoring OK")
	if want := `the alerts of "oobetet canary" on canary are getting through again (after 5 minutes without)`; !strings.Contains(msg.Text, want) {
		t.Errorf("room message %q does not say %q", msg.Text, want)
	}
	waitUntil(t, "healthy again", func() bool { return r.w.Health() == nil })
	if got := gauge(t, r.reg, "flapjack_oobetet_breached"); got != 0 {
		t.Errorf("flapjack_oobetet_breached = %v after recovery", got)
	}
	for _, c := range []struct{ channel, action string }{{channelPagerDuty, actionTrigger}, {channelPagerDuty, actionResolve},
		{channelRooms, actionTrigger}, {channelRooms, actionResolve}} {
		// The counter moves once the send has returned, which may be just after the room or
		// PagerDuty already saw the message.
		waitUntil(t, fmt.Sprintf("flapjack_oobetet_alarms_total{%s,%s,sent} to reach 1", c.channel, c.action),
			func() bool { return alarms(r.w, c.channel, c.action, resultSent) >= 1 })
		if got := alarms(r.w, c.channel, c.action, resultSent); got != 1 {
			t.Errorf("flapjack_oobetet_alarms_total{%s,%s,sent} = %v, want 1", c.channel, c.action, got)
		}
	}
	if got := gauge(t, r.reg, "flapjack_oobetet_connected"); got != 1 {
		t.Errorf("flapjack_oobetet_connected = %v", got)
	}
}

// TestNoAlertsAtAll: a canary that never alerts is a breach max_latency after start, and the
// alarm says so.
func TestNoAlertsAtAll(t *testing.T) {
	t.Parallel()
	rm := newRoom(t)
	pd := newPDServer(t)
	clk := clock.NewFake(t0)
	r := runWatcher(t, Options{Config: rm.config(), PagerDuty: pagerduty.Config{EventsBaseURL: pd.srv.URL},
		Clock: clk, Version: "test", CheckEvery: 10 * time.Millisecond})
	rm.expectFromOobetet("Self-monitoring (oobetet) started")
	clk.Advance(testMaxLatency)
	r.looked()
	if len(pd.events()) != 0 {
		t.Fatalf("alarm at exactly max_latency after the start")
	}
	// The positive control: one second later the same looks at the clock raise it.
	clk.Advance(time.Second)
	ev := pd.waitEvents(1)[0]
	if !strings.Contains(ev.Payload.Summary, "no problem alert seen since oobetet started 3s ago") {
		t.Errorf("summary %q", ev.Payload.Summary)
	}
	rm.expectFromOobetet("Self-monitoring CRITICAL")
	if err := r.w.Health(); err == nil {
		t.Errorf("healthy during a breach")
	}
}

// TestRoomToldAfterReconnect: a breach found while oobetet is cut off from the XMPP server is
// paged at once and told to the rooms once the connection is back.
func TestRoomToldAfterReconnect(t *testing.T) {
	t.Parallel()
	rm := newRoom(t)
	pd := newPDServer(t)
	relay := newCutter(t, rm.xmpp.Addr())
	cfg := rm.config()
	cfg.Port = relay.port()
	clk := clock.NewFake(t0)
	r := runWatcher(t, Options{Config: cfg, PagerDuty: pagerduty.Config{EventsBaseURL: pd.srv.URL},
		Clock: clk, Version: "test", CheckEvery: 10 * time.Millisecond})
	rm.expectFromOobetet("Self-monitoring (oobetet) started")
	relay.setCut(true)
	waitUntil(t, "oobetet disconnected", func() bool { return !r.w.conn.connected() })
	if err := r.w.Health(); err == nil || !strings.Contains(err.Error(), "not connected") {
		t.Errorf("Health while disconnected = %v", err)
	}
	clk.Advance(3 * time.Second)
	pd.waitEvents(1)
	r.looked() // the room message stays owed while the connection is cut
	if n := rm.countFromOobetet("Self-monitoring CRITICAL"); n != 0 {
		t.Fatalf("the room was told while oobetet was cut off")
	}
	relay.setCut(false)
	rm.expectFromOobetet("Self-monitoring (oobetet) reconnected")
	rm.expectFromOobetet("Self-monitoring CRITICAL")
	r.looked()
	if got := pd.actions(); len(got) != 1 {
		t.Errorf("PagerDuty events: %v, want one trigger", got)
	}
	if n := rm.countFromOobetet("Self-monitoring CRITICAL"); n != 1 {
		t.Errorf("the room was told %d times, want once", n)
	}
}
