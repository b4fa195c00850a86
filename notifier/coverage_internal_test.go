package notifier

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/schema"
)

// TestTickKeepsScheduleCoverageCurrent: the coverage gauges follow the injected clock at each
// tick, with no notification routed: a weekday rota hands off at 18:00 into its nightly gap
// (uncovered, nobody on call), and a later import of a covering schedule and a removal show at
// the next tick.
func TestTickKeepsScheduleCoverageCurrent(t *testing.T) {
	t.Parallel()
	db, keys := testredis.New(t), schema.NewKeys("")
	// Monday 2026-03-23, London on GMT: ada is on call 09:00 to 18:00.
	clk := clock.NewFake(time.Date(2026, 3, 23, 17, 59, 0, 0, time.UTC))
	db.Do(t, "HSET", keys.Schedules(), "web-primary", `{"id": "web-primary", "timezone": "Europe/London",
	  "layers": [{"name": "weekly", "start": "2026-03-23T09:00:00", "turn": "1 week", "members": ["ada", "bob"],
	              "restrictions": [{"days": "mon-fri", "from": "09:00", "to": "18:00"}]}]}`)
	m := NewMetrics(prometheus.NewRegistry())
	cfg := DefaultConfig()
	cfg.MediaQueues = map[string]string{"sms": "sms_notifications"}
	nt := New(Options{Pool: db.Pool, Keys: keys, Config: cfg, Clock: clk, HeartbeatClock: clock.Real{},
		Identity: queue.Identity{Host: "n", PID: 1}, Metrics: m})
	ctx := context.Background()
	expect := func(when string, uncovered float64, onCall map[string]float64) {
		t.Helper()
		if n, err := nt.ProcessNext(ctx, 0); err != nil || n != 0 {
			t.Fatalf("%s: tick routed %d notifications, error %v; want none", when, n, err)
		}
		if got := testutil.ToFloat64(m.uncovered); got != uncovered {
			t.Errorf("%s: flapjack_schedules_uncovered %v, want %v", when, got, uncovered)
		}
		if got := testutil.CollectAndCount(m.onCall); got != len(onCall) {
			t.Errorf("%s: %d flapjack_schedule_on_call series, want %d", when, got, len(onCall))
		}
		for id, want := range onCall {
			if got := testutil.ToFloat64(m.onCall.WithLabelValues(id)); got != want {
				t.Errorf("%s: flapjack_schedule_on_call{schedule=%q} %v, want %v", when, id, got, want)
			}
		}
	}
	expect("17:59, ada on call", 0, map[string]float64{"web-primary": 1})
	clk.Advance(time.Minute)
	expect("18:00, the nightly gap", 1, map[string]float64{"web-primary": 0})
	db.Do(t, "HSET", keys.Schedules(), "db-primary", `{"id": "db-primary", "timezone": "UTC",
	  "layers": [{"name": "daily", "start": "2026-03-01T00:00:00", "turn": "1 day", "members": ["carl"]}]}`)
	clk.Advance(tickEvery / 2)
	expect("within the same tick", 1, map[string]float64{"web-primary": 0})
	clk.Advance(tickEvery)
	expect("the next tick, db-primary imported", 1, map[string]float64{"web-primary": 0, "db-primary": 1})
	db.Do(t, "HDEL", keys.Schedules(), "web-primary")
	clk.Advance(tickEvery)
	expect("web-primary removed", 0, map[string]float64{"db-primary": 1})
	if n := db.Do(t, "LLEN", keys.Queue("sms_notifications")); n != int64(0) {
		t.Errorf("%v alerts queued, want none", n)
	}
}
