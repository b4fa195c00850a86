package executive

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/queue"
)

// TestAWholeBatchIsAppliedWithoutItsItems: a claimed batch that is the whole processing list is
// applied without sending its events back to Redis (a malformed item is sent once, as the
// rejected list's entry), and the list is empty afterwards; a batch in which a check has two
// events is applied in rounds, with the items, as before. Either way every event is applied once
// and nothing stays claimed.
func TestAWholeBatchIsAppliedWithoutItsItems(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		items     []string
		itemsSent bool
	}{
		{"one event per check and a malformed one", []string{
			serviceEventFor("web-01", "HTTP", "ok"), serviceEventFor("web-01", "Disk", "critical"),
			malformed, serviceEventFor("db-01", "MySQL", "warning")}, false},
		{"a check with two events", []string{
			serviceEventFor("web-01", "HTTP", "ok"), serviceEventFor("web-01", "HTTP", "critical"),
			serviceEventFor("db-01", "MySQL", "warning")}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			var mu sync.Mutex
			var scriptArgs [][]any
			pool := h.db.HookedPool(t, func(cmd string, args []any) {
				if cmd == "EVALSHA" || cmd == "EVAL" {
					mu.Lock()
					scriptArgs = append(scriptArgs, append([]any(nil), args...))
					mu.Unlock()
				}
			})
			x := New(Options{Pool: pool, Keys: h.keys, Config: DefaultConfig(), Clock: clock.NewFake(t0),
				Identity: queue.Identity{Host: "test", PID: 2}, Version: "test"})
			for _, it := range c.items {
				h.db.Do(t, "LPUSH", h.keys.Events(), it)
			}
			batch, err := x.consumer.Next(context.Background(), 64, 0)
			if err != nil || len(batch.Items) != len(c.items) || !batch.Whole {
				t.Fatalf("claimed %d items (whole: %v, %v), want %d, the whole processing list", len(batch.Items), batch.Whole, err, len(c.items))
			}
			res, err := x.ProcessBatch(context.Background(), batch)
			if err != nil || res.Finished != len(c.items) {
				t.Fatalf("finished %d of %d (%v)", res.Finished, len(c.items), err)
			}
			if n, _ := redis.Int(h.db.Do(t, "LLEN", x.consumer.ProcessingKey()), nil); n != 0 {
				t.Fatalf("%d items still claimed", n)
			}
			sent := false
			for _, args := range scriptArgs {
				for _, a := range args {
					for _, it := range c.items {
						if s, ok := a.(string); ok && s == it && it != malformed {
							sent = true
						}
					}
				}
			}
			if sent != c.itemsSent {
				t.Fatalf("items sent back to Redis: %v, want %v", sent, c.itemsSent)
			}
			if state, _ := redis.String(h.db.Do(t, "HGET", h.keys.Check("db-01:MySQL"), "state"), nil); state != "warning" {
				t.Fatalf("db-01:MySQL state %q, want warning", state)
			}
			if slices.Contains(c.items, malformed) {
				if kept, _ := redis.Strings(h.db.Do(t, "LRANGE", h.keys.EventsRejected(t0), 0, -1), nil); !slices.Contains(kept, malformed) {
					t.Fatalf("rejected list %q, want the malformed item", kept)
				}
			}
		})
	}
}

// TestALargeBatchMarksEveryCheckCurrent: a batch of the largest size the settings allow, each
// event for a check of its own, is processed in one go and leaves every check in the four
// indexes. The index writes once went to Redis as one ZADD per index, which the apply script
// could not unpack beyond ~4,000 checks: the batch failed and was retried forever.
func TestALargeBatchMarksEveryCheckCurrent(t *testing.T) {
	t.Parallel()
	const n = 10000
	h := newHarness(t, func(c *Config) { c.BatchSize = n })
	events := make([]any, 0, n+1)
	events = append(events, h.keys.Events())
	for i := 0; i < n; i++ {
		events = append(events, serviceEventFor(fmt.Sprintf("host-%d", i/4), fmt.Sprintf("check %d", i%4), "ok"))
	}
	h.db.Do(t, "LPUSH", events...)
	batch, err := h.x.consumer.Next(context.Background(), n, 0)
	if err != nil || len(batch.Items) != n {
		t.Fatalf("claimed %d items (%v), want %d", len(batch.Items), err, n)
	}
	if res, err := h.x.ProcessBatch(context.Background(), batch); err != nil || res.Finished != n {
		t.Fatalf("finished %d of %d (%v)", res.Finished, n, err)
	}
	for key, want := range map[string]int{h.keys.AllChecks(): n, h.keys.CurrentEntities(): n / 4,
		h.keys.AllChecksFor("host-2499"): 4, h.keys.CurrentChecks("host-0"): 4} {
		if got, _ := redis.Int(h.db.Do(t, "ZCARD", key), nil); got != want {
			t.Errorf("%s holds %d members, want %d", key, got, want)
		}
	}
}

const malformed = `{"entity":"web-01"`

// serviceEventFor is a service event of entity:check in state at t0.
func serviceEventFor(entity, check, state string) string {
	return fmt.Sprintf(`{"entity":%q,"check":%q,"type":"service","state":%q,"summary":"s","time":%d}`,
		entity, check, state, t0.Unix())
}
