// Package executive owns event processing: it claims events from the `events` list, keeps each
// check's state, history and maintenance on the documented key layout, runs the five filters of
// Flapjack 1.x (Ok, ScheduledMaintenance, UnscheduledMaintenance, Delays, Acknowledgement) and
// pushes a notification to `notifications` when a failure deserves one.
//
// A batch costs a claim (Lua), one read of the facts of the checks the executive does not
// remember from their previous result (factsCache; none in the steady state) and the apply of
// every event's writes (Lua). Decisions are pure Go between the read and the apply. A batch of
// 64 events or more over different checks is applied in parts, each sent while the executive
// decides the next, so Redis and the executive work at once. Every apply is guarded by a
// per-check revision, so executives sharing one Redis never lose an update, and it removes each
// event from the processing list in the same atomic step as its writes, so re-processing after
// a crash never doubles an effect.
package executive

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/internal/text"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/schema"
	"github.com/flapjackgo/flapjack/staleness"
)

// Stage is the executive's name in instance records and processing lists.
const Stage = "executive"

// Config holds the executive settings (docs/decisions.md I3).
type Config struct {
	InitialFailureDelay                    time.Duration
	RepeatFailureDelay                     time.Duration
	NewCheckScheduledMaintenanceDuration   time.Duration
	NewCheckScheduledMaintenanceIgnoreTags []string
	AcknowledgementDuration                time.Duration
	ArchiveEvents                          bool
	ArchiveMaxAge                          time.Duration
	RejectedMaxAge                         time.Duration
	MaxFutureSkew                          time.Duration
	BatchSize                              int
	Queue                                  string // events list name
	NotifierQueue                          string // notifications list name
	// ExplainEntries caps each check's explain list (0 = none kept).
	ExplainEntries int
	// Staleness gives results without a ttl of their own the default ttl (docs/decisions.md D19).
	Staleness staleness.Policy
	// FactsCacheChecks is how many checks' facts the executive remembers between their results
	// (0 = none: every event reads its check).
	FactsCacheChecks int
}

// Validate refuses settings the executive cannot run with, naming each setting.
func (c Config) Validate() error {
	var errs []error
	if c.BatchSize < 1 || c.BatchSize > 10000 {
		errs = append(errs, fmt.Errorf("executive.batch_size: %d is not between 1 and 10000", c.BatchSize))
	}
	if c.FactsCacheChecks < 0 || c.FactsCacheChecks > maxFactsCacheChecks {
		errs = append(errs, fmt.Errorf("executive.facts_cache_checks: %d is not between 0 and %d", c.FactsCacheChecks, maxFactsCacheChecks))
	}
	if c.ExplainEntries < 0 || c.ExplainEntries > 100000 {
		errs = append(errs, fmt.Errorf("executive.explain_entries: %d is not between 0 and 100000", c.ExplainEntries))
	}
	if c.AcknowledgementDuration < time.Second {
		errs = append(errs, errors.New("executive.acknowledgement_duration: must be at least 1 second"))
	}
	if c.ArchiveEvents && c.ArchiveMaxAge < time.Second {
		errs = append(errs, errors.New("executive.events_archive_maxage: must be set when executive.archive_events is on"))
	}
	return errors.Join(errs...)
}

// DefaultConfig is Flapjack's behaviour with the decisions of docs/decisions.md.
func DefaultConfig() Config {
	return Config{
		InitialFailureDelay:     30 * time.Second,
		RepeatFailureDelay:      60 * time.Second,
		AcknowledgementDuration: 4 * time.Hour,
		ArchiveMaxAge:           3 * time.Hour,
		RejectedMaxAge:          7 * 24 * time.Hour,
		MaxFutureSkew:           5 * time.Minute,
		BatchSize:               256,
		Queue:                   schema.DefaultEventsQueue,
		NotifierQueue:           "notifications",
		ExplainEntries:          50,
		FactsCacheChecks:        defaultFactsCacheChecks,
	}
}

// Options wires an Executive.
type Options struct {
	Pool     *redis.Pool
	Keys     schema.Keys
	Config   Config
	Clock    clock.Clock
	Log      *zap.Logger
	Metrics  *Metrics
	Identity queue.Identity
	Version  string
	// HeartbeatClock drives liveness records; defaults to Clock. Replay decides with a fake
	// clock but must stay visibly alive by the wall clock.
	HeartbeatClock clock.Clock
	Beat           time.Duration
}

