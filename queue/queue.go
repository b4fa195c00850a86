// Package queue owns reliable consumption of Redis lists (docs/decisions.md D10): items are claimed in
// batches by an atomic move into a per-instance processing list, stay there until the consumer
// has written their effects (removing them in the same atomic step), and are moved back to their
// queue by a live peer when the consumer's heartbeat record shows it dead. Every stage — executive,
// notifier, gateways — consumes its queue through this package.
package queue

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/schema"
)

var (
	//go:embed scripts/claim.lua
	claimSource string
	//go:embed scripts/requeue.lua
	requeueSource string
	//go:embed scripts/finish.lua
	finishSource string

	claimScript   = redis.NewScript(3, claimSource)
	requeueScript = redis.NewScript(2, requeueSource)
	finishScript  = redis.NewScript(2, finishSource)
)

// End says which end of a list consumers take items from.
type End string

const (
	// Right is the consuming end of lists filled with LPUSH (`events`).
	Right End = "RIGHT"
	// Left is the consuming end of lists filled with RPUSH (`notifications`, media queues).
	Left End = "LEFT"
)

// Spec describes one stage's queue.
type Spec struct {
	Stage    string // "executive", "notifier", "jabber_gateway", ...
	Source   string // full key of the queue
	End      End
	Sequence string // optional counter key numbering claimed items ("" for none)
}

// Identity is one running instance of a stage: HOST:PID as in executive_instance:HOST:PID.
type Identity struct {
	Host string
	PID  int
}

// ID renders HOST:PID.
func (i Identity) ID() string { return fmt.Sprintf("%s:%d", i.Host, i.PID) }

// LocalIdentity is this process's identity.
func LocalIdentity() Identity {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	return Identity{Host: host, PID: os.Getpid()}
}

// Consumer claims and finishes items of one queue for one instance.
type Consumer struct {
	pool       *redis.Pool
	keys       schema.Keys
	spec       Spec
	id         Identity
	processing string
	// unfinished is set when a batch failed part-way, so Next re-reads the processing list
	// instead of paying that round trip on every batch.
	unfinished bool
}

// NewConsumer returns the consumer of spec for instance id.
func NewConsumer(pool *redis.Pool, keys schema.Keys, spec Spec, id Identity) *Consumer {
	return &Consumer{
		pool: pool, keys: keys, spec: spec, id: id,
		processing: keys.Processing(spec.Stage, id.ID()),
		unfinished: true,
	}
}

// MarkUnfinished tells the consumer a batch was not completely finished: the next call to Next
// returns what is left in the processing list before claiming anything new.
func (c *Consumer) MarkUnfinished() { c.unfinished = true }

// ProcessingKey is this instance's processing list; effect scripts remove finished items from it.
func (c *Consumer) ProcessingKey() string { return c.processing }

// Spec is the queue this consumer serves.
func (c *Consumer) Spec() Spec { return c.spec }

// Identity is the instance this consumer claims for.
func (c *Consumer) Identity() Identity { return c.id }

// Batch is a set of claimed items, oldest first. FirstSequence numbers them when the queue has a
// sequence counter (item i has FirstSequence+i), else it is 0.
type Batch struct {
	Items         []string
	FirstSequence int64
	// Whole: the processing list held these items and nothing else when they were claimed (or
	// read), so finishing all of them at once may empty it without naming them
	// (model.ApplyTarget.ListLen).
	Whole bool
}

// Claim moves up to max items into the processing list without blocking.
func (c *Consumer) Claim(ctx context.Context, max int) (Batch, error) {
	return c.claim(ctx, max, 0)
}

