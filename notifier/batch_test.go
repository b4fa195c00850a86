package notifier_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/notifier"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/replay"
	"github.com/flapjackgo/flapjack/schema"
)

// TestBatchesRouteAsOneByOne: the notifications of one second, routed in batches (segments of
// different checks sharing round trips and one apply), give the same alerts in the same order
// and the same database as routing them one at a time. The timeline has many checks failing in
// one second for two contacts without rollup, repeats within the interval, a check with two
// notifications in one second, recoveries and an acknowledgement among problems, a contact
// with rollup (whose notifications route alone), and an unparseable notification.
func TestBatchesRouteAsOneByOne(t *testing.T) {
	t.Parallel()
	var lines []string
	for round := int64(0); round < 3; round++ {
		at := round * 60
		for i := 0; i < 20; i++ { // more than are routed together
			lines = append(lines, ev(at, "web-01", fmt.Sprintf("c%d", i), "critical"))
		}
		lines = append(lines, ev(at, "db-01", "MySQL", "warning"), ev(at, "db-01", "MySQL", "critical"))
		lines = append(lines, ev(at+1, "web-01", "c3", "ok"), ev(at+1, "web-01", "c4", "acknowledgement"),
			ev(at+1, "web-01", "c5", "critical"), ev(at+1, "web-01", "c6", "ok"), ev(at+1, "db-01", "MySQL", "critical"))
		for i := 0; i < 6; i++ {
			lines = append(lines, ev(at+2, "rolled", fmt.Sprintf("r%d", i), "critical"), ev(at+2, "web-01", fmt.Sprintf("c%d", 6+i), "warning"))
		}
	}
	run := func(batch int) ([]string, map[string]string) {
		w := newWorld(t)
		w.ncfg.BatchSize = batch
		w.contact("ada", []string{"email=ada@example.com", "sms=+100"}, interval("email", 120))
		w.contact("bob", []string{"email=bob@example.com"}, interval("email", 30))
		w.contact("cyd", []string{"email=cyd@example.com", "sms=+300"}, rollupAt("email", 3))
		w.rule("ada", "r", `warning_media=["email"]`, `critical_media=["email","sms"]`)
		w.entity("web-01", "ada", "bob")
		w.entity("db-01", "ada")
		w.entity("rolled", "cyd", "bob")
		// an unparseable notification waits in the queue for the first batch
		w.db.Do(t, "RPUSH", w.keys.Notifications(), `{"type":"problem"`)
		alerts, _ := w.countedRun(lines)
		return alerts, w.db.Dump(t)
	}
	oneAlerts, oneDump := run(1)
	alerts, dump := run(64)
	if strings.Join(alerts, "\n") != strings.Join(oneAlerts, "\n") {
		t.Fatalf("alerts differ:\none by one:\n%s\nbatched:\n%s", strings.Join(oneAlerts, "\n"), strings.Join(alerts, "\n"))
	}
	if len(oneAlerts) < 40 || !strings.Contains(strings.Join(oneAlerts, " "), "rollup") {
		t.Fatalf("the timeline sent too little to compare (%d alerts, rollups: %v)", len(oneAlerts), strings.Contains(strings.Join(oneAlerts, " "), "rollup"))
	}
	testredis.DiffDumps(t, dump, oneDump)
}

// TestBatchesShareRoundTrips: twelve checks failing in one second cost the notifier one
// routing read, one read of interval keys and alerting sets, one cleaning read and one apply
// together, not each. The whole replay (the executive's and replay's own round trips included)
// then takes under three quarters of the round trips it takes with notifications claimed one at
// a time (64% here; routed one by one in batches of 64 it took 115%).
func TestBatchesShareRoundTrips(t *testing.T) {
	t.Parallel()
	trips := func(batch int) int64 {
		w := newWorld(t)
		w.ncfg.BatchSize = batch
		w.contact("ada", []string{"email=ada@example.com", "sms=+100"})
		w.entity("web-01", "ada")
		var lines []string
		for i := 0; i < 12; i++ {
			lines = append(lines, ev(0, "web-01", fmt.Sprintf("c%d", i), "critical"))
		}
		alerts, trips := w.countedRun(lines)
		if len(alerts) != 24 {
			t.Fatalf("12 failures sent %d alerts, want 24", len(alerts))
		}
		return trips
	}
	one, together := trips(1), trips(64)
	if together*4 > one*3 {
		t.Fatalf("routed together the replay took %d round trips, one at a time %d", together, one)
	}
}