// Executive processes events, one batch at a time (its facts cache and buffers are not shared
// between goroutines).
type Executive struct {
	pool     *redis.Pool
	keys     schema.Keys
	cfg      Config
	clock    clock.Clock
	log      *zap.Logger
	metrics  *Metrics
	decider  decider
	consumer *queue.Consumer
	registry *queue.Registry
	target   model.ApplyTarget
	cache    *factsCache // nil when off
	factsBuf []model.CheckFacts
	// ahead is the batch claimed behind the last one's last part, processed next
	ahead *parsedBatch
	// readBack holds the sequence numbers of a failed batch's events and of the batch claimed
	// ahead of it, by item, for their reading back from the processing list (renumberReadBack)
	readBack map[string][]int64
}

// New builds an executive; it touches Redis only when run.
func New(o Options) *Executive {
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	if o.Metrics == nil {
		o.Metrics = NewMetrics(nil)
	}
	if o.HeartbeatClock == nil {
		o.HeartbeatClock = o.Clock
	}
	if o.Config.BatchSize <= 0 {
		o.Config.BatchSize = 1
	}
	spec := queue.Spec{Stage: Stage, Source: o.Keys.Queue(o.Config.Queue), End: queue.Right, Sequence: o.Keys.EventsSequence()}
	consumer := queue.NewConsumer(o.Pool, o.Keys, spec, o.Identity)
	x := &Executive{
		pool: o.Pool, keys: o.Keys, cfg: o.Config, clock: o.Clock, log: o.Log.With(zap.String("stage", Stage)),
		metrics: o.Metrics, consumer: consumer, cache: newFactsCache(o.Config.FactsCacheChecks),
		decider: decider{
			keys: o.Keys, cfg: o.Config,
			filters:       pipeline(seconds(o.Config.AcknowledgementDuration)),
			notifications: o.Keys.Queue(o.Config.NotifierQueue),
		},
		target: model.ApplyTarget{
			Processing:       consumer.ProcessingKey(),
			Counters:         o.Keys.EventCounters(),
			InstanceCounters: o.Keys.InstanceEventCounters(o.Identity.ID()),
		},
	}
	x.registry = &queue.Registry{
		Pool: o.Pool, Keys: o.Keys, Spec: spec, ID: o.Identity, Clock: o.HeartbeatClock,
		Version: o.Version, Beat: o.Beat, Log: x.log, Stats: x.metrics.instanceStats,
		KeepAlive: map[string]time.Duration{x.target.InstanceCounters: instanceCountersTTL},
	}
	return x
}

// Start prepares the counters (docs/flapjack-1x.md 2.1). The queue loop calls it after registering.
func (x *Executive) Start(ctx context.Context) error {
	return x.initCounters(ctx)
}

// initCounters sets event_counters fields to 0 only when absent and resets this instance's
// counters.
func (x *Executive) initCounters(ctx context.Context) error {
	conn, err := x.pool.GetContext(ctx)
	if err != nil {
		return fmt.Errorf("init event counters: %w", err)
	}
	defer conn.Close()
	inst := x.target.InstanceCounters
	conn.Send("MULTI")
	for _, f := range []string{"all", "ok", "failure", "action", "invalid"} {
		conn.Send("HSETNX", x.target.Counters, f, 0)
		conn.Send("HSET", inst, f, 0)
	}
	conn.Send("EXPIRE", inst, int64(instanceCountersTTL/time.Second))
	if _, err := conn.Do("EXEC"); err != nil {
		return fmt.Errorf("init event counters: %w", err)
	}
	return nil
}

// Loop returns the run loop of this executive (SIGTERM-safe, retrying on Redis errors).
func (x *Executive) Loop(exitWhenEmpty bool) *queue.Loop {
	return &queue.Loop{
		Registry: x.registry, Consumer: x.consumer, Worker: x, Log: x.log,
		ExitWhenEmpty: exitWhenEmpty,
		OnError:       func(error) { x.metrics.redisErrors.Inc() },
	}
}

// Run processes events until ctx ends or, with exitWhenEmpty, until the queue is empty.
func (x *Executive) Run(ctx context.Context, exitWhenEmpty bool) error {
	return x.Loop(exitWhenEmpty).Run(ctx)
}

