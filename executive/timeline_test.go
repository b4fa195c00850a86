package executive

import (
	"strings"
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/schema"
)

// step is one line of a timeline: at t0+at seconds send ev, expect a notification of type want
// ("" = none).
type step struct {
	at   int64
	ev   string
	want string
}

// seedOK makes the check known and ok a day before t0, as docs/flapjack-1x.md 2.9 assumes.
func seedOK(h *harness) {
	h.at(-86400).send(event("ok"))
}

func runTimeline(t *testing.T, h *harness, steps []step) {
	t.Helper()
	for i, s := range steps {
		got := h.at(s.at).send(s.ev)
		gotType := ""
		if len(got) > 1 {
			t.Fatalf("step %d (t+%d %s): %d notifications", i, s.at, s.ev, len(got))
		}
		if len(got) == 1 {
			gotType = got[0].Type
		}
		if gotType != s.want {
			t.Fatalf("step %d (t+%d %s): notification %q, want %q", i, s.at, s.ev, gotType, s.want)
		}
	}
}

// TestWorkedBehaviour follows docs/flapjack-1x.md 2.9 (defaults 30/60 s, check seeded ok a day earlier).
func TestWorkedBehaviour(t *testing.T) {
	t.Parallel()
	crit, ok := event("critical"), event("ok")
	cases := []struct {
		name  string
		steps []step
	}{
		{"initial delay then problem", []step{
			{0, crit, ""}, {10, crit, ""}, {29, crit, ""}, {30, crit, "problem"},
		}},
		{"repeat delay", []step{
			{0, crit, ""}, {30, crit, "problem"}, {60, crit, ""}, {89, crit, ""}, {90, crit, "problem"},
			{100, crit, ""}, {150, crit, "problem"},
		}},
		{"critical then ok within initial delay: nothing at all", []step{
			{0, crit, ""}, {20, ok, ""}, {25, ok, ""},
		}},
		{"recovery once", []step{
			{0, crit, ""}, {30, crit, "problem"}, {40, ok, "recovery"}, {50, ok, ""}, {60, ok, ""},
		}},
		{"ack silences until ok, then recovery", []step{
			{0, crit, ""}, {30, crit, "problem"}, {40, event("acknowledgement", `"summary":"on it"`), "acknowledgement"},
			{100, crit, ""}, {1000, crit, ""}, {2000, ok, "recovery"},
		}},
		{"ack while ok does nothing", []step{
			{0, event("acknowledgement"), ""}, {10, crit, ""}, {40, crit, "problem"},
		}},
		{"ack expires after its duration", []step{
			{0, crit, ""}, {30, crit, "problem"},
			{40, event("acknowledgement", `"duration":600`), "acknowledgement"},
			{600, crit, ""}, {639, crit, ""}, {640, crit, "problem"},
		}},
		{"warning to critical waits the initial delay again, not the repeat delay", []step{
			{0, event("warning"), ""}, {30, event("warning"), "problem"},
			{35, crit, ""}, {64, crit, ""}, {65, crit, "problem"},
		}},
		{"repeated acks each notify", []step{
			{0, crit, ""}, {30, crit, "problem"},
			{40, event("acknowledgement"), "acknowledgement"}, {50, event("acknowledgement"), "acknowledgement"},
		}},
		{"test notifications always go out when not in maintenance", []step{
			{0, event("test_notifications"), "test"}, {1, event("test_notifications"), "test"},
		}},
		{"per-event delays override the defaults", []step{
			{0, event("critical", `"initial_failure_delay":5`, `"repeat_failure_delay":10`), ""},
			{5, event("critical", `"initial_failure_delay":5`, `"repeat_failure_delay":10`), "problem"},
			{14, event("critical", `"initial_failure_delay":5`, `"repeat_failure_delay":10`), ""},
			{15, event("critical", `"initial_failure_delay":5`, `"repeat_failure_delay":10`), "problem"},
			// defaults are written back when the event omits them
			{40, crit, ""}, {75, crit, "problem"},
		}},
		{"recovery and the next problem in the same second keep their order", []step{
			{0, crit, ""}, {30, crit, "problem"}, {40, ok, "recovery"}, {40, event("critical", `"initial_failure_delay":0`), "problem"},
			{41, ok, "recovery"},
		}},
		{"brief ok after a problem recovers, next failure waits the initial delay", []step{
			{0, crit, ""}, {30, crit, "problem"}, {40, ok, "recovery"}, {41, crit, ""}, {71, crit, "problem"},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			seedOK(h)
			runTimeline(t, h, c.steps)
		})
	}
}

