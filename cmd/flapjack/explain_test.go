package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestExplainCommand: `flapjack explain` prints the trail of examples/timeline.jsonl over the
// example contacts in sentences, as JSON for tools, honours --since after the argument, and
// refuses a bad argument or format with exit 2.
func TestExplainCommand(t *testing.T) {
	t.Parallel()
	_, env := whatifLive(t)
	out, errOut, code := flapjack(t, env, "", "explain", "db-01.example.com:MySQL")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	for _, want := range []string{
		"2026-01-05 10:00:00 UTC  executive: ok service event: no notification: blocked by the ok filter (no problem was ever notified).",
		"2026-01-05 10:01:00 UTC  executive: critical service event: no notification: blocked by the delays filter (failing for 0 s of the 30 s initial_failure_delay).",
		"2026-01-05 10:01:30 UTC  notifier: problem notification (critical): 2 contact(s) considered, 4 alert(s) queued.",
		"rule ada-databases matched: critical goes to jabber, pagerduty",
		"email: not sent: not chosen by the rules for critical",
		"Deliveries (flapjack log):",
		"problem critical alert for db-01.example.com:MySQL to ada on jabber: queued, not yet taken by a gateway",
		"jabber: queued, not delivered yet (no gateway has taken it) (rollup threshold 5 not reached: 1 checks alerting)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("explain output lacks %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "10:00:00 UTC") > strings.Index(out, "10:01:30 UTC") {
		t.Errorf("not oldest first:\n%s", out)
	}

	out, errOut, code = flapjack(t, env, "", "explain", "db-01.example.com:MySQL", "--format", "json")
	if code != 0 {
		t.Fatalf("json: exit %d\n%s", code, errOut)
	}
	var entries []struct {
		Time     int64  `json:"time"`
		Stage    string `json:"stage"`
		Verdict  string `json:"verdict"`
		Filter   string `json:"filter"`
		Contacts []struct {
			ID string `json:"id"`
		} `json:"contacts"`
	}
	if err := json.Unmarshal([]byte(out), &entries); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if len(entries) < 4 || entries[0].Time != 1767607200 || entries[0].Stage != "executive" || entries[0].Filter != "ok" ||
		entries[1].Filter != "delays" || entries[3].Stage != "notifier" || len(entries[3].Contacts) != 2 {
		t.Errorf("JSON trail %+v", entries)
	}

	// the history is from January; nothing of it is within the last 2 hours
	out, _, code = flapjack(t, env, "", "explain", "db-01.example.com:MySQL", "--since", "2h")
	if code != 0 || strings.TrimSpace(out) != "no decisions recorded about db-01.example.com:MySQL" {
		t.Errorf("--since 2h: exit %d, %q", code, out)
	}
	for _, args := range [][]string{{"explain", "nonsense"}, {"explain"}, {"explain", "db-01.example.com:MySQL", "--format", "xml"}} {
		if _, errOut, code := flapjack(t, env, "", args...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, errOut)
		}
	}
}

// TestRulesTestCommand: `flapjack rules test` answers per medium with the rules' reasons, in
// the contact's timezone, as text and JSON, and exits 2 for an unknown contact.
func TestRulesTestCommand(t *testing.T) {
	t.Parallel()
	_, env := whatifLive(t)
	out, errOut, code := flapjack(t, env, "", "rules", "test", "--contact", "ada", "--entity", "db-01.example.com",
		"--check", "MySQL", "--state", "critical", "--time", "2026-01-06 10:00")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	for _, want := range []string{
		"critical problem of db-01.example.com:MySQL for Ada Lovelace (ada) at Tue 2026-01-06 10:00 GMT (Europe/London):",
		"rule ada-databases matched: critical goes to jabber, pagerduty",
		"email      no        not chosen by the rules for critical",
		"pagerduty  ALERT     alerted",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("rules test lacks %q:\n%s", want, out)
		}
	}
	// Alan's weekday rule is outside its hours on a Saturday afternoon in Sydney
	out, _, code = flapjack(t, env, "", "rules", "test", "--contact", "alan", "--entity", "web-01.example.com",
		"--check", "HTTP", "--time", "2026-01-10 03:00", "--tags", "http", "--json")
	if code != 0 {
		t.Fatalf("json: exit %d", code)
	}
	var ans map[string]any
	if err := json.Unmarshal([]byte(out), &ans); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if !strings.Contains(out, "outside its time restrictions at Sat 2026-01-10 14:00 AEDT") ||
		!strings.Contains(out, "no rule selects a medium for severity critical") {
		t.Errorf("alan's answer:\n%s", out)
	}
	if _, errOut, code := flapjack(t, env, "", "rules", "test", "--contact", "nobody", "--entity", "x", "--check", "y"); code != 2 ||
		!strings.Contains(errOut, "no such contact: nobody") {
		t.Errorf("unknown contact: exit %d, %q", code, errOut)
	}
}
