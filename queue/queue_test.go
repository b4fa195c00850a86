package queue

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/redisconn"
	"github.com/flapjackgo/flapjack/schema"
)

func eventsSpec(k schema.Keys) Spec {
	return Spec{Stage: "executive", Source: k.Events(), End: Right, Sequence: k.EventsSequence()}
}

func TestClaimTakesOldestFirstAndNumbersThem(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	k := schema.NewKeys("")
	for _, e := range []string{"e1", "e2", "e3", "e4"} {
		db.Do(t, "LPUSH", k.Events(), e)
	}
	c := NewConsumer(db.Pool, k, eventsSpec(k), Identity{Host: "h", PID: 1})
	b, err := c.Next(context.Background(), 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"e1", "e2", "e3"}; !reflect.DeepEqual(b.Items, want) {
		t.Fatalf("claimed %v, want %v", b.Items, want)
	}
	if b.FirstSequence != 1 || !b.Whole {
		t.Fatalf("first sequence %d, whole %v; want 1, the whole processing list", b.FirstSequence, b.Whole)
	}
	got, _ := redis.Strings(db.Do(t, "LRANGE", c.ProcessingKey(), 0, -1), nil)
	if want := []string{"e3", "e2", "e1"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("processing list %v, want %v", got, want)
	}
	b2, err := c.Claim(context.Background(), 10)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(b2.Items, []string{"e4"}) || b2.FirstSequence != 4 || b2.Whole {
		t.Fatalf("second claim %v seq %d whole %v, want [e4] seq 4 beside the first claim's items", b2.Items, b2.FirstSequence, b2.Whole)
	}
}

func TestNextBlocksUntilAnItemArrives(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	k := schema.NewKeys("")
	c := NewConsumer(db.Pool, k, eventsSpec(k), Identity{Host: "h", PID: 1})
	pushed := make(chan struct{})
	go func() {
		defer close(pushed)
		if !db.WaitBlocked("blmove") {
			t.Error("Next never blocked in BLMOVE")
		}
		conn := db.Pool.Get()
		defer conn.Close()
		conn.Do("LPUSH", k.Events(), "late", "later")
	}()
	b, err := c.Next(context.Background(), 10, 3*time.Second)
	<-pushed
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Items) == 0 || b.Items[0] != "late" {
		t.Fatalf("got %v, want the pushed items starting with late", b.Items)
	}
	if b.FirstSequence != 1 || !b.Whole {
		t.Fatalf("first sequence %d, whole %v; want 1, the whole processing list (BLMOVE's item and the claim's)", b.FirstSequence, b.Whole)
	}
}

