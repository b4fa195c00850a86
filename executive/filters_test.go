package executive

import (
	"context"
	"strings"
	"testing"

	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/model/inventory"
	"github.com/flapjackgo/flapjack/schema"
)

const now = int64(1_000_000)

func ev(typ, state string) *schema.Event {
	return &schema.Event{Entity: "e", Check: "c", Type: typ, State: state}
}

func svc(state string) *schema.Event { return ev(schema.TypeService, state) }

func notified(kinds map[int]int64) checkstate.CheckFacts {
	var f checkstate.CheckFacts
	for k, t := range kinds {
		f.LastNotified[k] = t
	}
	return f
}

func TestFilters(t *testing.T) {
	t.Parallel()
	um := checkstate.Window{Start: now - 100, End: now + 100}
	endedUM := checkstate.Window{Start: now - 100, End: now - 1}
	sm := checkstate.Window{Start: now - 10, End: now + 10}
	type intentCheck func(in intents) bool
	noIntents := func(in intents) bool { return in == intents{} }
	cases := []struct {
		name    string
		filter  Filter
		event   *schema.Event
		view    checkView
		blocked bool
		intents intentCheck
	}{
		// Ok filter
		{"ok: failures pass", okFilter{}, svc("critical"), checkView{}, false, noIntents},
		{"ok: ok->ok blocks", okFilter{}, svc("ok"), checkView{previousState: "ok"}, true, noIntents},
		{"ok: never notified blocks", okFilter{}, svc("ok"), checkView{previousState: "critical"}, true, noIntents},
		{"ok: last notification a recovery blocks", okFilter{}, svc("ok"),
			checkView{previousState: "critical", facts: notified(map[int]int64{checkstate.KindCritical: 10, checkstate.KindRecovery: 20})}, true, noIntents},
		{"ok: after a problem passes", okFilter{}, svc("ok"),
			checkView{previousState: "critical", facts: notified(map[int]int64{checkstate.KindCritical: 30, checkstate.KindRecovery: 20})}, false, noIntents},
		{"ok: after an acknowledgement passes", okFilter{}, svc("ok"),
			checkView{previousState: "warning", facts: notified(map[int]int64{checkstate.KindAcknowledgement: 30})}, false, noIntents},
		{"ok: problem kind alone does not count as notified", okFilter{}, svc("ok"),
			checkView{previousState: "critical", facts: notified(map[int]int64{checkstate.KindProblem: 30, checkstate.KindTest: 40})}, true, noIntents},
		{"ok: ends unscheduled maintenance even when blocking", okFilter{}, svc("ok"),
			checkView{previousState: "ok", unscheduled: um}, true, func(in intents) bool { return in.endUnscheduled }},
		{"ok: an ended window is left alone", okFilter{}, svc("ok"),
			checkView{previousState: "ok", unscheduled: endedUM}, true, noIntents},

		// ScheduledMaintenance filter
		{"sm: outside passes", scheduledMaintenanceFilter{defaultAck: 14400}, svc("critical"), checkView{}, false, noIntents},
		{"sm: blocks failures", scheduledMaintenanceFilter{defaultAck: 14400}, svc("critical"), checkView{scheduled: sm}, true, noIntents},
		{"sm: blocks tests", scheduledMaintenanceFilter{defaultAck: 14400}, ev("action", "test_notifications"), checkView{scheduled: sm}, true, noIntents},
		{"sm: blocks recoveries", scheduledMaintenanceFilter{defaultAck: 14400}, svc("ok"), checkView{scheduled: sm}, true, noIntents},
		{"sm: ack of a failing check is recorded, not notified", scheduledMaintenanceFilter{defaultAck: 14400},
			ev("action", "acknowledgement"), checkView{scheduled: sm, state: "critical"}, true,
			func(in intents) bool { return in.startUnscheduled && in.ackDuration == 14400 }},
		{"sm: ack of an ok check records nothing", scheduledMaintenanceFilter{defaultAck: 14400},
			ev("action", "acknowledgement"), checkView{scheduled: sm, state: "ok"}, true, noIntents},
		{"sm: window ending now is over", scheduledMaintenanceFilter{}, svc("critical"),
			checkView{scheduled: checkstate.Window{Start: now - 10, End: now}}, false, noIntents},

		// UnscheduledMaintenance filter
		{"um: none passes", unscheduledMaintenanceFilter{}, svc("critical"), checkView{}, false, noIntents},
		{"um: blocks problems", unscheduledMaintenanceFilter{}, svc("critical"), checkView{unscheduled: um}, true, noIntents},
		{"um: blocks tests", unscheduledMaintenanceFilter{}, ev("action", "test_notifications"), checkView{unscheduled: um}, true, noIntents},
		{"um: acks pass", unscheduledMaintenanceFilter{}, ev("action", "acknowledgement"), checkView{unscheduled: um}, false, noIntents},
		{"um: ended window passes", unscheduledMaintenanceFilter{}, svc("critical"), checkView{unscheduled: endedUM}, false, noIntents},

		// Delays filter
		{"delays: ok passes", delaysFilter{}, svc("ok"), checkView{state: "ok"}, false, noIntents},
		{"delays: actions pass", delaysFilter{}, ev("action", "test_notifications"), checkView{state: "critical", lastChange: now}, false, noIntents},
		{"delays: just changed blocks", delaysFilter{}, svc("critical"),
			checkView{state: "critical", lastChange: now, initialDelay: 30, repeatDelay: 60}, true, noIntents},
		{"delays: zero initial delay passes at once", delaysFilter{}, svc("critical"),
			checkView{state: "critical", lastChange: now, initialDelay: 0, repeatDelay: 60}, false, noIntents},
		{"delays: initial delay reached passes", delaysFilter{}, svc("critical"),
			checkView{state: "critical", lastChange: now - 30, initialDelay: 30, repeatDelay: 60}, false, noIntents},
		{"delays: same severity within repeat delay blocks", delaysFilter{}, svc("critical"),
			checkView{state: "critical", lastChange: now - 100, initialDelay: 30, repeatDelay: 60,
				facts: notified(map[int]int64{checkstate.KindProblem: now - 59, checkstate.KindCritical: now - 59})}, true, noIntents},
		{"delays: repeat delay reached passes", delaysFilter{}, svc("critical"),
			checkView{state: "critical", lastChange: now - 100, initialDelay: 30, repeatDelay: 60,
				facts: notified(map[int]int64{checkstate.KindProblem: now - 60, checkstate.KindCritical: now - 60})}, false, noIntents},
		{"delays: other severity within repeat delay passes", delaysFilter{}, svc("critical"),
			checkView{state: "critical", lastChange: now - 100, initialDelay: 30, repeatDelay: 60,
				facts: notified(map[int]int64{checkstate.KindProblem: now - 10, checkstate.KindWarning: now - 10})}, false, noIntents},
		{"delays: acknowledged since last problem passes", delaysFilter{}, svc("critical"),
			checkView{state: "critical", lastChange: now - 100, initialDelay: 30, repeatDelay: 60,
				facts: notified(map[int]int64{checkstate.KindProblem: now - 10, checkstate.KindCritical: now - 10, checkstate.KindAcknowledgement: now - 5})}, false, noIntents},

		// Acknowledgement filter
		{"ack: other events pass", acknowledgementFilter{defaultAck: 14400}, svc("critical"), checkView{state: "critical"}, false, noIntents},
		{"ack: ok check blocks", acknowledgementFilter{defaultAck: 14400}, ev("action", "acknowledgement"), checkView{state: "ok"}, true, noIntents},
		{"ack: unknown check blocks", acknowledgementFilter{defaultAck: 14400}, ev("action", "acknowledgement"), checkView{}, true, noIntents},
		{"ack: failing check creates unscheduled maintenance (default 4 h)", acknowledgementFilter{defaultAck: 14400},
			ev("action", "acknowledgement"), checkView{state: "warning"}, false,
			func(in intents) bool { return in.startUnscheduled && in.ackDuration == 14400 }},
		{"ack: event duration wins", acknowledgementFilter{defaultAck: 14400},
			&schema.Event{Type: "action", State: "acknowledgement", Duration: 600, HasDuration: true, Summary: "x"},
			checkView{state: "unknown"}, false,
			func(in intents) bool { return in.startUnscheduled && in.ackDuration == 600 && in.ackSummary == "x" }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var in intents
			view := c.view
			blocked, reason := c.filter.Check(c.event, &view, now, &in)
			if blocked != c.blocked {
				t.Fatalf("blocked = %v (%s), want %v", blocked, reason, c.blocked)
			}
			if blocked && reason == "" {
				t.Fatal("a block must say why")
			}
			if !c.intents(in) {
				t.Fatalf("intents %+v", in)
			}
		})
	}
}

