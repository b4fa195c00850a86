package main

import (
	"context"
	"fmt"
	"math"
	"syscall"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/notifier"
	"github.com/flapjackgo/flapjack/queue"
)

// escalationTick: 10,000 failing checks each with an escalation ladder in progress (100 teams,
// each with its policy over 100 checks and its own people; ladders started over 100 seconds,
// so about 100 steps fall due each second), then the notifier's tick on the
// injected clock: ms per tick with nothing due, and per tick firing the ~100 steps due in one
// second. The tick's cost must follow the steps due, not the ladders in progress.
func (b *bench) escalationTick() error {
	env, err := startRedis()
	if err != nil {
		return err
	}
	defer env.close()
	const checks, spread, teams = 10000, 100, 100
	fmt.Printf("== escalation tick: %d problems with an escalation in progress (%d teams, each its policy and people), about %d steps due per second\n",
		checks, teams, checks/spread)
	gen := func(i int) string {
		c, round := i%checks, i/checks
		state, at := "ok", base
		if round > 0 {
			state, at = "critical", base+1
		}
		return serviceEvent(fmt.Sprintf("esc-%d.example.com", c/10), fmt.Sprintf("check-%d", c%10), state, at)
	}
	if err := env.push(checks*2, gen); err != nil {
		return err
	}
	if _, err := b.runExecutives(env, checks*2, 1, "FLAPJACK_EXECUTIVE_INITIAL_FAILURE_DELAY=0s"); err != nil {
		return err
	}
	conn := env.pool.Get()
	defer conn.Close()
	ctx := context.Background()
	var policies []roster.EscalationPolicy
	for team := range teams {
		bob, carol := fmt.Sprintf("bob-%d", team), fmt.Sprintf("carol-%d", team)
		for _, id := range []string{bob, carol} {
			for _, cmd := range [][]any{{"SADD", env.keys.AllContacts(), id}, {"HSET", env.keys.Contact(id), "first_name", id},
				{"HSET", env.keys.ContactMedia(id), "sms", "+44770090" + id}} {
				if _, err := conn.Do(cmd[0].(string), cmd[1:]...); err != nil {
					return err
				}
			}
		}
		p := roster.EscalationPolicy{ID: fmt.Sprintf("team-%d", team),
			Steps: []roster.EscalationStep{{Delay: 900, Contacts: []string{bob}}, {Delay: 2700, Contacts: []string{carol}}}}
		for e := range checks / teams / 10 {
			p.Entities = append(p.Entities, fmt.Sprintf("esc-%d.example.com", team*checks/teams/10+e))
		}
		policies = append(policies, p)
	}
	res, err := roster.PutEscalationPolicies(ctx, conn, env.keys, policies, roster.ReplaceOptions{})
	if err != nil || len(res.Problems) > 0 {
		return fmt.Errorf("put policies: %v %v", err, res.Problems)
	}
	start := time.Unix(base+3600, 0)
	clk := clock.NewFake(start)
	cfg := notifier.DefaultConfig()
	cfg.MediaQueues = map[string]string{"sms": "sms_notifications"}
	cfg.BatchSize = checks / spread
	n := notifier.New(notifier.Options{Pool: env.pool, Keys: env.keys, Config: cfg, Clock: clk, HeartbeatClock: clock.Real{},
		Identity: queue.Identity{Host: "bench", PID: 1}})
	loop := n.Loop(false)
	if _, err := loop.Open(ctx); err != nil {
		return err
	}
	defer loop.Close(ctx)
	if queued, _ := redis.Int(conn.Do("LLEN", env.keys.Notifications())); queued != checks {
		return fmt.Errorf("the executive queued %d notifications, want %d", queued, checks)
	}
	routed := 0
	for {
		r, err := n.ProcessNextResult(ctx, 0)
		if err != nil {
			return err
		}
		if r.Finished == 0 {
			break
		}
		routed += r.Finished
		clk.Advance(time.Second)
	}
	_, progress, err := roster.EscalationsInProgress(conn, env.keys, 1)
	if err != nil {
		return err
	}
	if progress != checks {
		return fmt.Errorf("%d escalations in progress after routing %d notifications, want %d", progress, routed, checks)
	}
	var idle, busy []time.Duration
	fired := 0
	clk.Set(start.Add(time.Minute))
	before, err := env.snapshot()
	if err != nil {
		return err
	}
	cpuBefore := selfCPU()
	for range 200 {
		t0 := time.Now()
		if _, err := n.Escalate(ctx); err != nil {
			return err
		}
		idle = append(idle, time.Since(t0))
	}
	cpuIdle := selfCPU()

	idleStats, err := env.snapshot()
	if err != nil {
		return err
	}
	for s := range spread {
		clk.Set(start.Add(15*time.Minute + time.Duration(s)*time.Second))
		t0 := time.Now()
		r, err := n.Escalate(ctx)
		if err != nil {
			return err
		}
		busy = append(busy, time.Since(t0))
		fired += len(r.Alerts)
	}
	cpuBusy := selfCPU()

	busyStats, err := env.snapshot()
	if err != nil {
		return err
	}
	if fired != checks {
		return fmt.Errorf("%d step 1 alerts over %d ticks, want %d", fired, spread, checks)
	}
	// CPU per tick, the notifier's (this process's) and Redis's, says more than times on a
	// shared machine: it does not grow with the load of the other processes
	idleCmds, _, idleRedisUs := costs(before, idleStats, len(idle))
	busyCmds, _, busyRedisUs := costs(idleStats, busyStats, len(busy))
	idleUs, busyUs := (cpuIdle-cpuBefore)*1e6/float64(len(idle)), (cpuBusy-cpuIdle)*1e6/float64(len(busy))
	for _, m := range []struct {
		name                    string
		samples                 []time.Duration
		steps                   float64
		cmds, redisUs, flapjack float64 // per tick
	}{{"nothing due", idle, 0, idleCmds, idleRedisUs, idleUs},
		{fmt.Sprintf("%d steps due", checks/spread), busy, float64(checks / spread), busyCmds, busyRedisUs, busyUs}} {
		p50, p95, p99 := percentiles(m.samples)
		fmt.Printf("   one tick, %s: p50 %.2f ms, p95 %.2f ms, p99 %.2f ms; CPU per tick: notifier %.2f ms, Redis %.2f ms; %.0f Redis commands\n",
			m.name, p50, p95, p99, m.flapjack/1000, m.redisUs/1000, m.cmds)
		rate := math.NaN()
		if m.steps > 0 {
			rate = m.steps / (p50 / 1000)
		}
		b.rows = append(b.rows, row{scenario: fmt.Sprintf("escalation tick, %d in progress, %s", checks, m.name), target: "< 10 ms per tick",
			eventsPerSec: rate, p50: p50, p95: p95, p99: p99, cmdsPerEvent: m.cmds,
			redisUsPerEvent: m.redisUs, execUsPerEvent: m.flapjack,
			note: "ms per tick; events/s = steps fired per second of tick; Redis commands and CPU µs are per tick"})
	}
	return nil
}

// selfCPU is this process's user + system CPU time in seconds (the notifier runs in it).
func selfCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return math.NaN()
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