// ProcessNext claims one batch (blocking up to wait for the first event) and processes it,
// returning how many events it finished. Under a backlog it also claims the next batch while
// this one's last part applies (see receiveAhead), and the next call processes that one.
func (x *Executive) ProcessNext(ctx context.Context, wait time.Duration) (int, error) {
	res, err := x.ProcessNextResult(ctx, wait)
	return res.Finished, err
}

// ProcessNextResult is ProcessNext returning the batch's result (with its notifications).
func (x *Executive) ProcessNextResult(ctx context.Context, wait time.Duration) (Result, error) {
	next := x.ahead
	x.ahead = nil
	if next == nil {
		batch, err := x.consumer.Next(ctx, x.cfg.BatchSize, wait)
		if err != nil {
			return Result{}, err
		}
		next = x.parse(batch)
		x.renumberReadBack(next)
		if len(batch.Items) == 0 {
			return Result{}, nil
		}
	}
	// the batch claims the next one only while ctx lasts; the Loop's Close finishes that one
	// (FinishClaimed)
	return x.processClaimed(ctx, next, ctx)
}

// FinishClaimed processes the batch claimed ahead, if any (queue.Finisher): a stopping executive
// finishes it rather than hand it back.
func (x *Executive) FinishClaimed(ctx context.Context) (int, error) {
	next := x.ahead
	x.ahead = nil
	if next == nil {
		return 0, nil
	}
	res, err := x.processClaimed(ctx, next, nil)
	return res.Finished, err
}

// processClaimed processes a claimed batch, to the end even when shutdown starts meanwhile;
// while live lasts (nil: never) it may claim the next one ahead.
func (x *Executive) processClaimed(ctx context.Context, next *parsedBatch, live context.Context) (Result, error) {
	res, err := x.processBatch(context.WithoutCancel(ctx), next, live)
	if err != nil {
		x.dropAhead(next)
	}
	return res, err
}

// dropAhead follows a failed batch: what is left of it, and the batch claimed ahead of it, stay
// in the processing list and are read from there, in claim order (see renumberReadBack).
func (x *Executive) dropAhead(failed *parsedBatch) {
	x.consumer.MarkUnfinished()
	x.readBack = make(map[string][]int64)
	for _, p := range []*parsedBatch{failed, x.ahead} {
		if p == nil {
			continue
		}
		for _, e := range p.pending {
			if e.seq > 0 {
				x.readBack[e.raw] = append(x.readBack[e.raw], e.seq)
			}
		}
	}
	x.ahead = nil
}

// renumberReadBack gives the events of a batch read back from the processing list after a
// failure the sequence numbers they were claimed with (an item's copies take theirs in claim
// order): read back, events carry none, and one would not be ordered against a peer's result
// for its check in the same second.
func (x *Executive) renumberReadBack(p *parsedBatch) {
	claimed := x.readBack
	x.readBack = nil
	if p.batch.FirstSequence != 0 {
		return
	}
	for i := range p.pending {
		e := &p.pending[i]
		if seqs := claimed[e.raw]; len(seqs) > 0 {
			e.seq, claimed[e.raw] = seqs[0], seqs[1:]
		}
	}
}

// Result summarises a processed batch.
type Result struct {
	Finished      int
	Notifications []schema.Notification
}

type pendingEvent struct {
	raw   string
	seq   int64
	slot  int // place in the claimed batch
	event schema.Event
}

// instanceCountersTTL is how long event_counters:HOST:PID outlives its instance (Flapjack: 12
// days, renewed while the instance runs).
const instanceCountersTTL = 12 * 24 * time.Hour

// perMinuteTTL keeps the per-minute event counters long enough for `flapjack status`'s
// ten-minute window.
const perMinuteTTL = 15 * 60

// maxConflictRounds bounds re-reads when other executives keep changing the same checks.
const maxConflictRounds = 50

// ProcessBatch processes claimed items in claim order. Events for different checks are decided
// together; a second event for the same check waits for the first to be applied.
func (x *Executive) ProcessBatch(ctx context.Context, batch queue.Batch) (Result, error) {
	return x.processBatch(ctx, x.parse(batch), nil)
}

