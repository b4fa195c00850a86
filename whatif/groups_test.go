package whatif

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/executive"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/schema"
)

// groupedChecks are the checks of the grouping tests: check i reports every 5 minutes, i*7
// seconds into the step (so most seconds hold one check's line only), and fails 20 minutes
// every 6 hours; checks i and i+3 fail together (web-01 and db-01 at once: rollup material).
var groupedChecks = []struct{ entity, check string }{
	{"web-01", "HTTP"}, {"web-01", "PING"}, {"web-01", "LOAD"},
	{"db-01", "DISK"}, {"db-01", "MEM"}, {"db-01", "CPU"},
}

// groupedTimeline is a day of groupedChecks. web-01:HTTP is acknowledged 5 minutes into its
// first failure; db-01:CPU stops reporting at noon (its results go stale).
func groupedTimeline() string {
	var b strings.Builder
	for t := weekStart; t.Before(weekStart.Add(24 * time.Hour)); t = t.Add(5 * time.Minute) {
		for i, c := range groupedChecks {
			if c.check == "CPU" && t.Sub(weekStart) >= 12*time.Hour {
				continue
			}
			state := "ok"
			if (t.Hour()+i%3)%6 == 0 && t.Minute() < 20 {
				state = "critical"
			}
			at := t.Unix() + int64(i)*7
			fmt.Fprintf(&b, `{"time":%d,"entity":%q,"check":%q,"type":"service","state":%q,"summary":"%s is %s"}`+"\n",
				at, c.entity, c.check, state, c.check, state)
			if c.check == "HTTP" && t.Equal(weekStart.Add(5*time.Minute)) {
				fmt.Fprintf(&b, `{"time":%d,"entity":"web-01","check":"HTTP","type":"action","state":"acknowledgement","duration":1200,"summary":"on it"}`+"\n", at+1)
			}
		}
	}
	return b.String()
}

// groupedRun compares in groups of checks, each group's spaces fresh databases; it returns the
// report as JSON and text, and the progress written.
func groupedRun(t *testing.T, live *testredis.DB, o Options, groups int) (rep *Report, report, progress string) {
	t.Helper()
	var prog bytes.Buffer
	o.Groups, o.Progress = groups, &prog
	o.OpenSpaces = func(context.Context) ([2]Space, func(), error) {
		return [2]Space{{Pool: testredis.New(t).Pool, Keys: schema.NewKeys("")}, {Pool: testredis.New(t).Pool, Keys: schema.NewKeys("")}}, func() {}, nil
	}
	rep = whatif(t, live, o)
	var out bytes.Buffer
	if err := rep.WriteJSON(&out); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	return rep, out.String(), prog.String()
}

func groupedOptions() Options {
	xcfg := executive.DefaultConfig()
	xcfg.Staleness.Default = 900
	cand := xcfg
	cand.InitialFailureDelay = 4 * time.Minute
	policy := []byte(`[{"id": "db-oncall", "entities": ["db-01"], "steps": [
		{"delay": "0 minutes", "contacts": ["grace"]}, {"delay": "7 minutes", "contacts": ["ada"]}]}]`)
	return Options{History: History{From: weekStart, Until: weekStart.Add(24*time.Hour - time.Second), Source: SourceArchive, KeepOKRepeats: true},
		Baseline: Scenario{Executive: xcfg}, Candidate: Scenario{Executive: cand},
		RulesFile: []byte(officeHoursRules), EscalationsFile: policy}
}

// groupedLive is the live database of groupedTimeline, with a default ttl of 15 minutes.
func groupedLive(t *testing.T) *testredis.DB {
	t.Helper()
	xcfg := executive.DefaultConfig()
	xcfg.Staleness.Default = 900
	return newLive(t, groupedTimeline(), xcfg)
}