func TestSeverity(t *testing.T) {
	t.Parallel()
	cases := []struct {
		event       *schema.Event
		maxNotified string
		want        string
	}{
		{svc("warning"), "", "warning"},
		{svc("warning"), "critical", "critical"},
		{svc("critical"), "warning", "critical"},
		{svc("unknown"), "", "unknown"},
		{svc("unknown"), "warning", "warning"},
		{svc("ok"), "", "ok"},
		{svc("ok"), "unknown", "unknown"},
		{ev("action", "acknowledgement"), "warning", "warning"},
		{ev("action", "test_notifications"), "", "critical"},
	}
	for _, c := range cases {
		if got := severity(c.event, c.maxNotified); got != c.want {
			t.Errorf("severity(%s, max %q) = %s, want %s", c.event.State, c.maxNotified, got, c.want)
		}
	}
}

func TestRecordedOrderWinsOverSameSecondTimestamps(t *testing.T) {
	t.Parallel()
	f := notified(map[int]int64{checkstate.KindCritical: 10, checkstate.KindRecovery: 10})
	f.LastNotificationKind, f.NotifiedSeverity = "critical", "critical"
	if kind, _ := lastNotification(&f); kind != "critical" || f.MaxNotifiedSeverity() != "critical" {
		t.Fatalf("problem after a recovery in one second: last %s, max %s", kind, f.MaxNotifiedSeverity())
	}
	f.LastNotificationKind, f.NotifiedSeverity = "recovery", "none"
	if kind, _ := lastNotification(&f); kind != "recovery" || f.MaxNotifiedSeverity() != "" {
		t.Fatalf("recovery after a problem in one second: last %s, max %q", kind, f.MaxNotifiedSeverity())
	}
	cases := []struct {
		ev                  *schema.Event
		previous, kind, sev string
	}{
		{svc("warning"), "", "warning", "warning"},
		{svc("warning"), "critical", "warning", "critical"},
		{svc("critical"), "unknown", "critical", "critical"},
		{svc("ok"), "critical", "recovery", "none"},
		{ev("action", "acknowledgement"), "critical", "acknowledgement", ""},
		{ev("action", "test_notifications"), "critical", "", ""},
	}
	for _, c := range cases {
		if kind, sev := notificationOrder(c.ev, c.previous); kind != c.kind || sev != c.sev {
			t.Errorf("%s after %q: %q %q, want %q %q", c.ev.State, c.previous, kind, sev, c.kind, c.sev)
		}
	}
}

