package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/schema"
)

// The escalation timelines of issue 25, through `flapjack replay` on the injected clock, with
// the example policy (examples/escalation): ada at once, bob after 15 minutes, carol (SMS only)
// after 45 minutes, for web-01's HTTP check, which has no other contacts.

const (
	escT0   = 1767607200 // HTTP is ok
	escFail = escT0 + 90 // the first problem alert (30 s after the first failure)
	escMin  = int64(time.Minute / time.Second)
)

// escEvent is one line of a timeline, at seconds after the first problem alert.
func escEvent(after int64, state string) string {
	summary := "HTTP 503 in 0.002 s"
	if state == schema.StateOK {
		summary = "HTTP 200 in 0.029 s"
	}
	return fmt.Sprintf(`{"entity":"web-01","check":"HTTP","type":"service","state":%q,"time":%d,"summary":%q}`,
		state, escFail+after, summary)
}

// escFailing is the start of every timeline: ok, then failing until the first problem alert.
func escFailing() []string {
	return []string{
		fmt.Sprintf(`{"entity":"web-01","check":"HTTP","type":"service","state":"ok","time":%d,"summary":"HTTP 200"}`, escT0),
		escEvent(-30, schema.StateCritical), escEvent(0, schema.StateCritical),
	}
}

// criticalEvery is a failing check's events every 5 minutes in (from, to].
func criticalEvery(from, to int64) []string {
	var out []string
	for at := from + 5*escMin; at <= to; at += 5 * escMin {
		out = append(out, escEvent(at, schema.StateCritical))
	}
	return out
}

type escAlert struct {
	repeat               int
	at                   int64 // seconds after the first problem alert
	contact, medium, typ string
	step                 int // 0: not an escalation alert
	text                 string
}

func (a escAlert) String() string {
	s := fmt.Sprintf("+%dm %s/%s %s step %d", a.at/escMin, a.contact, a.medium, a.typ, a.step)
	if a.repeat > 0 {
		s += fmt.Sprintf(" repeat %d", a.repeat)
	}
	return s
}

// replayEscalation imports the example contacts and policy into a fresh Redis and replays lines.
func replayEscalation(t *testing.T, lines []string) ([]escAlert, *testredis.DB) {
	t.Helper()
	root, _ := filepath.Abs("../..")
	return replayEscalationWith(t, filepath.Join(root, "examples", "escalation", "policies.json"), lines)
}

// replayEscalationWith imports the example contacts and the policies file, then replays lines.
func replayEscalationWith(t *testing.T, policies string, lines []string) ([]escAlert, *testredis.DB) {
	t.Helper()
	db := testredis.New(t)
	env := []string{"FLAPJACK_REDIS_URL=" + db.URL(), "FLAPJACK_LOG_LEVEL=warn"}
	root, _ := filepath.Abs("../..")
	for _, imp := range [][]string{{"contacts", filepath.Join(root, "examples", "escalation", "contacts.json")}, {"escalations", policies}} {
		if _, errOut, code := flapjack(t, env, "", "import", imp[0], "-f", imp[1]); code != 0 {
			t.Fatalf("import %s: exit %d: %s", imp[0], code, errOut)
		}
	}
	replayed, times := replayAlerts(t, env, lines)
	var alerts []escAlert
	for i, a := range replayed {
		ea := escAlert{at: times[i].Unix() - escFail, contact: a.ContactID, medium: a.Media, typ: a.NotificationType,
			text: gateways.SMSText(gateways.NewMessage(a, time.UTC))}
		if a.Escalation != nil {
			ea.step, ea.repeat = a.Escalation.Step, a.Escalation.Repeat
		}
		alerts = append(alerts, ea)
	}
	return alerts, db
}

func wantAlerts(t *testing.T, got []escAlert, want ...string) {
	t.Helper()
	var have []string
	for _, a := range got {
		have = append(have, a.String())
	}
	if strings.Join(have, "\n") != strings.Join(want, "\n") {
		t.Fatalf("alerts:\n  %s\nwant:\n  %s", strings.Join(have, "\n  "), strings.Join(want, "\n  "))
	}
}

