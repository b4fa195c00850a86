package executive

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/schema"
)

// sameSecond is one thing done at t0+40: events claimed together in one batch, or an admin
// action as `flapjack maintenance` and replay run it.
type sameSecond struct {
	events []string
	admin  func(h *harness, conn redis.Conn) error
}

func batch(events ...string) sameSecond { return sameSecond{events: events} }

func createSM(start, duration int64, summary string) sameSecond {
	return sameSecond{admin: func(h *harness, conn redis.Conn) error {
		return checkstate.CreateScheduledMaintenance(conn, h.keys, "app-01.example.com", "HTTP",
			t0.Add(time.Duration(start)*time.Second), time.Duration(duration)*time.Second, summary, h.clk.Now())
	}}
}

func endSM(start int64) sameSecond {
	return sameSecond{admin: func(h *harness, conn redis.Conn) error {
		return checkstate.EndScheduledMaintenance(conn, h.keys, "app-01.example.com", "HTTP",
			t0.Add(time.Duration(start)*time.Second), h.clk.Now())
	}}
}

func endUM() sameSecond {
	return sameSecond{admin: func(h *harness, conn redis.Conn) error {
		return checkstate.EndUnscheduledMaintenance(conn, h.keys, "app-01.example.com", "HTTP", h.clk.Now())
	}}
}

// windows maps a window's start (seconds after t0) to its duration.
type windows map[int64]int64

