package main

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/events"
	"github.com/flapjackgo/flapjack/staleness"
)

// staleTicks: the staleness deadline work per tick (docs/decisions.md D19). 10,000 checks get a ttl from
// 1 to 10 minutes through a real executive; then a tick runs for every second of the next ten
// minutes on a simulated clock (a check falls due once per ttl), then one tick with
// every check due at once. A tick's cost follows the checks that fall due, not the checks
// armed: the first tick, with none due, shows the floor.
func (b *bench) staleTicks() error {
	env, err := startRedis()
	if err != nil {
		return err
	}
	defer env.close()
	checks := 10000
	if b.o.quick {
		checks = 1000
	}
	const minTTL, spread = 60, 540
	fmt.Printf("== staleness: %d checks with ttls of %d-%d s, one tick per simulated second\n", checks, minTTL, minTTL+spread-1)
	gen := func(i int) string {
		return fmt.Sprintf(`{"entity":"host-%d.example.com","check":"check-%d","type":"service","state":"ok","ttl":%d}`,
			i/10, i%10, minTTL+i%spread)
	}
	if err := env.push(checks, gen); err != nil {
		return err
	}
	if _, err := b.runExecutives(env, checks, 1); err != nil {
		return err
	}
	armed := time.Now().Truncate(time.Second).Add(time.Second) // every deadline is later
	clk := clock.NewFake(armed)
	t := &staleness.Ticker{Pool: env.pool, Keys: env.keys, Clock: clk, Events: events.NewPublisher(env.pool, env.keys, "")}
	ctx := context.Background()
	var idle []time.Duration
	for range 21 { // the first loads the script and dials: not counted
		started := time.Now()
		if res, err := t.Tick(ctx); err != nil || res.Looked != 0 {
			return fmt.Errorf("a tick before any deadline looked at %d checks (%v)", res.Looked, err)
		}
		idle = append(idle, time.Since(started))
	}
	empty, _, _ := percentiles(idle[1:])

	before, err := env.snapshot()
	if err != nil {
		return err
	}
	var samples []time.Duration
	claimed := 0
	for s := 1; s <= minTTL+spread; s++ {
		clk.Set(armed.Add(time.Duration(s) * time.Second))
		started := time.Now()
		res, err := t.Tick(ctx)
		if err != nil {
			return err
		}
		samples = append(samples, time.Since(started))
		claimed += res.Claimed
	}
	after, err := env.snapshot()
	if err != nil {
		return err
	}
	if claimed < checks {
		return fmt.Errorf("%d stale results in ten minutes for %d checks with ttls of at most ten", claimed, checks)
	}
	cmds, _, redisUs := costs(before, after, claimed)
	p50, p95, p99 := percentiles(samples)
	perTick := float64(claimed) / float64(len(samples))
	fmt.Printf("   %d ticks, %.1f checks due per tick: p50/p95/p99 %.2f / %.2f / %.2f ms per tick; %.1f Redis commands and %.1f µs Redis CPU per stale result; a tick with none due: %.2f ms (p50)\n",
		len(samples), perTick, p50, p95, p99, cmds, redisUs, empty)
	b.rows = append(b.rows, row{scenario: fmt.Sprintf("stale tick, %d checks with ttls, ~%.0f due per tick", checks, perTick), target: "cost ∝ due checks",
		eventsPerSec: math.NaN(), p50: p50, p95: p95, p99: p99, cmdsPerEvent: cmds, redisUsPerEvent: redisUs,
		note: fmt.Sprintf("per stale result queued; tick with none due %.2f ms", empty)})

	// Every check's second period falls due at once: one tick claims them all, in batches.
	clk.Set(armed.Add(time.Duration(3*(minTTL+spread)) * time.Second))
	before, err = env.snapshot()
	if err != nil {
		return err
	}
	started := time.Now()
	res, err := t.Tick(ctx)
	if err != nil {
		return err
	}
	burst := time.Since(started)
	after, err = env.snapshot()
	if err != nil {
		return err
	}
	if res.Claimed != checks {
		return fmt.Errorf("the burst tick claimed %d of %d checks", res.Claimed, checks)
	}
	cmds, _, redisUs = costs(before, after, res.Claimed)
	fmt.Printf("   every check due at once: one tick of %.1f ms for %d stale results (%.1f µs each; %.1f Redis commands, %.1f µs Redis CPU each)\n",
		staleMs(burst), res.Claimed, float64(burst.Microseconds())/float64(res.Claimed), cmds, redisUs)
	b.rows = append(b.rows, row{scenario: fmt.Sprintf("stale tick, all %d checks due at once", checks), target: "cost ∝ due checks",
		eventsPerSec: float64(res.Claimed) / burst.Seconds(), p50: math.NaN(), p95: math.NaN(), p99: math.NaN(), cmdsPerEvent: cmds,
		redisUsPerEvent: redisUs, note: fmt.Sprintf("one tick, %.1f ms; stale results queued/s", staleMs(burst))})
	return nil
}

func staleMs(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
