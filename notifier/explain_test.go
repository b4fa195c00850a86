package notifier_test

import (
	"strings"
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/model/views"
)

// trail is the explain output of a check, as `flapjack explain` prints it (UTC).
func (w *world) trail(id string) string {
	w.t.Helper()
	conn := w.db.Pool.Get()
	defer conn.Close()
	entries, err := views.ReadExplain(conn, w.keys, id, 0)
	if err != nil {
		w.t.Fatal(err)
	}
	var lines []string
	for _, e := range entries {
		lines = append(lines, views.ExplainLines(e, time.UTC, nil)...)
	}
	return strings.Join(lines, "\n")
}

func TestExplainRecordsEveryFilter(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.xcfg.InitialFailureDelay = 30 * time.Second
	w.contact("ada", []string{"email=ada@example.com"})
	w.entity("web-01", "ada")
	w.run(
		ev(0, "web-01", "HTTP", "ok"),
		ev(10, "web-01", "HTTP", "critical"),
		ev(40, "web-01", "HTTP", "critical"),
		ev(50, "web-01", "HTTP", "critical"),
		ev(60, "web-01", "HTTP", "acknowledgement", `"duration":600`),
		ev(70, "web-01", "HTTP", "critical"),
		act(80, "scheduled_maintenance", "web-01", "HTTP", `"duration":3600`),
		ev(90, "web-01", "HTTP", "critical"),
		ev(5000, "web-01", "HTTP", "ok"),
		ev(5010, "web-01", "HTTP", "acknowledgement"),
	)
	got := w.trail("web-01:HTTP")
	mustContain(t, "trail", got,
		"2026-01-05 10:00:00 UTC  executive: ok service event: no notification: blocked by the ok filter (no problem was ever notified).",
		"10:00:10 UTC  executive: critical service event: no notification: blocked by the delays filter (failing for 0 s of the 30 s initial_failure_delay).",
		"10:00:40 UTC  executive: critical service event: a problem notification (severity critical) was generated.",
		"10:00:40 UTC  notifier: problem notification (critical): 1 contact(s) considered, 1 alert(s) queued.",
		"no notification rules: every medium for every severity",
		"email: queued",
		"10:00:50 UTC  executive: critical service event: no notification: blocked by the delays filter (critical was notified 10 s ago, within the 60 s repeat_failure_delay).",
		"10:01:00 UTC  executive: acknowledgement event: an acknowledgement notification (severity critical) was generated.",
		"10:01:10 UTC  executive: critical service event: no notification: blocked by unscheduled maintenance (acknowledged (in unscheduled maintenance) until 2026-01-05 10:11:00 UTC).",
		"10:01:30 UTC  executive: critical service event: no notification: blocked by scheduled maintenance (in scheduled maintenance until 2026-01-05 11:01:20 UTC).",
		"11:23:20 UTC  executive: ok service event: a recovery notification (severity critical) was generated.",
		"11:23:30 UTC  executive: acknowledgement event: no notification: blocked by the acknowledgement filter (check is not failing).",
	)
	// oldest first
	if strings.Index(got, "10:00:00") > strings.Index(got, "11:23:30") {
		t.Fatalf("not in time order:\n%s", got)
	}
}

func TestExplainRecordsNotifierReasons(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	officeHours := `[{"start_time":"2013-02-01 09:00:00","end_time":"2013-02-01 17:00:00",` +
		`"rrules":[{"rule_type":"Weekly","interval":1,"validations":{"day":[1,2,3,4,5]}}]}]`
	w.contact("ada", []string{"sms=+100", "email=ada@example.com"}, interval("email", 600))
	w.rule("ada", "web", `entities=["web-01"]`, `critical_media=["email"]`, `warning_blackhole=true`)
	w.rule("ada", "dbonly", `entities=["db-01"]`, `critical_media=["sms"]`)
	w.contact("nyc", []string{"sms=+1"}, timezone("America/New_York"))
	w.rule("nyc", "office", `critical_media=["sms"]`, "time_restrictions="+officeHours)
	w.contact("roll", []string{"email=r@example.com"}, rollupAt("email", 1))
	w.entity("web-01", "ada", "nyc", "roll")
	w.run(
		ev(0, "web-01", "HTTP", "critical"),
		ev(120, "web-01", "HTTP", "critical"),
		ev(200, "web-01", "Disk", "warning"),
		ev(210, "lonely", "PING", "critical"),
	)
	got := w.trail("web-01:HTTP")
	mustContain(t, "notifier trail", got,
		"Ada Test (ada):",
		"rule web matched: critical goes to email",
		"rule dbonly does not match: entity web-01 is not in its entities",
		"email: queued",
		"sms: not sent: not chosen by the rules for critical",
		"Nyc Test (nyc):",
		"rule office matches but is outside its time restrictions at Mon 2026-01-05 05:00 EST (America/New_York)",
		"nothing sent: no rule selects a medium for severity critical",
		"Roll Test (roll):",
		"email: queued, with a rollup summary: 1 checks alerting (threshold 1)",
		"email: not sent: interval: critical was already alerted on email within its 600 s interval; held back until 2026-01-05T10:10:00Z",
	)
	mustContain(t, "blackhole and rollup", w.trail("web-01:Disk"),
		"rule web matched and blackholes warning",
		"nothing sent: blackholed: a matching rule drops warning",
		"email: not sent: rollup: 2 checks alerting (threshold 1) and a summary was sent within the interval",
	)
	mustContain(t, "no contacts", w.trail("lonely:PING"), "notifier: problem notification (critical): no contact is interested in this check; nothing was sent.")
}

func TestExplainListIsCapped(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.xcfg.ExplainEntries, w.ncfg.ExplainEntries = 5, 5
	var lines []string
	for i := int64(0); i < 20; i++ {
		// Alternating, so that every event is a decision worth recording (a routine ok of an
		// ok check is not recorded).
		state := "ok"
		if i%2 == 1 {
			state = "warning"
		}
		lines = append(lines, ev(i, "web-01", "HTTP", state))
	}
	w.run(lines...)
	if n := w.db.Do(t, "LLEN", w.keys.Explain("web-01:HTTP")); n != int64(5) {
		t.Fatalf("explain list holds %v entries, want 5", n)
	}
	if got := w.trail("web-01:HTTP"); !strings.Contains(got, "10:00:19") || strings.Contains(got, "10:00:14") {
		t.Fatalf("not the newest 5:\n%s", got)
	}
}