// SendClaim sends a claim of up to max items down conn, a connection the worker holds, without
// reading the reply (ReceiveClaim reads it). A worker pipelines it behind the last writes of the
// batch in hand, so Redis claims the next batch as soon as they are done, and only then: the
// items those writes leave claimed stay older in the processing list than the new ones.
func (c *Consumer) SendClaim(conn redis.Conn, max int) error {
	err := claimScript.SendHash(conn, c.claimArgs(max, 0)...)
	if err == nil {
		err = conn.Flush()
	}
	if err != nil {
		// part of the claim may have reached Redis, which may run it
		c.unfinished = true
		return fmt.Errorf("claim from %s: %w", c.spec.Source, err)
	}
	return nil
}

// ReceiveClaim reads the reply of SendClaim. On an error Redis may have moved items (the reply
// was lost) or not (NOSCRIPT): the consumer reads its processing list before claiming again.
func (c *Consumer) ReceiveClaim(conn redis.Conn) (Batch, error) {
	reply, err := conn.Receive()
	b, err := c.claimed(reply, err, 0)
	if err != nil {
		c.unfinished = true
	}
	return b, err
}

// claim moves up to max items; alreadyMoved items taken by BLMOVE just before are numbered
// ahead of them (they sit at the head of the processing list already).
func (c *Consumer) claim(ctx context.Context, max, alreadyMoved int) (Batch, error) {
	conn, err := c.pool.GetContext(ctx)
	if err != nil {
		return Batch{}, fmt.Errorf("claim from %s: %w", c.spec.Source, err)
	}
	defer conn.Close()
	reply, err := claimScript.DoContext(ctx, conn, c.claimArgs(max, alreadyMoved)...)
	return c.claimed(reply, err, alreadyMoved)
}

// claimArgs are claim.lua's keys and arguments.
func (c *Consumer) claimArgs(max, alreadyMoved int) []any {
	return []any{c.spec.Source, c.processing, c.spec.Sequence, max, string(c.spec.End), alreadyMoved}
}

// claimed reads claim.lua's reply.
func (c *Consumer) claimed(values any, err error, alreadyMoved int) (Batch, error) {
	reply, err := redis.Values(values, err)
	if err != nil {
		return Batch{}, fmt.Errorf("claim from %s: %w", c.spec.Source, err)
	}
	if len(reply) < 2 {
		return Batch{}, errors.New("claim: short reply")
	}
	first, err := redis.Int64(reply[0], nil)
	if err != nil {
		return Batch{}, fmt.Errorf("claim: sequence: %w", err)
	}
	listed, err := redis.Int(reply[1], nil)
	if err != nil {
		return Batch{}, fmt.Errorf("claim: processing list length: %w", err)
	}
	items, err := redis.Strings(reply[2:], nil)
	if err != nil {
		return Batch{}, fmt.Errorf("claim: items: %w", err)
	}
	return Batch{Items: items, FirstSequence: first, Whole: listed == len(items)+alreadyMoved}, nil
}

// wait blocks up to timeout until the queue has an item and moves that one item into the
// processing list (BLMOVE), so nothing is lost between waiting and claiming.
func (c *Consumer) wait(ctx context.Context, timeout time.Duration) (string, bool, error) {
	conn, err := c.pool.GetContext(ctx)
	if err != nil {
		return "", false, fmt.Errorf("wait on %s: %w", c.spec.Source, err)
	}
	defer conn.Close()
	secs := fmt.Sprintf("%.3f", timeout.Seconds())
	item, err := redis.String(redis.DoWithTimeout(conn, timeout+5*time.Second,
		"BLMOVE", c.spec.Source, c.processing, string(c.spec.End), "LEFT", secs))
	if errors.Is(err, redis.ErrNil) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("wait on %s: %w", c.spec.Source, err)
	}
	return item, true, nil
}

