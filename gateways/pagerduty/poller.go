package pagerduty

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/events"
	"github.com/flapjackgo/flapjack/gateways/internal/httpsend"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/schema"
)

// AckSummary is the summary of the acknowledgement events the poller pushes; " by <name>" is
// added when PagerDuty names the acknowledger.
const AckSummary = "Acknowledged on PagerDuty"

// PendingAckHold is how long pollers (of every instance: the queued acknowledgements are kept in
// Redis, pagerduty_acks_queued) wait before pushing a second acknowledgement for a check whose
// first one the executive has not applied yet (the check still shows failing and
// unacknowledged, e.g. while the events queue has a backlog).
const PendingAckHold = 5 * time.Minute

// untilAhead is how far past now incidents are asked for (Flapjack: one day), against clock skew.
const untilAhead = 24 * time.Hour

// factsBatch is how many checks' facts are read per round trip.
const factsBatch = 100

// AckPollerOptions wire an AckPoller.
type AckPollerOptions struct {
	Config Config
	Pool   *redis.Pool
	Keys   schema.Keys
	// EventsQueue is the list acknowledgement events are pushed onto: the executive's queue
	// (executive.queue, default "events").
	EventsQueue string
	// Clock decides since/until and whether a check is acknowledged; default the wall clock.
	Clock clock.Clock
	// HTTPClient sends the REST queries; nil: a client on a clone of the default transport.
	HTTPClient *http.Client
	Log        *zap.Logger
	Metrics    *Metrics
}

// AckPoller brings acknowledgements made in PagerDuty back into flapjack (docs/flapjack-1x.md 4.2):
// every Config.AckPollInterval it looks at each failing, unacknowledged check with PagerDuty
// contacts, asks PagerDuty whether the check's incident (incident key DedupKey(ENTITY:CHECK)) is
// acknowledged, and if so pushes one acknowledgement event for the check onto the events
// queue, which the executive applies like any acknowledgement.
//
// Pollers on every instance share one lock in Redis (sem_pagerduty_acks_running): one runs at
// a time, and a run ending leaves the time the next one is due (by the injected clock), so the
// instances together ask PagerDuty about once per interval rather than once each. They also
// share what they queued (pagerduty_acks_queued): a check whose acknowledgement event waits for
// the executive is left alone by all of them for PendingAckHold, and each event is claimed there
// atomically before it is pushed, so even overlapping runs queue it once.
type AckPoller struct {
	cfg    Config
	pool   *redis.Pool
	keys   schema.Keys
	events *events.Publisher
	clock  clock.Clock
	api    incidentQuerier
	log    *zap.Logger
	m      *Metrics
}

// NewAckPoller validates the configuration and builds a poller.
func NewAckPoller(o AckPollerOptions) (*AckPoller, error) {
	if err := o.Config.Validate(); err != nil {
		return nil, err
	}
	if o.Pool == nil {
		return nil, errors.New("pagerduty: the acknowledgement poller needs a Redis pool")
	}
	p := &AckPoller{cfg: o.Config.withDefaults(), pool: o.Pool, keys: o.Keys,
		events: events.NewPublisher(o.Pool, o.Keys, o.EventsQueue), clock: o.Clock, log: o.Log, m: o.Metrics}
	if p.clock == nil {
		p.clock = clock.Real{}
	}
	if p.log == nil {
		p.log = zap.NewNop()
	}
	if p.m == nil {
		p.m = NewMetrics(nil)
	}
	client := o.HTTPClient
	if client == nil {
		client = newHTTPClient()
	}
	p.api = incidentQuerier{cfg: p.cfg, client: client}
	p.log = p.log.With(zap.String("component", "pagerduty_ack_poller"))
	return p, nil
}

