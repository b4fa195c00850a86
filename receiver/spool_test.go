package receiver

import (
	"context"
	"fmt"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

func TestSpoolingEnqueuerKeepsOrderThroughAnOutage(t *testing.T) {
	t.Parallel()
	next := &memEnqueuer{}
	e := &SpoolingEnqueuer{Next: next, Spool: &Spool{Dir: t.TempDir(), MaxBytes: 1 << 20}}
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
	if n := e.Spool.Len(); n != 5 || e.Spooled() != 5 || next.count() != 1 {
		t.Fatalf("spool %d, spooled %d, delivered %d; want 5, 5, 1", n, e.Spooled(), next.count())
	}
	next.mu.Lock()
	next.failN = 0
	next.mu.Unlock()
	if err := e.Enqueue(ctx, ev(6)); err != nil {
		t.Fatal(err)
	}
	got := next.raw()
	if len(got) != 7 || e.Spool.Len() != 0 {
		t.Fatalf("delivered %d, spool %d; want 7, 0", len(got), e.Spool.Len())
	}
	for i, b := range got {
		if string(b) != string(ev(i)) {
			t.Errorf("event %d is %s, want %s (order lost)", i, b, ev(i))
		}
	}
}

func TestSpoolDropsTheOldestWhenFullAndSaysSo(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zapcore.InfoLevel)
	s := &Spool{Dir: t.TempDir(), MaxBytes: 30, Log: zap.New(core)}
	for i := range 5 {
		if _, err := s.Add([]byte(fmt.Sprintf(`{"n":%d}`, i))); err != nil { // 7 bytes each
			t.Fatal(err)
		}
	}
	if s.Len() != 4 || s.Dropped() != 1 {
		t.Fatalf("spool holds %d, dropped %d; want 4, 1", s.Len(), s.Dropped())
	}
	if l := logs.FilterMessage("spool full: oldest spooled event dropped").All(); len(l) != 1 || l[0].ContextMap()["event"] != `{"n":0}` {
		t.Fatalf("drop log %+v", l)
	}
	next := &memEnqueuer{}
	if n, err := s.Drain(context.Background(), next); err != nil || n != 4 {
		t.Fatalf("drained %d, %v", n, err)
	}
	if got := next.raw(); string(got[0]) != `{"n":1}` || string(got[3]) != `{"n":4}` {
		t.Fatalf("drained %q", got)
	}
	if _, err := s.Add(make([]byte, 31)); err == nil {
		t.Fatal("an event larger than the whole spool was accepted")
	}
}
