package notifier_test

import (
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
)

// alerting is a contact's contact_alerting_checks for a medium, members sorted.
func (w *world) alerting(contact, medium string) string {
	w.t.Helper()
	ids, err := redis.Strings(w.db.Do(w.t, "ZRANGE", w.keys.AlertingChecks(contact, medium), 0, -1), nil)
	if err != nil {
		w.t.Fatal(err)
	}
	return strings.Join(ids, ",")
}

func expectAlerting(t *testing.T, w *world, step, contact, medium, want string) {
	t.Helper()
	if got := w.alerting(contact, medium); got != want {
		t.Fatalf("%s: contact_alerting_checks:%s:media:%s = [%s], want [%s]", step, contact, medium, got, want)
	}
}

// TestAlertingChecksWithoutRollupAreCleaned: on media without rollup, a check leaves the
// contact's alerting set when it recovers or is acknowledged, even when that notification is
// not sent on the medium, and, as for rollup media, when it is found ok, in maintenance,
// disabled or no longer the contact's the next time the medium sends a problem (when the set
// grows). The sets do not keep checks that stopped alerting.
func TestAlertingChecksWithoutRollupAreCleaned(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		lines []string // after warning (email) and critical (sms) problems of web-01:HTTP at 0 and 10
		want  []string // the alerts of the last line
		email string   // ada's email set afterwards
		sms   string   // and sms set
	}{
		{"a recovery sent by sms only (critical media) also leaves the email set",
			[]string{ev(100, "web-01", "HTTP", "ok")}, []string{"ada:sms:recovery"}, "", ""},
		{"an acknowledgement sent by sms only",
			[]string{ev(100, "web-01", "HTTP", "acknowledgement")}, []string{"ada:sms:acknowledgement"}, "", ""},
		{"a recovery sent nowhere (blackholed by a tag rule)",
			[]string{ev(100, "web-01", "HTTP", "ok", `"tags":["quiet"]`)}, nil, "", ""},
		{"a recovery in scheduled maintenance is never notified: cleaned at each medium's next problem",
			[]string{act(90, "scheduled_maintenance", "web-01", "HTTP", `"duration":3600`), ev(100, "web-01", "HTTP", "ok"),
				ev(110, "web-01", "Disk", "warning"), ev(120, "web-01", "Load", "critical")},
			[]string{"ada:sms:problem"}, "web-01:Disk", "web-01:Load"},
		{"a disabled check: cleaned at each medium's next problem",
			[]string{act(90, "disable_check", "web-01", "HTTP"), ev(110, "web-01", "Disk", "warning"), ev(120, "web-01", "Load", "critical")},
			[]string{"ada:sms:problem"}, "web-01:Disk", "web-01:Load"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			w.contact("ada", []string{"email=ada@example.com", "sms=+100"})
			w.rule("ada", "r", `warning_media=["email"]`, `critical_media=["sms"]`)
			w.rule("ada", "quiet", `tags=["quiet"]`, `warning_media=["email"]`, `critical_media=["sms"]`, `critical_blackhole=true`)
			w.entity("web-01", "ada")
			expect(t, "warning", w.run(ev(0, "web-01", "HTTP", "warning")), "ada:email:problem")
			expect(t, "critical", w.run(ev(10, "web-01", "HTTP", "critical")), "ada:sms:problem")
			expectAlerting(t, w, "both alerting", "ada", "email", "web-01:HTTP")
			expectAlerting(t, w, "both alerting", "ada", "sms", "web-01:HTTP")
			var got []string
			for _, l := range c.lines {
				got = w.run(l)
			}
			expect(t, "last step", got, c.want...)
			expectAlerting(t, w, "afterwards", "ada", "email", c.email)
			expectAlerting(t, w, "afterwards", "ada", "sms", c.sms)
		})
	}
}

// TestAlertingChecksOfAContactNoLongerConcerned: a check whose entity is no longer the
// contact's leaves the set the next time the medium alerts.
func TestAlertingChecksOfAContactNoLongerConcerned(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.contact("ada", []string{"email=ada@example.com"})
	w.entity("web-01", "ada")
	w.entity("db-01", "ada")
	expect(t, "web-01 fails", w.run(ev(0, "web-01", "HTTP", "critical")), "ada:email:problem")
	w.db.Do(t, "SREM", w.keys.ContactsFor("id-web-01"), "ada")
	expect(t, "db-01 fails", w.run(ev(10, "db-01", "MySQL", "critical")), "ada:email:problem")
	expectAlerting(t, w, "after", "ada", "email", "db-01:MySQL")
}

// TestRollupSetsOnlySendsTheSameAlerts: with RollupSetsOnly (whatif's scratch replays) the
// alerts of a timeline are the same, rollups included, while only the rollup medium keeps its
// alerting set; without it, the set of the medium without rollup is kept as well.
func TestRollupSetsOnlySendsTheSameAlerts(t *testing.T) {
	t.Parallel()
	timeline := []string{
		crit(0, "c1"), crit(10, "c2"), ev(20, "web-01", "c3", "warning"), crit(70, "c1"),
		act(80, "scheduled_maintenance", "web-01", "c2", `"duration":3600`), crit(140, "c1"),
		ev(150, "web-01", "c1", "ok"), crit(160, "c3"), ev(170, "web-01", "c3", "acknowledgement"),
		crit(200, "c4"),
	}
	worlds := map[bool]*world{}
	alerts := map[bool][]string{}
	for _, only := range []bool{false, true} {
		w := newWorld(t)
		w.ncfg.RollupSetsOnly = only
		w.contact("ada", []string{"email=ada@example.com", "sms=+100"}, rollupAt("email", 2),
			interval("email", 60), interval("sms", 60))
		w.rule("ada", "r", `warning_media=["email","sms"]`, `critical_media=["email","sms"]`)
		w.entity("web-01", "ada")
		worlds[only] = w
		for _, line := range timeline {
			alerts[only] = append(alerts[only], strings.Join(w.run(line), " "))
		}
	}
	if strings.Join(alerts[true], "|") != strings.Join(alerts[false], "|") {
		t.Fatalf("alerts differ:\n sets kept     %q\n rollup only   %q", alerts[false], alerts[true])
	}
	if !strings.Contains(strings.Join(alerts[false], " "), "rollup_problem") {
		t.Fatalf("the timeline never rolled up: %q", alerts[false])
	}
	if got, want := worlds[true].alerting("ada", "email"), worlds[false].alerting("ada", "email"); got != want || got == "" {
		t.Fatalf("rollup medium's set: %q with RollupSetsOnly, %q without", got, want)
	}
	expectAlerting(t, worlds[true], "rollup sets only", "ada", "sms", "")
	if worlds[false].alerting("ada", "sms") == "" {
		t.Fatal("without RollupSetsOnly the sms set was not kept")
	}
}