// TestNextOnAnUnnumberedQueueReturnsTheWakingItemAlone: without a sequence to number them, the
// item BLMOVE took is handed over at once and what came with it is claimed by the next call,
// in order, nothing lost.
func TestNextOnAnUnnumberedQueueReturnsTheWakingItemAlone(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	k := schema.NewKeys("")
	spec := Spec{Stage: "notifier", Source: k.Notifications(), End: Left}
	c := NewConsumer(db.Pool, k, spec, Identity{Host: "h", PID: 1})
	pushed := make(chan struct{})
	go func() {
		defer close(pushed)
		if !db.WaitBlocked("blmove") {
			t.Error("Next never blocked in BLMOVE")
		}
		conn := db.Pool.Get()
		defer conn.Close()
		conn.Do("RPUSH", spec.Source, "n1", "n2", "n3")
	}()
	first, err := c.Next(context.Background(), 10, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	rest, err := c.Next(context.Background(), 10, 3*time.Second)
	<-pushed
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(first.Items, []string{"n1"}) || !reflect.DeepEqual(rest.Items, []string{"n2", "n3"}) {
		t.Fatalf("batches %v then %v, want [n1] then [n2 n3]", first.Items, rest.Items)
	}
	processing, err := redis.Strings(db.Do(t, "LRANGE", c.ProcessingKey(), 0, -1), nil)
	if err != nil || len(processing) != 3 {
		t.Fatalf("processing list %v (%v), want the three claimed items", processing, err)
	}
}

func TestFinishRemovesAndRecordsFate(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	k := schema.NewKeys("")
	spec := Spec{Stage: "jabber_gateway", Source: k.Queue("jabber_notifications"), End: Left}
	db.Do(t, "RPUSH", spec.Source, "a1", "a2")
	c := NewConsumer(db.Pool, k, spec, Identity{Host: "h", PID: 1})
	b, err := c.Claim(context.Background(), 10)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(b.Items, []string{"a1", "a2"}) {
		t.Fatalf("claimed %v", b.Items)
	}
	failed := k.FailedQueue("jabber_notifications")
	ok, err := c.Finish(context.Background(), "a1", failed, `{"error":"x"}`)
	if err != nil || !ok {
		t.Fatalf("finish a1: %v %v", ok, err)
	}
	ok, err = c.Finish(context.Background(), "a1", failed, `{"error":"again"}`)
	if err != nil || ok {
		t.Fatalf("second finish of a1 must report not claimed: %v %v", ok, err)
	}
	dump := db.Dump(t)
	if dump[failed] != `list[{"error":"x"}]` {
		t.Fatalf("failed list %q", dump[failed])
	}
	if dump[c.ProcessingKey()] != "list[a2]" {
		t.Fatalf("processing %q", dump[c.ProcessingKey()])
	}
}

func TestRecoverDeadRequeuesInOriginalOrder(t *testing.T) {
	t.Parallel()
	for _, end := range []End{Right, Left} {
		t.Run(string(end), func(t *testing.T) {
			t.Parallel()
			db := testredis.New(t)
			k := schema.NewKeys("")
			spec := Spec{Stage: "notifier", Source: k.Notifications(), End: end}
			push := "RPUSH"
			if end == Right {
				push = "LPUSH"
			}
			db.Do(t, push, spec.Source, "n1", "n2", "n3", "n4")
			clk := clock.NewFake(time.Unix(1_700_000_000, 0))
			dead := &Registry{Pool: db.Pool, Keys: k, Spec: spec, ID: Identity{Host: "dead", PID: 7},
				Clock: clk, Version: "t", Log: zap.NewNop()}
			if err := dead.Register(context.Background()); err != nil {
				t.Fatal(err)
			}
			victim := NewConsumer(db.Pool, k, spec, dead.ID)
			if b, err := victim.Claim(context.Background(), 2); err != nil || len(b.Items) != 2 {
				t.Fatalf("claim: %v %v", b.Items, err)
			}
			live := &Registry{Pool: db.Pool, Keys: k, Spec: spec, ID: Identity{Host: "live", PID: 8},
				Clock: clk, Version: "t", Log: zap.NewNop()}
			if err := live.Register(context.Background()); err != nil {
				t.Fatal(err)
			}
			if n, err := live.RecoverDead(context.Background()); err != nil || n != 0 {
				t.Fatalf("fresh peer must not be reaped: %d %v", n, err)
			}
			clk.Advance(DefaultStaleAfter + time.Second)
			n, err := live.RecoverDead(context.Background())
			if err != nil || n != 2 {
				t.Fatalf("recovered %d, %v; want 2", n, err)
			}
			order := NewConsumer(db.Pool, k, spec, live.ID)
			b, err := order.Claim(context.Background(), 10)
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{"n1", "n2", "n3", "n4"}; !reflect.DeepEqual(b.Items, want) {
				t.Fatalf("after recovery the queue serves %v, want %v", b.Items, want)
			}
			dump := db.Dump(t)
			if _, ok := dump[k.Instance("notifier", "dead:7")]; ok {
				t.Fatal("dead instance record still present")
			}
			if dump[k.Instances("notifier")] != "set{live:8}" {
				t.Fatalf("instances set %q", dump[k.Instances("notifier")])
			}
		})
	}
}

func TestHeartbeatRecordFields(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	k := schema.NewKeys("")
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	r := &Registry{Pool: db.Pool, Keys: k, Spec: eventsSpec(k), ID: Identity{Host: "web", PID: 42},
		Clock: clk, Version: "1.2.3", Log: zap.NewNop(),
		Stats: func() map[string]int64 { return map[string]int64{"processed": 9} }}
	if err := r.Register(context.Background()); err != nil {
		t.Fatal(err)
	}
	clk.Advance(5 * time.Second)
	if err := r.Heartbeat(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := db.Dump(t)[k.Instance("executive", "web:42")]
	bootID, pidNS, start := processFingerprint(42)
	want := fmt.Sprintf("hash{boot_id=%s, boot_time=1700000000, heartbeat=1700000005, host=web, pid=42, pid_namespace=%s, process_start=%s, processed=9, processing=executive_processing:web:42, queue=events, version=1.2.3}",
		bootID, pidNS, start)
	if got != want {
		t.Fatalf("record\n got %s\nwant %s", got, want)
	}
	ttl, _ := redis.Int(db.Do(t, "TTL", k.Instance("executive", "web:42")), nil)
	if ttl <= 0 || ttl > 15 {
		t.Fatalf("record TTL %d, want a short positive TTL", ttl)
	}
}

// TestDeadLocalProcessIsRecoveredAtOnce: a peer on this host whose process is gone is dead even
// while its heartbeat is fresh, so a restarted stage redoes its predecessor's work first.
func TestDeadLocalProcessIsRecoveredAtOnce(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	k := schema.NewKeys("")
	spec := eventsSpec(k)
	host := LocalIdentity().Host
	child := exec.Command("sleep", "30")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	peer := &Registry{Pool: db.Pool, Keys: k, Spec: spec, ID: Identity{Host: host, PID: child.Process.Pid},
		Clock: clk, Version: "t", Log: zap.NewNop()}
	if err := peer.Register(context.Background()); err != nil {
		t.Fatal(err)
	}
	db.Do(t, "LPUSH", k.Processing(spec.Stage, peer.ID.ID()), "claimed")
	me := &Registry{Pool: db.Pool, Keys: k, Spec: spec, ID: Identity{Host: host, PID: os.Getpid()},
		Clock: clk, Version: "t", Log: zap.NewNop()}
	if n, err := me.RecoverDead(context.Background()); err != nil || n != 0 {
		t.Fatalf("a running local peer must be left alone: %d %v", n, err)
	}
	child.Process.Kill()
	child.Wait()
	if n, err := me.RecoverDead(context.Background()); err != nil || n != 1 {
		t.Fatalf("recovered %d (%v) from a dead local peer with a fresh heartbeat, want 1", n, err)
	}
}

// TestRecoverDeadForgetsDeadPeersOfARegistryWithoutAQueue: the process records (a registry with
// no queue) forget a dead process without trying to requeue anything.
func TestRecoverDeadForgetsDeadPeersOfARegistryWithoutAQueue(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	k := schema.NewKeys("")
	spec := Spec{Stage: "process"}
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	dead := &Registry{Pool: db.Pool, Keys: k, Spec: spec, ID: Identity{Host: "dead", PID: 7}, Clock: clk, Version: "t", Log: zap.NewNop()}
	live := &Registry{Pool: db.Pool, Keys: k, Spec: spec, ID: Identity{Host: "live", PID: 8}, Clock: clk, Version: "t", Log: zap.NewNop()}
	for _, r := range []*Registry{dead, live} {
		if err := r.Register(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	clk.Advance(DefaultStaleAfter + time.Second)
	if n, err := live.RecoverDead(context.Background()); err != nil || n != 0 {
		t.Fatalf("RecoverDead = %d, %v; want 0, nil", n, err)
	}
	if members, _ := redis.Strings(db.Do(t, "SMEMBERS", k.Instances("process")), nil); len(members) != 1 || members[0] != "live:8" {
		t.Fatalf("process instances after the reap: %v, want only live:8", members)
	}
}

// TestOnlyAPeerConnectedLongerThanStaleAfterJudgesByRecords: after an outage every record has
// expired; a peer that has just (re)connected must not take a missing record as death, or it
// requeues the claimed items of a live peer that has not written its record again yet. Once
// its own heartbeats have succeeded for longer than StaleAfter, a missing record is death.
func TestOnlyAPeerConnectedLongerThanStaleAfterJudgesByRecords(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	k := schema.NewKeys("")
	spec := Spec{Stage: "notifier", Source: k.Notifications(), End: Right}
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	peer := &Registry{Pool: db.Pool, Keys: k, Spec: spec, ID: Identity{Host: "elsewhere", PID: 7}, Clock: clk, Version: "t", Log: zap.NewNop()}
	judge := &Registry{Pool: db.Pool, Keys: k, Spec: spec, ID: Identity{Host: "here", PID: 8}, Clock: clk, Version: "t", Log: zap.NewNop()}
	for _, r := range []*Registry{peer, judge} {
		if err := r.Register(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	db.Do(t, "LPUSH", k.Processing(spec.Stage, peer.ID.ID()), "claimed")
	// The outage: the peer's record expires; the judge's commands fail.
	db.Do(t, "DEL", k.Instance(spec.Stage, peer.ID.ID()))
	judge.LostRedis()
	beats := func(n int) {
		for range n {
			clk.Advance(DefaultBeat)
			if err := judge.Heartbeat(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
	beats(1) // reconnected
	if n, err := judge.RecoverDead(context.Background()); err != nil || n != 0 {
		t.Fatalf("a judge just reconnected recovered %d (%v) from a peer without a record, want 0", n, err)
	}
	beats(3) // connected for exactly StaleAfter: not longer yet
	if n, err := judge.RecoverDead(context.Background()); err != nil || n != 0 {
		t.Fatalf("a judge connected for StaleAfter recovered %d (%v), want 0", n, err)
	}
	// A heartbeat after a gap longer than two beats (this process or Redis stopped) starts over.
	clk.Advance(3 * DefaultBeat)
	if err := judge.Heartbeat(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n, err := judge.RecoverDead(context.Background()); err != nil || n != 0 {
		t.Fatalf("a judge whose heartbeats had a gap recovered %d (%v), want 0", n, err)
	}
	beats(4) // connected for longer than StaleAfter without a gap
	if n, err := judge.RecoverDead(context.Background()); err != nil || n != 1 {
		t.Fatalf("a judge connected for longer than StaleAfter recovered %d (%v) from a peer without a record, want 1", n, err)
	}
}

// TestBlockingWaitOutlastsTheCommandTimeout: the pool bounds every command by
// redis.command_timeout, but a consumer waiting for its next item blocks longer than that by
// design; its wait must end empty-handed, not with a timeout error.
func TestBlockingWaitOutlastsTheCommandTimeout(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	pool, err := redisconn.NewPool(redisconn.Config{URL: db.URL(), CommandTimeout: 100 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	k := schema.NewKeys("")
	c := NewConsumer(pool, k, eventsSpec(k), Identity{Host: "h", PID: 1})
	began := time.Now()
	b, err := c.Next(context.Background(), 10, 500*time.Millisecond)
	if err != nil || len(b.Items) != 0 {
		t.Fatalf("waiting 500ms on an empty queue with a 100ms command timeout: %v, %v; want nothing, no error", b.Items, err)
	}
	if took := time.Since(began); took < 500*time.Millisecond {
		t.Fatalf("the wait ended after %v, before its 500ms", took)
	}
}

// reRegisterWorker fails its first batch after deleting its instance's record (as an outage
// that outlives the record's TTL does), then reports whether the record is back when it is
// asked for the next batch.
type reRegisterWorker struct {
	pool   *redis.Pool
	record string
	calls  int
	seen   chan bool
	stop   context.CancelFunc
}

func (w *reRegisterWorker) Start(context.Context) error { return nil }

func (w *reRegisterWorker) ProcessNext(context.Context, time.Duration) (int, error) {
	conn := w.pool.Get()
	defer conn.Close()
	w.calls++
	if w.calls == 1 {
		if _, err := conn.Do("DEL", w.record); err != nil {
			return 0, err
		}
		return 0, fmt.Errorf("redis went away")
	}
	n, _ := redis.Int(conn.Do("EXISTS", w.record))
	w.seen <- n == 1
	w.stop()
	return 0, nil
}

// TestStageReRegistersFirstAfterAFailure: after a failed batch a stage writes its instance
// record again before it claims anything, without waiting for its next heartbeat.
func TestStageReRegistersFirstAfterAFailure(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	k := schema.NewKeys("")
	spec := eventsSpec(k)
	id := Identity{Host: "h", PID: 3}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	w := &reRegisterWorker{pool: db.Pool, record: k.Instance(spec.Stage, id.ID()), seen: make(chan bool, 1), stop: stop}
	loop := &Loop{
		// A beat of an hour: only the stage itself can write the record again in this test.
		Registry: &Registry{Pool: db.Pool, Keys: k, Spec: spec, ID: id, Clock: clock.Real{}, Version: "t", Beat: time.Hour, Log: zap.NewNop()},
		Consumer: NewConsumer(db.Pool, k, spec, id), Worker: w, Log: zap.NewNop(),
	}
	done := make(chan error, 1)
	go func() { done <- loop.Run(ctx) }()
	select {
	case back := <-w.seen:
		if !back {
			t.Fatal("the stage asked for its next batch before writing its record again")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the stage never asked for a second batch")
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
