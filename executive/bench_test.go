package executive

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/checkstate"
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

// BenchmarkDecide guards the pure decision of the commonest event, an ok result for a check that
// was ok, and of a new failure that notifies: no Redis, so allocations per event are exact.
func BenchmarkDecide(b *testing.B) {
	keys := schema.NewKeys("")
	d := New(Options{Keys: keys, Config: DefaultConfig(), Clock: clock.Real{}}).decider
	const now = 1767607200
	for _, c := range []struct {
		name, raw string
		facts     checkstate.CheckFacts
	}{
		{"ok-on-ok", `{"entity":"host-1.example.com","check":"HTTP","type":"service","state":"ok","summary":"all is well","time":1767607200}`,
			checkstate.CheckFacts{ID: "host-1.example.com:HTTP", Entity: "host-1.example.com", Check: "HTTP", State: "ok",
				LastChange: now - 3600, Revision: 9, LastEventTime: now - 60, Summary: "all is well",
				InitialFailureDelay: 30, RepeatFailureDelay: 60, HasInitialFailureDelay: true, HasRepeatFailureDelay: true}},
		{"new-failure", `{"entity":"host-1.example.com","check":"HTTP","type":"service","state":"critical","summary":"HTTP 500","time":1767607200}`,
			checkstate.CheckFacts{ID: "host-1.example.com:HTTP", Entity: "host-1.example.com", Check: "HTTP", State: "ok",
				LastChange: now - 3600, Revision: 9, LastEventTime: now - 60, Summary: "all is well", NotificationsRead: true,
				InitialFailureDelay: 0, RepeatFailureDelay: 60, HasInitialFailureDelay: true, HasRepeatFailureDelay: true}},
	} {
		b.Run(c.name, func(b *testing.B) {
			ev, err := schema.ParseEvent([]byte(c.raw))
			if err != nil {
				b.Fatal(err)
			}
			var view checkView
			b.ReportAllocs()
			for b.Loop() {
				out := d.decide(&ev, c.raw, &c.facts, now, 0, &view)
				if out.record.Ops.Len() == 0 {
					b.Fatal("nothing written")
				}
			}
		})
	}
}

// BenchmarkFactsCache guards the facts cache's work per ok event: deciding on remembered facts
// (lookup) and remembering what the applied decision left (applied), over 100,000 checks. The
// only allocation is the check's id, which the decision needs anyway.
func BenchmarkFactsCache(b *testing.B) {
	const checks = 100_000
	c := newFactsCache(checks)
	evs := make([]schema.Event, checks)
	for i := range evs {
		evs[i] = schema.Event{Entity: fmt.Sprintf("host-%d.example.com", i/10), Check: fmt.Sprintf("check %d", i%10),
			Type: schema.TypeService, State: schema.StateOK, Summary: "all is well"}
		d := decision{hasAfter: true, after: factsAfter{state: schema.StateOK, revision: 2, summary: "all is well"}}
		c.applied(&evs[i], &d, model.Applied, false)
	}
	var f checkstate.CheckFacts
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		ev := &evs[i%checks]
		if !c.lookup(ev, &f) {
			b.Fatal("a remembered check was not found")
		}
		d := decision{hasAfter: true, after: factsAfter{state: schema.StateOK, revision: f.Revision + 1, summary: ev.Summary}}
		c.applied(ev, &d, model.Applied, true)
		i++
	}
}
