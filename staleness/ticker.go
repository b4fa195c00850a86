package staleness

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/events"
	"github.com/flapjackgo/flapjack/schema"
)

var (
	//go:embed claim.lua
	claimSource string
	claimScript = redis.NewScript(2, claimSource)
)

// DefaultBatch is how many due checks one claim looks at: each claim is one short script, and
// a tick claims until nothing is due.
const DefaultBatch = 500

// Ticker claims the checks whose ttl ran out and queues their stale results. Any number of
// executives may run one against the same Redis: each silence period is claimed once.
type Ticker struct {
	Pool    *redis.Pool
	Keys    schema.Keys
	Clock   clock.Clock
	Events  *events.Publisher
	Log     *zap.Logger
	Metrics *Metrics
	Batch   int // due checks per claim; 0 = DefaultBatch
}

// Result is what one tick did.
type Result struct {
	Looked   int // due deadlines looked at
	Claimed  int // stale results queued
	Disarmed int // deadlines dropped (a result without ttl, a disabled or vanished check)
}

// Tick claims every check due at the clock's now and queues a stale result for each, through
// the events list, so every filter, delay, maintenance and rule applies to it. A result the
// claim rescheduled but could not queue (Redis failed in between) is lost for that period only:
// the next falls due one ttl later.
func (t *Ticker) Tick(ctx context.Context) (Result, error) {
	var res Result
	started := time.Now()
	now := t.Clock.Now().Unix()
	batch := t.Batch
	if batch <= 0 {
		batch = DefaultBatch
	}
	conn, err := t.Pool.GetContext(ctx)
	if err != nil {
		return res, fmt.Errorf("stale tick: %w", err)
	}
	defer conn.Close()
	for {
		looked, disarmed, evs, err := t.claim(conn, now, batch)
		if err != nil {
			return res, err
		}
		res.Looked += looked
		res.Disarmed += disarmed
		if len(evs) > 0 {
			if _, err := t.Events.Publish(ctx, evs...); err != nil {
				return res, fmt.Errorf("stale tick: queue %d stale results: %w", len(evs), err)
			}
			res.Claimed += len(evs)
			for i := range evs {
				t.log().Info("check is stale: result queued", zap.String("check", evs[i].ID()), zap.String("summary", evs[i].Summary))
			}
		}
		if looked < batch {
			break
		}
	}
	if t.Metrics != nil {
		t.Metrics.results.Add(float64(res.Claimed))
		t.Metrics.disarmed.Add(float64(res.Disarmed))
		t.Metrics.tick.Observe(time.Since(started).Seconds())
	}
	return res, nil
}

func (t *Ticker) log() *zap.Logger {
	if t.Log == nil {
		return zap.NewNop()
	}
	return t.Log
}

// claim runs one claim script and builds the stale results of the checks it claimed.
func (t *Ticker) claim(conn redis.Conn, now int64, batch int) (looked, disarmed int, evs []schema.Event, err error) {
	reply, err := redis.Values(claimScript.Do(conn, t.Keys.StaleDeadlines(), t.Keys.StaleChecks(),
		now, batch, t.Keys.Check(""), t.Keys.CurrentChecks("")))
	if err != nil {
		return 0, 0, nil, fmt.Errorf("stale tick: claim: %w", err)
	}
	if len(reply) < 2 || (len(reply)-2)%4 != 0 {
		return 0, 0, nil, fmt.Errorf("stale tick: claim: unexpected reply of %d values", len(reply))
	}
	l, _ := redis.Int(reply[0], nil)
	d, _ := redis.Int(reply[1], nil)
	for i := 2; i < len(reply); i += 4 {
		parts, _ := redis.Strings(reply[i:i+4], nil)
		ev, err := staleEvent(parts, now)
		if err != nil {
			t.log().Error("stale check skipped: its entry is damaged", zap.String("check", parts[0]), zap.Error(err))
			continue
		}
		evs = append(evs, ev)
	}
	return l, d, evs, nil
}

// staleEvent is the result recorded for a silent check: unknown, with the check's own failure
// delays (so a stale result is delayed as the check's results are) and the tags of its last
// real result (so it is routed as they are).
func staleEvent(parts []string, now int64) (schema.Event, error) {
	id, raw, initial, repeat := parts[0], parts[1], parts[2], parts[3]
	entity, check, ok := schema.SplitCheckID(id)
	if !ok {
		return schema.Event{}, fmt.Errorf("%q is not ENTITY:CHECK", id)
	}
	e, err := schema.ParseStaleEntry([]byte(raw))
	if err != nil {
		return schema.Event{}, err
	}
	ev := schema.Event{Entity: entity, Check: check, Type: schema.TypeService, State: schema.StateUnknown,
		Summary: Summary(now-e.Last, e.TTL), Tags: e.Tags, Stale: true}
	if n, err := strconv.ParseInt(initial, 10, 64); err == nil && n >= 0 {
		ev.InitialFailureDelay, ev.HasInitialDelay = n, true
	}
	if n, err := strconv.ParseInt(repeat, 10, 64); err == nil && n >= 0 {
		ev.RepeatFailureDelay, ev.HasRepeatDelay = n, true
	}
	return ev, nil
}

// Run ticks every interval (by the wall clock; the decisions use Clock) until ctx ends. Errors
// are logged and counted; the next tick tries again.
func (t *Ticker) Run(ctx context.Context, interval time.Duration) {
	tk := time.NewTicker(interval)
	defer tk.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tk.C:
		}
		if _, err := t.Tick(ctx); err != nil && ctx.Err() == nil {
			if t.Metrics != nil {
				t.Metrics.errors.Inc()
			}
			t.log().Error("stale tick failed; retrying at the next tick", zap.Error(err))
		}
	}
}

// NextDeadline is the earliest deadline (ok false when no check has a ttl). Replay moves its
// clock through the deadlines between two input lines with it.
func NextDeadline(conn redis.Conn, keys schema.Keys) (at int64, ok bool, err error) {
	v, err := redis.Strings(conn.Do("ZRANGE", keys.StaleDeadlines(), 0, 0, "WITHSCORES"))
	if err != nil {
		return 0, false, fmt.Errorf("next stale deadline: %w", err)
	}
	if len(v) < 2 {
		return 0, false, nil
	}
	at, err = strconv.ParseInt(v[1], 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("next stale deadline: score %q: %w", v[1], err)
	}
	return at, true, nil
}
