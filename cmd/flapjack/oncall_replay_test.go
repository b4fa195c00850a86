package main

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/schema"
)

// The on-call timelines of issue 41, through `flapjack replay` on the injected clock, with the
// example rota (examples/oncall): web-01 routes to the web-primary schedule only (out of hours
// Carl; office hours, Monday to Friday 09:00-18:00 London time, Ada and Bob in weekly turns from
// Monday 23 March 09:00; Erin's override on 1 April 12:00-14:00 UTC; Ops-lead the fallback), and
// db-01's escalation policy wakes whoever web-primary has on call 15 minutes into a problem.

// oncallEnv imports the example rota into a fresh Redis.
func oncallEnv(t *testing.T) []string {
	t.Helper()
	db := testredis.New(t)
	env := []string{"FLAPJACK_REDIS_URL=" + db.URL(), "FLAPJACK_LOG_LEVEL=warn"}
	root, _ := filepath.Abs("../..")
	for _, imp := range [][2]string{{"contacts", "contacts"}, {"schedules", "schedules"}, {"entities", "entities"}, {"escalations", "policies"}} {
		if _, errOut, code := flapjack(t, env, "", "import", imp[0], "-f", filepath.Join(root, "examples", "oncall", imp[1]+".json")); code != 0 {
			t.Fatalf("import %s: exit %d: %s", imp[0], code, errOut)
		}
	}
	return env
}

// utc is a unix time of a UTC wall-clock time in 2026.
func utc(month time.Month, day, hour, minute int) int64 {
	return time.Date(2026, month, day, hour, minute, 0, 0, time.UTC).Unix()
}

// failing is a check going critical at `at` (ok a minute before): its problem alert goes out
// 30 seconds later, at the second failure, as the executive's default initial failure delay
// wants.
func failing(entity, check string, at int64) []string {
	return []string{oncallEvent(entity, check, "ok", at-60), oncallEvent(entity, check, "critical", at), oncallEvent(entity, check, "critical", at+30)}
}

func oncallEvent(entity, check, state string, at int64) string {
	return fmt.Sprintf(`{"entity":%q,"check":%q,"type":"service","state":%q,"time":%d,"summary":"%s %s"}`, entity, check, state, at, check, state)
}

// replayAlerts replays lines through `flapjack replay` and returns the alerts it printed, each
// with the time its id carries.
func replayAlerts(t *testing.T, env []string, lines []string) ([]schema.Alert, []time.Time) {
	t.Helper()
	out, errOut, code := flapjack(t, env, strings.Join(lines, "\n")+"\n", "replay")
	if code != 0 {
		t.Fatalf("replay: exit %d: %s", code, errOut)
	}
	var alerts []schema.Alert
	var times []time.Time
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		a, err := schema.ParseAlert([]byte(line))
		if err != nil {
			t.Fatalf("replay printed %q: %v", line, err)
		}
		_, secs, _ := strings.Cut(a.ID, "-")
		at, _ := strconv.ParseFloat(secs, 64)
		alerts, times = append(alerts, a), append(times, time.Unix(int64(at), 0).UTC())
	}
	return alerts, times
}

// replayOncall replays lines and describes each alert as "Mon 30 Mar 08:30:30 bob/sms problem
// web-01:Disk @web-primary" (the time from the alert id; "@" the schedule that reached the
// contact; "step N" an escalation step).
func replayOncall(t *testing.T, env []string, lines []string) []string {
	t.Helper()
	alerts, times := replayAlerts(t, env, lines)
	out := make([]string, len(alerts))
	for i, a := range alerts {
		s := fmt.Sprintf("%s %s/%s %s %s", times[i].Format("Mon 02 Jan 15:04:05"), a.ContactID, a.Media, a.NotificationType, a.EventID)
		if a.Schedule != "" {
			s += " @" + a.Schedule
		}
		if a.Escalation != nil {
			s += fmt.Sprintf(" step %d", a.Escalation.Step)
		}
		out[i] = s
	}
	return out
}