// Next returns the next batch: the items still in this instance's processing list (left over by
// a failed attempt) if any, else newly claimed items, blocking up to wait for the first one.
func (c *Consumer) Next(ctx context.Context, max int, wait time.Duration) (Batch, error) {
	if c.unfinished {
		pending, err := c.Pending(ctx)
		if err != nil || len(pending.Items) > 0 {
			return pending, err
		}
		c.unfinished = false
	}
	b, err := c.Claim(ctx, max)
	if err != nil {
		// Redis may have moved items before the reply was lost: look in the processing list
		// next time rather than leaving them there until a restart.
		c.unfinished = true
		return b, err
	}
	if len(b.Items) > 0 || wait <= 0 {
		return b, nil
	}
	first, ok, err := c.wait(ctx, wait)
	if err != nil {
		c.unfinished = true
		return Batch{}, err
	}
	if !ok {
		return Batch{}, nil
	}
	if c.spec.Sequence == "" {
		// The queue was empty a moment ago: the item that woke us is usually alone, and
		// claiming the rest would cost its delivery a round trip. Items queued meanwhile are
		// claimed by the next Next. A numbered queue needs the claim to number the item.
		return Batch{Items: []string{first}}, nil
	}
	rest, err := c.claim(ctx, max-1, 1)
	if err != nil {
		// The first item is safely in the processing list; it is retried as pending.
		c.unfinished = true
		return Batch{Items: []string{first}}, nil
	}
	return Batch{Items: append([]string{first}, rest.Items...), FirstSequence: rest.FirstSequence, Whole: rest.Whole}, nil
}

// Pending returns what this instance has claimed and not finished, oldest first. Items found
// here after a failure are retried before anything new is claimed; they carry no sequence (a
// worker that keeps the numbers it claimed them with gives them back: the executive does).
func (c *Consumer) Pending(ctx context.Context) (Batch, error) {
	conn, err := c.pool.GetContext(ctx)
	if err != nil {
		return Batch{}, fmt.Errorf("read %s: %w", c.processing, err)
	}
	defer conn.Close()
	items, err := redis.Strings(conn.Do("LRANGE", c.processing, 0, -1))
	if err != nil {
		return Batch{}, fmt.Errorf("read %s: %w", c.processing, err)
	}
	for i, j := 0, len(items)-1; i < j; i, j = i+1, j-1 {
		items[i], items[j] = items[j], items[i]
	}
	return Batch{Items: items, Whole: true}, nil
}

// Finish removes item from the processing list and, when record is not empty, pushes it onto
// list in the same atomic step. It reports false when the item was no longer claimed by this
// instance (a peer judged it dead and requeued it): its effects must then not be repeated.
func (c *Consumer) Finish(ctx context.Context, item, list, record string) (bool, error) {
	conn, err := c.pool.GetContext(ctx)
	if err != nil {
		return false, fmt.Errorf("finish item: %w", err)
	}
	defer conn.Close()
	n, err := redis.Int(finishScript.DoContext(ctx, conn, c.processing, list, item, record))
	if err != nil {
		return false, fmt.Errorf("finish item: %w", err)
	}
	return n == 1, nil
}

// Requeue moves everything in processing back to its queue in bounded steps.
func Requeue(ctx context.Context, pool *redis.Pool, processing string, spec Spec) (int, error) {
	conn, err := pool.GetContext(ctx)
	if err != nil {
		return 0, fmt.Errorf("requeue %s: %w", processing, err)
	}
	defer conn.Close()
	total := 0
	for {
		reply, err := redis.Int64s(requeueScript.DoContext(ctx, conn, processing, spec.Source, 500, string(spec.End)))
		if err != nil {
			return total, fmt.Errorf("requeue %s to %s: %w", processing, spec.Source, err)
		}
		total += int(reply[0])
		if reply[1] == 0 || reply[0] == 0 {
			return total, nil
		}
	}
}

// RequeueOwn hands this instance's unfinished items back to the queue (used at shutdown when
// in-flight work could not be finished).
func (c *Consumer) RequeueOwn(ctx context.Context) (int, error) {
	return Requeue(ctx, c.pool, c.processing, c.spec)
}

// IsNoScript reports Redis's NOSCRIPT error (a restarted or flushed server forgot a script).
func IsNoScript(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT")
}
