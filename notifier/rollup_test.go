package notifier_test

import (
	"sort"
	"strings"
	"testing"
)

// rollupWorld: ada gets email for every check of web-01, rolled up from 2 failing checks, with
// a 60 s email interval (equal to the executive's repeat delay, so repeats reach the notifier).
func rollupWorld(t *testing.T) *world {
	w := newWorld(t)
	w.contact("ada", []string{"email=ada@example.com", "pagerduty=routingkey000000000000000000000001"},
		rollupAt("email", 2), interval("email", 60), interval("pagerduty", 60))
	w.entity("web-01", "ada")
	return w
}

func crit(at int64, check string) string { return ev(at, "web-01", check, "critical") }

func TestRollupEntersAtTheThresholdAndIsThrottled(t *testing.T) {
	t.Parallel()
	w := rollupWorld(t)
	expect(t, "one failing check: a plain problem", w.run(crit(0, "c1")),
		"ada:email:problem", "ada:pagerduty:problem")
	alerts := w.alerts(crit(10, "c2"))
	got := []string{describe(alerts[0]), describe(alerts[1])}
	expect(t, "two: the email is a rollup problem, pagerduty is never rolled up", got,
		"ada:email:problem:rollup_problem", "ada:pagerduty:problem")
	r := alerts[0]
	if r.RollupThreshold == nil || *r.RollupThreshold != 2 || len(r.RollupAlerts) != 2 {
		t.Fatalf("rollup fields %+v", r)
	}
	if e := r.RollupAlerts["web-01:c1"]; e.State != "critical" || e.Duration != 10 {
		t.Fatalf("rollup entry for c1 %+v", e)
	}
	expect(t, "a third within the interval: one rollup per interval", w.run(crit(20, "c3")), "ada:pagerduty:problem")
	expect(t, "repeats within the interval", w.run(crit(60, "c1")), "ada:pagerduty:problem")
	expect(t, "after the interval: the next rollup", w.run(crit(80, "c3")),
		"ada:email:problem:rollup_problem", "ada:pagerduty:problem")
}

func TestRollupLeaves(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		leave []string // lines that take c2 out of the alerting set
		next  string   // the line whose email becomes the rollup recovery
		want  []string
	}{
		{"through recovery", nil, ev(100, "web-01", "c2", "ok"),
			[]string{"ada:email:recovery:rollup_recovery", "ada:pagerduty:recovery"}},
		{"through acknowledgement", nil, ev(100, "web-01", "c2", "acknowledgement"),
			[]string{"ada:email:acknowledgement:rollup_recovery", "ada:pagerduty:acknowledgement"}},
		{"through scheduled maintenance", []string{act(90, "scheduled_maintenance", "web-01", "c2", `"duration":3600`)},
			crit(100, "c1"), []string{"ada:email:problem:rollup_recovery", "ada:pagerduty:problem"}},
		{"through a disabled check", []string{act(90, "disable_check", "web-01", "c2")},
			crit(100, "c1"), []string{"ada:email:problem:rollup_recovery", "ada:pagerduty:problem"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := rollupWorld(t)
			w.run(crit(0, "c1"))
			expect(t, "in rollup", w.run(crit(10, "c2")), "ada:email:problem:rollup_problem", "ada:pagerduty:problem")
			w.run(c.leave...)
			got := w.run(c.next)
			sort.Strings(got)
			expect(t, "leaving rollup", got, c.want...)
			members := w.db.Do(t, "ZRANGE", w.keys.AlertingChecks("ada", "email"), 0, -1)
			var ids []string
			for _, m := range members.([]any) {
				ids = append(ids, string(m.([]byte)))
			}
			if strings.Join(ids, ",") != "web-01:c1" {
				t.Fatalf("alerting checks after leaving: %v", ids)
			}
			expect(t, "back to plain problems", w.run(crit(200, "c1")), "ada:email:problem", "ada:pagerduty:problem")
		})
	}
}

func TestTestsNeverEnterRollup(t *testing.T) {
	t.Parallel()
	w := rollupWorld(t)
	w.run(crit(0, "c1"))
	expect(t, "a test is not counted", w.run(ev(10, "web-01", "c2", "test_notifications")), "ada:email:test", "ada:pagerduty:test")
}