func TestMaxNotifiedSeverityIsPriorityNotRecency(t *testing.T) {
	t.Parallel()
	f := notified(map[int]int64{checkstate.KindCritical: 10, checkstate.KindWarning: 20})
	if got := f.MaxNotifiedSeverity(); got != "critical" {
		t.Fatalf("got %s", got)
	}
	f = notified(map[int]int64{checkstate.KindCritical: 10, checkstate.KindWarning: 20, checkstate.KindRecovery: 15})
	if got := f.MaxNotifiedSeverity(); got != "warning" {
		t.Fatalf("after a recovery only later severities count, got %s", got)
	}
	f = notified(map[int]int64{checkstate.KindCritical: 10, checkstate.KindRecovery: 15})
	if got := f.MaxNotifiedSeverity(); got != "" {
		t.Fatalf("got %s", got)
	}
}

// TestNotificationTagsIncludeTheCheckTagsGivenThroughTheAPI: the event tag set is the event's
// own tags, then the check's tags (check_tag:TAG, docs/flapjack-1x.md 1.5 item 2), then the entity's and
// the check name's parts, so a rule on a tag given through the API matches the check's alerts.
func TestNotificationTagsIncludeTheCheckTagsGivenThroughTheAPI(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) { c.InitialFailureDelay = 0 })
	conn := h.db.Conn(t)
	defer conn.Close()
	h.at(0).send(`{"entity":"web-01","check":"HTTP","type":"service","state":"ok"}`)
	if err := inventory.TagChecks(context.Background(), conn, h.keys, []model.CheckRef{{Entity: "web-01", Check: "HTTP"}},
		[]string{"payments"}, nil); err != nil {
		t.Fatal(err)
	}
	ns := h.at(10).send(`{"entity":"web-01","check":"HTTP","type":"service","state":"critical","tags":["frontend"]}`)
	if len(ns) != 1 {
		t.Fatalf("%d notifications, want 1", len(ns))
	}
	if got, want := strings.Join(ns[0].Tags, ","), "frontend,payments,web-01,http"; got != want {
		t.Errorf("notification tags %s, want %s", got, want)
	}
}
