// Package whatif owns `flapjack whatif` (issue 18): it takes the history the live Redis holds
// for a time range (the raw event archive, else a timeline reconstructed from state history,
// acknowledgements and maintenance records), copies the live contacts, media and rules into
// scratch spaces, and replays the history twice through the real executive and notifier on
// simulated time (package replay) — once as configured (baseline) and once with candidate
// contacts, rules or executive settings — then compares who would have been alerted. The live
// Redis is only read.
package whatif

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/executive"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/notifier"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/replay"
	"github.com/flapjackgo/flapjack/schema"
)

// Scenario is one run: where it runs and with which executive and notifier settings.
type Scenario struct {
	Space     Space
	Executive executive.Config
	Notifier  notifier.Config
}

// Options wire a what-if run.
type Options struct {
	Live     *redis.Pool // only read
	LiveKeys schema.Keys
	History  History
	// Baseline runs the live configuration; Candidate the live configuration changed by
	// ContactsFile and RulesFile (Flapjack 1.x import files) and its own settings.
	Baseline, Candidate     Scenario
	ContactsFile, RulesFile []byte
	// EscalationsFile is a `flapjack import escalations` file: candidate policies, replacing
	// the live ones of the same ids.
	EscalationsFile []byte
	QuietHours      *QuietHours // nil = not reported
	Progress        io.Writer   // nil = quiet
	ProgressEvery   time.Duration
	Log             *zap.Logger
	Version         string
	Identity        queue.Identity
	DefaultTimezone *time.Location // for contacts without one; nil = UTC
}

// Run replays the history under both scenarios and compares them.
func Run(ctx context.Context, o Options) (*Report, error) {
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = 5 * time.Second
	}
	if !o.History.Until.After(o.History.From) {
		return nil, errors.New("--until must be after --from")
	}
	conn, err := o.Live.GetContext(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect to the live Redis: %w", err)
	}
	live, err := readLiveConfig(ctx, conn, o.LiveKeys)
	conn.Close()
	if err != nil {
		return nil, err
	}
	tl, err := openTimeline(ctx, o.Live, o.LiveKeys, o.History)
	if err != nil {
		return nil, err
	}
	rep := &Report{From: o.History.From.UTC(), Until: o.History.Until.UTC(), Source: tl.source}
	rep.Notes = append(rep.Notes, tl.notes...)
	for _, sc := range []Scenario{o.Baseline, o.Candidate} {
		notes, err := live.write(ctx, sc.Space)
		if err != nil {
			return nil, err
		}
		rep.Notes = append(rep.Notes, notes...)
	}
	for _, imp := range []struct {
		what string
		data []byte
	}{{"contacts", o.ContactsFile}, {"rules", o.RulesFile}, {"escalations", o.EscalationsFile}} {
		if imp.data == nil {
			continue
		}
		notes, err := applyImport(ctx, o.Candidate.Space, imp.what, imp.data)
		if err != nil {
			return nil, err
		}
		rep.Notes = append(rep.Notes, notes...)
	}

	runs := [2]*run{{sc: o.Baseline}, {sc: o.Candidate}}
	var wg sync.WaitGroup
	writers := make([]*bufio.Writer, len(runs))
	pipes := make([]*io.PipeWriter, len(runs))
	for i, r := range runs {
		pr, pw := io.Pipe()
		pipes[i], writers[i] = pw, bufio.NewWriterSize(pw, 256*1024)
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.start(ctx, o, pr)
		}()
	}
	eps := newEpisodes()
	lastState := map[string]string{}
	started := time.Now()
	lastProgress := started
	var feedErr error
	for {
		l, ok, err := tl.next(ctx)
		if err != nil {
			feedErr = err
			break
		}
		if !ok {
			break
		}
		rep.Events++
		eps.see(l)
		if !o.History.KeepOKRepeats && l.state == schema.StateOK {
			if lastState[l.checkID] == schema.StateOK {
				rep.OKRepeats++
				continue
			}
		}
		if l.state != "" {
			lastState[l.checkID] = l.state
		}
		rep.Replayed++
		for _, w := range writers {
			w.Write(l.raw)
			if err := w.WriteByte('\n'); err != nil {
				// a replay stopped (its error is reported below)
				feedErr = err
			}
		}
		if feedErr != nil {
			break
		}
		if o.Progress != nil && rep.Events%1024 == 0 && time.Since(lastProgress) >= o.ProgressEvery {
			lastProgress = time.Now()
			fmt.Fprintf(o.Progress, "whatif: %d lines fed, simulated time %s, %s elapsed\n", rep.Events,
				time.Unix(l.at, 0).UTC().Format(time.RFC3339), time.Since(started).Round(time.Second))
		}
		if ctx.Err() != nil {
			feedErr = ctx.Err()
			break
		}
	}
	for i, w := range writers {
		if err := w.Flush(); err != nil && feedErr == nil {
			feedErr = err
		}
		pipes[i].CloseWithError(feedErr)
	}
	wg.Wait()
	for i, r := range runs {
		if r.err != nil {
			return nil, fmt.Errorf("%s run: %w", []string{"baseline", "candidate"}[i], r.err)
		}
	}
	if feedErr != nil {
		return nil, feedErr
	}
	rep.Skipped, rep.Untimed = tl.skipped, tl.untimed
	if tl.untimed > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf(`%d archived events of the chosen checks had no "time" and were not replayed: the executive decided them at its own clock, which the archive does not keep`, tl.untimed))
	}
	if rep.OKRepeats > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d ok results of checks already ok were not replayed: they change no decision (--all-events replays them)", rep.OKRepeats))
	}
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, "whatif: %d lines of history, %d replayed twice in %s\n", rep.Events, rep.Replayed, time.Since(started).Round(time.Millisecond))
	}
	eps.close(o.History.Until.Unix())
	contacts := [2][]model.StoredContact{}
	for i, r := range runs {
		if contacts[i], err = readScenarioContacts(ctx, r.sc.Space); err != nil {
			return nil, err
		}
	}
	rep.build(runs[0].alerts, runs[1].alerts, contacts, eps, o)
	return rep, nil
}