// processBatch is ProcessBatch of a parsed batch. While live lasts (nil: never), a full batch
// applied in parts claims the next one behind its last part (x.ahead; see receiveAhead).
func (x *Executive) processBatch(ctx context.Context, parsed *parsedBatch, live context.Context) (Result, error) {
	started := time.Now()
	var res Result
	now := x.clock.Now()
	batch, pending := parsed.batch, parsed.pending
	rejected := x.rejectRecords(parsed.failures, now)

	conn, err := x.pool.GetContext(ctx)
	if err != nil {
		return res, fmt.Errorf("process batch: %w", err)
	}
	defer conn.Close()

	r := roundState{res: &res, useCache: x.cache.active()}
	if len(batch.Items) == x.cfg.BatchSize {
		r.aheadWhile = live
	}
	if r.useCache {
		defer func() { x.metrics.factsCached.Add(float64(x.cache.batchDone())) }()
	}
	defer func() { r.counts.flush(x.metrics) }() // not `defer r.counts.flush`: that would flush the empty slice it had here
	conflictRounds := 0
	for round := 0; len(pending) > 0 || len(rejected) > 0; round++ {
		// Rounds for later events of the same check are expected (one per event); only rounds
		// redone because another executive changed a check count against the bound.
		if conflictRounds >= maxConflictRounds {
			return res, fmt.Errorf("process batch: checks kept changing under %d re-reads", maxConflictRounds)
		}
		if round > 0 {
			now = x.clock.Now()
		}
		current, deferred := splitRound(pending)
		facts, cached, err := x.readFacts(ctx, conn, current, now, r.useCache)
		if err != nil {
			return res, err
		}
		all := roundPart{events: current, facts: facts, cached: cached, rejected: rejected}
		if round == 0 && x.cfg.ArchiveEvents {
			all.archive = batch.Items
		}
		var retry []pendingEvent
		var applier redis.Conn
		if round == 0 && batch.Whole && len(deferred) == 0 && len(batch.Items) >= minBatchInParts {
			applier = x.spareConn(ctx)
		}
		if applier != nil {
			retry, err = x.applyInParts(ctx, conn, applier, &all, len(batch.Items), now, &r)
			applier.Close()
		} else {
			listLen := 0
			if round == 0 && batch.Whole {
				// every claimed item is in this round unless a check has two events: Apply checks
				listLen = len(batch.Items)
			}
			retry, err = x.applyRound(ctx, conn, &all, listLen, now, &r)
		}
		if err != nil {
			return res, err
		}
		rejected = nil
		if len(retry) > 0 {
			conflictRounds++
		}
		pending = mergeRetries(retry, deferred)
	}
	elapsed := time.Since(started).Seconds()
	for i := 0; i < res.Finished; i++ {
		x.metrics.latency.Observe(elapsed)
	}
	x.metrics.batches.Inc()
	x.metrics.processed.Add(int64(res.Finished))
	return res, nil
}

// roundState is what a batch's rounds add to as their records are applied.
type roundState struct {
	res      *Result
	counts   verdictCounts
	view     checkView
	useCache bool
	// aheadWhile: while it lasts, the batch claims the next one behind its last part, if
	// applied in parts (see receiveAhead); set for a full batch, a sign of a backlog, whose
	// caller takes the batch claimed ahead
	aheadWhile context.Context
}

// roundPart is events of one round applied in one call: the whole round, or a part of it.
type roundPart struct {
	events    []pendingEvent
	facts     []model.CheckFacts
	cached    []bool
	decisions []decision
	rejected  []model.Record
	archive   []string // the claimed items to archive with this part (round 0's)
}

// split cuts the round into the parts whose items have the slots [bounds[k], bounds[k+1]); each
// part archives its own items (the whole batch's, in slot order), so the archive is written with
// the removal of the items it holds: when a later part fails, the items read back from the
// processing list were not archived yet.
func (p *roundPart) split(bounds []int) []*roundPart {
	parts := make([]*roundPart, 0, len(bounds)-1)
	events, rejected, lo := 0, 0, bounds[0]
	for _, hi := range bounds[1:] {
		e, j := events, rejected
		for e < len(p.events) && p.events[e].slot < hi {
			e++
		}
		for j < len(p.rejected) && p.rejected[j].Slot < hi {
			j++
		}
		part := &roundPart{events: p.events[events:e], facts: p.facts[events:e],
			cached: p.cached[events:e], rejected: p.rejected[rejected:j]}
		if p.archive != nil {
			part.archive = p.archive[lo:hi]
		}
		parts = append(parts, part)
		events, rejected, lo = e, j, hi
	}
	return parts
}

