// Package executive owns event processing: it claims events from the `events` list, keeps each
// check's state, history and maintenance on the documented key layout, runs the five filters of
// Flapjack 1.x (Ok, ScheduledMaintenance, UnscheduledMaintenance, Delays, Acknowledgement) and
// pushes a notification to `notifications` when a failure deserves one.
//
// Each batch costs three round trips whatever its size: claim (Lua), read every check's facts
// (Lua), apply every event's writes (Lua); two when every event is an ok result of an ok check
// whose facts the executive remembers from its previous result (factsCache). Decisions are pure
// Go between the read and the apply; the apply is guarded by a per-check revision, so
// executives sharing one Redis never lose an update, and it removes each event from the
// processing list in the same atomic step as its writes, so re-processing after a crash never
// doubles an effect.
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

// Config holds the executive settings (SPEC 3.3).
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
	// Staleness gives results without a ttl of their own the default ttl (SPEC 4.19).
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

// DefaultConfig is Flapjack's behaviour with SPEC 4's decisions.
func DefaultConfig() Config {
	return Config{
		InitialFailureDelay:     30 * time.Second,
		RepeatFailureDelay:      60 * time.Second,
		AcknowledgementDuration: 4 * time.Hour,
		ArchiveMaxAge:           3 * time.Hour,
		RejectedMaxAge:          7 * 24 * time.Hour,
		MaxFutureSkew:           5 * time.Minute,
		BatchSize:               256,
		Queue:                   "events",
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

// Start prepares the counters (reference §2.1). The queue loop calls it after registering.
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
// returning how many events it finished.
func (x *Executive) ProcessNext(ctx context.Context, wait time.Duration) (int, error) {
	res, err := x.ProcessNextResult(ctx, wait)
	return res.Finished, err
}

// ProcessNextResult is ProcessNext returning the batch's result (with its notifications).
func (x *Executive) ProcessNextResult(ctx context.Context, wait time.Duration) (Result, error) {
	batch, err := x.consumer.Next(ctx, x.cfg.BatchSize, wait)
	if err != nil || len(batch.Items) == 0 {
		return Result{}, err
	}
	// A claimed batch is finished even when shutdown starts meanwhile.
	res, err := x.ProcessBatch(context.WithoutCancel(ctx), batch)
	if err != nil {
		x.consumer.MarkUnfinished()
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
	started := time.Now()
	var res Result
	now := x.clock.Now()
	pending, rejected := x.parse(batch, now)

	conn, err := x.pool.GetContext(ctx)
	if err != nil {
		return res, fmt.Errorf("process batch: %w", err)
	}
	defer conn.Close()

	var counts verdictCounts
	var view checkView
	useCache := x.cache.active()
	if useCache {
		defer func() { x.metrics.factsCached.Add(float64(x.cache.batchDone())) }()
	}
	defer func() { counts.flush(x.metrics) }() // not `defer counts.flush`: that would flush the empty slice it had here
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
		facts, cached, err := x.readFacts(ctx, conn, current, now, useCache)
		if err != nil {
			return res, err
		}
		decisions := make([]decision, len(current))
		for i := range current {
			p := &current[i]
			decisions[i] = x.decider.decide(&p.event, p.raw, &facts[i], now.Unix(), p.seq, &view)
		}
		if err := x.decideAgainOnReads(ctx, conn, current, facts, cached, decisions, now, &view); err != nil {
			return res, err
		}
		records := make([]model.Record, 0, len(current)+len(rejected)+2)
		indexes := model.NewIndexes(x.keys, now.Unix())
		for i := range current {
			p := &current[i]
			if cached[i] && decisions[i].record.Guards != nil {
				// the facts said "no maintenance windows" when cached: they still must not exist
				g := model.NoWindowsGuards(x.keys, facts[i].ID)
				decisions[i].record.Guards = append(decisions[i].record.Guards, g[:]...)
			}
			decisions[i].record.Slot = p.slot
			records = append(records, decisions[i].record)
			if decisions[i].touched {
				indexes.Touch(i, p.event.Entity, p.event.Check)
			}
		}
		records = append(records, rejected...)
		if x.cfg.ArchiveEvents && round == 0 {
			records = append(records, x.archiveRecord(batch.Items, now))
		}
		target := x.target
		target.PerMinute, target.PerMinuteTTL = x.keys.EventsPerMinute(now), perMinuteTTL
		target.Indexes = indexes
		if round == 0 && batch.Whole {
			// every claimed item is in this round unless a check has two events: Apply checks
			target.ListLen = len(batch.Items)
		}
		statuses, err := model.Apply(conn, target, records)
		var refused *model.WriteError
		if errors.As(err, &refused) {
			x.metrics.redisErrors.Inc()
			x.log.Error("some writes were refused by Redis; the events are finished anyway",
				zap.Strings("errors", refused.Messages))
		} else if err != nil {
			return res, err
		}
		res.Finished += len(rejected)
		counts.add("invalid", VerdictRejected, len(rejected))
		rejected = nil
		var retry []pendingEvent
		for i, st := range statuses[:len(current)] {
			if useCache {
				x.cache.applied(&current[i].event, &decisions[i], st, cached[i])
			}
			switch st {
			case model.Applied:
				res.Finished++
				x.observe(&current[i].event, &decisions[i], &counts)
				if n := decisions[i].notification; n != nil {
					res.Notifications = append(res.Notifications, *n)
				}
			case model.Conflict:
				x.metrics.conflicts.Inc()
				retry = append(retry, current[i])
			case model.Lost:
				res.Finished++
				x.log.Warn("event was requeued by a peer that judged this instance dead; leaving it to the peer",
					zap.String("check", current[i].event.ID()))
			}
		}
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

// parse validates every claimed item; rejected ones become records that keep the raw payload
// (SPEC 4.2).
func (x *Executive) parse(batch queue.Batch, now time.Time) ([]pendingEvent, []model.Record) {
	pending := make([]pendingEvent, 0, len(batch.Items))
	var rejected []model.Record
	for i, raw := range batch.Items {
		seq := int64(0)
		if batch.FirstSequence > 0 {
			seq = batch.FirstSequence + int64(i)
		}
		ev, err := schema.ParseEventString(raw)
		if err != nil {
			rec := x.rejectRecord(raw, err, now)
			rec.Slot = i
			rejected = append(rejected, rec)
			continue
		}
		pending = append(pending, pendingEvent{raw: raw, seq: seq, slot: i, event: ev})
	}
	return pending, rejected
}

func (x *Executive) rejectRecord(raw string, err error, now time.Time) model.Record {
	reasons := schema.RejectReasons(err)
	x.log.Warn("event rejected", zap.Strings("reasons", reasons), zap.String("event", text.Truncate(raw, 512)))
	rec := model.RejectedRecord(x.keys, model.Rejected{Input: raw, Reasons: reasons}, now, x.cfg.RejectedMaxAge)
	rec.Item, rec.Counter = raw, "invalid"
	return rec
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
func (x *Executive) decideAgainOnReads(ctx context.Context, conn redis.Conn, current []pendingEvent, facts []model.CheckFacts, cached []bool, decisions []decision, now time.Time, view *checkView) error {
	var again []int
	for i := range current {
		if cached[i] && notifiesWithoutHistory(&decisions[i], &facts[i]) {
			again = append(again, i)
		}
	}
	if len(again) == 0 {
		return nil
	}
	reqs := make([]model.FactsRequest, len(again))
	for j, i := range again {
		reqs[j] = factsRequest(&current[i].event)
	}
	read, err := model.ReadFactsWithCheckTags(ctx, conn, x.keys, now, reqs)
	if err != nil {
		return err
	}
	for j, i := range again {
		p := &current[i]
		facts[i], cached[i] = read[j], false
		decisions[i] = x.decider.decide(&p.event, p.raw, &facts[i], now.Unix(), p.seq, view)
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
