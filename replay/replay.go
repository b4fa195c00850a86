// Package replay owns `flapjack replay` (docs/decisions.md I5): it carries a timeline of events and admin
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
	"github.com/flapjackgo/flapjack/model/checkstate"
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
	// something that may change them itself, and stops draining the event queue once every
	// event it published is finished, instead of asking Redis again each line: the same
	// decisions in fewer round trips. Off for `flapjack replay`, which may run beside other
	// writers.
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
	r, err := Start(ctx, o, out)
	if err != nil {
		return Summary{}, err
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64*1024), maxLine)
	for sc.Scan() {
		if err := r.Line(ctx, sc.Bytes()); err != nil {
			r.close(ctx)
			return r.sum, err
		}
	}
	if err := sc.Err(); err != nil {
		r.close(ctx)
		return r.sum, fmt.Errorf("read input: %w", err)
	}
	return r.Close(ctx)
}

// Runner is a replay fed line by line: Run reads lines from a stream, whatif feeds the lines
// of each group of checks to a Runner of its own, with Tick for the seconds in which the group
// has no line of its own.
type Runner struct {
	runner
	loops []*queue.Loop
	sum   Summary
	line  int   // lines read, blank ones included
	last  int64 // time of the last line or tick; -1 before the first
}

// Start opens the executive and the notifier of a replay writing its alerts to out.
func Start(ctx context.Context, o Options, out io.Writer) (*Runner, error) {
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	clk := clock.NewFake(time.Unix(0, 0))
	x := executive.New(executive.Options{Pool: o.Pool, Keys: o.Keys, Config: o.Executive, Clock: clk,
		HeartbeatClock: clock.Real{}, Log: o.Log, Identity: o.Identity, Version: o.Version})
	n := notifier.New(notifier.Options{Pool: o.Pool, Keys: o.Keys, Config: o.Notifier, Clock: clk,
		HeartbeatClock: clock.Real{}, Log: o.Log, Identity: o.Identity, Version: o.Version,
		TimeRestrictions: o.TimeRestrictions})
	r := &Runner{runner: runner{o: o, clk: clk, x: x, n: n, events: events.NewPublisher(o.Pool, o.Keys, o.Executive.Queue), out: bufio.NewWriter(out)}, last: -1}
	r.stale = &staleness.Ticker{Pool: o.Pool, Keys: o.Keys, Clock: clk, Events: r.events, Log: o.Log}
	for _, stage := range []struct {
		name string
		loop *queue.Loop
	}{{executive.Stage, x.Loop(false)}, {notifier.Stage, n.Loop(false)}} {
		if _, err := stage.loop.Open(ctx); err != nil {
			r.close(ctx)
			return nil, fmt.Errorf("start %s: %w", stage.name, err)
		}
		r.loops = append(r.loops, stage.loop)
	}
	return r, nil
}

// Line replays one timeline line; errors are *LineError.
func (r *Runner) Line(ctx context.Context, raw []byte) error {
	r.line++
	if ctx.Err() != nil {
		return ctx.Err()
	}
	text := bytes.TrimSpace(raw)
	if len(text) == 0 {
		return nil
	}
	r.sum.Lines++
	at, isAction, err := classify(text)
	if err != nil {
		return &LineError{Line: r.line, Err: err}
	}
	if err := r.reach(ctx, at, isAction); err != nil {
		return err
	}
	switch {
	case isAction:
		r.sum.Actions++
		err = r.action(ctx, text)
	case r.o.SecondBatches:
		r.sum.Events++
		if len(r.batch) == 0 {
			r.batchAt, r.batchLine = at, r.line
		}
		r.batch = append(r.batch, bytes.Clone(text))
	default:
		r.sum.Events++
		err = r.event(ctx, text)
	}
	if err == nil {
		err = r.escalate(ctx, at)
	}
	if err != nil {
		return &LineError{Line: r.line, Err: err}
	}
	r.sum.Alerts = r.alerts
	return nil
}

// Tick does what a line at second at does besides its own event: runs the batch of the
// previous second, the staleness deadlines and escalation steps falling due before at, moves
// the clock to at and fires the steps due at it. A replay of some checks ticked at the seconds
// of the other checks' lines decides its checks as a replay of all of them does.
func (r *Runner) Tick(ctx context.Context, at int64) error {
	if err := r.reach(ctx, at, false); err != nil {
		return err
	}
	if err := r.escalate(ctx, at); err != nil {
		return &LineError{Line: r.line, Err: err}
	}
	r.sum.Alerts = r.alerts
	return nil
}