// TestABatchThatConflictsIsRoutedAgain: when another writer changes a contact between the
// batch's reads and its apply, the segment's records that read the contact conflict and are
// routed again on fresh reads: every notification still alerts exactly once, as without the
// interference.
func TestABatchThatConflictsIsRoutedAgain(t *testing.T) {
	t.Parallel()
	var lines []string
	for i := 0; i < 8; i++ {
		lines = append(lines, ev(0, "web-01", fmt.Sprintf("c%d", i), "critical"))
	}
	run := func(interfere bool) ([]string, bool) {
		w := newWorld(t)
		w.contact("ada", []string{"email=ada@example.com"})
		w.entity("web-01", "ada")
		fired := false
		pool := w.db.HookedPool(t, func(cmd string, args []any) {
			// the notifier's first apply of several records: another writer gets there first
			if !interfere || fired || cmd != "EVALSHA" || len(args) < 8 {
				return
			}
			if list, _ := args[2].(string); strings.HasPrefix(list, w.keys.Processing(notifier.Stage, "")) && args[7] != 1 {
				fired = true
				w.db.Do(t, "HINCRBY", w.keys.ContactAlertState("ada"), "revision", 1)
			}
		})
		return w.batchedRun(pool, lines), fired
	}
	want, _ := run(false)
	got, fired := run(true)
	if !fired {
		t.Fatal("the notifier never applied several records at once")
	}
	if len(want) != 8 || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("with a conflicting writer:\n%s\nwithout:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// batchedRun replays lines through pool with the events of a second batched, as whatif does,
// and returns the alerts as "contact:medium:type check summary".
func (w *world) batchedRun(pool *redis.Pool, lines []string) []string {
	w.t.Helper()
	var buf bytes.Buffer
	if _, err := replay.Run(context.Background(), replay.Options{
		Pool: pool, Keys: w.keys, Executive: w.xcfg, Notifier: w.ncfg, SecondBatches: true,
		Identity: queue.Identity{Host: "replay", PID: 1}, Version: "test",
	}, strings.NewReader(strings.Join(lines, "\n")), &buf); err != nil {
		w.t.Fatalf("replay: %v", err)
	}
	var alerts []string
	for dec := json.NewDecoder(&buf); dec.More(); {
		var a schema.Alert
		if err := dec.Decode(&a); err != nil {
			w.t.Fatal(err)
		}
		alerts = append(alerts, fmt.Sprintf("%s %s %s", describe(a), a.EventID, schema.Deref(a.Summary)))
	}
	return alerts
}

// countedRun is batchedRun counting the round trips to Redis.
func (w *world) countedRun(lines []string) ([]string, int64) {
	w.t.Helper()
	var trips atomic.Int64
	pool := &redis.Pool{Dial: func() (redis.Conn, error) {
		return redis.Dial("tcp", w.db.Server.Addr, redis.DialDatabase(w.db.Index),
			redis.DialNetDial(func(network, addr string) (net.Conn, error) {
				c, err := net.Dial(network, addr)
				reading := &atomic.Bool{}
				reading.Store(true)
				return countingConn{c, &trips, reading}, err
			}))
	}}
	defer pool.Close()
	alerts := w.batchedRun(pool, lines)
	return alerts, trips.Load()
}

// countingConn counts round trips: a write that follows a read (or is the first) starts one;
// the further writes of a long pipelined request do not.
type countingConn struct {
	net.Conn
	n       *atomic.Int64
	reading *atomic.Bool
}

func (c countingConn) Write(p []byte) (int, error) {
	if c.reading.Swap(false) {
		c.n.Add(1)
	}
	return c.Conn.Write(p)
}

func (c countingConn) Read(p []byte) (int, error) {
	c.reading.Store(true)
	return c.Conn.Read(p)
}

// TestAKeyOfTheWrongTypeRejectsOnlyItsNotification: a notification whose routing meets a key of
// the wrong type (left by another tool) is kept in notifications_failed with the reason, alone or
// in a batch, and the notifications around it are routed: the notifier is never wedged.
func TestAKeyOfTheWrongTypeRejectsOnlyItsNotification(t *testing.T) {
	t.Parallel()
	lines := []string{ev(0, "web-01", "c0", "critical"), ev(0, "db-01", "MySQL", "critical"), ev(0, "web-01", "c1", "critical"),
		ev(0, "web-02", "c2", "critical"), ev(10, "web-01", "c3", "critical"), ev(10, "db-01", "Disk", "critical")}
	for _, batch := range []int{1, 64} {
		t.Run(fmt.Sprint("batch size ", batch), func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			w.ncfg.BatchSize = batch
			w.contact("ada", []string{"email=ada@example.com"})
			w.contact("bob", []string{"email=bob@example.com"}, rollupAt("email", 5))
			w.entity("web-01", "ada")
			w.entity("db-01", "ada")
			w.entity("web-02", "bob")
			w.db.Do(t, "SET", w.keys.ContactsFor("id-db-01"), "not a set")
			w.db.Do(t, "SET", w.keys.AlertingChecks("bob", "email"), "not a sorted set") // web-02's failure reads it for rollup
			alerts, _ := w.countedRun(lines)
			var sent []string
			for _, a := range alerts {
				sent = append(sent, strings.Fields(a)[1])
			}
			if got := strings.Join(sent, " "); got != "web-01:c0 web-01:c1 web-01:c3" {
				t.Errorf("alerts for %s, want web-01:c0 web-01:c1 web-01:c3", got)
			}
			failed, err := redis.Strings(w.db.Do(t, "LRANGE", w.keys.FailedQueue("notifications"), 0, -1), nil)
			if err != nil || len(failed) != 3 {
				t.Fatalf("failed notifications %q (%v), want those of db-01:MySQL, web-02:c2 and db-01:Disk", failed, err)
			}
			for i, id := range []string{"db-01:MySQL", "web-02:c2", "db-01:Disk"} {
				if !strings.Contains(failed[i], "WRONGTYPE") || !strings.Contains(failed[i], id) {
					t.Errorf("failed notification %d: %s, want %s's with the reason", i, failed[i], id)
				}
			}
		})
	}
}