// applyRound decides a round's events and applies them in one call. listLen > 0 says the round's
// items are the processing list's oldest, this many (model.ApplyTarget.ListLen).
func (x *Executive) applyRound(ctx context.Context, conn redis.Conn, p *roundPart, listLen int, now time.Time, r *roundState) ([]pendingEvent, error) {
	if err := x.decidePart(ctx, conn, p, now, r); err != nil {
		return nil, err
	}
	statuses, err := x.preparePart(p, now, listLen, 0).Do(conn)
	return x.settlePart(p, statuses, err, r)
}

// minBatchInParts is the smallest batch applied in parts; firstPart is its first part's size.
const (
	minBatchInParts = 64
	firstPart       = 16
)

// partBounds splits a batch of n claimed items into slot ranges [b[k], b[k+1]) applied one after
// the other while the next is decided: the first small, so Redis waits little for its
// decisions, each next twice the last, as deciding an event costs the executive about half of
// what applying it costs Redis.
func partBounds(n int) []int {
	bounds := []int{0}
	for at, size := 0, firstPart; at < n; size *= 2 {
		at = min(n, at+size)
		bounds = append(bounds, at)
	}
	return bounds
}

// applyInParts decides and applies round 0 of a whole batch whose checks all differ in parts,
// each sent down applier before the previous one's reply is read: while Redis applies one part,
// the executive decides the next, and Redis finds it waiting. Parts share no check, so a part's
// decisions never wait for the previous part's outcome; each part's items are the oldest left in
// the processing list, which names them by slot (model.ApplyTarget.ListLen).
func (x *Executive) applyInParts(ctx context.Context, conn, applier redis.Conn, round *roundPart, n int, now time.Time, r *roundState) ([]pendingEvent, error) {
	type sentPart struct {
		part *roundPart
		call *model.ApplyCall
	}
	var inflight, again []sentPart // again: parts to send once no reply is pending
	var retry []pendingEvent
	claimSent := false
	defer func() {
		// after an error, the parts sent still count what they finished (the batch is retried
		// from the processing list, with the batch claimed ahead)
		for _, s := range inflight {
			if statuses, err := s.call.Receive(applier); err == nil || errors.As(err, new(*model.WriteError)) {
				_, _ = x.settlePart(s.part, statuses, err, r)
			}
		}
		if claimSent {
			x.receiveAhead(applier)
		}
	}()
	settle := func(s sentPart, statuses []model.Status, err error) error {
		more, err := x.settlePart(s.part, statuses, err, r)
		retry = append(retry, more...)
		return err
	}
	receive := func() error {
		s := inflight[0]
		inflight = inflight[1:]
		statuses, err := s.call.Receive(applier)
		if errors.Is(err, model.ErrSendAgain) {
			again = append(again, s)
			if len(again) > 1 {
				return nil // the parts after the first one sent again fail on its account
			}
			// when Redis forgot the script, the parts sent from now on find it
			return model.LoadApplyScript(conn)
		}
		return settle(s, statuses, err)
	}
	bounds := partBounds(n)
	for k, p := range round.split(bounds) {
		if err := x.decidePart(ctx, conn, p, now, r); err != nil {
			return nil, err
		}
		call := x.preparePart(p, now, bounds[k+1]-bounds[k], bounds[k])
		if err := call.Send(applier); err != nil {
			return nil, err
		}
		inflight = append(inflight, sentPart{p, call})
		if len(inflight) == 2 {
			if err := receive(); err != nil {
				return nil, err
			}
		}
	}
	if r.aheadWhile != nil && r.aheadWhile.Err() == nil && len(again) == 0 {
		// behind the last part: see receiveAhead
		if err := x.consumer.SendClaim(applier, x.cfg.BatchSize); err != nil {
			return nil, err
		}
		claimSent = true
	}
	for len(inflight) > 0 {
		if err := receive(); err != nil {
			return nil, err
		}
	}
	if claimSent {
		claimSent = false
		x.receiveAhead(applier)
	}
	for _, s := range again {
		// named, its conflicted items stay where they are, older than any claimed ahead (named
		// even when none was: this path is rare, and the names cost only bytes)
		s.call.SendItems()
		statuses, err := s.call.Do(applier)
		if err := settle(s, statuses, err); err != nil {
			return nil, err
		}
	}
	return retry, nil
}