func TestEscalationNobodyAcknowledges(t *testing.T) {
	t.Parallel()
	lines := append(escFailing(), criticalEvery(0, 60*escMin)...)
	alerts, _ := replayEscalation(t, lines)
	wantAlerts(t, alerts,
		"+0m ada/sms problem step 1",
		"+15m bob/sms problem step 2",
		"+45m carol/sms problem step 3")
	for i, want := range []string{
		"Escalation (step 1 of 3): Problem: 'HTTP' on web-01 is Critical at 5 Jan 10:01, HTTP 503 in 0.002 s (ACKID ",
		"Escalation (step 2 of 3, nobody acknowledged for 15 minutes): Problem: 'HTTP' on web-01 is Critical at 5 Jan 10:16, HTTP 503 in 0.002 s (ACKID ",
		"Escalation (step 3 of 3, nobody acknowledged for 45 minutes): Problem: 'HTTP' on web-01 is Critical at 5 Jan 10:46, HTTP 503 in 0.002 s (ACKID ",
	} {
		if !strings.HasPrefix(alerts[i].text, want) {
			t.Errorf("alert %d reads %q, want it to start %q", i, alerts[i].text, want)
		}
	}
}

func TestEscalationAcknowledgedAtTenMinutesFiresNothingMore(t *testing.T) {
	t.Parallel()
	lines := append(escFailing(), criticalEvery(0, 5*escMin)...)
	lines = append(lines, fmt.Sprintf(`{"entity":"web-01","check":"HTTP","type":"action","state":"acknowledgement","time":%d,"summary":"ada: on it","duration":14400}`, escFail+10*escMin))
	lines = append(lines, criticalEvery(10*escMin, 60*escMin)...)
	alerts, db := replayEscalation(t, lines)
	wantAlerts(t, alerts,
		"+0m ada/sms problem step 1",
		"+10m ada/sms acknowledgement step 0")
	assertLadderStopped(t, db, "acknowledged")
}

func TestEscalationRecoveryAtTwentyMinutesTellsStepsOneAndTwo(t *testing.T) {
	t.Parallel()
	lines := append(escFailing(), criticalEvery(0, 15*escMin)...)
	lines = append(lines, escEvent(20*escMin, schema.StateOK), escEvent(60*escMin, schema.StateOK))
	alerts, db := replayEscalation(t, lines)
	wantAlerts(t, alerts,
		"+0m ada/sms problem step 1",
		"+15m bob/sms problem step 2",
		"+20m ada/sms recovery step 0",
		"+20m bob/sms recovery step 0")
	assertLadderStopped(t, db, "recovered")
}

func TestEscalationStopsForScheduledMaintenance(t *testing.T) {
	t.Parallel()
	lines := append(escFailing(), criticalEvery(0, 5*escMin)...)
	lines = append(lines, fmt.Sprintf(`{"action":"scheduled_maintenance","time":%d,"entity":"web-01","check":"HTTP","duration":"2h","summary":"deploy"}`, escFail+10*escMin))
	lines = append(lines, criticalEvery(10*escMin, 60*escMin)...)
	alerts, db := replayEscalation(t, lines)
	wantAlerts(t, alerts, "+0m ada/sms problem step 1")
	assertLadderStopped(t, db, "maintenance")
	explained, errOut, code := flapjack(t, []string{"FLAPJACK_REDIS_URL=" + db.URL()}, "", "explain", "web-01:HTTP")
	if code != 0 {
		t.Fatalf("explain: exit %d: %s", code, errOut)
	}
	contains := func(want string) {
		if !strings.Contains(explained, want) {
			t.Errorf("explain lacks %q:\n%s", want, explained)
		}
	}
	contains("escalation web-oncall started: step 1 due at 2026-01-05T10:01:30Z")
	contains("10:01:30 UTC  escalation: escalation web-oncall step 1 of 3 fired: nobody acknowledged for 0 seconds; next step due at 2026-01-05T10:16:30Z. 1 contact(s) considered, 1 alert(s) queued.")
	contains("10:16:30 UTC  escalation: escalation web-oncall stopped before step 2: the check is in scheduled maintenance.")
}

// TestEscalationFlappingDoesNotRestartTheLadder: the check recovers and fails again twice within
// the policy's restart window (30 minutes): the ladder resumes each time, step 1 is not paged
// again, and step 2 fires at +15 minutes counted from the first problem alert.
func TestEscalationFlappingDoesNotRestartTheLadder(t *testing.T) {
	t.Parallel()
	lines := append(escFailing(),
		escEvent(2*escMin, schema.StateOK),
		escEvent(4*escMin, schema.StateCritical), escEvent(4*escMin+30, schema.StateCritical),
		escEvent(6*escMin, schema.StateOK),
		escEvent(8*escMin, schema.StateCritical), escEvent(8*escMin+30, schema.StateCritical))
	lines = append(lines, criticalEvery(10*escMin-5*escMin, 20*escMin)...)
	alerts, _ := replayEscalation(t, lines)
	wantAlerts(t, alerts,
		"+0m ada/sms problem step 1",
		"+2m ada/sms recovery step 0",
		"+6m ada/sms recovery step 0",
		"+15m bob/sms problem step 2")
}