// TestSameSecondEventsOfOneCheck: whatever happens to one check within one second — several
// events claimed in one batch, admin actions between them — ends exactly as Flapjack 1.6 ends
// it when it handles them one after the other (docs/flapjack-1x.md 2.4, 2.6): the later acknowledgement
// or same-start window replaces the earlier one, and the current-maintenance keys agree with the
// stored windows, TTL included.
func TestSameSecondEventsOfOneCheck(t *testing.T) {
	t.Parallel()
	const at = 40
	crit, ok, warn := event("critical"), event("ok"), event("warning")
	ack := func(duration int64, summary string) string {
		return event("acknowledgement", fmt.Sprintf(`"duration":%d`, duration), fmt.Sprintf(`"summary":%q`, summary))
	}
	type base int
	const (
		okBase      base = iota // ok since a day before t0
		problemBase             // critical since t0, problem notified at t0+30
		newBase                 // never seen; new checks get 3 h of scheduled maintenance
	)
	cases := []struct {
		name   string
		base   base
		before func(h *harness)
		ops    []sameSecond
		notes  []string // notification types of the second, in order
		state  string
		um, sm windows // stored windows afterwards (nil = none)
		umSum  string  // summary of the unscheduled window starting at t0+40
		after  []step  // the timeline goes on
	}{
		// acknowledgements
		{name: "ack 600 then ack 1200", base: problemBase,
			ops:   []sameSecond{batch(ack(600, "first"), ack(1200, "second"))},
			notes: []string{"acknowledgement", "acknowledgement"}, state: "critical",
			um: windows{at: 1200}, umSum: "second",
			after: []step{{at + 600, crit, ""}, {at + 1199, crit, ""}, {at + 1200, crit, "problem"}}},
		{name: "ack 600, 1200, then 1800", base: problemBase,
			ops:   []sameSecond{batch(ack(600, "a"), ack(1200, "b"), ack(1800, "c"))},
			notes: []string{"acknowledgement", "acknowledgement", "acknowledgement"}, state: "critical",
			um: windows{at: 1800}, umSum: "c",
			after: []step{{at + 1799, crit, ""}, {at + 1800, crit, "problem"}}},
		{name: "ack 1200 then ack 600", base: problemBase,
			ops:   []sameSecond{batch(ack(1200, "long"), ack(600, "short"))},
			notes: []string{"acknowledgement", "acknowledgement"}, state: "critical",
			um: windows{at: 600}, umSum: "short",
			after: []step{{at + 599, crit, ""}, {at + 600, crit, "problem"}}},
		{name: "ack with a summary then ack without", base: problemBase,
			ops:   []sameSecond{batch(ack(600, "first"), event("acknowledgement", `"duration":1200`))},
			notes: []string{"acknowledgement", "acknowledgement"}, state: "critical",
			um: windows{at: 1200}, umSum: ""},
		{name: "ack 600 and ack 1200 in separate batches", base: problemBase,
			ops:   []sameSecond{batch(ack(600, "first")), batch(ack(1200, "second"))},
			notes: []string{"acknowledgement", "acknowledgement"}, state: "critical",
			um: windows{at: 1200}, umSum: "second"},
		{name: "ack extending an earlier ack", base: problemBase,
			before: func(h *harness) { h.at(35).send(ack(600, "earlier")) },
			ops:    []sameSecond{batch(ack(600, "first"), ack(1200, "second"))},
			notes:  []string{"acknowledgement", "acknowledgement"}, state: "critical",
			um: windows{35: 5, at: 1200}, umSum: "second"},
		{name: "ack then recovery", base: problemBase,
			ops:   []sameSecond{batch(ack(600, "on it"), ok)},
			notes: []string{"acknowledgement", "recovery"}, state: "ok",
			um: windows{at: 0}, umSum: "on it",
			after: []step{{at + 1, crit, ""}, {at + 31, crit, "problem"}}},
		{name: "recovery then ack", base: problemBase,
			ops:   []sameSecond{batch(ok, ack(600, "late"))},
			notes: []string{"recovery"}, state: "ok"},
		{name: "ack then critical", base: problemBase,
			ops:   []sameSecond{batch(ack(600, "on it"), crit)},
			notes: []string{"acknowledgement"}, state: "critical",
			um: windows{at: 600}, umSum: "on it",
			after: []step{{at + 599, crit, ""}, {at + 600, crit, "problem"}}},
		{name: "ack then test notification", base: problemBase,
			ops:   []sameSecond{batch(ack(600, "on it"), event("test_notifications"))},
			notes: []string{"acknowledgement"}, state: "critical",
			um: windows{at: 600}, umSum: "on it"},
		{name: "ack then admin ends it", base: problemBase,
			ops:   []sameSecond{batch(ack(600, "on it")), endUM()},
			notes: []string{"acknowledgement"}, state: "critical",
			um: windows{at: 0}, umSum: "on it",
			after: []step{{at + 1, crit, "problem"}}},
		{name: "admin ends an earlier ack then a new ack", base: problemBase,
			before: func(h *harness) { h.at(35).send(ack(600, "earlier")) },
			ops:    []sameSecond{endUM(), batch(ack(1200, "again"))},
			notes:  []string{"acknowledgement"}, state: "critical",
			um: windows{35: 5, at: 1200}, umSum: "again"},

		// state changes
		{name: "critical then ok", base: okBase,
			ops:   []sameSecond{batch(crit, ok)},
			state: "ok",
			after: []step{{at + 1, crit, ""}, {at + 31, crit, "problem"}}},
		{name: "critical then ok after a problem", base: problemBase,
			ops:   []sameSecond{batch(crit, ok)},
			notes: []string{"recovery"}, state: "ok"},
		{name: "ok then critical", base: problemBase,
			ops:   []sameSecond{batch(ok, crit)},
			notes: []string{"recovery"}, state: "critical",
			after: []step{{at + 29, crit, ""}, {at + 30, crit, "problem"}}},
		{name: "ok then critical without initial delay", base: problemBase,
			ops:   []sameSecond{batch(ok, event("critical", `"initial_failure_delay":0`))},
			notes: []string{"recovery", "problem"}, state: "critical"},
		{name: "warning then critical", base: okBase,
			ops:   []sameSecond{batch(warn, crit)},
			state: "critical",
			after: []step{{at + 29, crit, ""}, {at + 30, crit, "problem"}}},
		{name: "critical then warning after a problem", base: problemBase,
			ops:   []sameSecond{batch(crit, event("warning", `"initial_failure_delay":0`))},
			notes: []string{"problem"}, state: "warning"},

		// scheduled maintenance (admin actions, as replay and `flapjack maintenance` run them)
		{name: "create SM 600 then 1200 at the same start", base: problemBase,
			ops:   []sameSecond{createSM(at, 600, "a"), createSM(at, 1200, "b")},
			state: "critical", sm: windows{at: 1200},
			after: []step{{at + 1199, crit, ""}, {at + 1200, crit, "problem"}}},
		{name: "create SM 1200 then 600 at the same start", base: problemBase,
			ops:   []sameSecond{createSM(at, 1200, "a"), createSM(at, 600, "b")},
			state: "critical", sm: windows{at: 600},
			after: []step{{at + 599, crit, ""}, {at + 600, crit, "problem"}}},
		{name: "create SM then end it", base: problemBase,
			ops:   []sameSecond{createSM(at, 600, "a"), endSM(at)},
			state: "critical", sm: windows{at: 0},
			after: []step{{at + 49, crit, ""}, {at + 50, crit, "problem"}}}, // repeat delay after t+30
		{name: "create SM, end it, create it again at the same start", base: problemBase,
			ops:   []sameSecond{createSM(at, 1200, "a"), endSM(at), createSM(at, 600, "b")},
			state: "critical", sm: windows{at: 600}},
		{name: "end a running SM then create another", base: problemBase,
			before: func(h *harness) { addScheduled(h, 10, 1000, "running") },
			ops:    []sameSecond{endSM(10), createSM(at, 600, "next")},
			state:  "critical", sm: windows{10: 30, at: 600},
			after: []step{{at + 599, crit, ""}, {at + 600, crit, "problem"}}},
		{name: "create SM then end the longer overlapping one", base: problemBase,
			before: func(h *harness) { addScheduled(h, 10, 1000, "running") },
			ops:    []sameSecond{createSM(at, 600, "next"), endSM(10)},
			state:  "critical", sm: windows{10: 30, at: 600},
			after: []step{{at + 599, crit, ""}, {at + 600, crit, "problem"}}},
		{name: "create SM then critical", base: problemBase,
			ops:   []sameSecond{createSM(at, 600, "a"), batch(crit, crit)},
			state: "critical", sm: windows{at: 600}},
		{name: "critical then create SM", base: problemBase,
			ops:   []sameSecond{batch(crit), createSM(at, 600, "a")},
			state: "critical", sm: windows{at: 600},
			after: []step{{at + 599, crit, ""}, {at + 600, crit, "problem"}}},
		{name: "create SM then ack", base: problemBase,
			ops:   []sameSecond{createSM(at, 600, "a"), batch(ack(1200, "seen"), ack(1800, "seen again"))},
			state: "critical", sm: windows{at: 600}, um: windows{at: 1800}, umSum: "seen again"},
		{name: "create SM then the first events of a new check", base: newBase,
			ops:   []sameSecond{createSM(at, 600, "a"), batch(crit, crit)},
			state: "critical", sm: windows{at: 3 * 3600}},
		{name: "create a longer SM then the first event of a new check", base: newBase,
			ops:   []sameSecond{createSM(at, 5*3600, "a"), batch(crit)},
			state: "critical", sm: windows{at: 3 * 3600},
			after: []step{{at + 3*3600 - 1, crit, ""}, {at + 3*3600, crit, "problem"}}},
		{name: "first ok then critical of a new check", base: newBase,
			ops:   []sameSecond{batch(ok, crit)},
			state: "critical", sm: windows{at: 3 * 3600}},
		{name: "first events of a new check then create SM", base: newBase,
			ops:   []sameSecond{batch(crit), createSM(at, 600, "a")},
			state: "critical", sm: windows{at: 600},
			after: []step{{at + 599, crit, ""}, {at + 600, crit, "problem"}}},
		{name: "ack then create SM", base: problemBase,
			ops:   []sameSecond{batch(ack(1200, "seen")), createSM(at, 600, "a")},
			notes: []string{"acknowledgement"}, state: "critical", sm: windows{at: 600}, um: windows{at: 1200}, umSum: "seen"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			if c.base == newBase {
				h = newHarness(t, func(c *Config) { c.NewCheckScheduledMaintenanceDuration = 3 * time.Hour })
			} else {
				seedOK(h)
			}
			if c.base == problemBase {
				runTimeline(t, h, []step{{0, crit, ""}, {30, crit, "problem"}})
			}
			if c.before != nil {
				c.before(h)
			}
			h.at(at)
			var notes []string
			for _, op := range c.ops {
				if op.admin != nil {
					conn := h.db.Conn(t)
					err := op.admin(h, conn)
					conn.Close()
					if err != nil {
						t.Fatal(err)
					}
					continue
				}
				for _, n := range h.send(op.events...) {
					notes = append(notes, n.Type)
				}
			}
			if !slices.Equal(notes, c.notes) {
				t.Errorf("notifications %v, want %v", notes, c.notes)
			}
			if got := h.hget(h.keys.Check(checkID), "state"); got != c.state {
				t.Errorf("state %q, want %q", got, c.state)
			}
			h.wantWindows(schema.Unscheduled, c.um)
			h.wantWindows(schema.Scheduled, c.sm)
			if c.um[at] > 0 || c.umSum != "" {
				if got := h.get(h.keys.MaintenanceSummary(schema.Unscheduled, checkID, t0.Unix()+at)); got != c.umSum {
					t.Errorf("unscheduled maintenance summary %q, want %q", got, c.umSum)
				}
			}
			h.wantCurrentKeysAgree()
			if t.Failed() {
				return
			}
			runTimeline(t, h, c.after)
			h.wantCurrentKeysAgree()
		})
	}
}