// receiveAhead reads the claim sent behind a batch's last part. Sent on the parts' connection,
// it runs once they have all run, so Redis finds it waiting instead of idling for a round trip,
// the executive parses the batch before it is needed, and the items the parts left claimed
// (conflicts) stay older in the processing list than the claimed ones: retried in this batch's
// later rounds, or read back in claim order with the claimed ones if this batch fails (see
// dropAhead). A part sent again after the claim names its items, for the same reason. Once this
// batch is finished the list holds the claimed batch alone (only a whole batch is applied in
// parts), so that one is whole.
func (x *Executive) receiveAhead(applier redis.Conn) {
	batch, err := x.consumer.ReceiveClaim(applier)
	if err != nil {
		x.metrics.redisErrors.Inc()
		x.log.Warn("claiming the next batch ahead failed; the processing list is read before claiming again", zap.Error(err))
		return
	}
	if len(batch.Items) > 0 {
		batch.Whole = true
		x.ahead = x.parse(batch)
	}
}

// spareWait bounds the wait for a second connection to apply a batch in parts.
const spareWait = 10 * time.Millisecond

// spareConn is a second connection, for applying a batch in parts, or nil when the pool cannot
// spare one soon (redis.pool_size 1, or every connection busy): the batch is then applied in
// one call rather than waiting for a connection while holding one.
func (x *Executive) spareConn(ctx context.Context) redis.Conn {
	if x.pool.MaxActive == 1 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, spareWait)
	defer cancel()
	c, err := x.pool.GetContext(ctx)
	if err != nil {
		return nil
	}
	return c
}

// decidePart decides the part's events on their facts.
func (x *Executive) decidePart(ctx context.Context, conn redis.Conn, p *roundPart, now time.Time, r *roundState) error {
	p.decisions = make([]decision, len(p.events))
	for i := range p.events {
		e := &p.events[i]
		p.decisions[i] = x.decider.decide(&e.event, e.raw, &p.facts[i], now.Unix(), e.seq, &r.view)
	}
	return x.decideAgainOnReads(ctx, conn, p, now, &r.view)
}

// preparePart builds the part's call. listLen > 0: the part's items are the listLen oldest in the
// processing list, and slotBase is the first one's slot in the batch.
func (x *Executive) preparePart(p *roundPart, now time.Time, listLen, slotBase int) *model.ApplyCall {
	records := make([]model.Record, 0, len(p.events)+len(p.rejected)+1)
	indexes := model.NewIndexes(x.keys, now.Unix())
	for i := range p.events {
		e, d := &p.events[i], &p.decisions[i]
		if p.cached[i] && d.record.Guards != nil {
			// the facts said "no maintenance windows" when cached: they still must not exist
			g := model.NoWindowsGuards(x.keys, p.facts[i].ID)
			d.record.Guards = append(d.record.Guards, g[:]...)
		}
		d.record.Slot = e.slot - slotBase
		records = append(records, d.record)
		if d.touched {
			indexes.Touch(i, e.event.Entity, e.event.Check)
		}
	}
	for _, rec := range p.rejected {
		rec.Slot -= slotBase
		records = append(records, rec)
	}
	if p.archive != nil {
		records = append(records, x.archiveRecord(p.archive, now))
	}
	target := x.target
	target.PerMinute, target.PerMinuteTTL = x.keys.EventsPerMinute(now), perMinuteTTL
	target.Indexes = indexes
	target.ListLen = listLen
	return model.PrepareApply(target, records)
}

