// Package whatif owns `flapjack whatif` (issue 18): it takes the history the live Redis holds
// for a time range (the raw event archive, else a timeline reconstructed from state history,
// acknowledgements and maintenance records), copies the live contacts, media and rules into
// scratch spaces, and replays the history twice through the real executive and notifier on
// simulated time (package replay) — once as configured (baseline) and once with candidate
// contacts, rules or executive settings — then compares who would have been alerted. The live
// Redis is only read.
package whatif

import (
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
	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/notifier"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/replay"
	"github.com/flapjackgo/flapjack/schema"
	"github.com/flapjackgo/flapjack/staleness"
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
	// SchedulesFile is a `flapjack import schedules` file: candidate on-call schedules,
	// replacing the live ones of the same ids.
	SchedulesFile   []byte
	QuietHours      *QuietHours // nil = not reported
	Progress        io.Writer   // nil = quiet
	ProgressEvery   time.Duration
	Log             *zap.Logger
	Version         string
	Identity        queue.Identity
	DefaultTimezone *time.Location // for contacts without one; nil = UTC
	// OpenSpaces opens a baseline and a candidate space for one more group of checks, and
	// what closes them; nil = the history is replayed as one group, in the scenarios' spaces.
	OpenSpaces func(ctx context.Context) ([2]Space, func(), error)
	// Groups is how many disjoint groups of checks are replayed concurrently (each in spaces of
	// its own) when OpenSpaces is set; 0 = chosen from the CPUs and the checks. Rollup
	// thresholds in either scenario make it one.
	Groups int
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
	var staleNote []string
	if !o.History.KeepOKRepeats && (armsStale(o.Baseline.Executive.Staleness) || armsStale(o.Candidate.Executive.Staleness)) {
		o.History.KeepOKRepeats = true
		staleNote = append(staleNote, "ok results of checks already ok are replayed too: a staleness ttl is on (executive.default_ttl or ttl_by_check), and every result moves its check's deadline")
	}
	tl, err := openTimeline(ctx, o.Live, o.LiveKeys, o.History)
	if err != nil {
		return nil, err
	}
	rep := &Report{From: o.History.From.UTC(), Until: o.History.Until.UTC(), Source: tl.source}
	rep.Notes = append(rep.Notes, tl.notes...)
	rep.Notes = append(rep.Notes, staleNote...)
	notes, err := configure(ctx, o, live, o.Baseline.Space, o.Candidate.Space)
	if err != nil {
		return nil, err
	}
	rep.Notes = append(rep.Notes, notes...)
	groups, why, err := groupCount(ctx, o, tl.checks)
	if err != nil {
		return nil, err
	}
	runs, closeGroups, err := openGroups(ctx, o, live, groups)
	defer closeGroups()
	if err != nil {
		return nil, err
	}
	if o.Progress != nil && why != "" {
		fmt.Fprintf(o.Progress, "whatif: %s\n", why)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for _, g := range runs {
		for _, r := range g {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r.start(ctx, o, cancel)
			}()
		}
	}
	f := newFeeder(runs)
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
		if !o.History.KeepOKRepeats && l.state == schema.StateOK && !l.armsStale {
			if lastState[l.checkID] == schema.StateOK {
				rep.OKRepeats++
				continue
			}
		}
		if l.state != "" {
			lastState[l.checkID] = l.state
		}
		rep.Replayed++
		f.feed(l)
		if o.Progress != nil && rep.Events%1024 == 0 && time.Since(lastProgress) >= o.ProgressEvery {
			lastProgress = time.Now()
			fmt.Fprintf(o.Progress, "whatif: %d lines fed, simulated time %s, %s elapsed\n", rep.Events,
				time.Unix(l.at, 0).UTC().Format(time.RFC3339), time.Since(started).Round(time.Second))
		}
		if ctx.Err() != nil {
			// a replay stopped (its error is reported below), or the caller gave up
			feedErr = ctx.Err()
			break
		}
	}
	f.close()
	wg.Wait()
	var alerts [2][]schema.Alert
	var runErr error
	for _, g := range runs {
		for i, r := range g {
			// the run that failed first cancelled the others: its error is the one to tell
			if r.err != nil && (runErr == nil || errors.Is(runErr, context.Canceled) && !errors.Is(r.err, context.Canceled)) {
				runErr = fmt.Errorf("%s run: %w", []string{"baseline", "candidate"}[i], r.err)
			}
			alerts[i] = append(alerts[i], r.alerts...)
		}
	}
	if runErr != nil {
		return nil, runErr
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
	contacts := [2][]roster.StoredContact{}
	for i, r := range runs[0] {
		if contacts[i], err = readScenarioContacts(ctx, r.sc.Space); err != nil {
			return nil, err
		}
	}
	for i := range alerts {
		sortAlerts(alerts[i])
	}
	rep.build(alerts[0], alerts[1], contacts, eps, o)
	return rep, nil
}

