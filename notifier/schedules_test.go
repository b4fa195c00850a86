package notifier_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/schema"
)

// webPrimary hands off from ada to bob, weekly at 09:00 London time, from Monday 2026-03-23;
// lead is the fallback.
const webPrimary = `{"id": "web-primary", "timezone": "Europe/London",
  "layers": [{"name": "weekly", "start": "2026-03-23T09:00:00", "turn": "1 week", "members": ["ada", "bob"]}],
  "fallback": ["lead"]}`

// at is the offset from T0 of a UTC wall-clock time.
func at(year int, month time.Month, day, hour, min int) int64 {
	return time.Date(year, month, day, hour, min, 0, 0, time.UTC).Unix() - T0
}

func (w *world) schedule(def string) {
	var s struct{ ID string }
	if err := json.Unmarshal([]byte(def), &s); err != nil {
		w.t.Fatal(err)
	}
	w.db.Do(w.t, "HSET", w.keys.Schedules(), s.ID, def)
}

func (w *world) entitySchedules(entity string, ids ...string) {
	for _, id := range ids {
		w.db.Do(w.t, "SADD", w.keys.EntitySchedules("id-"+entity), id)
	}
}

// withSchedule describes alerts as describe does, plus "@schedule" when one reached the contact.
func (w *world) runScheduled(lines ...string) []string {
	w.t.Helper()
	var out []string
	for _, a := range w.alerts(lines...) {
		s := describe(a)
		if a.Schedule != "" {
			s += "@" + a.Schedule
		}
		out = append(out, s)
	}
	return out
}

func (w *world) oncallWorld() {
	for _, id := range []string{"ada", "bob", "lead", "carl"} {
		w.contact(id, []string{"sms=+" + id})
	}
	w.schedule(webPrimary)
}

func TestScheduleResolvesAtTheNotificationsTimeAcrossSummerTime(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.oncallWorld()
	w.entity("web-01")
	w.entitySchedules("web-01", "web-primary")
	// London went to summer time on Sunday 29 March: Monday's 09:00 hand-off is 08:00 UTC
	expect(t, "07:30 UTC Monday: still ada's week", w.runScheduled(ev(at(2026, 3, 30, 7, 30), "web-01", "HTTP", "critical")),
		"ada:sms:problem@web-primary")
	expect(t, "the recovery after the hand-off: ada, who had the problem, and bob, on call now",
		w.runScheduled(ev(at(2026, 3, 30, 8, 10), "web-01", "HTTP", "ok")),
		"bob:sms:recovery@web-primary", "ada:sms:recovery@web-primary")
	expect(t, "08:30 UTC Monday: bob's week", w.runScheduled(ev(at(2026, 3, 30, 8, 30), "web-01", "Disk", "critical")),
		"bob:sms:problem@web-primary")
	expect(t, "its recovery: bob alone", w.runScheduled(ev(at(2026, 3, 30, 8, 40), "web-01", "Disk", "ok")),
		"bob:sms:recovery@web-primary")
	if n := w.db.Do(t, "EXISTS", w.keys.ScheduleAlerted("web-01:Disk")); n.(int64) != 0 {
		t.Fatalf("the recovery left schedule_alerted behind")
	}
}

func TestContactReachedDirectlyAndByScheduleIsAlertedOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.oncallWorld()
	w.entity("web-01", "ada", "carl")
	w.entitySchedules("web-01", "web-primary")
	expect(t, "ada once, named by the schedule; carl directly",
		w.runScheduled(ev(at(2026, 3, 24, 12, 0), "web-01", "HTTP", "critical")),
		"ada:sms:problem@web-primary", "carl:sms:problem")
}

func TestScheduleContactsOwnRulesApply(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.oncallWorld()
	w.rule("bob", "no-warnings", `warning_blackhole=true`, `critical_media=["sms"]`)
	w.entity("web-01")
	w.entitySchedules("web-01", "web-primary")
	expect(t, "bob's rule blackholes warnings", w.runScheduled(ev(at(2026, 4, 1, 12, 0), "web-01", "HTTP", "warning")))
	expect(t, "and lets criticals through", w.runScheduled(ev(at(2026, 4, 1, 12, 5), "web-01", "HTTP", "critical")),
		"bob:sms:problem@web-primary")
}

func TestNobodyOnCallGoesToTheFallbackAndSaysSo(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.oncallWorld()
	w.entity("web-01")
	w.entitySchedules("web-01", "web-primary")
	expect(t, "before the first turn nobody is on call: the fallback",
		w.runScheduled(ev(at(2026, 3, 20, 12, 0), "web-01", "HTTP", "critical")), "lead:sms:problem@web-primary")
	raw, err := redis.Strings(w.db.Do(t, "LRANGE", w.keys.Explain("web-01:HTTP"), 0, -1), nil)
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, r := range raw {
		var e schema.ExplainEntry
		if json.Unmarshal([]byte(r), &e) == nil && e.Stage == schema.ExplainNotifier &&
			strings.Contains(e.Reason, "schedule web-primary: nobody on call, fallback lead") {
			found = true
		}
	}
	if !found {
		t.Fatalf("no explain note of the fallback in %v", raw)
	}
}

func TestMissingScheduleReachesNobody(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.oncallWorld()
	w.entity("web-01", "carl")
	w.entitySchedules("web-01", "web-primary", "ghost")
	expect(t, "the ghost schedule adds nobody, the real one still routes",
		w.runScheduled(ev(at(2026, 3, 24, 12, 0), "web-01", "HTTP", "critical")), "carl:sms:problem", "ada:sms:problem@web-primary")
}