// settlePart takes a part's applied outcome: it counts and reports what was finished and returns
// the events to decide again (their checks changed since read).
func (x *Executive) settlePart(p *roundPart, statuses []model.Status, err error, r *roundState) ([]pendingEvent, error) {
	var refused *model.WriteError
	if errors.As(err, &refused) {
		x.metrics.redisErrors.Inc()
		x.log.Error("some writes were refused by Redis; the events are finished anyway",
			zap.Strings("errors", refused.Messages))
	} else if err != nil {
		return nil, err
	}
	r.res.Finished += len(p.rejected)
	r.counts.add("invalid", VerdictRejected, len(p.rejected))
	var retry []pendingEvent
	for i, st := range statuses[:len(p.events)] {
		ev, d := &p.events[i].event, &p.decisions[i]
		if r.useCache {
			x.cache.applied(ev, d, st, p.cached[i])
		}
		switch st {
		case model.Applied:
			r.res.Finished++
			x.observe(ev, d, &r.counts)
			if d.notification != nil {
				r.res.Notifications = append(r.res.Notifications, *d.notification)
			}
		case model.Conflict:
			x.metrics.conflicts.Inc()
			retry = append(retry, p.events[i])
		case model.Lost:
			r.res.Finished++
			x.log.Warn("event was requeued by a peer that judged this instance dead; leaving it to the peer",
				zap.String("check", ev.ID()))
		}
	}
	return retry, nil
}

// parsedBatch is a claimed batch parsed: its events, and the items that are not valid events.
type parsedBatch struct {
	batch    queue.Batch
	pending  []pendingEvent
	failures []parseFailure
}

// parseFailure is a claimed item that is not a valid event; it becomes a rejected record when
// its batch is applied, at that batch's time.
type parseFailure struct {
	raw  string
	slot int
	err  error
}

// parse validates every claimed item.
func (x *Executive) parse(batch queue.Batch) *parsedBatch {
	p := &parsedBatch{batch: batch, pending: make([]pendingEvent, 0, len(batch.Items))}
	for i, raw := range batch.Items {
		seq := int64(0)
		if batch.FirstSequence > 0 {
			seq = batch.FirstSequence + int64(i)
		}
		ev, err := schema.ParseEventString(raw)
		if err != nil {
			p.failures = append(p.failures, parseFailure{raw: raw, slot: i, err: err})
			continue
		}
		p.pending = append(p.pending, pendingEvent{raw: raw, seq: seq, slot: i, event: ev})
	}
	return p
}

// rejectRecords makes the records that keep invalid items' raw payloads (docs/decisions.md D2).
func (x *Executive) rejectRecords(failures []parseFailure, now time.Time) []model.Record {
	var rejected []model.Record
	for _, f := range failures {
		reasons := schema.RejectReasons(f.err)
		x.log.Warn("event rejected", zap.Strings("reasons", reasons), zap.String("event", text.Truncate(f.raw, 512)))
		rec := model.RejectedRecord(x.keys, model.Rejected{Input: f.raw, Reasons: reasons}, now, x.cfg.RejectedMaxAge)
		rec.Item, rec.Counter, rec.Slot = f.raw, "invalid", f.slot
		rejected = append(rejected, rec)
	}
	return rejected
}

func (x *Executive) archiveRecord(items []string, now time.Time) model.Record {
	var rec model.Record
	key := x.keys.EventsArchive(now)
	args := make([]any, len(items))
	for i, it := range items {
		args[i] = it
	}
	// Newest at the head, as Flapjack 1.x's BRPOPLPUSH leaves it: its readers (a mirror) read
	// the list from the tail.
	rec.Ops.LPush(key, args...)
	rec.Ops.Expire(key, seconds(x.cfg.ArchiveMaxAge))
	rec.Ops.SAdd(x.keys.KnownEventsArchiveKeys(), key)
	return rec
}

// readFacts returns the facts to decide current with: from the cache for the results of checks
// it holds (cached[i]), read from Redis for the rest, in one round trip (none when all were
// cached).
func (x *Executive) readFacts(ctx context.Context, conn redis.Conn, current []pendingEvent, now time.Time, useCache bool) (facts []model.CheckFacts, cached []bool, err error) {
	facts = x.factsBuffer(len(current))
	cached = make([]bool, len(current))
	reqs := make([]model.FactsRequest, 0, len(current))
	missed := make([]int, 0, len(current))
	for i := range current {
		ev := &current[i].event
		if useCache && x.cache.lookup(ev, &facts[i]) {
			cached[i] = true
			continue
		}
		reqs = append(reqs, factsRequest(ev))
		missed = append(missed, i)
	}
	if len(reqs) == 0 {
		return facts, cached, nil
	}
	read, err := model.ReadFactsWithCheckTags(ctx, conn, x.keys, now, reqs)
	if err != nil {
		return nil, nil, err
	}
	if len(read) == len(current) {
		return read, cached, nil // nothing came from the cache
	}
	for j, i := range missed {
		facts[i] = read[j]
	}
	return facts, cached, nil
}