// configure copies the live configuration into a baseline and a candidate space and changes
// the candidate with the import files.
func configure(ctx context.Context, o Options, live *liveConfig, base, cand Space) ([]string, error) {
	var notes []string
	for _, sp := range []Space{base, cand} {
		n, err := live.write(ctx, sp)
		if err != nil {
			return nil, err
		}
		notes = append(notes, n...)
	}
	for _, imp := range []struct {
		what string
		data []byte
	}{{"contacts", o.ContactsFile}, {"rules", o.RulesFile}, {"schedules", o.SchedulesFile}, {"escalations", o.EscalationsFile}} {
		if imp.data == nil {
			continue
		}
		n, err := applyImport(ctx, cand, imp.what, imp.data)
		if err != nil {
			return nil, err
		}
		notes = append(notes, n...)
	}
	return notes, nil
}

// armsStale reports whether a staleness policy gives any result a ttl.
func armsStale(p staleness.Policy) bool {
	if p.Default > 0 {
		return true
	}
	for _, r := range p.Rules {
		if r.TTL > 0 {
			return true
		}
	}
	return false
}

func readScenarioContacts(ctx context.Context, s Space) ([]roster.StoredContact, error) {
	conn, err := s.Pool.GetContext(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	ids, err := roster.ContactIDs(ctx, conn, s.Keys)
	if err != nil {
		return nil, err
	}
	return roster.ReadContacts(ctx, conn, s.Keys, ids, false)
}

// run is one scenario's replay of one group of checks.
type run struct {
	sc     Scenario
	in     chan []item
	alerts []schema.Alert
	err    error
	buf    []byte
}

// item is a line for a replay, or (raw nil) a tick: a second at which only other groups'
// checks have lines.
type item struct {
	at  int64
	raw []byte
}

// start replays what the feeder sends until it closes the channel. On an error it cancels the
// whole comparison and keeps taking what is sent, so the feeder never blocks.
func (r *run) start(ctx context.Context, o Options, cancel func()) {
	xcfg, ncfg := r.sc.Executive, r.sc.Notifier
	// The scratch space keeps no archive and no decision records of its own, nor the alerting
	// sets of media without rollup: nobody reads them, and no decision depends on them.
	xcfg.ArchiveEvents, xcfg.ExplainEntries, ncfg.ExplainEntries = false, 0, 0
	ncfg.RollupSetsOnly = true
	rn, err := replay.Start(ctx, replay.Options{Pool: r.sc.Space.Pool, Keys: r.sc.Space.Keys, Executive: xcfg,
		Notifier: ncfg, Log: o.Log, Version: o.Version, Identity: o.Identity, SecondBatches: true, Private: true}, r)
	r.err = err
	for chunk := range r.in {
		for _, it := range chunk {
			if r.err != nil {
				break
			}
			if it.raw == nil {
				r.err = rn.Tick(ctx, it.at)
			} else {
				r.err = rn.Line(ctx, it.raw)
			}
		}
		if r.err != nil {
			cancel()
		}
	}
	if rn != nil {
		if _, err := rn.Close(ctx); r.err == nil {
			r.err = err
		}
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
