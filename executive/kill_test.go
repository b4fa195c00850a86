package executive

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/schema"
)

// Environment of the child process that runs a real executive for the kill test.
const (
	childAddrEnv = "FLAPJACK_TEST_EXECUTIVE_ADDR"
	childDBEnv   = "FLAPJACK_TEST_EXECUTIVE_DB"
)

func TestMain(m *testing.M) {
	if addr := os.Getenv(childAddrEnv); addr != "" {
		os.Exit(runChildExecutive(addr))
	}
	os.Exit(m.Run())
}

// runChildExecutive is the body of a child process: an executive with a 100 ms heartbeat, so
// a killed one is found dead quickly.
func runChildExecutive(addr string) int {
	db, _ := strconv.Atoi(os.Getenv(childDBEnv))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	cfg := DefaultConfig()
	cfg.BatchSize = 64
	x := New(Options{Pool: testredis.Pool(addr, db), Keys: schema.NewKeys(""), Config: cfg,
		Clock: clock.Real{}, Identity: queue.LocalIdentity(), Version: "test",
		Beat: 100 * time.Millisecond})
	if err := x.Run(ctx, false); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func startChild(t *testing.T, db *testredis.DB) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childAddrEnv+"="+db.Server.Addr, childDBEnv+"="+strconv.Itoa(db.Index))
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// TestKilledExecutiveLosesNothing SIGKILLs executives mid-stream and starts new ones; in the
// end every event was applied exactly once and no processing list holds anything. Each event
// flips its check's state, so the history length counts applications, and the counters written
// atomically with each event's effects count them again.
func TestKilledExecutiveLosesNothing(t *testing.T) {
	t.Parallel()
	// A real redis-server always: this is about crash behaviour under load, not commands.
	db := testredis.StartServer(t).NewDB(t)
	keys := schema.NewKeys("")
	const checks, perCheck = 200, 60
	var events []string
	for k := 0; k < perCheck; k++ {
		state := "critical"
		if k%2 == 1 {
			state = "ok"
		}
		for c := 0; c < checks; c++ {
			events = append(events, fmt.Sprintf(`{"entity":"kill-%d","check":"c","type":"service","state":%q,"summary":"e%d","time":%d}`,
				c, state, k, 1_700_000_000+k))
		}
	}
	pushAll(t, db, keys.Events(), events)

	// Five kills, and more (up to twelve) until one lands while events are claimed: a kill
	// landing between two batches, when the processing list is empty, exercises nothing.
	caughtMidBatch := 0
	var killed []int
	for kill := 0; kill < 12 && (kill < 5 || caughtMidBatch == 0); kill++ {
		child := startChild(t, db)
		t.Cleanup(func() { child.Process.Kill() })
		// let it work a little, then kill it without warning
		waitFor(t, 10*time.Second, func() bool {
			n, _ := redis.Int(db.Do(t, "HGET", keys.EventCounters(), "all"), nil)
			return n >= (kill+1)*len(events)/16
		})
		child.Process.Kill()
		child.Wait()
		killed = append(killed, child.Process.Pid)
		left, _ := redis.Int(db.Do(t, "LLEN", keys.Processing(Stage, fmt.Sprintf("%s:%d", queue.LocalIdentity().Host, child.Process.Pid))), nil)
		if left > 0 {
			caughtMidBatch++
		}
	}
	if caughtMidBatch == 0 {
		t.Fatal("no kill landed while events were claimed; the recovery path was not exercised")
	}

	final := startChild(t, db)
	defer func() {
		final.Process.Signal(syscall.SIGTERM)
		final.Wait()
	}()
	// Done means nothing is left anywhere to be processed (again): the queue and every
	// processing list, the killed children's included, are empty. The counts below are final.
	held := func() int {
		n, _ := redis.Int(db.Do(t, "LLEN", keys.Events()), nil)
		for _, pid := range append(killed, final.Process.Pid) {
			m, _ := redis.Int(db.Do(t, "LLEN", keys.Processing(Stage, fmt.Sprintf("%s:%d", queue.LocalIdentity().Host, pid))), nil)
			n += m
		}
		return n
	}
	waitFor(t, 30*time.Second, func() bool {
		n, _ := redis.Int(db.Do(t, "HGET", keys.EventCounters(), "all"), nil)
		return n >= len(events) && held() == 0
	})

	counters, _ := redis.StringMap(db.Do(t, "HGETALL", keys.EventCounters()), nil)
	if counters["all"] != strconv.Itoa(len(events)) {
		t.Fatalf("event_counters all = %s, want exactly %d", counters["all"], len(events))
	}
	ok, _ := strconv.Atoi(counters["ok"])
	failure, _ := strconv.Atoi(counters["failure"])
	if ok+failure != len(events) {
		t.Fatalf("ok %d + failure %d != %d events", ok, failure, len(events))
	}
	for c := 0; c < checks; c++ {
		id := fmt.Sprintf("kill-%d:c", c)
		n, _ := redis.Int(db.Do(t, "LLEN", keys.States(id)), nil)
		if n != perCheck {
			t.Fatalf("%s has %d state changes, want %d (one per event)", id, n, perCheck)
		}
		if sum := db.Do(t, "HGET", keys.Check(id), "summary"); string(sum.([]byte)) != fmt.Sprintf("e%d", perCheck-1) {
			t.Fatalf("%s summary %s, want the last event's", id, sum)
		}
	}
	if n, _ := redis.Int(db.Do(t, "LLEN", keys.Events()), nil); n != 0 {
		t.Fatalf("%d events left in the queue", n)
	}
	members, _ := redis.Strings(db.Do(t, "SMEMBERS", keys.Instances(Stage)), nil)
	for _, pid := range killed {
		members = append(members, fmt.Sprintf("%s:%d", queue.LocalIdentity().Host, pid))
	}
	for _, m := range members {
		if n, _ := redis.Int(db.Do(t, "LLEN", keys.Processing(Stage, m)), nil); n != 0 {
			t.Fatalf("processing list of %s holds %d events", m, n)
		}
	}
	t.Logf("%d of 5 kills landed mid-batch", caughtMidBatch)
}

func waitFor(t *testing.T, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v", timeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
