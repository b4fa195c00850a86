package executive

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/schema"
)

// t0 is the base instant of timelines: 2026-01-05 10:00:00 UTC.
var t0 = time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)

type harness struct {
	t    *testing.T
	db   *testredis.DB
	clk  *clock.Fake
	keys schema.Keys
	x    *Executive
	// afterBatch, when not nil, is called after each call of ProcessNextResult by send
	afterBatch func()
	// trace is what runBatches's hooked pool saw sent, and afterBatch's marks
	trace string
	// failures counts the calls that failed, when not nil; else a failed call fails the test
	failures *int
}

func newHarness(t *testing.T, configure ...func(*Config)) *harness {
	t.Helper()
	return newHarnessOn(t, testredis.New(t), configure...)
}

// newHarnessOn is newHarness on database db.
func newHarnessOn(t *testing.T, db *testredis.DB, configure ...func(*Config)) *harness {
	t.Helper()
	clk := clock.NewFake(t0)
	cfg := DefaultConfig()
	for _, c := range configure {
		c(&cfg)
	}
	keys := schema.NewKeys("")
	x := New(Options{Pool: db.Pool, Keys: keys, Config: cfg, Clock: clk,
		Identity: queue.Identity{Host: "test", PID: 1}, Version: "test"})
	if _, err := x.Loop(false).Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	return &harness{t: t, db: db, clk: clk, keys: keys, x: x}
}

// at moves the clock to t0+offset seconds.
func (h *harness) at(offset int64) *harness {
	h.clk.Set(t0.Add(time.Duration(offset) * time.Second))
	return h
}

// send pushes raw events and processes until the queue is empty, returning the notifications.
func (h *harness) send(raw ...string) []schema.Notification {
	h.t.Helper()
	for _, r := range raw {
		h.db.Do(h.t, "LPUSH", h.keys.Events(), r)
	}
	var out []schema.Notification
	for {
		res, err := h.x.ProcessNextResult(context.Background(), 0)
		if h.afterBatch != nil {
			h.afterBatch()
		}
		if err != nil && h.failures != nil && *h.failures < 10 {
			h.t.Logf("call failed, retried: %v", err)
			*h.failures++
			continue
		}
		if err != nil {
			h.t.Fatal(err)
		}
		if res.Finished == 0 {
			return out
		}
		out = append(out, res.Notifications...)
	}
}

// event builds a service event JSON for entity "app-01.example.com", check "HTTP".
func event(state string, extra ...string) string {
	typ := "service"
	if state == schema.StateAcknowledgement || state == schema.StateTestNotifications {
		typ = "action"
	}
	s := fmt.Sprintf(`{"entity":"app-01.example.com","check":"HTTP","type":%q,"state":%q`, typ, state)
	for _, e := range extra {
		s += "," + e
	}
	return s + "}"
}

const checkID = "app-01.example.com:HTTP"

func (h *harness) get(key string) string {
	h.t.Helper()
	v, err := redis.String(h.db.Do(h.t, "GET", key), nil)
	if err != nil && err != redis.ErrNil {
		h.t.Fatal(err)
	}
	return v
}

func (h *harness) hget(key, field string) string {
	h.t.Helper()
	v, err := redis.String(h.db.Do(h.t, "HGET", key, field), nil)
	if err != nil && err != redis.ErrNil {
		h.t.Fatal(err)
	}
	return v
}

// nothingClaimed fails the test if the executive's processing list holds items.
func (h *harness) nothingClaimed() {
	h.t.Helper()
	if n, _ := redis.Int(h.db.Do(h.t, "LLEN", h.x.consumer.ProcessingKey()), nil); n != 0 {
		h.t.Errorf("%d items still claimed", n)
	}
}

func (h *harness) queued() []schema.Notification {
	h.t.Helper()
	raw, err := redis.Strings(h.db.Do(h.t, "LRANGE", h.keys.Notifications(), 0, -1), nil)
	if err != nil {
		h.t.Fatal(err)
	}
	out := make([]schema.Notification, len(raw))
	for i, r := range raw {
		if err := json.Unmarshal([]byte(r), &out[i]); err != nil {
			h.t.Fatalf("notification %d is not JSON: %v", i, err)
		}
	}
	return out
}
