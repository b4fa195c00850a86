package events

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/internal/text"
	"github.com/flapjackgo/flapjack/schema"
)

// Rejected is an input a receiver refused before it became an event (a malformed Nagios or nsca
// line, an invalid Sensu event).
type Rejected struct {
	Source  string // the receiver: nagios, nsca, sensu, json
	Input   string
	Reasons []string
}

// keeperBuffer bounds the rejections waiting for Redis; beyond it they are only logged (the
// receiver has logged each one already).
const keeperBuffer = 1000

// Keeper keeps receivers' rejected inputs where the executive keeps the events it refuses:
// the raw input in events_rejected:YYYYMMDDHH and {time, reasons, event, source} at the same
// position of events_rejected_reasons:YYYYMMDDHH, both expiring after ttl
// (executive.rejected_events_maxage). Keep never waits for Redis, so a receiver reading a pipe
// is never held up by an outage; Run does the writing.
type Keeper struct {
	pool    Pool
	keys    schema.Keys
	clock   clock.Clock
	ttl     time.Duration
	log     *zap.Logger
	pending chan Rejected
}

// NewKeeper builds a Keeper; start its Run.
func NewKeeper(pool Pool, keys schema.Keys, clk clock.Clock, ttl time.Duration, log *zap.Logger) *Keeper {
	return &Keeper{pool: pool, keys: keys, clock: clk, ttl: ttl, log: log, pending: make(chan Rejected, keeperBuffer)}
}

// Keep queues r for writing; when keeperBuffer rejections already wait it is dropped and said.
func (k *Keeper) Keep(r Rejected) {
	select {
	case k.pending <- r:
	default:
		k.log.Warn("rejected input not kept in Redis: too many wait for it", zap.String("source", r.Source),
			zap.String("input", text.Truncate(r.Input, 256)))
	}
}

// Run writes what Keep queued until ctx ends, then what is still queued, for up to a second.
func (k *Keeper) Run(ctx context.Context) error {
	for {
		select {
		case r := <-k.pending:
			k.writeWithRetry(ctx, k.drain(r))
		case <-ctx.Done():
			final, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
			defer cancel()
			for {
				select {
				case r := <-k.pending:
					if err := k.Write(final, k.drain(r)); err != nil {
						k.log.Warn("rejected inputs not kept in Redis at shutdown", zap.Error(err))
						return nil
					}
				default:
					return nil
				}
			}
		}
	}
}

// drain is first and whatever else is already queued.
func (k *Keeper) drain(first Rejected) []Rejected {
	batch := []Rejected{first}
	for len(batch) < maxPushArgs {
		select {
		case r := <-k.pending:
			batch = append(batch, r)
		default:
			return batch
		}
	}
	return batch
}

// writeWithRetry writes batch, retrying while Redis is away until ctx ends.
func (k *Keeper) writeWithRetry(ctx context.Context, batch []Rejected) {
	for attempt := 0; ; attempt++ {
		err := k.Write(ctx, batch)
		if err == nil || ctx.Err() != nil {
			return
		}
		if attempt == 0 {
			k.log.Warn("rejected inputs not kept in Redis yet; retrying", zap.Int("inputs", len(batch)), zap.Error(err))
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

// Write keeps batch now, in one MULTI/EXEC.
func (k *Keeper) Write(ctx context.Context, batch []Rejected) error {
	conn, err := k.pool.GetContext(ctx)
	if err != nil {
		return fmt.Errorf("keep rejected inputs: %w", err)
	}
	defer conn.Close()
	now := k.clock.Now()
	list, reasons := k.keys.EventsRejected(now), k.keys.EventsRejectedReasons(now)
	ttl := int64(k.ttl / time.Second)
	conn.Send("MULTI")
	for _, r := range batch {
		why, _ := json.Marshal(schema.RejectedReason{Time: now.Unix(), Reasons: r.Reasons,
			Event: text.Truncate(r.Input, schema.RejectedInputMax), Source: r.Source})
		conn.Send("LPUSH", list, r.Input)
		conn.Send("LPUSH", reasons, why)
	}
	conn.Send("EXPIRE", list, ttl)
	conn.Send("EXPIRE", reasons, ttl)
	if _, err := conn.Do("EXEC"); err != nil {
		return fmt.Errorf("keep rejected inputs: %w", err)
	}
	return nil
}
