package notifier_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/notifier"
)

// testRules runs `rules test` for a contact and checks Redis is unchanged.
func (w *world) testRules(contact, entity, check, state string, at int64, tags ...string) notifier.RulesAnswer {
	w.t.Helper()
	before := w.db.Dump(w.t)
	conn := w.db.Pool.Get()
	defer conn.Close()
	ans, err := notifier.TestRules(conn, w.keys, w.ncfg, notifier.RulesQuery{Contact: contact, Entity: entity,
		Check: check, State: state, Tags: tags, Time: time.Unix(T0+at, 0)})
	if err != nil {
		w.t.Fatal(err)
	}
	if after := w.db.Dump(w.t); !reflect.DeepEqual(before, after) {
		w.t.Fatalf("rules test wrote to Redis:\nbefore %v\nafter  %v", before, after)
	}
	return ans
}

// outcomes renders an answer as "medium:ALERT|held:reason" lines.
func outcomes(a notifier.RulesAnswer) string {
	var out []string
	for _, m := range a.Contact.Media {
		v := "held"
		if m.Alerted {
			v = "ALERT"
		}
		out = append(out, m.Medium+":"+v+":"+m.Reason)
	}
	return strings.Join(out, "\n")
}

func mustContain(t *testing.T, what, got string, want ...string) {
	t.Helper()
	for _, s := range want {
		if !strings.Contains(got, s) {
			t.Fatalf("%s: %q not in\n%s", what, s, got)
		}
	}
}

func TestRulesTestExplainsMatchingAndNotMatching(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.contact("ada", []string{"sms=+100", "email=ada@example.com"})
	w.rule("ada", "general", `critical_media=["email"]`)
	w.rule("ada", "web", `entities=["web-01"]`, `critical_media=["sms"]`)
	w.rule("ada", "db", `tags=["database"]`, `critical_media=["sms","email"]`)
	w.entity("web-01", "ada")

	a := w.testRules("ada", "web-01", "HTTP", "critical", 0)
	rules := strings.Join(a.Contact.Rules, "\n")
	mustContain(t, "specific rule", rules, "rule web matched: critical goes to sms",
		`rule db does not match: the check has no tag "database"`, "rule general (general) matches but is ignored")
	mustContain(t, "media", outcomes(a), "sms:ALERT:alerted", "email:held:not chosen by the rules for critical")

	b := w.testRules("ada", "db-01", "MySQL", "warning", 0)
	mustContain(t, "no rule for warning", strings.Join(b.Contact.Rules, "\n"),
		"rule web does not match: entity db-01 is not in its entities", "rule general matched but names no media for warning")
	mustContain(t, "nothing sent", b.Contact.Reason, "no rule selects a medium for severity warning")

	c := w.testRules("ada", "db-01", "MySQL", "critical", 0, "database")
	mustContain(t, "tag rule", outcomes(c), "email:ALERT", "sms:ALERT")
}