// reach brings the replay to second at, before a line or tick at it.
func (r *Runner) reach(ctx context.Context, at int64, isAction bool) error {
	if at < r.last {
		return &LineError{Line: r.line, Err: fmt.Errorf("time %d is before the previous line's %d: the clock never goes back", at, r.last)}
	}
	if r.o.SecondBatches && (isAction || at != r.batchAt) {
		if err := r.flush(ctx); err != nil {
			return &LineError{Line: r.batchLine, Err: err}
		}
	}
	if at != r.last {
		if err := r.until(ctx, at); err != nil {
			return &LineError{Line: r.line, Err: err}
		}
	}
	// until fired every step due before at; those due at it wait for the line (escalate)
	r.last = at
	r.clk.Set(time.Unix(at, 0))
	return nil
}

// Close runs the last second's batch and stops the executive and the notifier.
func (r *Runner) Close(ctx context.Context) (Summary, error) {
	err := r.flush(ctx)
	r.sum.Alerts = r.alerts
	r.close(ctx)
	if err != nil {
		return r.sum, &LineError{Line: r.batchLine, Err: err}
	}
	return r.sum, nil
}

func (r *Runner) close(ctx context.Context) {
	r.out.Flush()
	for i := len(r.loops) - 1; i >= 0; i-- {
		r.loops[i].Close(context.WithoutCancel(ctx))
	}
	r.loops = nil
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
	// Private: what was last read of the schedules, valid while nothing that may change the
	// schedule was written since: the escalation schedule changes only where the notifier
	// routes notifications or fires steps, the staleness deadlines only where the executive
	// applies results that may carry a ttl, or a tick claims them; an admin action
	// may change either.
	escalationAt  schedule
	staleDeadline schedule
}

// schedule is the next due time of a schedule as read after its writes-th write.
type schedule struct {
	read   bool
	writes int // writes that may have changed the schedule so far
	seen   int // the value of writes when last read
	at     int64
	found  bool
}

// cached reports the remembered reading, if it is still true: the database is private and
// nothing that may change the schedule was written since it was read.
func (r *runner) cached(s schedule) (int64, bool, bool) {
	if !r.o.Private || !s.read || s.seen != s.writes {
		return 0, false, false
	}
	return s.at, s.found, true
}

func (r *runner) remember(s *schedule, at int64, found bool) {
	s.read, s.seen, s.at, s.found = true, s.writes, at, found
}

// mayArm reports whether applying raws may change the staleness deadlines, as the executive
// arms one for a result with a ttl (staleness.Policy.Arm): a ttl policy is set, or an event may
// name a ttl.
func (r *runner) mayArm(raws [][]byte) bool {
	if p := r.o.Executive.Staleness; p.Default != 0 || len(p.Rules) > 0 {
		return true
	}
	for _, raw := range raws {
		if bytes.Contains(raw, []byte(`"ttl"`)) {
			return true
		}
	}
	return false
}

