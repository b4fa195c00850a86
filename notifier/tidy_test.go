package notifier_test

import (
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
)

// staleAlerting gives ada's email set members that stopped alerting: a check that no longer
// exists and one that is ok.
func staleAlerting(t *testing.T, w *world) {
	t.Helper()
	w.contact("ada", []string{"email=ada@example.com"})
	w.entity("web-01", "ada")
	w.run(ev(0, "web-01", "Disk", "ok"))
	w.db.Do(t, "ZADD", w.keys.AlertingChecks("ada", "email"), 0, "web-01:gone", 0, "web-01:Disk")
}

// TestAlertingSetsAreCleanedAfterTheAlert: on a medium without rollup, a problem's alert is on
// the medium's queue before the set is read for cleaning, and the set is clean once the batch is
// routed: the members that stopped alerting are gone, the failing check is in.
func TestAlertingSetsAreCleanedAfterTheAlert(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	staleAlerting(t, w)
	set, queue := w.keys.AlertingChecks("ada", "email"), w.keys.Queue(w.ncfg.MediaQueues["email"])
	queuedAtRead := int64(-1)
	pool := w.db.HookedPool(t, func(cmd string, args []any) {
		if cmd == "ZRANGE" && len(args) > 0 && args[0] == set && queuedAtRead < 0 {
			queuedAtRead, _ = redis.Int64(w.db.Do(t, "LLEN", queue), nil)
		}
	})
	alerts := w.batchedRun(pool, []string{ev(10, "web-01", "HTTP", "critical")})
	if len(alerts) != 1 || !strings.HasPrefix(alerts[0], "ada:email:problem") {
		t.Fatalf("alerts %q, want ada's email problem", alerts)
	}
	if queuedAtRead != 1 {
		t.Fatalf("when the set was first read the email queue held %d alerts, want the problem's", queuedAtRead)
	}
	expectAlerting(t, w, "after the problem", "ada", "email", "web-01:HTTP")
}

// TestCleaningAlertingSetsKeepsAChecksReturn: a check found stopped alerting that another
// notifier adds back to the set between the cleaning's reads and its write stays in the set
// (the cleaning is dropped: the contact's revision moved), and the next problem cleans the set.
func TestCleaningAlertingSetsKeepsAChecksReturn(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	staleAlerting(t, w)
	fired := false
	pool := w.db.HookedPool(t, func(cmd string, args []any) {
		// the cleaning's apply: no processing list, one ZREM
		if fired || cmd != "EVALSHA" || len(args) < 3 || args[2] != "" || !containsArg(args, "ZREM") {
			return
		}
		fired = true
		w.db.Do(t, "ZADD", w.keys.AlertingChecks("ada", "email"), 10, "web-01:Disk")
		w.db.Do(t, "HINCRBY", w.keys.ContactAlertState("ada"), "revision", 1)
	})
	w.batchedRun(pool, []string{ev(10, "web-01", "HTTP", "critical")})
	if !fired {
		t.Fatal("the set was never cleaned")
	}
	expectAlerting(t, w, "after the interfering writer", "ada", "email", "web-01:gone,web-01:Disk,web-01:HTTP")
	w.run(ev(20, "web-01", "Load", "critical"))
	expectAlerting(t, w, "after the next problem", "ada", "email", "web-01:HTTP,web-01:Load")
}

func containsArg(args []any, want string) bool {
	for _, a := range args {
		if s, ok := a.(string); ok && s == want {
			return true
		}
	}
	return false
}

// TestCleaningAlertingSetsLeavesTheRevision: cleaning changes nothing a decision reads, so it
// leaves the contact's revision where routing left it (another notifier's routing of the same
// contact does not conflict with it).
func TestCleaningAlertingSetsLeavesTheRevision(t *testing.T) {
	t.Parallel()
	revision := func(stale bool) string {
		w := newWorld(t)
		if stale {
			staleAlerting(t, w)
		} else {
			w.contact("ada", []string{"email=ada@example.com"})
			w.entity("web-01", "ada")
			w.run(ev(0, "web-01", "Disk", "ok"))
		}
		w.run(ev(10, "web-01", "HTTP", "critical"))
		expectAlerting(t, w, "after the problem", "ada", "email", "web-01:HTTP")
		rev, _ := redis.String(w.db.Do(t, "HGET", w.keys.ContactAlertState("ada"), "revision"), nil)
		return rev
	}
	if cleaned, clean := revision(true), revision(false); cleaned != clean || clean == "" {
		t.Fatalf("revision %q after cleaning the set, %q with nothing to clean", cleaned, clean)
	}
}

// TestABrokenAlertingSetDoesNotStopTheAlert: the alerting set of a medium without rollup holding
// a key of the wrong type (left by another tool) costs the set, not the page.
func TestABrokenAlertingSetDoesNotStopTheAlert(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.contact("ada", []string{"email=ada@example.com"})
	w.entity("web-01", "ada")
	w.db.Do(t, "SET", w.keys.AlertingChecks("ada", "email"), "not a sorted set")
	expect(t, "a problem", w.run(ev(0, "web-01", "HTTP", "critical")), "ada:email:problem")
	expect(t, "its recovery", w.run(ev(10, "web-01", "HTTP", "ok")), "ada:email:recovery")
}