// wantWindows compares the stored windows of kind (starts relative to t0) with want.
func (h *harness) wantWindows(kind string, want windows) {
	h.t.Helper()
	v, err := redis.Int64s(h.db.Do(h.t, "ZRANGE", h.keys.Maintenances(kind, checkID), 0, -1, "WITHSCORES"), nil)
	if err != nil {
		h.t.Fatal(err)
	}
	got := windows{}
	for i := 0; i+1 < len(v); i += 2 {
		got[v[i]-t0.Unix()] = v[i+1]
	}
	if len(want) == 0 && len(got) == 0 {
		return
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		h.t.Errorf("%s maintenance windows %v, want %v (start after t0: duration)", kind, got, want)
	}
	sorted, err := redis.Int64s(h.db.Do(h.t, "ZRANGE", h.keys.SortedMaintenanceTimestamps(kind, checkID), 0, -1), nil)
	if err != nil {
		h.t.Fatal(err)
	}
	if len(sorted) != len(got) {
		h.t.Errorf("%s: %d sorted timestamps for %d windows", kind, len(sorted), len(got))
	}
}

// wantCurrentKeysAgree checks ID:scheduled_maintenance and ID:unscheduled_maintenance against
// the stored windows at the harness's now (docs/flapjack-1x.md 2.6): present exactly while a window covers
// now, holding its start, expiring when it ends. Unscheduled: the latest window started by now;
// scheduled: the covering window that ends last.
func (h *harness) wantCurrentKeysAgree() {
	h.t.Helper()
	now := h.clk.Now().Unix()
	for _, kind := range []string{schema.Scheduled, schema.Unscheduled} {
		v, err := redis.Int64s(h.db.Do(h.t, "ZRANGE", h.keys.Maintenances(kind, checkID), 0, -1, "WITHSCORES"), nil)
		if err != nil {
			h.t.Fatal(err)
		}
		var active checkstate.Window
		latest := int64(-1)
		for i := 0; i+1 < len(v); i += 2 {
			w := checkstate.Window{Start: v[i], End: v[i] + v[i+1]}
			switch kind {
			case schema.Unscheduled:
				if w.Start <= now && w.Start > latest {
					latest, active = w.Start, w
				}
			default:
				if w.Covers(now) && w.End > active.End {
					active = w
				}
			}
		}
		key := h.keys.CurrentMaintenance(kind, checkID)
		got := h.get(key)
		if !active.Covers(now) {
			if got != "" {
				h.t.Errorf("%s: %s is %q at t+%d, but no window covers now", kind, key, got, now-t0.Unix())
			}
			continue
		}
		ttl, _ := redis.Int64(h.db.Do(h.t, "TTL", key), nil)
		if want := fmt.Sprint(active.Start); got != want {
			h.t.Errorf("%s: %s is %q at t+%d, want %s (the window [t+%d, t+%d))", kind, key, got,
				now-t0.Unix(), want, active.Start-t0.Unix(), active.End-t0.Unix())
		}
		if want := active.End - now; ttl < want-1 || ttl > want {
			h.t.Errorf("%s: TTL of %s is %d at t+%d, want %d (the window [t+%d, t+%d))", kind, key, ttl,
				now-t0.Unix(), want, active.Start-t0.Unix(), active.End-t0.Unix())
		}
	}
}