// TestEscalationRestartsAfterTheRestartWindow: a failure more than 30 minutes after the ladder
// stopped is a new problem: the ladder starts again from step 1.
func TestEscalationRestartsAfterTheRestartWindow(t *testing.T) {
	t.Parallel()
	lines := append(escFailing(), escEvent(2*escMin, schema.StateOK),
		escEvent(40*escMin, schema.StateCritical), escEvent(40*escMin+30, schema.StateCritical),
		escEvent(50*escMin, schema.StateCritical))
	alerts, _ := replayEscalation(t, lines)
	wantAlerts(t, alerts,
		"+0m ada/sms problem step 1",
		"+2m ada/sms recovery step 0",
		"+40m ada/sms problem step 1")
}

func assertLadderStopped(t *testing.T, db *testredis.DB, reason string) {
	t.Helper()
	conn := db.Conn(t)
	defer conn.Close()
	keys := schema.NewKeys("")
	got, err := redis.StringMap(conn.Do("HGETALL", keys.EscalationLadder("web-oncall", "web-01:HTTP")))
	if err != nil {
		t.Fatal(err)
	}
	if got["stopped_reason"] != reason || got["next_due"] != "0" {
		t.Errorf("ladder %v, want stopped for %s with nothing due", got, reason)
	}
	n, _ := redis.Int(conn.Do("ZCARD", keys.EscalationsDue()))
	if n != 0 {
		t.Errorf("%d ladders still due", n)
	}
}

func TestEscalationExampleTimeline(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../../examples/escalation/timeline.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	alerts, _ := replayEscalation(t, strings.Split(strings.TrimSpace(string(data)), "\n"))
	wantAlerts(t, alerts,
		"+0m ada/sms problem step 1",
		"+15m bob/sms problem step 2",
		"+45m carol/sms problem step 3",
		"+48m ada/sms recovery step 0",
		"+48m bob/sms recovery step 0",
		"+48m carol/email recovery step 0",
		"+48m carol/sms recovery step 0")
	// the texts the README's worked example shows
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range alerts {
		if !strings.Contains(string(readme), "`"+a.text+"`") {
			t.Errorf("README's worked example lacks %s's %s text %q", a.contact, a.medium, a.text)
		}
	}
}

// TestStatusListsEscalationsInProgress: after 20 minutes of an unacknowledged problem, `flapjack
// status` shows its ladder: 2 of 3 steps fired, step 3 due at +45 minutes, ada and bob alerted.
func TestStatusListsEscalationsInProgress(t *testing.T) {
	t.Parallel()
	lines := append(escFailing(), criticalEvery(0, 20*escMin)...)
	_, db := replayEscalation(t, lines)
	env := []string{"FLAPJACK_REDIS_URL=" + db.URL()}
	out, errOut, _ := flapjack(t, env, "", "status", "--json")
	var snap struct {
		Escalations []struct {
			Policy     string   `json:"policy"`
			Check      string   `json:"check"`
			StepsFired int      `json:"steps_fired"`
			Steps      int      `json:"steps"`
			NextDue    int64    `json:"next_step_due"`
			Alerted    []string `json:"alerted"`
		} `json:"escalations"`
		Total int `json:"escalations_total"`
	}
	if err := json.Unmarshal([]byte(out), &snap); err != nil {
		t.Fatalf("status --json: %v\n%s\n%s", err, out, errOut)
	}
	if snap.Total != 1 || len(snap.Escalations) != 1 {
		t.Fatalf("escalations %+v, want one", snap)
	}
	e := snap.Escalations[0]
	if e.Policy != "web-oncall" || e.Check != "web-01:HTTP" || e.StepsFired != 2 || e.Steps != 3 ||
		e.NextDue != escFail+45*escMin || strings.Join(e.Alerted, ",") != "ada,bob" {
		t.Errorf("escalation %+v", e)
	}
	text, _, _ := flapjack(t, env, "", "status")
	if !strings.Contains(text, "escalations in progress  1") || !regexp.MustCompile(`web-01:HTTP\s+web-oncall\s+2 of 3\s+.*step 3 due now\s+ada, bob`).MatchString(text) {
		t.Errorf("status shows no escalation line:\n%s", text)
	}
}