func TestScheduledMaintenanceTimeline(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) { c.NewCheckScheduledMaintenanceDuration = 3 * time.Hour })
	crit := event("critical")
	runTimeline(t, h, []step{
		{0, event("ok"), ""}, // new check: 3 h of scheduled maintenance, first ok skips filters
		{60, crit, ""},
		{3600, crit, ""},
		{3 * 3600, crit, "problem"}, // window over; the failure has lasted far longer than 30 s
	})
	if got := h.get(h.keys.MaintenanceSummary(schema.Scheduled, checkID, t0.Unix())); got != "Automatically created for new check" {
		t.Fatalf("summary %q", got)
	}
}

func TestNewCheckMaintenanceIgnoreTags(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) {
		c.NewCheckScheduledMaintenanceDuration = 3 * time.Hour
		c.NewCheckScheduledMaintenanceIgnoreTags = []string{"bypass_ncsm"}
	})
	runTimeline(t, h, []step{
		{0, event("critical", `"tags":["bypass_ncsm"]`), ""},
		{30, event("critical", `"tags":["bypass_ncsm"]`), "problem"},
	})
}

func TestAckDuringScheduledMaintenanceIsRecordedButNeverNotified(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	seedOK(h)
	crit := event("critical")
	runTimeline(t, h, []step{{0, crit, ""}, {30, crit, "problem"}})
	// schedule maintenance t+100 .. t+1100
	addScheduled(h, 100, 1000, "planned work")
	runTimeline(t, h, []step{
		{200, event("acknowledgement", `"summary":"seen"`, `"duration":3600`), ""},
		{1200, crit, ""}, // the acknowledgement's unscheduled maintenance still runs (until t+3800)
		{3700, crit, ""},
		{3800, crit, "problem"},
	})
	if got := h.get(h.keys.MaintenanceSummary(schema.Unscheduled, checkID, t0.Unix()+200)); got != "seen" {
		t.Fatalf("unscheduled maintenance summary %q, want the ack's", got)
	}
	for _, n := range h.queued() {
		if n.Type == schema.NotificationAcknowledgement {
			t.Fatal("an acknowledgement notification was sent for an ack during scheduled maintenance")
		}
	}
}

func addScheduled(h *harness, start, duration int64, summary string) {
	h.t.Helper()
	s := t0.Unix() + start
	h.db.Do(h.t, "ZADD", h.keys.Maintenances(schema.Scheduled, checkID), duration, s)
	h.db.Do(h.t, "ZADD", h.keys.SortedMaintenanceTimestamps(schema.Scheduled, checkID), s, s)
	h.db.Do(h.t, "SET", h.keys.MaintenanceSummary(schema.Scheduled, checkID, s), summary)
}

func TestScheduledMaintenanceBlocksEverythingInside(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	seedOK(h)
	addScheduled(h, 0, 600, "window")
	crit := event("critical")
	runTimeline(t, h, []step{
		{0, crit, ""}, {100, crit, ""}, {100, event("test_notifications"), ""},
		{599, crit, ""},
		{600, crit, "problem"}, // the window ended; the failure has lasted 600 s
	})
}

