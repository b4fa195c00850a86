// Package replay owns `flapjack replay` (SPEC 3.5): it carries a timeline of events and admin
// actions through the real executive and notifier, taking the clock from the input, so hours
// of alerting behaviour take milliseconds and operators can prove their rules.
package replay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/events"
	"github.com/flapjackgo/flapjack/executive"
	"github.com/flapjackgo/flapjack/internal/humantime"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/notifier"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/schema"
	"github.com/flapjackgo/flapjack/staleness"
)

// Options wires a replay.
type Options struct {
	Pool             *redis.Pool
	Keys             schema.Keys
	Executive        executive.Config
	Notifier         notifier.Config
	TimeRestrictions notifier.TimeRestrictions
	Log              *zap.Logger
	Version          string
	Identity         queue.Identity
	// SecondBatches queues the events of one second together: the executive decides them in
	// batches (executive.batch_size), then the notifier routes their notifications. Several
	// times faster over many checks; the notifications of one second are then routed after all
	// of that second's events instead of after each. Off for `flapjack replay`; on for whatif.
	SecondBatches bool
	// Private says nothing but this run writes to the database (whatif's scratch spaces). Replay
	// then remembers what it read of the escalation and staleness schedules until it writes
	// something itself, and stops draining the event queue once every event it published is
	// finished, instead of asking Redis again each line: the same decisions in fewer round
	// trips. Off for `flapjack replay`, which may run beside other writers.
	Private bool
}

// LineError is a line that stopped the run.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// Summary tells what a run did.
type Summary struct {
	Lines, Events, Actions, Alerts int
}

// maxLine is the longest input line accepted (an event is at most 64 KiB).
const maxLine = schema.MaxEventBytes + 1024

// Run reads the timeline from in and writes every alert produced as one JSON line to out.
func Run(ctx context.Context, o Options, in io.Reader, out io.Writer) (Summary, error) {
	var sum Summary
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	clk := clock.NewFake(time.Unix(0, 0))
	x := executive.New(executive.Options{Pool: o.Pool, Keys: o.Keys, Config: o.Executive, Clock: clk,
		HeartbeatClock: clock.Real{}, Log: o.Log, Identity: o.Identity, Version: o.Version})
	n := notifier.New(notifier.Options{Pool: o.Pool, Keys: o.Keys, Config: o.Notifier, Clock: clk,
		HeartbeatClock: clock.Real{}, Log: o.Log, Identity: o.Identity, Version: o.Version,
		TimeRestrictions: o.TimeRestrictions})
	for _, stage := range []struct {
		name string
		loop *queue.Loop
	}{{executive.Stage, x.Loop(false)}, {notifier.Stage, n.Loop(false)}} {
		if _, err := stage.loop.Open(ctx); err != nil {
			return sum, fmt.Errorf("start %s: %w", stage.name, err)
		}
		defer stage.loop.Close(context.WithoutCancel(ctx))
	}

	r := &runner{o: o, clk: clk, x: x, n: n, events: events.NewPublisher(o.Pool, o.Keys, o.Executive.Queue), out: bufio.NewWriter(out)}
	r.stale = &staleness.Ticker{Pool: o.Pool, Keys: o.Keys, Clock: clk, Events: r.events, Log: o.Log}
	defer r.out.Flush()
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64*1024), maxLine)
	var last int64 = -1
	for line := 1; sc.Scan(); line++ {
		if ctx.Err() != nil {
			return sum, ctx.Err()
		}
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		sum.Lines++
		at, isAction, err := classify(text)
		if err != nil {
			return sum, &LineError{Line: line, Err: err}
		}
		if at < last {
			return sum, &LineError{Line: line, Err: fmt.Errorf("time %d is before the previous line's %d: the clock never goes back", at, last)}
		}
		if o.SecondBatches && (isAction || at != r.batchAt) {
			if err := r.flush(ctx); err != nil {
				return sum, &LineError{Line: r.batchLine, Err: err}
			}
		}
		if at != last || sum.Lines == 1 {
			if err := r.staleUntil(ctx, at); err != nil {
				return sum, &LineError{Line: line, Err: err}
			}
		}
		last = at
		if err := r.escalate(ctx, at, false); err != nil {
			return sum, &LineError{Line: line, Err: err}
		}
		clk.Set(time.Unix(at, 0))
		switch {
		case isAction:
			sum.Actions++
			err = r.action(ctx, text)
		case o.SecondBatches:
			sum.Events++
			if len(r.batch) == 0 {
				r.batchAt, r.batchLine = at, line
			}
			r.batch = append(r.batch, bytes.Clone(text))
		default:
			sum.Events++
			err = r.event(ctx, text)
		}
		if err == nil {
			err = r.escalate(ctx, at, true)
		}
		if err != nil {
			return sum, &LineError{Line: line, Err: err}
		}
		sum.Alerts = r.alerts
	}
	if err := sc.Err(); err != nil {
		return sum, fmt.Errorf("read input: %w", err)
	}
	if err := r.flush(ctx); err != nil {
		return sum, &LineError{Line: r.batchLine, Err: err}
	}
	sum.Alerts = r.alerts
	return sum, nil
}