// TestEscalationRepeatsTheLastStepUntilHandled: with "repeat": "20 minutes" the last step pages
// again every 20 minutes (longer than Bob's 15-minute interval, which applies to repeats as to
// any alert) until the acknowledgement.
func TestEscalationRepeatsTheLastStepUntilHandled(t *testing.T) {
	t.Parallel()
	policies := filepath.Join(t.TempDir(), "policies.json")
	if err := os.WriteFile(policies, []byte(`[{"id":"web-oncall","entities":["web-01"],"repeat":"20 minutes",
		"steps":[{"delay":"0 minutes","contacts":["ada"]},{"delay":"15 minutes","contacts":["bob"]}]}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	lines := append(escFailing(), criticalEvery(0, 60*escMin)...)
	lines = append(lines, fmt.Sprintf(`{"entity":"web-01","check":"HTTP","type":"action","state":"acknowledgement","time":%d,"summary":"bob: on it","duration":14400}`, escFail+61*escMin))
	lines = append(lines, criticalEvery(61*escMin, 90*escMin)...)
	alerts, _ := replayEscalationWith(t, policies, lines)
	wantAlerts(t, alerts,
		"+0m ada/sms problem step 1",
		"+15m bob/sms problem step 2",
		"+35m bob/sms problem step 2 repeat 1",
		"+55m bob/sms problem step 2 repeat 2",
		"+61m ada/sms acknowledgement step 0",
		"+61m bob/sms acknowledgement step 0")
	if want := "Escalation (step 2 of 2, repeat 1, nobody acknowledged for 35 minutes): Problem: 'HTTP' on web-01"; !strings.HasPrefix(alerts[2].text, want) {
		t.Errorf("repeat reads %q, want it to start %q", alerts[2].text, want)
	}
}

// TestEscalationOnlyForItsSeverities: the example policy escalates critical problems only; a
// warning is routed as usual (here: to nobody) and starts no ladder.
func TestEscalationOnlyForItsSeverities(t *testing.T) {
	t.Parallel()
	lines := []string{
		fmt.Sprintf(`{"entity":"web-01","check":"HTTP","type":"service","state":"ok","time":%d,"summary":"HTTP 200"}`, escT0),
		escEvent(-30, schema.StateWarning), escEvent(0, schema.StateWarning),
	}
	for at := 5 * escMin; at <= 60*escMin; at += 5 * escMin {
		lines = append(lines, escEvent(at, schema.StateWarning))
	}
	alerts, db := replayEscalation(t, lines)
	wantAlerts(t, alerts)
	n, _ := redis.Int(db.Do(t, "EXISTS", schema.NewKeys("").EscalationLadder("web-oncall", "web-01:HTTP")), nil)
	if n != 0 {
		t.Error("a warning started a ladder of a critical-only policy")
	}
}

// TestImportEscalationsReportsEveryProblem: a file with bad records writes nothing and names each
// problem with its record, field and reason.
func TestImportEscalationsReportsEveryProblem(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	env := []string{"FLAPJACK_REDIS_URL=" + db.URL()}
	root, _ := filepath.Abs("../..")
	if _, errOut, code := flapjack(t, env, "", "import", "contacts", "-f", filepath.Join(root, "examples", "escalation", "contacts.json")); code != 0 {
		t.Fatalf("import contacts: %d %s", code, errOut)
	}
	bad := `[{"id":"ok","steps":[{"delay":"0 minutes","contacts":["ada"]}]},
		{"id":"has:colon","steps":[{"delay":"soon","contacts":["ghost"]},{"delay":"-5","contacts":[]}],"severities":["ok"],"colour":"red"},
		{"id":"late","steps":[{"delay":"15 minutes","contacts":["ghost"]},{"delay":"5 minutes","contacts":["bob"]}]}]`
	_, errOut, code := flapjack(t, env, bad, "import", "escalations", "-f", "-")
	if code != 1 {
		t.Fatalf("exit %d, want 1: %s", code, errOut)
	}
	for _, want := range []string{
		`record 1 (id "has:colon"): colour: unknown field`,
		`record 1 (id "has:colon"): steps[0].delay: cannot read duration "soon"`,
		`record 1 (id "has:colon"): steps[1].delay: duration "-5" is out of range`,
		`record 1 (id "has:colon"): id: must be letters, digits, '.', '_' or '-'`,
		`record 1 (id "has:colon"): severities[0]: "ok" is not critical, warning or unknown`,
		`record 1 (id "has:colon"): steps[1].contacts: needs at least one contact or schedule`,
		`record 2 (id "late"): steps[1].delay: must not be shorter than the previous step's`,
		"nothing written",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("import says\n%s\nwithout %q", errOut, want)
		}
	}
	if n, _ := redis.Int(db.Do(t, "HLEN", schema.NewKeys("").EscalationPolicies()), nil); n != 0 {
		t.Errorf("%d policies written from a bad file", n)
	}
	out, errOut, code := flapjack(t, env, bad, "import", "escalations", "-f", "-", "--partial")
	if code != 0 || !strings.Contains(out, "imported 1 escalations (2 skipped") {
		t.Errorf("--partial: exit %d\n%s\n%s", code, out, errOut)
	}
}
