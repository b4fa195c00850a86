package events

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/internal/text"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/schema"
)

// keeperBuffer bounds the rejections waiting for Redis; beyond it they are only logged (the
// receiver has logged each one already).
const keeperBuffer = 1000

// Keeper keeps receivers' rejected inputs where the executive keeps the events it refuses
// (checkstate.RejectedRecord), expiring after ttl (executive.rejected_events_maxage). Keep never waits for Redis, so a receiver reading a pipe
// is never held up by an outage; Run does the writing.
type Keeper struct {
	pool    Pool
	keys    schema.Keys
	clock   clock.Clock
	ttl     time.Duration
	log     *zap.Logger
	pending chan checkstate.Rejected
}

// NewKeeper builds a Keeper; start its Run.
func NewKeeper(pool Pool, keys schema.Keys, clk clock.Clock, ttl time.Duration, log *zap.Logger) *Keeper {
	return &Keeper{pool: pool, keys: keys, clock: clk, ttl: ttl, log: log, pending: make(chan checkstate.Rejected, keeperBuffer)}
}

// Keep queues r for writing; when keeperBuffer rejections already wait it is dropped and said.
func (k *Keeper) Keep(r checkstate.Rejected) {
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
func (k *Keeper) drain(first checkstate.Rejected) []checkstate.Rejected {
	batch := []checkstate.Rejected{first}
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
func (k *Keeper) writeWithRetry(ctx context.Context, batch []checkstate.Rejected) {
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

// Write keeps batch now, in one atomic write (checkstate.KeepRejected).
func (k *Keeper) Write(ctx context.Context, batch []checkstate.Rejected) error {
	conn, err := k.pool.GetContext(ctx)
	if err != nil {
		return fmt.Errorf("keep rejected inputs: %w", err)
	}
	defer conn.Close()
	return checkstate.KeepRejected(ctx, conn, k.keys, batch, k.clock.Now(), k.ttl)
}
