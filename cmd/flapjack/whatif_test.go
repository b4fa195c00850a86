package main

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/flapjackgo/flapjack/internal/testing/testredis"
)

// whatifLive is a database holding the example contacts and entities and the history of
// examples/timeline.jsonl, recorded with the event archive on.
func whatifLive(t *testing.T) (*testredis.DB, []string) {
	t.Helper()
	db := testredis.New(t)
	env := []string{"FLAPJACK_REDIS_URL=" + db.URL(), "TZ=UTC"}
	for _, args := range [][]string{
		{"import", "contacts", "--file", "../../examples/contacts.json"},
		{"import", "entities", "--file", "../../examples/entities.json"},
		{"replay", "--executive-archive-events=true", "--input", "../../examples/timeline.jsonl"},
	} {
		if out, errOut, code := flapjack(t, env, "", args...); code != 0 {
			t.Fatalf("%v: exit %d\n%s\n%s", args, code, out, errOut)
		}
	}
	return db, env
}

// TestWhatifJSON: the command compares the recorded history under candidate rules, prints the
// issue's JSON shape, reports progress on stderr and leaves every key of the live Redis as it was.
func TestWhatifJSON(t *testing.T) {
	t.Parallel()
	db, env := whatifLive(t)
	before := db.Dump(t)
	out, errOut, code := flapjack(t, env, "", "whatif", "--from", "2026-01-05T10:00:00Z", "--until", "2026-01-05T12:00:00Z",
		"--rules", "../../examples/rules.json", "--quiet-hours", "22:00-07:00", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if after := db.Dump(t); !reflect.DeepEqual(before, after) {
		t.Errorf("whatif changed the live Redis")
	}
	if !strings.Contains(errOut, "whatif: 9 lines of history, 9 replayed twice") {
		t.Errorf("no progress on stderr:\n%s", errOut)
	}
	var rep struct {
		Source   string `json:"source"`
		Contacts []struct {
			ID    string `json:"id"`
			Media []struct {
				Medium         string `json:"medium"`
				Baseline       *int   `json:"baseline"`
				Candidate      *int   `json:"candidate"`
				BaselineQuiet  *int   `json:"baseline_quiet_hours"`
				CandidateQuiet *int   `json:"candidate_quiet_hours"`
			} `json:"media"`
		} `json:"contacts"`
		Added   []map[string]any `json:"alerts_added"`
		Removed []map[string]any `json:"alerts_removed"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if rep.Source != "archive" {
		t.Errorf("source %q, want archive", rep.Source)
	}
	// The rules file gives Grace a rule for ^pay- entities only: her MySQL problem and recovery
	// on email and sms disappear; nothing appears.
	got := map[string][2]int{}
	for _, c := range rep.Contacts {
		for _, m := range c.Media {
			if m.Baseline == nil || m.Candidate == nil || m.BaselineQuiet == nil || m.CandidateQuiet == nil {
				t.Fatalf("contact %s medium %q lacks counts:\n%s", c.ID, m.Medium, out)
			}
			got[c.ID+" "+m.Medium] = [2]int{*m.Baseline, *m.Candidate}
		}
	}
	want := map[string][2]int{"ada email": {0, 0}, "ada jabber": {2, 2}, "ada pagerduty": {2, 2}, "alan email": {0, 0},
		"alan sms": {0, 0}, "grace email": {2, 0}, "grace sms": {2, 0}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("per contact and medium %v, want %v", got, want)
	}
	if rep.Added == nil || len(rep.Added) != 0 || len(rep.Removed) != 4 {
		t.Fatalf("added %v removed %v", rep.Added, rep.Removed)
	}
	first := rep.Removed[0]
	for k, v := range map[string]any{"time": float64(1767607290), "entity": "db-01.example.com", "check": "MySQL",
		"type": "problem", "contact": "grace", "medium": "email"} {
		if first[k] != v {
			t.Errorf("first removed alert %s = %v, want %v (%v)", k, first[k], v, first)
		}
	}
}

// TestWhatifSetAndText: --set changes the candidate's executive settings through the settings
// table (bad keys and values exit 2); the text report shows the change.
func TestWhatifSetAndText(t *testing.T) {
	t.Parallel()
	_, env := whatifLive(t)
	args := []string{"whatif", "--from", "2026-01-05T10:00:00Z", "--until", "2026-01-05T12:00:00Z", "--source", "state_history"}
	out, errOut, code := flapjack(t, env, "", append(args, "--set", "executive.initial_failure_delay=1h")...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"(state_history)", "repeats between changes are synthesised at the check's observed interval",
		"Grace Hopper (grace)  sms        2 → 0 (-2)", "alerts: 8 → 0", "alerts removed (8):", "alerts added (0):"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []struct{ set, says string }{
		{"executive.no_such=1", `no setting "executive.no_such"`},
		{"executive.initial_failure_delay=banana", "executive.initial_failure_delay"},
		{"redis.url=redis://elsewhere", "only executive.* and notifier.*"},
		{"executive.initial_failure_delay", "want key=value"},
	} {
		_, errOut, code := flapjack(t, env, "", append(args, "--set", bad.set)...)
		if code != 2 || !strings.Contains(errOut, bad.says) {
			t.Errorf("--set %s: exit %d, stderr %q; want 2 saying %q", bad.set, code, errOut, bad.says)
		}
	}
}