// Run polls every Config.AckPollInterval (the first time at once) until ctx ends; a run in
// progress is cut short at that point. With polling disabled (interval 0) it only waits for
// ctx. It returns nil when ctx ends: failures are logged and counted, and the next poll tries
// again.
func (p *AckPoller) Run(ctx context.Context) error {
	if p.cfg.AckPollInterval <= 0 {
		p.log.Info("polling PagerDuty for acknowledgements is disabled (gateways.pagerduty.ack_poll_interval is 0)")
		<-ctx.Done()
		return nil
	}
	p.log.Info("polling PagerDuty for acknowledgements", zap.Duration("interval", p.cfg.AckPollInterval))
	ticker := time.NewTicker(p.cfg.AckPollInterval)
	defer ticker.Stop()
	for {
		if _, err := p.RunOnce(ctx); err != nil && ctx.Err() == nil {
			p.log.Error("acknowledgement poll failed", zap.Error(err))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// RunResult tells what one run did.
type RunResult struct {
	// Skipped is RunLocked when another poller was running, RunRecent when a poller (here or
	// on another instance) ran less than a poll interval ago; nothing was done then.
	Skipped string
	// Checked is the number of checks whose incidents were asked for.
	Checked int
	// Enqueued lists the checks (ENTITY:CHECK) an acknowledgement event was pushed for.
	Enqueued []string
	// Errors counts the checks or requests that failed (logged; the run went on).
	Errors int
}

// RunOnce takes the lock and, if it got it, looks once at every failing check. The lock then
// keeps every poller from starting another run until (nine tenths of) a poll interval has
// passed, by the injected clock, since this one started. With polling disabled (interval 0)
// nothing is kept: each call runs if no other run is in progress.
func (p *AckPoller) RunOnce(ctx context.Context) (RunResult, error) {
	started := p.clock.Now()
	l, outcome, err := tryLock(ctx, p.pool, p.keys.PagerdutyAcksLock(), started, p.cfg.AckLockTTL)
	if err != nil {
		p.m.runs.WithLabelValues(RunFailed).Inc()
		p.m.errors.WithLabelValues(ErrorRedis).Inc()
		return RunResult{}, err
	}
	switch outcome {
	case lockBusy:
		p.m.runs.WithLabelValues(RunLocked).Inc()
		p.log.Debug("another poller is looking for acknowledgements; skipping this run")
		return RunResult{Skipped: RunLocked}, nil
	case lockRecent:
		p.m.runs.WithLabelValues(RunRecent).Inc()
		p.log.Debug("acknowledgements were looked for less than an interval ago; skipping this run")
		return RunResult{Skipped: RunRecent}, nil
	}
	defer func() {
		var next time.Time
		if p.cfg.AckPollInterval > 0 {
			// A tenth early: the tickers of this and other pollers jitter, and a tick that
			// came a millisecond before the due time would otherwise skip a whole interval.
			next = started.Add(p.cfg.AckPollInterval * 9 / 10)
		}
		keep := max(p.cfg.AckLockTTL, 2*p.cfg.AckPollInterval)
		if released, err := l.release(context.WithoutCancel(ctx), next, keep); err != nil {
			p.m.errors.WithLabelValues(ErrorRedis).Inc()
			p.log.Warn("cannot release the acknowledgement poller's lock; it expires by itself", zap.Error(err),
				zap.Duration("ttl", p.cfg.AckLockTTL))
		} else if !released {
			p.log.Warn("the acknowledgement poller's lock had expired before the run ended")
		}
	}()
	// Stop well before the lock could expire under a slow run, so two never overlap.
	runCtx, cancel := context.WithTimeout(ctx, p.cfg.AckLockTTL*9/10)
	defer cancel()
	wall := time.Now()
	res, err := p.run(runCtx, started)
	if err != nil {
		p.m.runs.WithLabelValues(RunFailed).Inc()
		return res, err
	}
	p.m.runs.WithLabelValues(RunCompleted).Inc()
	p.m.duration.Observe(time.Since(wall).Seconds())
	if len(res.Enqueued) > 0 || res.Errors > 0 {
		p.log.Info("acknowledgement poll done", zap.Int("checked", res.Checked),
			zap.Int("acknowledged", len(res.Enqueued)), zap.Int("errors", res.Errors))
	}
	return res, nil
}

// candidate is a failing, unacknowledged check with the PagerDuty credentials of its contacts.
type candidate struct {
	id, entity, check string
	creds             []roster.PagerdutyCredentials
}

func (p *AckPoller) run(ctx context.Context, now time.Time) (RunResult, error) {
	var res RunResult
	queued, err := p.readQueued(ctx)
	if err != nil {
		p.m.errors.WithLabelValues(ErrorRedis).Inc()
		return res, err
	}
	ids, err := p.failedChecks(ctx)
	if err != nil {
		p.m.errors.WithLabelValues(ErrorRedis).Inc()
		return res, err
	}
	candidates, settled, errs := p.candidates(ctx, ids, now, queued)
	res.Errors += errs
	// Forget acknowledgements that were applied (or became moot: a later failure may be
	// acknowledged again), and those queued longer than the hold ago, including those of checks
	// that left failed_checks.
	for id := range queued {
		if !queued.held(id, now) {
			settled[id] = queued[id]
		}
	}
	if err := p.forget(ctx, settled); err != nil {
		res.Errors++
		p.m.errors.WithLabelValues(ErrorRedis).Inc()
		p.log.Warn("cannot forget queued acknowledgements", zap.Error(err))
	}
	// Credentials PagerDuty refused (401, 403, 429) are not used again in this run.
	refused := map[roster.PagerdutyCredentials]bool{}
	since, until := now.Add(-p.cfg.SinceWindow), now.Add(untilAhead)
	for _, c := range candidates {
		if ctx.Err() != nil {
			return res, fmt.Errorf("acknowledgement poll stopped after %d checks: %w", res.Checked, ctx.Err())
		}
		res.Checked++
		found, by, errs := p.lookup(ctx, c, since, until, refused)
		res.Errors += errs
		if !found {
			continue
		}
		pushed, err := p.enqueue(ctx, c, by)
		if err != nil {
			res.Errors++
			p.m.errors.WithLabelValues(ErrorRedis).Inc()
			p.log.Error("cannot push an acknowledgement event", zap.String("check", c.id), zap.Error(err))
			continue
		}
		if pushed {
			res.Enqueued = append(res.Enqueued, c.id)
		}
	}
	return res, nil
}

func (p *AckPoller) failedChecks(ctx context.Context) ([]string, error) {
	conn, err := p.pool.GetContext(ctx)
	if err != nil {
		return nil, fmt.Errorf("list failed checks: %w", err)
	}
	defer conn.Close()
	ids, err := redis.Strings(conn.Do("ZRANGE", p.keys.FailedChecks(), 0, -1))
	if err != nil {
		return nil, fmt.Errorf("list failed checks: %w", err)
	}
	return ids, nil
}

// candidates keeps the checks that are failing and unacknowledged at now, with no
// acknowledgement of a poller still on its way, and have contacts with a PagerDuty address and
// usable credentials. settled holds the queued acknowledgements of checks found acknowledged or
// no longer failing.
func (p *AckPoller) candidates(ctx context.Context, ids []string, now time.Time, queued queuedAcks) (out []candidate, settled queuedAcks, errs int) {
	settled = queuedAcks{}
	for start := 0; start < len(ids); start += factsBatch {
		batch := ids[start:min(start+factsBatch, len(ids))]
		var reqs []checkstate.FactsRequest
		for _, id := range batch {
			entity, check, ok := schema.SplitCheckID(id)
			if !ok {
				p.log.Warn("failed_checks has a member that is not ENTITY:CHECK", zap.String("member", id))
				continue
			}
			reqs = append(reqs, checkstate.FactsRequest{Entity: entity, Check: check, Mode: checkstate.ModeEventOK})
		}
		facts, err := p.readFacts(ctx, now, reqs)
		if err != nil {
			errs++
			p.m.errors.WithLabelValues(ErrorRedis).Inc()
			p.log.Error("cannot read failing checks", zap.Int("checks", len(reqs)), zap.Error(err))
			continue
		}
		for _, f := range facts {
			if !unacknowledgedFailure(f, now) {
				if raw, ok := queued[f.ID]; ok {
					settled[f.ID] = raw
				}
				continue
			}
			if queued.held(f.ID, now) {
				continue
			}
			creds, err := p.credentials(ctx, f.Entity, f.Check)
			if err != nil {
				errs++
				p.m.errors.WithLabelValues(ErrorRedis).Inc()
				p.log.Error("cannot read the contacts of a check", zap.String("check", f.ID), zap.Error(err))
				continue
			}
			if len(creds) == 0 {
				continue
			}
			out = append(out, candidate{id: f.ID, entity: f.Entity, check: f.Check, creds: creds})
		}
	}
	return out, settled, errs
}

func (p *AckPoller) readFacts(ctx context.Context, now time.Time, reqs []checkstate.FactsRequest) ([]checkstate.CheckFacts, error) {
	conn, err := p.pool.GetContext(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return checkstate.ReadFacts(conn, p.keys, now, reqs)
}

// unacknowledgedFailure reports a check in a failing state, outside unscheduled maintenance
// (an acknowledgement) at now.
func unacknowledgedFailure(f checkstate.CheckFacts, now time.Time) bool {
	return schema.IsFailure(f.State) && !f.UnscheduledMaintenance.Covers(now.Unix())
}

// credentials collects the distinct PagerDuty credentials of the check's contacts that have a
// PagerDuty address and usable credentials, in contact order.
func (p *AckPoller) credentials(ctx context.Context, entity, check string) ([]roster.PagerdutyCredentials, error) {
	conn, err := p.pool.GetContext(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	ids, err := roster.ContactIDsFor(conn, p.keys, entity, check)
	if err != nil {
		return nil, err
	}
	contacts, err := roster.LoadContacts(conn, p.keys, ids)
	if err != nil {
		return nil, err
	}
	seen := map[roster.PagerdutyCredentials]bool{}
	var out []roster.PagerdutyCredentials
	for _, c := range contacts {
		if c.Media[Medium] == "" || !c.Pagerduty.Present() || seen[c.Pagerduty] {
			continue
		}
		seen[c.Pagerduty] = true
		out = append(out, c.Pagerduty)
	}
	return out, nil
}

// lookup asks PagerDuty with each credential set of the check until one finds an acknowledged
// incident (Flapjack used only the first set).
func (p *AckPoller) lookup(ctx context.Context, c candidate, since, until time.Time,
	refused map[roster.PagerdutyCredentials]bool) (found bool, by string, errs int) {
	for _, cred := range c.creds {
		if refused[cred] {
			continue
		}
		r, err := p.api.acknowledged(ctx, cred, DedupKey(c.id), since, until)
		if err != nil {
			if ctx.Err() != nil {
				return false, "", errs
			}
			errs++
			p.m.errors.WithLabelValues(ErrorAPI).Inc()
			var ae *apiError
			if errors.As(err, &ae) && ae.refused {
				refused[cred] = true
			}
			p.log.Warn("cannot ask PagerDuty for acknowledged incidents", zap.String("check", c.id),
				zap.String("subdomain", cred.Subdomain), zap.String("auth", authKind(cred)), zap.Error(err))
			continue
		}
		if r.found {
			return true, r.by, errs
		}
	}
	return false, "", errs
}

func authKind(c roster.PagerdutyCredentials) string {
	if c.Token != "" {
		return "token " + httpsend.Redact(c.Token)
	}
	return "basic"
}

// enqueue pushes the acknowledgement event, unless the check was acknowledged or recovered
// while PagerDuty was being asked, or another poller queued one meanwhile (the claim in
// pagerduty_acks_queued decides, atomically).
func (p *AckPoller) enqueue(ctx context.Context, c candidate, by string) (bool, error) {
	now := p.clock.Now()
	facts, err := p.readFacts(ctx, now, []checkstate.FactsRequest{{Entity: c.entity, Check: c.check, Mode: checkstate.ModeEventOK}})
	if err != nil {
		return false, err
	}
	if !unacknowledgedFailure(facts[0], now) {
		return false, nil
	}
	claimed, err := p.claim(ctx, c.id, now)
	if err != nil || !claimed {
		return false, err
	}
	ev := schema.Event{Entity: c.entity, Check: c.check, Type: schema.TypeAction, State: schema.StateAcknowledgement,
		Summary: AckSummary, Duration: int64(p.cfg.AckDuration / time.Second), HasDuration: true}
	if by != "" {
		ev.Summary += " by " + by
	}
	if _, err := p.events.Publish(ctx, ev); err != nil {
		// Not queued: let the next run try again rather than hold it off.
		if ferr := p.forget(context.WithoutCancel(ctx), queuedAcks{c.id: strconv.FormatInt(now.UnixMilli(), 10)}); ferr != nil {
			p.log.Warn("cannot withdraw the claim of an acknowledgement that was not queued; it is held off until the hold ends",
				zap.String("check", c.id), zap.Error(ferr))
		}
		return false, fmt.Errorf("push acknowledgement event: %w", err)
	}
	p.m.acks.Inc()
	p.log.Info("incident acknowledged on PagerDuty: acknowledgement event queued", zap.String("check", c.id),
		zap.String("by", by), zap.Duration("duration", p.cfg.AckDuration))
	return true, nil
}
