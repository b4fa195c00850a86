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
	"github.com/flapjackgo/flapjack/model/checkstate"
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
	factsBuf []checkstate.CheckFacts
	batches  batches
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
	x.batches = batches{pool: o.Pool, consumer: consumer, batchSize: o.Config.BatchSize, metrics: x.metrics, log: x.log}
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
	return checkstate.InitEventCounters(conn, x.target.Counters, x.target.InstanceCounters, instanceCountersTTL)
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
	next, err := x.batches.next(ctx, wait)
	if err != nil || next == nil {
		return Result{}, err
	}
	// the batch claims the next one only while ctx lasts; the Loop's Close finishes that one
	// (FinishClaimed)
	return x.processClaimed(ctx, next, ctx)
}

// FinishClaimed processes the batch claimed ahead, if any (queue.Finisher): a stopping executive
// finishes it rather than hand it back.
func (x *Executive) FinishClaimed(ctx context.Context) (int, error) {
	next := x.batches.takeAhead()
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
		x.batches.dropAhead(next)
	}
	return res, err
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
	return x.processBatch(ctx, parseBatch(batch), nil)
}

// processBatch is ProcessBatch of a parsed batch. While live lasts (nil: never), a full batch
// applied in parts claims the next one behind its last part (batches.ahead; see receiveAhead).
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
		if round == 0 && batch.Whole && len(deferred) == 0 {
			applier = x.batches.partsConn(ctx, len(batch.Items))
		}
		if applier != nil {
			steps := partSteps{x: x, ctx: ctx, conn: conn, now: now, r: &r}
			retry, err = x.batches.applyInParts(conn, applier, &all, len(batch.Items), r.aheadWhile, steps)
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
	facts     []checkstate.CheckFacts
	cached    []bool
	decisions []decision
	rejected  []model.Record
	archive   []string // the claimed items to archive with this part (round 0's)
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

// partSteps are the executive's steps for each part of a round the transport applies in parts:
// decide its events, build its apply call (listLen and slotBase as in preparePart), and take
// the call's outcome.
type partSteps struct {
	x    *Executive
	ctx  context.Context
	conn redis.Conn
	now  time.Time
	r    *roundState
}

func (s partSteps) decide(p *roundPart) error { return s.x.decidePart(s.ctx, s.conn, p, s.now, s.r) }

func (s partSteps) prepare(p *roundPart, listLen, slotBase int) *model.ApplyCall {
	return s.x.preparePart(p, s.now, listLen, slotBase)
}

func (s partSteps) settle(p *roundPart, statuses []model.Status, err error) ([]pendingEvent, error) {
	return s.x.settlePart(p, statuses, err, s.r)
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
			g := checkstate.NoWindowsGuards(x.keys, p.facts[i].ID)
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
		records = append(records, checkstate.ArchiveRecord(x.keys, p.archive, now, x.cfg.ArchiveMaxAge))
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

// rejectRecords makes the records that keep invalid items' raw payloads (docs/decisions.md D2).
func (x *Executive) rejectRecords(failures []parseFailure, now time.Time) []model.Record {
	var rejected []model.Record
	for _, f := range failures {
		reasons := schema.RejectReasons(f.err)
		x.log.Warn("event rejected", zap.Strings("reasons", reasons), zap.String("event", text.Truncate(f.raw, 512)))
		rec := checkstate.RejectedRecord(x.keys, checkstate.Rejected{Input: f.raw, Reasons: reasons}, now, x.cfg.RejectedMaxAge)
		rec.Item, rec.Counter, rec.Slot = f.raw, "invalid", f.slot
		rejected = append(rejected, rec)
	}
	return rejected
}

// readFacts returns the facts to decide current with: from the cache for the results of checks
// it holds (cached[i]), read from Redis for the rest, in one round trip (none when all were
// cached).
func (x *Executive) readFacts(ctx context.Context, conn redis.Conn, current []pendingEvent, now time.Time, useCache bool) (facts []checkstate.CheckFacts, cached []bool, err error) {
	facts = x.factsBuffer(len(current))
	cached = make([]bool, len(current))
	reqs := make([]checkstate.FactsRequest, 0, len(current))
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
	read, err := checkstate.ReadFactsWithCheckTags(ctx, conn, x.keys, now, reqs)
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
	reqs := make([]checkstate.FactsRequest, len(again))
	for j, i := range again {
		reqs[j] = factsRequest(&p.events[i].event)
	}
	read, err := checkstate.ReadFactsWithCheckTags(ctx, conn, x.keys, now, reqs)
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
func (x *Executive) factsBuffer(n int) []checkstate.CheckFacts {
	if cap(x.factsBuf) < n {
		x.factsBuf = make([]checkstate.CheckFacts, n)
	}
	buf := x.factsBuf[:n]
	clear(buf)
	return buf
}

func factsRequest(ev *schema.Event) checkstate.FactsRequest {
	mode := checkstate.ModeEvent
	if ev.IsOK() {
		mode = checkstate.ModeEventOK
	}
	return checkstate.FactsRequest{Entity: ev.Entity, Check: ev.Check, Mode: mode}
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