// classify reads a line's integer time and whether it is an admin action.
func classify(line []byte) (int64, bool, error) {
	var head struct {
		Time   json.RawMessage `json:"time"`
		Action *string         `json:"action"`
	}
	if err := json.Unmarshal(line, &head); err != nil {
		return 0, false, fmt.Errorf("not a JSON object: %w", err)
	}
	if len(head.Time) == 0 {
		return 0, false, errors.New(`every line needs an integer "time"`)
	}
	var t int64
	if err := json.Unmarshal(head.Time, &t); err != nil || t < 0 {
		return 0, false, fmt.Errorf(`"time" must be a non-negative integer, got %s`, head.Time)
	}
	return t, head.Action != nil, nil
}

type runner struct {
	o      Options
	clk    *clock.Fake
	x      *executive.Executive
	n      *notifier.Notifier
	events *events.Publisher
	stale  *staleness.Ticker
	out    *bufio.Writer
	alerts int
	// SecondBatches: the events of second batchAt not yet run, from line batchLine on
	batch     [][]byte
	batchAt   int64
	batchLine int
	// Private: what was last read of the schedules (valid while nothing was written since)
	writes        int
	escalationAt  schedule
	staleDeadline schedule
}

// schedule is the next due time of a schedule as read after the runner's writes-th write.
type schedule struct {
	read   bool
	writes int
	at     int64
	found  bool
}

// cached reports the remembered reading, if it is still true: the database is private and
// nothing was written since it was read.
func (r *runner) cached(s schedule) (int64, bool, bool) {
	if !r.o.Private || !s.read || s.writes != r.writes {
		return 0, false, false
	}
	return s.at, s.found, true
}

func (r *runner) remember(s *schedule, at int64, found bool) {
	*s = schedule{read: true, writes: r.writes, at: at, found: found}
}