// decideAgainOnReads reads the facts of the checks whose decisions, taken on cached facts, need
// what the cache does not hold (notifiesWithoutHistory), and decides them again on those: a
// failing check's, once per repeated notification.
func (x *Executive) decideAgainOnReads(ctx context.Context, conn redis.Conn, p *roundPart, now time.Time, view *checkView) error {
	var again []int
	for i := range p.events {
		if p.cached[i] && notifiesWithoutHistory(&p.decisions[i], &p.facts[i]) {
			again = append(again, i)
		}
	}
	if len(again) == 0 {
		return nil
	}
	reqs := make([]model.FactsRequest, len(again))
	for j, i := range again {
		reqs[j] = factsRequest(&p.events[i].event)
	}
	read, err := model.ReadFactsWithCheckTags(ctx, conn, x.keys, now, reqs)
	if err != nil {
		return err
	}
	for j, i := range again {
		e := &p.events[i]
		p.facts[i], p.cached[i] = read[j], false
		p.decisions[i] = x.decider.decide(&e.event, e.raw, &p.facts[i], now.Unix(), e.seq, view)
	}
	return nil
}

// factsBuffer returns room for n checks' facts, zeroed, reusing the previous batch's: an
// Executive processes one batch at a time, and a batch is done with its facts once applied (a
// batch's facts are a few hundred bytes per event, the largest allocation left).
func (x *Executive) factsBuffer(n int) []model.CheckFacts {
	if cap(x.factsBuf) < n {
		x.factsBuf = make([]model.CheckFacts, n)
	}
	buf := x.factsBuf[:n]
	clear(buf)
	return buf
}

func factsRequest(ev *schema.Event) model.FactsRequest {
	mode := model.ModeEvent
	if ev.IsOK() {
		mode = model.ModeEventOK
	}
	return model.FactsRequest{Entity: ev.Entity, Check: ev.Check, Mode: mode}
}

// checkName keys a check without building its id string.
type checkName struct{ entity, check string }

// splitRound takes the first pending event of every check (in claim order); later events of the
// same checks wait for the next round. A batch whose checks are all different (the common case)
// is returned as it is.
func splitRound(pending []pendingEvent) (current, deferred []pendingEvent) {
	seen := make(map[checkName]struct{}, len(pending))
	for i := range pending {
		ev := &pending[i].event
		k := checkName{ev.Entity, ev.Check}
		if _, dup := seen[k]; dup {
			if current == nil {
				current = append(make([]pendingEvent, 0, len(pending)), pending[:i]...)
			}
			deferred = append(deferred, pending[i])
			continue
		}
		seen[k] = struct{}{}
		if current != nil {
			current = append(current, pending[i])
		}
	}
	if current == nil {
		return pending, nil
	}
	return current, deferred
}

// mergeRetries puts conflicted events back ahead of the deferred ones, keeping claim order.
func mergeRetries(retry, deferred []pendingEvent) []pendingEvent {
	if len(retry) == 0 {
		return deferred
	}
	return append(retry, deferred...)
}

func (x *Executive) observe(ev *schema.Event, d *decision, counts *verdictCounts) {
	counts.add(ev.Type, d.verdict, 1)
	switch d.verdict {
	case VerdictNotified:
		x.metrics.notifications.WithLabelValues(d.notification.Type).Inc()
		x.log.Info("notification generated", zap.String("check", ev.ID()),
			zap.String("type", d.notification.Type), zap.String("state", ev.State),
			zap.String("severity", d.notification.Severity))
	case VerdictBlocked:
		x.metrics.blocks.WithLabelValues(d.filter).Inc()
		if ce := x.log.Check(zap.DebugLevel, "blocked by "+d.filter+" filter"); ce != nil {
			ce.Write(zap.String("check", ev.ID()), zap.String("state", ev.State), zap.String("reason", d.reason))
		}
	case VerdictStale:
		x.log.Info("event ignored: older than the check's latest event", zap.String("check", ev.ID()),
			zap.Int64("time", ev.Time))
	}
}