// until moves the clock through every staleness deadline and escalation step due before at, in
// time order, each at its own instant (a deadline first when both fall due together): a check
// that went silent gets its stale results when they fall due, and a step due at +15 minutes
// fires at +15 minutes even when a deadline or the next line comes later, as live. A result at
// the very instant of a deadline is in time: that deadline waits for the line.
func (r *runner) until(ctx context.Context, at int64) error {
	conn, err := r.o.Pool.GetContext(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	staleDone := false
	fired, firedAt := 0, int64(-1)
	for {
		var stale int64
		staleDue := false
		if !staleDone {
			next, ok, known := r.cached(r.staleDeadline)
			if !known {
				next, ok, err = staleness.NextDeadline(conn, r.o.Keys)
				if err != nil {
					return err
				}
				r.remember(&r.staleDeadline, next, ok)
			}
			stale, staleDue = next, ok && next < at
		}
		esc, escDue, err := r.nextEscalation(ctx)
		if err != nil {
			return err
		}
		escDue = escDue && esc < at
		switch {
		case staleDue && (!escDue || stale <= esc):
			if now := r.clk.Now().Unix(); stale > now {
				r.clk.Set(time.Unix(stale, 0))
			}
			r.staleDeadline.writes++
			res, err := r.stale.Tick(ctx)
			if err != nil {
				return err
			}
			if res.Looked == 0 {
				// the deadline names nothing to tick: it stays, and ticking again would not move it
				staleDone = true
				continue
			}
			if err := r.process(ctx); err != nil {
				return err
			}
		case escDue:
			if esc != firedAt {
				fired, firedAt = 0, esc
			}
			if fired++; fired > maxFires {
				return errEndlessSteps
			}
			if err := r.fire(ctx, esc); err != nil {
				return err
			}
		default:
			return nil
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
	if r.mayArm(raws) {
		r.staleDeadline.writes++
	}
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
	notified := 0
	for finished := 0; n < 0 || finished < n; {
		res, err := r.x.ProcessNextResult(ctx, 0)
		if err != nil {
			return fmt.Errorf("executive: %w", err)
		}
		if res.Finished == 0 {
			break
		}
		finished += res.Finished
		notified += len(res.Notifications)
	}
	if !r.o.Private {
		notified = -1
	}
	if notified != 0 {
		r.escalationAt.writes++
	}
	// In private mode only this run queues notifications and each drain empties the queue, so
	// the notifier is asked for exactly those it was given (none: not asked at all).
	return r.drainNotifications(ctx, notified)
}

// drainNotifications routes the queued notifications, knowing there are n (n < 0: unknown, until
// the queue is found empty).
func (r *runner) drainNotifications(ctx context.Context, n int) error {
	for finished := 0; n < 0 || finished < n; {
		res, err := r.n.ProcessNextResult(ctx, 0)
		if err != nil {
			return fmt.Errorf("notifier: %w", err)
		}
		if err := r.write(res.Alerts); err != nil {
			return err
		}
		if res.Finished == 0 {
			break
		}
		finished += res.Finished
	}
	return r.out.Flush()
}

// maxFires bounds the escalation ticks at one instant: steps still due after that many are a bug.
const maxFires = 100000

var errEndlessSteps = errors.New("escalation: steps keep falling due without end")

// escalate fires the escalation steps due up to until, included, each at its own due time.
func (r *runner) escalate(ctx context.Context, until int64) error {
	for range maxFires {
		at, found, err := r.nextEscalation(ctx)
		if err != nil {
			return err
		}
		if !found || at > until {
			return nil
		}
		if err := r.fire(ctx, at); err != nil {
			return err
		}
	}
	return errEndlessSteps
}

// nextEscalation is when the earliest escalation step is due.
func (r *runner) nextEscalation(ctx context.Context) (int64, bool, error) {
	at, found, known := r.cached(r.escalationAt)
	if !known {
		next, ok, err := r.n.NextEscalationDue(ctx)
		if err != nil {
			return 0, false, fmt.Errorf("escalation: %w", err)
		}
		at, found = next.Unix(), ok
		r.remember(&r.escalationAt, at, found)
	}
	return at, found, nil
}

// fire ticks the escalation steps due at at, the clock moved there unless it is already later.
func (r *runner) fire(ctx context.Context, at int64) error {
	if next := time.Unix(at, 0); next.After(r.clk.Now()) {
		r.clk.Set(next)
	}
	r.escalationAt.writes++
	res, err := r.n.Escalate(ctx)
	if err != nil {
		return fmt.Errorf("escalation: %w", err)
	}
	return r.write(res.Alerts)
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
	r.escalationAt.writes++
	r.staleDeadline.writes++
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
		return checkstate.CreateScheduledMaintenance(conn, r.o.Keys, a.Entity, a.Check, start, d, a.Summary, now)
	case "end_scheduled_maintenance":
		if a.Start == nil {
			return errors.New(`end_scheduled_maintenance needs the window's "start"`)
		}
		return checkstate.EndScheduledMaintenance(conn, r.o.Keys, a.Entity, a.Check, time.Unix(*a.Start, 0), now)
	case "end_unscheduled_maintenance":
		return checkstate.EndUnscheduledMaintenance(conn, r.o.Keys, a.Entity, a.Check, now)
	case "disable_check":
		return checkstate.DisableCheck(conn, r.o.Keys, a.Entity, a.Check, now)
	case "enable_check":
		return checkstate.EnableCheck(conn, r.o.Keys, a.Entity, a.Check, now)
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
