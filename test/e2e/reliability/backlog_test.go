package reliability

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/internal/testing/testbinary"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/schema"
)

// TestBacklogFlipsInOneSecondAreAllAlerted: after an outage (Redis or a stage down), the
// backlog is worked off at full speed, so several state changes of one check are processed
// within the same wall-clock second. Each must still be notified as if they had come apart:
// critical -> ok -> critical -> ok is problem, recovery, problem, recovery, and each recovery
// carries the severity of the problem it ends (critical), so a contact whose rule only
// routes critical alerts gets all four. `flapjack replay` takes the clock from the lines,
// which makes "the same second" exact; the live stages read it from the wall clock.
func TestBacklogFlipsInOneSecondAreAllAlerted(t *testing.T) {
	db := testredis.New(t)
	keys := schema.NewKeys("")
	db.Do(t, "HSET", keys.Contact("oncall"), "first_name", "On")
	db.Do(t, "HSET", keys.ContactMedia("oncall"), "log", "stdout")
	db.Do(t, "SADD", keys.ContactsFor(schema.AllContactsID), "oncall")
	db.Do(t, "SADD", keys.ContactRules("oncall"), "criticals")
	db.Do(t, "HSET", keys.Rule("criticals"), "contact_id", "oncall", "critical_media", `["log"]`,
		"warning_media", `[]`, "unknown_media", `[]`)

	var timeline strings.Builder
	for i, step := range []struct {
		state string
		time  int
	}{{"critical", 1000}, {"ok", 1000}, {"critical", 1000}, {"ok", 1001}} {
		fmt.Fprintf(&timeline, `{"entity":"backlog","check":"disk","type":"service","state":%q,"summary":"step %d","time":%d}`+"\n",
			step.state, i, step.time)
	}
	out, errOut, code := testbinary.Run(t, []string{"FLAPJACK_REDIS_URL=" + db.URL(), "FLAPJACK_EXECUTIVE_INITIAL_FAILURE_DELAY=0",
		"FLAPJACK_EXECUTIVE_REPEAT_FAILURE_DELAY=60s"}, timeline.String(), time.Minute, "replay")
	if code != 0 {
		t.Fatalf("replay exited %d:\n%s", code, errOut)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		a, err := schema.ParseAlert([]byte(line))
		if err != nil {
			t.Fatalf("replay printed a non-alert line %q: %v", line, err)
		}
		got = append(got, a.NotificationType+" "+schema.Deref(a.Summary))
	}
	want := []string{"problem step 0", "recovery step 1", "problem step 2", "recovery step 3"}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("alerts for critical, ok, critical (same second), ok (next second):\n got %q\nwant %q\n"+
			"(a problem notified in the same second as the recovery before it reads as not recovered: the repeat delay "+
			"then holds back the next problem, and the next recovery gets severity ok, which no rule routes)\n%s",
			got, want, errOut)
	}
}