func TestRulesTestTimeRestrictionBlackholeAndInterval(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	officeHours := `[{"start_time":"2013-02-01 09:00:00","end_time":"2013-02-01 17:00:00",` +
		`"rrules":[{"rule_type":"Weekly","interval":1,"validations":{"day":[1,2,3,4,5]}}]}]`
	w.contact("nyc", []string{"sms=+1"}, timezone("America/New_York"), interval("sms", 600))
	w.rule("nyc", "office", `critical_media=["sms"]`, "time_restrictions="+officeHours)
	w.rule("nyc", "quiet-dev", `entities=["dev-01"]`, `critical_blackhole=true`)
	w.entity("web-01", "nyc")
	w.entity("dev-01", "nyc")

	// T0 is Mon 10:00 UTC = 05:00 in New York: closed
	a := w.testRules("nyc", "web-01", "HTTP", "critical", 0)
	mustContain(t, "closed", strings.Join(a.Contact.Rules, "\n"),
		"rule office matches but is outside its time restrictions at Mon 2026-01-05 05:00 EST (America/New_York)")
	if a.Timezone != "America/New_York" || a.Time.Hour() != 5 {
		t.Fatalf("time not in the contact's zone: %v %s", a.Time, a.Timezone)
	}
	// 15:00 UTC = 10:00 New York: open
	open := int64(5 * 3600)
	mustContain(t, "open", outcomes(w.testRules("nyc", "web-01", "HTTP", "critical", open)), "sms:ALERT:alerted")

	mustContain(t, "blackhole", w.testRules("nyc", "dev-01", "HTTP", "critical", open).Contact.Reason,
		"blackholed: a matching rule drops critical")

	// alert for real at 15:00, then ask again 2 minutes later: the 600 s interval holds sms back
	expect(t, "real alert", w.run(ev(open, "web-01", "HTTP", "critical")), "nyc:sms:problem")
	held := w.testRules("nyc", "web-01", "HTTP", "critical", open+120)
	mustContain(t, "interval", outcomes(held), "sms:held:interval: critical was already alerted on sms within its 600 s interval; held back until 2026-01-05T15:10:00Z")
	mustContain(t, "after the interval", outcomes(w.testRules("nyc", "web-01", "HTTP", "critical", open+600)), "sms:ALERT")
}

func TestRulesTestRollupAndUnknownContact(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.contact("ada", []string{"email=ada@example.com"}, rollupAt("email", 2))
	w.entity("web-01", "ada")
	expect(t, "two checks fail", w.run(ev(0, "web-01", "c1", "critical"), ev(1, "web-01", "c2", "critical")),
		"ada:email:problem", "ada:email:problem:rollup_problem")
	a := w.testRules("ada", "web-01", "c3", "critical", 30)
	mustContain(t, "rollup", outcomes(a), "email:held:rollup: 2 checks alerting (threshold 2) and a summary was sent within the interval")

	conn := w.db.Pool.Get()
	defer conn.Close()
	if _, err := notifier.TestRules(conn, w.keys, w.ncfg, notifier.RulesQuery{Contact: "nobody", Entity: "e", Check: "c",
		State: "critical", Time: time.Unix(T0, 0)}); err == nil {
		t.Fatal("unknown contact accepted")
	}
}

// TestRulesTestRecoveryInheritsTheNotifiedSeverity: a recovery or acknowledgement is routed by
// the highest severity notified since the last recovery, as the executive sends it, not as "ok".
func TestRulesTestRecoveryInheritsTheNotifiedSeverity(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.contact("ada", []string{"sms=+100", "email=ada@example.com"})
	w.rule("ada", "general", `critical_media=["sms"]`, `warning_media=["email"]`)
	w.entity("web-01", "ada")

	none := w.testRules("ada", "web-01", "HTTP", "ok", 0)
	if none.Severity != "ok" || !strings.Contains(none.SeverityNote, "no problem of this check was notified") {
		t.Fatalf("recovery of a check never notified: severity %q (%s)", none.Severity, none.SeverityNote)
	}
	conn := w.db.Pool.Get()
	defer conn.Close()
	if _, err := conn.Do("SET", w.keys.LastNotification("web-01:HTTP", "critical"), T0-60); err != nil {
		t.Fatal(err)
	}
	for _, state := range []string{"ok", "acknowledgement"} {
		a := w.testRules("ada", "web-01", "HTTP", state, 0)
		if a.Severity != "critical" || !strings.Contains(a.SeverityNote, "inherited") {
			t.Fatalf("%s after a critical problem was notified: severity %q (%s)", state, a.Severity, a.SeverityNote)
		}
		mustContain(t, state, outcomes(a), "sms:ALERT", "email:held")
	}
	asked, err := notifier.TestRules(conn, w.keys, w.ncfg, notifier.RulesQuery{Contact: "ada", Entity: "web-01",
		Check: "HTTP", State: "ok", Severity: "warning", Time: time.Unix(T0, 0)})
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "--severity warning", outcomes(asked), "email:ALERT", "sms:held")
}
