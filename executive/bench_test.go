package executive

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/schema"
)

// BenchmarkExecutive measures events/s through the real executive on a local redis-server:
// 10,000 checks, 5% of them failing.
func BenchmarkExecutive(b *testing.B) { benchmarkExecutive(b, DefaultConfig()) }

// BenchmarkExecutiveNoExplain is the same with executive.explain_entries 0: the cost of the
// explain list is the difference.
func BenchmarkExecutiveNoExplain(b *testing.B) {
	cfg := DefaultConfig()
	cfg.ExplainEntries = 0
	benchmarkExecutive(b, cfg)
}

func benchmarkExecutive(b *testing.B, cfg Config) {
	db := testredis.New(b)
	keys := schema.NewKeys("")
	x := New(Options{Pool: db.Pool, Keys: keys, Config: cfg, Clock: clock.Real{},
		Identity: queue.Identity{Host: "bench", PID: 1}, Version: "bench"})
	if _, err := x.Loop(false).Open(context.Background()); err != nil {
		b.Fatal(err)
	}
	const checks = 10000
	conn := db.Pool.Get()
	defer conn.Close()
	b.ResetTimer()
	b.StopTimer()
	events := 0
	for events < b.N {
		n := min(50000, b.N-events)
		for i := 0; i < n; i++ {
			c := (events + i) % checks
			state := "ok"
			if c%20 == 0 {
				state = "critical"
			}
			conn.Send("LPUSH", keys.Events(), fmt.Sprintf(`{"entity":"host-%d.example.com","check":"check %d","type":"service","state":%q,"summary":"all is well","time":%d}`,
				c/10, c, state, time.Now().Unix()))
		}
		conn.Flush()
		for i := 0; i < n; i++ {
			conn.Receive()
		}
		b.StartTimer()
		for {
			done, err := x.ProcessNext(context.Background(), 0)
			if err != nil {
				b.Fatal(err)
			}
			if done == 0 {
				break
			}
		}
		b.StopTimer()
		events += n
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
