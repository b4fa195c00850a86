// Package events owns the way into flapjack: every producer inside the binary (the CLI's ack,
// simulate and receivers, POST /events, the Jabber ACKID command, the PagerDuty acknowledgement
// poller, replay) puts events on the executive's list through a Publisher, which validates them
// with package schema, normalises them and pushes them in order. External producers LPUSH the
// same JSON themselves (docs/flapjack-1x.md 1.2).
package events

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/schema"
)

// maxPushArgs bounds one LPUSH so a large batch does not become one huge command; the chunks of
// a batch are pushed in one MULTI/EXEC, so a batch is still queued whole or not at all.
const maxPushArgs = 1000

// Pool hands out Redis connections (*redis.Pool satisfies it).
type Pool interface {
	GetContext(ctx context.Context) (redis.Conn, error)
}

// Publisher puts events on one events list.
type Publisher struct {
	pool    Pool
	key     string
	timeout time.Duration
}

// NewPublisher publishes onto queue (the executive.queue setting; "" means
// schema.DefaultEventsQueue) under the key prefix of keys.
func NewPublisher(pool Pool, keys schema.Keys, queue string) *Publisher {
	if queue == "" {
		queue = schema.DefaultEventsQueue
	}
	return &Publisher{pool: pool, key: keys.Queue(queue)}
}

// WithTimeout returns a publisher whose every push, waiting for a pooled connection included,
// gives up after d (redis.command_timeout; 0 = only the caller's context bounds it). The
// connection's own command timeout bounds the reply; this bounds the wait for a free connection
// too, which a frozen Redis makes as long as everyone's replies. A push past it may still have
// reached Redis: a caller that retries queues the events at least once.
func (p *Publisher) WithTimeout(d time.Duration) *Publisher {
	q := *p
	q.timeout = d
	return &q
}

// bound gives ctx the publisher's deadline.
func (p *Publisher) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if p.timeout <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, p.timeout)
}

// failed wraps a push's error, naming the timeout when it ran out.
func (p *Publisher) failed(err error) error {
	if p.timeout > 0 && errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("queue events on %s: no answer from Redis within %v: %w", p.key, p.timeout, err)
	}
	return fmt.Errorf("queue events on %s: %w", p.key, err)
}

// Key is the full name of the list events are pushed onto.
func (p *Publisher) Key() string { return p.key }

// Problem is why one event of a batch was refused.
type Problem struct {
	Index   int      `json:"index"`
	Reasons []string `json:"reasons"`
}

// InvalidError lists every refused event of a batch; none of the batch was queued.
type InvalidError struct{ Problems []Problem }

func (e *InvalidError) Error() string {
	if len(e.Problems) == 1 && e.Problems[0].Index == 0 {
		return "invalid event: " + strings.Join(e.Problems[0].Reasons, "; ")
	}
	parts := make([]string, 0, len(e.Problems))
	for _, p := range e.Problems {
		parts = append(parts, fmt.Sprintf("event %d: %s", p.Index, strings.Join(p.Reasons, "; ")))
	}
	return "invalid events, none queued: " + strings.Join(parts, "; ")
}

// Publish validates evs and queues them, in order, all or none. It returns the events as
// queued: normalised by schema (entity lower-cased, text trimmed and bounded).
func (p *Publisher) Publish(ctx context.Context, evs ...schema.Event) ([]schema.Event, error) {
	raws := make([][]byte, len(evs))
	for i, ev := range evs {
		b, err := ev.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("encode event %s: %w", ev.ID(), err)
		}
		raws[i] = b
	}
	return p.PublishRaw(ctx, raws...)
}

// PublishRaw validates raw JSON events and queues them normalised, in order, all or none. A
// batch with invalid events returns *InvalidError naming each.
func (p *Publisher) PublishRaw(ctx context.Context, raws ...[]byte) ([]schema.Event, error) {
	if len(raws) == 0 {
		return nil, nil
	}
	parsed := make([]schema.Event, 0, len(raws))
	payloads := make([]any, 0, len(raws))
	var invalid InvalidError
	for i, raw := range raws {
		ev, err := schema.ParseEvent(raw)
		if err != nil {
			invalid.Problems = append(invalid.Problems, Problem{Index: i, Reasons: schema.RejectReasons(err)})
			continue
		}
		b, err := ev.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("encode event %s: %w", ev.ID(), err)
		}
		parsed = append(parsed, ev)
		payloads = append(payloads, b)
	}
	if len(invalid.Problems) > 0 {
		return nil, &invalid
	}
	if err := p.push(ctx, payloads); err != nil {
		return nil, err
	}
	return parsed, nil
}