func TestScheduledMaintenanceCurrentKey(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	seedOK(h)
	addScheduled(h, 100, 600, "window")
	h.at(50).send(event("ok"))
	if got := h.get(h.keys.CurrentMaintenance(schema.Scheduled, checkID)); got != "" {
		t.Fatalf("current key %q before the window starts", got)
	}
	h.at(200).send(event("ok"))
	if got := h.get(h.keys.CurrentMaintenance(schema.Scheduled, checkID)); got != "1767607300" {
		t.Fatalf("current key %q inside the window, want its start", got)
	}
	ttl := h.db.Do(h.t, "TTL", h.keys.CurrentMaintenance(schema.Scheduled, checkID)).(int64)
	if ttl < 499 || ttl > 500 {
		t.Fatalf("current key TTL %d, want the 500 s left of the window", ttl)
	}
	h.at(700).send(event("ok"))
	if got := h.get(h.keys.CurrentMaintenance(schema.Scheduled, checkID)); got != "" {
		t.Fatalf("current key %q after the window (TTL must not be relied on)", got)
	}
}

func TestNotificationContent(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	seedOK(h)
	h.at(0).send(event("warning", `"summary":"slow"`, `"time":1767607200`, `"tags":["web"]`))
	got := h.at(30).send(event("critical", `"summary":"down"`, `"details":"HTTP 500"`, `"time":1767607230`, `"perfdata":"time=2s;;;0"`))
	if len(got) != 0 {
		t.Fatalf("critical after warning waits its own initial delay, got %v", got)
	}
	got = h.at(60).send(event("critical", `"summary":"down"`, `"details":"HTTP 500"`, `"time":1767607260`, `"tags":["web"]`))
	if len(got) != 1 {
		t.Fatalf("want one problem, got %d", len(got))
	}
	n := got[0]
	if n.EventID != checkID || n.Type != "problem" || n.State != "critical" || n.Severity != "critical" {
		t.Fatalf("notification %+v", n)
	}
	if schema.Deref(n.EventHash) != schema.AckHash(checkID) || len(schema.Deref(n.EventHash)) != 8 {
		t.Fatalf("event_hash %v", n.EventHash)
	}
	if n.StateDuration == nil || *n.StateDuration != 30 {
		t.Fatalf("state_duration %v, want 30", n.StateDuration)
	}
	if schema.Deref(n.LastState) != "warning" || schema.Deref(n.LastSummary) != "slow" {
		t.Fatalf("last_state %v last_summary %v", n.LastState, n.LastSummary)
	}
	if n.Time == nil || *n.Time != 1767607260 || schema.Deref(n.Summary) != "down" || schema.Deref(n.Details) != "HTTP 500" {
		t.Fatalf("time/summary/details %+v", n)
	}
	if strings.Join(n.Tags, ",") != "web,app-01,example.com,http" {
		t.Fatalf("tags %v", n.Tags)
	}
	if n.Count <= 0 {
		t.Fatalf("count %d", n.Count)
	}
	// recovery inherits the highest severity notified since the last recovery
	h.at(70).send(event("warning"))
	got = h.at(100).send(event("ok"))
	if len(got) != 1 || got[0].Type != "recovery" || got[0].Severity != "critical" || got[0].EventHash != nil {
		t.Fatalf("recovery %+v", got)
	}
}

// TestSameSecondRecoveryKeepsItsSeverity: a recovery of a problem notified in the same second as
// the recovery before it is still "critical" (a blank severity would route to no medium).
func TestSameSecondRecoveryKeepsItsSeverity(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	seedOK(h)
	crit, ok := event("critical"), event("ok")
	runTimeline(t, h, []step{
		{0, crit, ""}, {30, crit, "problem"}, {40, ok, "recovery"},
		{40, event("critical", `"initial_failure_delay":0`), "problem"}, {41, ok, "recovery"},
	})
	got := h.queued()
	last := got[len(got)-1]
	if last.Type != "recovery" || last.Severity != "critical" {
		t.Fatalf("last notification %s with severity %q, want a critical recovery", last.Type, last.Severity)
	}
}