func readScenarioContacts(ctx context.Context, s Space) ([]model.StoredContact, error) {
	conn, err := s.Pool.GetContext(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	ids, err := model.ContactIDs(conn, s.Keys)
	if err != nil {
		return nil, err
	}
	return model.ReadContacts(ctx, conn, s.Keys, ids, false)
}

// run is one scenario's replay.
type run struct {
	sc     Scenario
	alerts []schema.Alert
	sum    replay.Summary
	err    error
	buf    []byte
}

func (r *run) start(ctx context.Context, o Options, in *io.PipeReader) {
	xcfg := r.sc.Executive
	// the scratch space keeps no archive of its own: nobody reads it
	xcfg.ArchiveEvents = false
	r.sum, r.err = replay.Run(ctx, replay.Options{Pool: r.sc.Space.Pool, Keys: r.sc.Space.Keys, Executive: xcfg,
		Notifier: r.sc.Notifier, Log: o.Log, Version: o.Version, Identity: o.Identity, SecondBatches: true, Private: true}, in, r)
	if r.err != nil {
		// the feeder must not block on a reader that has stopped
		in.CloseWithError(r.err)
	}
}

// Write takes replay's output: one alert JSON per line.
func (r *run) Write(p []byte) (int, error) {
	r.buf = append(r.buf, p...)
	for {
		i := bytes.IndexByte(r.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		var a schema.Alert
		if err := json.Unmarshal(r.buf[:i], &a); err != nil {
			return 0, fmt.Errorf("read an alert of replay: %w", err)
		}
		r.alerts = append(r.alerts, a)
		r.buf = r.buf[i+1:]
	}
}

// episodes are the failures of the timeline: from a check's first failing state after a
// non-failing one (or the start) until it is ok again (or the range ends).
type episodes struct {
	open map[string]*Failure
	all  []*Failure
}

func newEpisodes() *episodes { return &episodes{open: map[string]*Failure{}} }

func (e *episodes) see(l line) {
	if l.state == "" {
		return
	}
	f := e.open[l.checkID]
	switch {
	case schema.IsFailure(l.state) && f == nil:
		entity, check, _ := schema.SplitCheckID(l.checkID)
		f = &Failure{Entity: entity, Check: check, Start: l.at, End: -1}
		e.open[l.checkID] = f
		e.all = append(e.all, f)
	case !schema.IsFailure(l.state) && f != nil:
		f.End = l.at
		delete(e.open, l.checkID)
	}
}

func (e *episodes) close(until int64) {
	for id, f := range e.open {
		f.End = until
		f.Ongoing = true
		delete(e.open, id)
	}
}