func wantOncall(t *testing.T, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("alerts:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func TestOncallHandOffAtNineLondonTimeAfterTheChangeToSummerTime(t *testing.T) {
	t.Parallel()
	env := oncallEnv(t)
	// London changed to summer time on Sunday 29 March: Monday's 09:00 hand-off is 08:00 UTC
	lines := append(failing("web-01", "HTTP", utc(3, 27, 12, 0)), failing("web-01", "Disk", utc(3, 30, 8, 30))...)
	wantOncall(t, replayOncall(t, env, lines),
		"Fri 27 Mar 12:00:30 ada/sms problem web-01:HTTP @web-primary",
		"Mon 30 Mar 08:30:30 bob/sms problem web-01:Disk @web-primary")
}

func TestOncallRestrictionLeavesTheNightsToTheNextLayer(t *testing.T) {
	t.Parallel()
	env := oncallEnv(t)
	// Tuesday 31 March in Bob's week: 16:59 BST is office hours, 17:00 UTC is 18:00 BST
	lines := append(failing("web-01", "HTTP", utc(3, 31, 15, 59)), failing("web-01", "Disk", utc(3, 31, 17, 0))...)
	lines = append(lines, failing("web-01", "Load", utc(4, 4, 10, 0))...) // a Saturday morning
	wantOncall(t, replayOncall(t, env, lines),
		"Tue 31 Mar 15:59:30 bob/sms problem web-01:HTTP @web-primary",
		"Tue 31 Mar 17:00:30 carl/sms problem web-01:Disk @web-primary",
		"Sat 04 Apr 10:00:30 carl/sms problem web-01:Load @web-primary")
}

func TestOncallOverrideTakesTwoHoursAndGivesThemBack(t *testing.T) {
	t.Parallel()
	env := oncallEnv(t)
	var lines []string
	for i, at := range []int64{utc(4, 1, 11, 58), utc(4, 1, 12, 0), utc(4, 1, 13, 59), utc(4, 1, 14, 0)} {
		lines = append(lines, failing("web-01", fmt.Sprintf("check-%d", i), at-30)...)
	}
	// the first override's check recovers after the override ended: Erin had the problem, Bob
	// is on call now
	lines = append(lines, oncallEvent("web-01", "check-1", "ok", utc(4, 1, 14, 10)))
	wantOncall(t, replayOncall(t, env, sortByTime(lines)),
		"Wed 01 Apr 11:58:00 bob/sms problem web-01:check-0 @web-primary",
		"Wed 01 Apr 12:00:00 erin/sms problem web-01:check-1 @web-primary",
		"Wed 01 Apr 13:59:00 erin/sms problem web-01:check-2 @web-primary",
		"Wed 01 Apr 14:00:00 bob/sms problem web-01:check-3 @web-primary",
		"Wed 01 Apr 14:10:00 bob/sms recovery web-01:check-1 @web-primary",
		"Wed 01 Apr 14:10:00 erin/sms recovery web-01:check-1 @web-primary")
}

func TestOncallNobodyOnCallGoesToTheFallbackAndExplainSaysSo(t *testing.T) {
	t.Parallel()
	env := oncallEnv(t)
	// Thursday 19 March: before the layers' first turn nobody is on call
	wantOncall(t, replayOncall(t, env, failing("web-01", "HTTP", utc(3, 19, 12, 0))),
		"Thu 19 Mar 12:00:30 ops-lead/email problem web-01:HTTP @web-primary",
		"Thu 19 Mar 12:00:30 ops-lead/sms problem web-01:HTTP @web-primary")
	out, errOut, code := flapjack(t, env, "", "explain", "web-01:HTTP")
	if code != 0 || !strings.Contains(out, "schedule web-primary: nobody on call, fallback ops-lead") {
		t.Fatalf("explain: exit %d\n%s%s", code, out, errOut)
	}
}

func TestOncallEscalationStepWakesWhoeverIsOnCallWhenItFires(t *testing.T) {
	t.Parallel()
	env := oncallEnv(t)
	// db-01 fails at 08:50 BST (Carl's hours); the step fires 15 minutes after the problem
	// alert, at 09:05 BST, in Bob's office hours
	lines := append(failing("db-01", "MySQL", utc(3, 30, 7, 50)), oncallEvent("db-01", "MySQL", "ok", utc(3, 30, 8, 40)))
	wantOncall(t, replayOncall(t, env, lines),
		"Mon 30 Mar 08:05:30 bob/sms problem db-01:MySQL @web-primary step 1",
		"Mon 30 Mar 08:40:00 bob/sms recovery db-01:MySQL")
	out, errOut, code := flapjack(t, env, "", "explain", "db-01:MySQL")
	if code != 0 || !strings.Contains(out, `schedule web-primary: bob on call (layer "weekly")`) {
		t.Fatalf("explain: exit %d\n%s%s", code, out, errOut)
	}
}

// TestOncallExampleTimeline replays examples/oncall/timeline.jsonl, the README's worked example,
// and checks every alert.
func TestOncallExampleTimeline(t *testing.T) {
	t.Parallel()
	env := oncallEnv(t)
	root, _ := filepath.Abs("../..")
	raw, err := os.ReadFile(filepath.Join(root, "examples", "oncall", "timeline.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	wantOncall(t, replayOncall(t, env, strings.Split(strings.TrimSpace(string(raw)), "\n")),
		"Thu 19 Mar 12:00:30 ops-lead/email problem web-01:HTTP @web-primary",
		"Thu 19 Mar 12:00:30 ops-lead/sms problem web-01:HTTP @web-primary",
		"Thu 19 Mar 12:20:00 ops-lead/email recovery web-01:HTTP @web-primary",
		"Thu 19 Mar 12:20:00 ops-lead/sms recovery web-01:HTTP @web-primary",
		"Fri 27 Mar 12:00:30 ada/sms problem web-01:HTTP @web-primary",
		"Fri 27 Mar 12:20:00 ada/sms recovery web-01:HTTP @web-primary",
		"Mon 30 Mar 08:05:30 bob/sms problem db-01:MySQL @web-primary step 1",
		"Mon 30 Mar 08:30:30 bob/sms problem web-01:Disk @web-primary",
		"Mon 30 Mar 08:40:00 bob/sms recovery db-01:MySQL",
		"Mon 30 Mar 08:45:00 bob/sms recovery web-01:Disk @web-primary",
		"Wed 01 Apr 12:30:30 erin/sms problem web-01:HTTP @web-primary",
		"Wed 01 Apr 14:10:00 bob/sms recovery web-01:HTTP @web-primary",
		"Wed 01 Apr 14:10:00 erin/sms recovery web-01:HTTP @web-primary",
		"Wed 01 Apr 22:00:30 carl/sms problem web-01:Load @web-primary",
		"Wed 01 Apr 22:15:00 carl/sms recovery web-01:Load @web-primary")
}

// sortByTime orders timeline lines by their time field (replay wants them in order).
func sortByTime(lines []string) []string {
	at := func(l string) int64 {
		_, rest, _ := strings.Cut(l, `"time":`)
		n, _ := strconv.ParseInt(strings.SplitN(rest, ",", 2)[0], 10, 64)
		return n
	}
	out := slices.Clone(lines)
	slices.SortStableFunc(out, func(a, b string) int { return cmp.Compare(at(a), at(b)) })
	return out
}