// PublishEncoded queues events that package schema has already validated and encoded
// (Event.AppendJSON of an event returned by schema.ParseEvent or schema.ValidateEvent), in order,
// all or none, without parsing them again: the receivers' fast path, which validates each event
// once as it reads it. Anything read back from elsewhere (a spool on disk) goes through
// PublishRaw instead.
func (p *Publisher) PublishEncoded(ctx context.Context, payloads ...[]byte) error {
	if len(payloads) == 0 {
		return nil
	}
	args := make([]any, len(payloads))
	for i, b := range payloads {
		args[i] = b
	}
	return p.push(ctx, args)
}

// Command is one Redis command run by PublishEncodedWith.
type Command struct {
	Name string
	Args []any
}

// PublishEncodedWith is PublishEncoded that also runs the commands of also in the same
// MULTI/EXEC: the events are queued and the commands applied together or not at all (a mirror's
// cursor moves exactly with the events it queued). With no payloads only the commands run.
func (p *Publisher) PublishEncodedWith(ctx context.Context, also []Command, payloads ...[]byte) error {
	ctx, cancel := p.bound(ctx)
	defer cancel()
	conn, err := p.pool.GetContext(ctx)
	if err != nil {
		return p.failed(err)
	}
	defer conn.Close()
	conn.Send("MULTI")
	for start := 0; start < len(payloads); start += maxPushArgs {
		chunk := payloads[start:min(start+maxPushArgs, len(payloads))]
		args := make([]any, 0, len(chunk)+1)
		args = append(args, p.key)
		for _, b := range chunk {
			args = append(args, b)
		}
		conn.Send("LPUSH", args...)
	}
	for _, cmd := range also {
		conn.Send(cmd.Name, cmd.Args...)
	}
	replies, err := redis.Values(redis.DoContext(conn, ctx, "EXEC"))
	if err == nil {
		for _, r := range replies {
			if e, ok := r.(redis.Error); ok {
				err = e
				break
			}
		}
	}
	if err != nil {
		return p.failed(err)
	}
	return nil
}

// Enqueue queues one raw event (the receivers' Enqueuer).
func (p *Publisher) Enqueue(ctx context.Context, raw []byte) error {
	_, err := p.PublishRaw(ctx, raw)
	return err
}

func (p *Publisher) push(ctx context.Context, payloads []any) error {
	ctx, cancel := p.bound(ctx)
	defer cancel()
	conn, err := p.pool.GetContext(ctx)
	if err != nil {
		return p.failed(err)
	}
	defer conn.Close()
	if len(payloads) <= maxPushArgs {
		_, err = redis.DoContext(conn, ctx, "LPUSH", append([]any{p.key}, payloads...)...)
	} else {
		err = p.pushChunks(ctx, conn, payloads)
	}
	if err != nil {
		return p.failed(err)
	}
	return nil
}

func (p *Publisher) pushChunks(ctx context.Context, conn redis.Conn, payloads []any) error {
	conn.Send("MULTI")
	for start := 0; start < len(payloads); start += maxPushArgs {
		chunk := payloads[start:min(start+maxPushArgs, len(payloads))]
		conn.Send("LPUSH", append([]any{p.key}, chunk...)...)
	}
	_, err := redis.DoContext(conn, ctx, "EXEC")
	return err
}

// Acknowledgement is the event that acknowledges a failing check (docs/flapjack-1x.md 1.2): a duration
// of 0 leaves its length to the executive (executive.acknowledgement_duration, default 4 h),
// the one default every surface shares.
func Acknowledgement(entity, check, summary string, duration time.Duration, at time.Time) schema.Event {
	ev := schema.Event{Entity: entity, Check: check, Type: schema.TypeAction, State: schema.StateAcknowledgement,
		Summary: summary, Time: at.Unix(), HasTime: true}
	if duration > 0 {
		ev.Duration, ev.HasDuration = int64(duration/time.Second), true
	}
	return ev
}