// TestGroupsGiveTheSingleReplaysReport: six checks of two entities alerting two contacts, with
// an acknowledgement, a check going stale, a candidate escalation policy whose second step falls
// due between lines and a time restriction: replayed as one group, as three and as six
// concurrent groups of checks, the report (JSON and text) is the same.
func TestGroupsGiveTheSingleReplaysReport(t *testing.T) {
	t.Parallel()
	live := groupedLive(t)
	rep, single, _ := groupedRun(t, live, groupedOptions(), 1)
	seen := map[string]bool{}
	for _, a := range rep.baselineAlerts {
		seen["contact "+a.Contact], seen["state "+a.State], seen["type "+a.Type] = true, true, true
	}
	for _, a := range rep.Added {
		seen["policy "+a.Policy] = true
	}
	for _, want := range []string{"contact ada", "contact grace", "state unknown", "type acknowledgement", "policy db-oncall"} {
		if !seen[want] {
			t.Errorf("no alert with %s: the comparison does not exercise what grouping must keep\n%s", want, single)
		}
	}
	for _, groups := range []int{3, 6} {
		_, grouped, progress := groupedRun(t, live, groupedOptions(), groups)
		if want := fmt.Sprintf("6 checks replayed in %d concurrent groups", groups); !strings.Contains(progress, want) {
			t.Errorf("%d groups: progress does not say %q: %s", groups, want, progress)
		}
		if grouped != single {
			t.Errorf("%d groups changed the report:\none group:\n%s\n%d groups:\n%s", groups, single, groups, grouped)
		}
	}
}

// TestRollupKeepsOneGroup: a candidate rollup threshold on Grace's sms couples the checks
// alerting it (web-01's and db-01's fail together): grouping is refused, said on stderr, and the
// report is the single replay's.
func TestRollupKeepsOneGroup(t *testing.T) {
	t.Parallel()
	live := groupedLive(t)
	o := groupedOptions()
	o.ContactsFile = []byte(strings.Replace(liveContacts, `"sms": "+15555550123"`, `"sms": {"address": "+15555550123", "rollup_threshold": 2}`, 1))
	_, single, _ := groupedRun(t, live, o, 1)
	if !strings.Contains(single, `"type": "rollup_problem"`) {
		t.Fatalf("the candidate rolls nothing up: the test does not exercise rollup\n%s", single)
	}
	_, grouped, progress := groupedRun(t, live, o, 3)
	if !strings.Contains(progress, "the candidate has a rollup threshold (contact grace, sms)") || !strings.Contains(progress, "replayed as one group, not 3") {
		t.Errorf("progress does not say rollup keeps one group: %s", progress)
	}
	if grouped != single {
		t.Errorf("the refused grouping changed the report:\n%s\n%s", single, grouped)
	}
}

// TestOKRepeatsAreReplayedWhileStalenessIsOn: with a default ttl, an ok result of a check
// already ok moves its deadline: left out, checks that kept reporting would go stale in the
// scratch replay. Only db-01:CPU, which stopped reporting, goes stale, and a note says why the
// ok results were replayed.
func TestOKRepeatsAreReplayedWhileStalenessIsOn(t *testing.T) {
	t.Parallel()
	live := groupedLive(t)
	o := groupedOptions()
	o.History.KeepOKRepeats = false
	rep := whatif(t, live, o)
	stale := 0
	for _, a := range rep.baselineAlerts {
		if a.State == schema.StateUnknown {
			stale++
			if a.Entity != "db-01" || a.Check != "CPU" {
				t.Errorf("%s:%s went stale while it kept reporting: %+v", a.Entity, a.Check, a)
			}
		}
	}
	if stale == 0 {
		t.Error("db-01:CPU, silent from noon, never went stale")
	}
	if rep.OKRepeats != 0 || !strings.Contains(strings.Join(rep.Notes, "\n"), "a staleness ttl is on") {
		t.Errorf("%d ok repeats left out; notes %q", rep.OKRepeats, rep.Notes)
	}
}
