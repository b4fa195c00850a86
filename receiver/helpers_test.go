package receiver

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/internal/text"
	"github.com/flapjackgo/flapjack/schema"
)

// memEnqueuer records enqueued events in memory. The receivers never talk to Redis, so an
// in-memory sink exercises everything they do.
type memEnqueuer struct {
	mu     sync.Mutex
	events [][]byte
	failN  int // fail this many calls before accepting
	calls  int
}

var errEnqueue = errors.New("redis: connection refused")

func (m *memEnqueuer) Enqueue(_ context.Context, event []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	if m.failN > 0 {
		m.failN--
		return errEnqueue
	}
	m.events = append(m.events, append([]byte(nil), event...))
	return nil
}

func (m *memEnqueuer) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.events)
}

func (m *memEnqueuer) raw() [][]byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([][]byte(nil), m.events...)
}

// parsed re-validates every enqueued payload, as the executive will, and returns the events.
func (m *memEnqueuer) parsed(t *testing.T) []schema.Event {
	t.Helper()
	var out []schema.Event
	for _, b := range m.raw() {
		ev, err := schema.ParseEvent(b)
		if err != nil {
			t.Fatalf("enqueued payload %s does not validate: %v", b, err)
		}
		out = append(out, ev)
	}
	return out
}

// rejections collects OnReject calls (safe for use from the receiver's goroutine).
type rejections struct {
	mu   sync.Mutex
	list []Rejection
}

func (r *rejections) add(x Rejection) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = append(r.list, x)
}

func (r *rejections) get() []Rejection {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Rejection(nil), r.list...)
}

func assertEvents(t *testing.T, got, want []schema.Event) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("got %d events, want %d", len(got), len(want))
	}
	for i := range min(len(got), len(want)) {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("event %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
	for i := len(want); i < len(got); i++ {
		t.Errorf("unexpected event %d: %+v", i, got[i])
	}
}

func assertRejections(t *testing.T, got, want []Rejection) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("got %d rejections, want %d", len(got), len(want))
	}
	for i := range min(len(got), len(want)) {
		if !reflect.DeepEqual(got[i], want[i]) {
			g, w := got[i], want[i]
			g.Input, w.Input = text.Truncate(g.Input, 100), text.Truncate(w.Input, 100)
			t.Errorf("rejection %d (inputs cut to 100 bytes):\n got %+v\nwant %+v", i, g, w)
		}
	}
	for i := len(want); i < len(got); i++ {
		t.Errorf("unexpected rejection %d: %+v", i, got[i])
	}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// svc builds the expected service event.
func svc(entity, check, state string, time int64, summary, details, perfdata string) schema.Event {
	return schema.Event{
		Entity: entity, Check: check, Type: schema.TypeService, State: state,
		Summary: summary, Details: details, Perfdata: perfdata,
		Time: time, HasTime: true,
	}
}