// staleUntil moves the clock through every staleness deadline before at, ticking at each, so a
// check that went silent gets its stale results at the instants they fall due, as live. A
// result at the very instant of a deadline is in time: that deadline waits for the line.
func (r *runner) staleUntil(ctx context.Context, at int64) error {
	conn, err := r.o.Pool.GetContext(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	for {
		next, ok, known := r.cached(r.staleDeadline)
		if !known {
			next, ok, err = staleness.NextDeadline(conn, r.o.Keys)
			if err != nil {
				return err
			}
			r.remember(&r.staleDeadline, next, ok)
		}
		if !ok || next >= at {
			return nil
		}
		if now := r.clk.Now().Unix(); next > now {
			r.clk.Set(time.Unix(next, 0))
		}
		r.writes++
		res, err := r.stale.Tick(ctx)
		if err != nil {
			return err
		}
		if res.Looked == 0 {
			return nil
		}
		if err := r.process(ctx); err != nil {
			return err
		}
	}
}

// flush runs the batched events of one second.
func (r *runner) flush(ctx context.Context) error {
	if len(r.batch) == 0 {
		return nil
	}
	batch := r.batch
	r.batch = r.batch[:0]
	return r.event(ctx, batch...)
}

// event carries events through the executive and the notifier completely.
func (r *runner) event(ctx context.Context, raws ...[]byte) error {
	r.writes++
	if _, err := r.events.PublishRaw(ctx, raws...); err != nil {
		return err
	}
	if r.o.Private {
		// the queue was empty and only these were added: it is empty again once they are
		// finished (every claimed event is, applied or rejected)
		return r.processCounted(ctx, len(raws))
	}
	return r.process(ctx)
}

// process carries the queued events through the executive and the notifier completely.
func (r *runner) process(ctx context.Context) error {
	return r.processCounted(ctx, -1)
}

// processCounted is process knowing that the queue holds n events (n < 0: unknown).
func (r *runner) processCounted(ctx context.Context, n int) error {
	r.writes++
	for finished := 0; n < 0 || finished < n; {
		done, err := r.x.ProcessNext(ctx, 0)
		if err != nil {
			return fmt.Errorf("executive: %w", err)
		}
		if done == 0 {
			break
		}
		finished += done
	}
	return r.drainNotifications(ctx)
}

func (r *runner) drainNotifications(ctx context.Context) error {
	for {
		res, err := r.n.ProcessNextResult(ctx, 0)
		if err != nil {
			return fmt.Errorf("notifier: %w", err)
		}
		for _, a := range res.Alerts {
			b, err := json.Marshal(a)
			if err != nil {
				return err
			}
			r.out.Write(b)
			r.out.WriteByte('\n')
			r.alerts++
		}
		if res.Finished == 0 {
			return r.out.Flush()
		}
	}
}

// escalate fires the escalation steps due up to until (before it, or also at it when inclusive),
// each at its own due time: the clock stops at every due time on its way, so a step due at +15
// minutes fires at +15 minutes even when the next line is an hour later.
func (r *runner) escalate(ctx context.Context, until int64, inclusive bool) error {
	for range 100000 {
		at, found, known := r.cached(r.escalationAt)
		if !known {
			next, ok, err := r.n.NextEscalationDue(ctx)
			if err != nil {
				return fmt.Errorf("escalation: %w", err)
			}
			at, found = next.Unix(), ok
			r.remember(&r.escalationAt, at, found)
		}
		if !found || at > until || (!inclusive && at == until) {
			return nil
		}
		if next := time.Unix(at, 0); next.After(r.clk.Now()) {
			r.clk.Set(next)
		}
		r.writes++
		res, err := r.n.Escalate(ctx)
		if err != nil {
			return fmt.Errorf("escalation: %w", err)
		}
		if err := r.write(res.Alerts); err != nil {
			return err
		}
	}
	return errors.New("escalation: steps keep falling due without end")
}

// write prints alerts, one JSON line each.
func (r *runner) write(alerts []schema.Alert) error {
	for _, a := range alerts {
		b, err := json.Marshal(a)
		if err != nil {
			return err
		}
		r.out.Write(b)
		r.out.WriteByte('\n')
		r.alerts++
	}
	return nil
}

// action is an admin action line.
type action struct {
	Action   string `json:"action"`
	Time     int64  `json:"time"`
	Entity   string `json:"entity"`
	Check    string `json:"check"`
	Start    *int64 `json:"start"`
	Duration any    `json:"duration"`
	Summary  string `json:"summary"`
}

func (r *runner) action(ctx context.Context, raw []byte) error {
	var a action
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return fmt.Errorf("action: %w", err)
	}
	a.Entity = strings.ToLower(strings.TrimSpace(a.Entity))
	if a.Entity == "" || a.Check == "" {
		return fmt.Errorf("action %q needs entity and check", a.Action)
	}
	conn, err := r.o.Pool.GetContext(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	r.writes++
	now := r.clk.Now()
	switch a.Action {
	case "scheduled_maintenance":
		start := now
		if a.Start != nil {
			start = time.Unix(*a.Start, 0)
		}
		d, err := durationOf(a.Duration)
		if err != nil {
			return err
		}
		return model.CreateScheduledMaintenance(conn, r.o.Keys, a.Entity, a.Check, start, d, a.Summary, now)
	case "end_scheduled_maintenance":
		if a.Start == nil {
			return errors.New(`end_scheduled_maintenance needs the window's "start"`)
		}
		return model.EndScheduledMaintenance(conn, r.o.Keys, a.Entity, a.Check, time.Unix(*a.Start, 0), now)
	case "end_unscheduled_maintenance":
		return model.EndUnscheduledMaintenance(conn, r.o.Keys, a.Entity, a.Check, now)
	case "disable_check":
		return model.DisableCheck(conn, r.o.Keys, a.Entity, a.Check, now)
	case "enable_check":
		return model.EnableCheck(conn, r.o.Keys, a.Entity, a.Check, now)
	}
	return fmt.Errorf("unknown action %q (known: scheduled_maintenance, end_scheduled_maintenance, end_unscheduled_maintenance, disable_check, enable_check)", a.Action)
}

// durationOf accepts seconds or a duration string ("2h", "90 minutes").
func durationOf(v any) (time.Duration, error) {
	switch d := v.(type) {
	case float64:
		return time.Duration(d) * time.Second, nil
	case string:
		return humantime.Parse(d)
	case nil:
		return 0, errors.New(`scheduled_maintenance needs a "duration"`)
	}
	return 0, fmt.Errorf("duration must be seconds or a string like \"2h\", got %v", v)
}
