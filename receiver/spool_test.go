package receiver

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/flapjackgo/flapjack/events"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/redisconn"
	"github.com/flapjackgo/flapjack/schema"
)

func spoolEvents(from, n int) [][]byte {
	var out [][]byte
	for i := from; i < from+n; i++ {
		out = append(out, []byte(fmt.Sprintf(`{"n":%06d}`, i))) // 13 bytes + newline
	}
	return out
}

func drainAll(t *testing.T, s *Spool) []string {
	t.Helper()
	var got []string
	for {
		seq, evs, err := s.Oldest()
		if err != nil {
			t.Fatal(err)
		}
		if evs == nil {
			return got
		}
		for _, e := range evs {
			got = append(got, string(e))
		}
		if err := s.Remove(seq); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSpoolOrderedAndPersistent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, err := OpenSpool(dir, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	for b := range 10 {
		if d, err := s.Append(spoolEvents(b*100, 100)); err != nil || d != 0 {
			t.Fatalf("append: dropped %d, %v", d, err)
		}
	}
	s.Close()
	s, err = OpenSpool(dir, 1<<20) // a restart keeps what was spooled
	if err != nil {
		t.Fatal(err)
	}
	if s.Len() != 1000 {
		t.Fatalf("reopened spool holds %d, want 1000", s.Len())
	}
	got := drainAll(t, s)
	if len(got) != 1000 {
		t.Fatalf("drained %d, want 1000", len(got))
	}
	for i, g := range got {
		if g != fmt.Sprintf(`{"n":%06d}`, i) {
			t.Fatalf("event %d is %s: out of order", i, g)
		}
	}
	if s.Len() != 0 || s.Bytes() != 0 {
		t.Errorf("after draining: %d events, %d bytes", s.Len(), s.Bytes())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("%d files left in the spool directory", len(entries))
	}
}

func TestSpoolBoundedDropsOldestCounted(t *testing.T) {
	t.Parallel()
	const maxBytes = 64 << 10 // segments of 64 KiB: the bound holds one
	s, err := OpenSpool(t.TempDir(), 4*maxBytes)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	dropped := 0
	for b := range 200 {
		d, err := s.Append(spoolEvents(b*500, 500)) // 7,000 bytes a batch
		if err != nil {
			t.Fatal(err)
		}
		dropped += d
		total += 500
		if s.Bytes() > 4*maxBytes {
			t.Fatalf("spool is %d bytes, over its %d bound", s.Bytes(), 4*maxBytes)
		}
	}
	if dropped == 0 || int64(dropped) != s.Dropped() {
		t.Fatalf("dropped %d (spool counts %d), want the same non-zero count", dropped, s.Dropped())
	}
	got := drainAll(t, s)
	if len(got)+dropped != total {
		t.Fatalf("kept %d + dropped %d != appended %d", len(got), dropped, total)
	}
	// What is kept is the newest, in order, ending with the last event appended.
	for i, g := range got {
		if want := fmt.Sprintf(`{"n":%06d}`, dropped+i); g != want {
			t.Fatalf("kept event %d is %s, want %s", i, g, want)
		}
	}
	// A batch larger than the whole bound is itself dropped, and counted.
	if d, _ := s.Append(spoolEvents(0, 30000)); d != 30000 {
		t.Errorf("oversized batch: dropped %d, want 30000", d)
	}
}

func TestSpoolingEnqueuerKeepsOrderThroughAnOutage(t *testing.T) {
	t.Parallel()
	next := &memEnqueuer{}
	s, err := OpenSpool(t.TempDir(), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	e := &SpoolingEnqueuer{Next: next, Spool: s}
	ctx := context.Background()
	ev := func(i int) []byte { return []byte(fmt.Sprintf(`{"n":%d}`, i)) }
	if err := e.Enqueue(ctx, ev(0)); err != nil {
		t.Fatal(err)
	}
	// Redis away for the next five events (each Enqueue tries a drain first, then the event).
	next.mu.Lock()
	next.failN = 1 << 30
	next.mu.Unlock()
	for i := 1; i <= 5; i++ {
		if err := e.Enqueue(ctx, ev(i)); err != nil {
			t.Fatalf("event %d: %v (must be spooled, not fail)", i, err)
		}
	}
	if n := s.Len(); n != 5 || e.Spooled() != 5 || next.count() != 1 {
		t.Fatalf("spool %d, spooled %d, delivered %d; want 5, 5, 1", n, e.Spooled(), next.count())
	}
	next.mu.Lock()
	next.failN = 0
	next.mu.Unlock()
	if err := e.Enqueue(ctx, ev(6)); err != nil {
		t.Fatal(err)
	}
	got := next.raw()
	if len(got) != 7 || s.Len() != 0 {
		t.Fatalf("delivered %d, spool %d; want 7, 0", len(got), s.Len())
	}
	for i, b := range got {
		if string(b) != string(ev(i)) {
			t.Errorf("event %d is %s, want %s (order lost)", i, b, ev(i))
		}
	}
}

// TestSpoolDropsTheOldestWhenFullAndSaysSo: with a bound of a few events each segment holds
// one, so exactly the oldest is dropped, counted and logged.
func TestSpoolDropsTheOldestWhenFullAndSaysSo(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zapcore.InfoLevel)
	s, err := OpenSpool(t.TempDir(), 32)
	if err != nil {
		t.Fatal(err)
	}
	s.SetLogger(zap.New(core))
	for i := range 5 {
		if _, err := s.Append([][]byte{[]byte(fmt.Sprintf(`{"n":%d}`, i))}); err != nil { // 8 bytes each
			t.Fatal(err)
		}
	}
	if s.Len() != 4 || s.Dropped() != 1 {
		t.Fatalf("spool holds %d, dropped %d; want 4, 1", s.Len(), s.Dropped())
	}
	if l := logs.FilterMessage("spool full: oldest spooled events dropped").All(); len(l) != 1 || l[0].ContextMap()["first"] != `{"n":0}` {
		t.Fatalf("drop log %+v", l)
	}
	next := &memEnqueuer{}
	if n, err := s.Drain(context.Background(), next); err != nil || n != 4 {
		t.Fatalf("drained %d, %v", n, err)
	}
	if got := next.raw(); string(got[0]) != `{"n":1}` || string(got[3]) != `{"n":4}` {
		t.Fatalf("drained %q", got)
	}
	if _, err := s.Append([][]byte{make([]byte, 32)}); err == nil {
		t.Fatal("an event larger than the whole spool was accepted")
	}
}

// TestSpoolSharedByProcesses: two Spools on one directory (a pipe handler and a receiver)
// append in order into the same queue, only one drains at a time, and a drain that fails half
// way leaves only what was not queued, so nothing is queued twice.
func TestSpoolSharedByProcesses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, err := OpenSpool(dir, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	b, err := OpenSpool(dir, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		sp := a
		if i%2 == 1 {
			sp = b
		}
		if _, err := sp.Append(spoolEvents(i*10, 10)); err != nil {
			t.Fatal(err)
		}
	}
	// While a drains, b cannot.
	held := make(chan struct{})
	release := make(chan struct{})
	go func() {
		_, _ = a.DrainOldest(context.Background(), func(context.Context, [][]byte) (int, error) {
			close(held)
			<-release
			return 0, errEnqueue
		})
	}()
	<-held
	if _, err := b.DrainOldest(context.Background(), func(_ context.Context, evs [][]byte) (int, error) { return len(evs), nil }); err != ErrSpoolBusy {
		t.Fatalf("second drainer: %v, want ErrSpoolBusy", err)
	}
	if n, err := b.Drain(context.Background(), &memEnqueuer{}); n != 0 || err != nil {
		t.Fatalf("Drain while another drains: %d, %v; want 0, nil", n, err)
	}
	close(release)
	// b drains, Redis failing after 25 events: those are removed, the rest kept.
	next := &memEnqueuer{}
	flaky := enqueuerFunc(func(ctx context.Context, ev []byte) error {
		if next.count() == 25 {
			return errEnqueue
		}
		return next.Enqueue(ctx, ev)
	})
	for {
		if _, err := b.Drain(context.Background(), flaky); err == errEnqueue {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if n := b.Len(); n != 35 {
		t.Fatalf("after a drain failing at 25 events, %d are spooled; want 35", n)
	}
	if _, err := a.Append(spoolEvents(60, 5)); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Drain(context.Background(), next); err != nil {
		t.Fatal(err)
	}
	got := next.raw()
	if len(got) != 65 {
		t.Fatalf("queued %d events, want 65 (each once)", len(got))
	}
	for i, g := range got {
		if want := fmt.Sprintf(`{"n":%06d}`, i); string(g) != want {
			t.Fatalf("event %d is %s, want %s", i, g, want)
		}
	}
}

type enqueuerFunc func(context.Context, []byte) error

func (f enqueuerFunc) Enqueue(ctx context.Context, ev []byte) error { return f(ctx, ev) }

// TestSpoolingEnqueuerSpoolsPastTheDeadlineOfAFrozenRedis: with Redis stopped (SIGSTOP) a push
// through the publisher gives up after its timeout and the event is spooled, so the receiver
// reads on instead of hanging; once Redis resumes the spool drains onto the events list.
func TestSpoolingEnqueuerSpoolsPastTheDeadlineOfAFrozenRedis(t *testing.T) {
	t.Parallel()
	srv := testredis.StartServer(t)
	db := srv.NewDB(t)
	const timeout = 300 * time.Millisecond
	pool, err := redisconn.NewPool(redisconn.Config{URL: db.URL(), CommandTimeout: timeout}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	keys := schema.NewKeys("")
	s, err := OpenSpool(t.TempDir(), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	e := &SpoolingEnqueuer{Next: events.NewPublisher(pool, keys, "").WithTimeout(timeout), Spool: s}
	ev := []byte(`{"entity":"web-01","check":"HTTP","type":"service","state":"critical","summary":"frozen"}`)

	srv.Freeze(t)
	var thaw sync.Once
	// Should the push hang, Redis resumes after a while so the test fails instead of hanging.
	guard := time.AfterFunc(5*time.Second, func() { thaw.Do(func() { srv.Thaw(t) }) })
	defer guard.Stop()
	began := time.Now()
	err = e.Enqueue(context.Background(), ev)
	took := time.Since(began)
	thaw.Do(func() { srv.Thaw(t) })
	if err != nil {
		t.Fatalf("enqueue on a frozen Redis: %v, want the event spooled", err)
	}
	if bound := timeout + time.Second; took > bound {
		t.Fatalf("enqueue on a frozen Redis took %v, want at most %v (timeout %v)", took, bound, timeout)
	}
	if s.Len() != 1 || e.Spooled() != 1 {
		t.Fatalf("spool holds %d, spooled %d; want the event spooled", s.Len(), e.Spooled())
	}
	if _, err := s.Drain(context.Background(), e.Next); err != nil {
		t.Fatalf("drain after Redis resumed: %v", err)
	}
	got, err := redis.Strings(db.Do(t, "LRANGE", keys.Events(), 0, -1), nil)
	if err != nil || len(got) == 0 || !strings.Contains(got[0], `"summary":"frozen"`) || s.Len() != 0 {
		t.Fatalf("events list after the drain: %v %v, spool %d; want the spooled event queued", got, err, s.Len())
	}
}
