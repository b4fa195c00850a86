// Package notifier owns routing: it claims notifications from `notifications`, finds the
// contacts interested in the check, applies each contact's rules (entities, tags, regexes,
// per-severity media and blackholes, time restrictions in the contact's timezone), intervals
// and rollup, and pushes one alert per contact and medium onto that medium's queue. It also runs
// escalation policies: problem notifications start ladders, recoveries and acknowledgements stop
// them, and a tick fires the steps that fall due (escalate.go, tick.go).
//
// Decisions read the contacts' alert state and are written with it in one atomic step, guarded
// by each contact's revision: concurrent notifiers never both page for the same thing, and the
// notification leaves the processing list in the same step, so re-processing after a crash
// never queues an alert twice.
package notifier

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/internal/redisread"
	"github.com/flapjackgo/flapjack/internal/text"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/schema"
	"github.com/flapjackgo/flapjack/timerestriction"
)

// Stage is the notifier's name in instance records and processing lists.
const Stage = "notifier"

// Config holds the notifier settings.
type Config struct {
	Queue string // notifications list name
	// MediaQueues maps a medium to its list (notifier.<medium>_queue); alerts for media not in
	// it are not queued. gateways/media knows every medium's default list.
	MediaQueues     map[string]string
	DefaultTimezone *time.Location
	DefaultInterval time.Duration
	BatchSize       int
	// ExplainEntries caps each check's explain list (executive.explain_entries; 0 = none kept).
	ExplainEntries int
	// RollupSetsOnly keeps contact_alerting_checks only for media with a rollup threshold: the
	// sets of the other media are neither cleaned nor written. Only rollup reads a set, so the
	// alerts are the same; the sets of media without rollup no longer say which checks alert.
	// For scratch replays that compare alerts (whatif), never for a running system.
	RollupSetsOnly bool
}

// DefaultConfig returns the defaults: UTC, 15-minute intervals, and no media (the caller maps
// them, e.g. from media.DefaultQueues).
func DefaultConfig() Config {
	return Config{Queue: "notifications", MediaQueues: map[string]string{}, DefaultTimezone: time.UTC,
		DefaultInterval: 15 * time.Minute, BatchSize: 64, ExplainEntries: 50}
}

// Options wires a Notifier.
type Options struct {
	Pool             *redis.Pool
	Keys             schema.Keys
	Config           Config
	Clock            clock.Clock
	HeartbeatClock   clock.Clock
	Log              *zap.Logger
	Metrics          *Metrics
	Identity         queue.Identity
	Version          string
	Beat             time.Duration
	TimeRestrictions TimeRestrictions
}

// Notifier routes notifications to media queues.
type Notifier struct {
	pool     *redis.Pool
	keys     schema.Keys
	cfg      Config
	clock    clock.Clock
	log      *zap.Logger
	m        *Metrics
	router   *router
	consumer *queue.Consumer
	registry *queue.Registry
	zones    *zoneCache
	nextTick time.Time // when the run loop next fires due escalation steps
	policies policyCache
	rotas    scheduleCache // on-call schedules as decoded (schedules.go)
	// onCallSeries are the schedules flapjack_schedule_on_call has a series for (coverage.go),
	// touched by the run loop's tick only.
	onCallSeries map[string]string
}

// New builds a notifier.
func New(o Options) *Notifier {
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	if o.Metrics == nil {
		o.Metrics = NewMetrics(nil)
	}
	if o.HeartbeatClock == nil {
		o.HeartbeatClock = o.Clock
	}
	if o.Config.DefaultTimezone == nil {
		o.Config.DefaultTimezone = time.UTC
	}
	if o.Config.DefaultInterval <= 0 {
		o.Config.DefaultInterval = 15 * time.Minute
	}
	if o.Config.BatchSize <= 0 {
		o.Config.BatchSize = 1
	}
	if o.TimeRestrictions == nil {
		o.TimeRestrictions = timerestriction.NewCache(4096)
	}
	spec := queue.Spec{Stage: Stage, Source: o.Keys.Queue(o.Config.Queue), End: queue.Left}
	n := &Notifier{
		pool: o.Pool, keys: o.Keys, cfg: o.Config, clock: o.Clock,
		log: o.Log.With(zap.String("stage", Stage)), m: o.Metrics,
		router:   newRouter(o.TimeRestrictions),
		consumer: queue.NewConsumer(o.Pool, o.Keys, spec, o.Identity),
		zones:    newZoneCache(o.Config.DefaultTimezone),
	}
	n.registry = &queue.Registry{Pool: o.Pool, Keys: o.Keys, Spec: spec, ID: o.Identity,
		Clock: o.HeartbeatClock, Version: o.Version, Beat: o.Beat, Log: n.log, Stats: n.m.instanceStats}
	return n
}

// Loop is the notifier's run loop.
func (nt *Notifier) Loop(exitWhenEmpty bool) *queue.Loop {
	return &queue.Loop{Registry: nt.registry, Consumer: nt.consumer, Worker: nt, Log: nt.log,
		ExitWhenEmpty: exitWhenEmpty, OnError: func(error) { nt.m.redisErrors.Inc() }}
}

// Run routes notifications until ctx ends.
func (nt *Notifier) Run(ctx context.Context, exitWhenEmpty bool) error {
	return nt.Loop(exitWhenEmpty).Run(ctx)
}

// Start implements queue.Worker.
func (nt *Notifier) Start(context.Context) error { return nil }

// ProcessNext fires the escalation steps due (at most once per tickEvery), then claims a batch
// and routes it.
func (nt *Notifier) ProcessNext(ctx context.Context, wait time.Duration) (int, error) {
	if err := nt.maybeEscalate(ctx); err != nil {
		return 0, err
	}
	res, err := nt.ProcessNextResult(ctx, wait)
	return res.Finished, err
}

// ProcessNextResult is ProcessNext returning the alerts queued.
func (nt *Notifier) ProcessNextResult(ctx context.Context, wait time.Duration) (Result, error) {
	batch, err := nt.consumer.Next(ctx, nt.cfg.BatchSize, wait)
	if err != nil || len(batch.Items) == 0 {
		return Result{}, err
	}
	// A claimed batch is finished even when shutdown starts meanwhile.
	res, err := nt.ProcessBatch(context.WithoutCancel(ctx), batch)
	if err != nil {
		nt.consumer.MarkUnfinished()
	}
	return res, err
}

// Result summarises a routed batch.
type Result struct {
	Finished int
	Alerts   []schema.Alert
	tidy     []alertingSet // sets the batch's applied problems added to, cleaned after it
}

// maxConflicts bounds re-decisions when other notifiers keep changing the same contacts.
const maxConflicts = 50

// ProcessBatch routes claimed notifications in order (in segments: see routeBatch).
func (nt *Notifier) ProcessBatch(ctx context.Context, batch queue.Batch) (Result, error) {
	conn, err := nt.pool.GetContext(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("route notifications: %w", err)
	}
	defer conn.Close()
	res, err := nt.routeBatch(conn, batch.Items)
	if err == nil {
		nt.tidyAlerting(conn, res.tidy)
	}
	return res, err
}

// routeOne routes one notification on fresh reads, again after a conflict. It returns the alerts
// queued and the alerting sets to tidy.
func (nt *Notifier) routeOne(conn redis.Conn, raw string) ([]schema.Alert, []alertingSet, error) {
	started := time.Now() // wall time, only for flapjack_notifier_routing_seconds
	for attempt := 0; attempt < maxConflicts; attempt++ {
		now := nt.clock.Now()
		plan, err := nt.plan(conn, raw, now)
		if wrongType(err) {
			// retrying cannot help: keep the notification with the reason, as an invalid one
			redisread.Drain(conn)
			plan = nt.reject(raw, fmt.Errorf("cannot be routed: %w", err), now)
		} else if err != nil {
			return nil, nil, err
		}
		statuses, err := nt.apply(conn, []model.Record{plan.record})
		if err != nil {
			return nil, nil, err
		}
		switch statuses[0] {
		case model.Conflict:
			nt.m.conflicts.Inc()
			continue
		case model.Lost:
			nt.log.Warn("notification was requeued by a peer that judged this instance dead; leaving it to the peer")
			return nil, nil, nil
		}
		nt.observe(plan, time.Since(started))
		return plan.alerts, plan.tidy, nil
	}
	return nil, nil, fmt.Errorf("route notification: contacts kept changing under %d re-reads", maxConflicts)
}

// apply writes records, each atomically with the removal of its notification from the
// processing list. Writes Redis refused (a key of the wrong type left by another tool) are
// logged: their notifications are finished anyway, so one bad key never wedges the queue.
func (nt *Notifier) apply(conn redis.Conn, records []model.Record) ([]model.Status, error) {
	statuses, err := model.Apply(conn, model.ApplyTarget{Processing: nt.consumer.ProcessingKey()}, records)
	var refused *model.WriteError
	if errors.As(err, &refused) {
		nt.m.redisErrors.Inc()
		nt.log.Error("some writes were refused by Redis; the notifications are finished anyway",
			zap.Strings("errors", refused.Messages))
		return statuses, nil
	}
	return statuses, err
}

// plan is the full outcome of routing one notification: the writes and the alerts they queue.
type plan struct {
	record       model.Record
	notification *schema.Notification
	alerts       []schema.Alert
	verdict      string // "routed", "no_contacts", "invalid", "marker"
	skipped      []skip
	sent         []skip              // why each alert went out, for explain
	tidy         []alertingSet       // sets of media without rollup the plan adds its check to
	rules        map[string][]string // contact -> what its rules did, for explain

	// escalation: set when the plan fires an escalation step (its alerts carry it)
	escalation      *schema.AlertEscalation
	idSeed          string   // what alert ids are derived from when there is no claimed item
	reason          string   // the escalation decision, for explain
	escalationNotes []string // ladders this notification started, resumed or stopped
	escStarted      int
	escStopped      []string         // reasons
	escFired        int              // step number
	rulesContacts   []roster.Contact // an escalation step's contacts

	contacts []roster.Contact // whom routing found

	// on-call schedules (schedules.go)
	reachedBy     map[string]string // contact id -> the schedule that reached it
	resolutions   []resolution
	scheduleNotes []string
}

// idSource is what alert ids derive from: the notification claimed, or the step fired.
func (p *plan) idSource() string {
	if p.idSeed != "" {
		return p.idSeed
	}
	return p.record.Item
}

// skip records why a contact or medium got nothing, for logs.
type skip struct {
	contact, medium, reason string
}

func (nt *Notifier) plan(conn redis.Conn, raw string, now time.Time) (*plan, error) {
	p := nt.parse(raw, now)
	if p.notification == nil {
		return p, nil
	}
	entity, check := p.notification.EntityCheck()
	routing, err := roster.LoadRouting(conn, nt.keys, entity, check, needsEscalations(p.notification))
	if err != nil {
		return nil, err
	}
	cands, routed, err := nt.route(conn, p, routing, now)
	if err != nil || !routed {
		return p, err
	}
	if err := nt.readCandidates(conn, []*schema.Notification{p.notification}, [][]*candidate{cands}, now); err != nil {
		return nil, err
	}
	nt.settle(p, cands, now)
	return p, nil
}

// parse starts the plan of a claimed item: a shutdown marker or a notification that cannot be
// parsed is planned completely (no notification), a parsed one is left to routing.
func (nt *Notifier) parse(raw string, now time.Time) *plan {
	p := &plan{record: model.Record{Item: raw}}
	if isShutdownMarker(raw) {
		p.verdict = "marker"
		return p
	}
	n, err := schema.ParseNotification([]byte(raw))
	if err != nil {
		return nt.reject(raw, err, now)
	}
	p.notification = &n
	return p
}

// reject plans a notification that cannot be routed: it is kept, with the reason, in the
// queue's failed list.
func (nt *Notifier) reject(raw string, reason error, now time.Time) *plan {
	p := &plan{record: model.Record{Item: raw}, verdict: "invalid"}
	nt.log.Error("notification rejected", zap.Error(reason), zap.String("notification", text.Truncate(raw, 300)))
	rec, _ := json.Marshal(map[string]any{"error": reason.Error(), "notification": raw, "failed_at": now.Unix()})
	checkstate.KeepFailedNotification(&p.record, nt.keys, nt.cfg.Queue, rec)
	return p
}

// wrongType reports whether err is Redis refusing a command on a key of the wrong type (left by
// another tool): reading again gives the same answer. Redis starts the reply with WRONGTYPE; the
// embedded server of `make run` wraps an error inside a script in one of its own.
func wrongType(err error) bool {
	var e redis.Error
	return errors.As(err, &e) && strings.Contains(string(e), "WRONGTYPE")
}

// route applies what routing read: the escalation ladders (read here when there are any) and
// every contact's rules. It returns the candidates to read the suppressions of, and whether the
// plan is still to be settled (false: nobody to tell, the plan is complete).
func (nt *Notifier) route(conn redis.Conn, p *plan, routing roster.Routing, now time.Time) ([]*candidate, bool, error) {
	n := p.notification
	entity, check := n.EntityCheck()
	contacts := routing.Contacts
	esc, err := nt.readEscalations(conn, n, entity, check, routing)
	if err != nil {
		return nil, false, fmt.Errorf("read escalations: %w", err)
	}
	if esc != nil && isRecoveryOrAck(n) {
		if contacts, err = nt.withAlerted(conn, contacts, esc); err != nil {
			return nil, false, err
		}
	}
	contacts = nt.withSchedules(p, routing, contacts, now)
	nt.planEscalations(p, esc, now)
	p.contacts = contacts
	if len(contacts) == 0 {
		p.verdict = "no_contacts"
		nt.recordExplain(p, nil, now)
		return nil, false, nil
	}
	p.verdict = "routed"
	return nt.candidates(p, contacts, entity, now), true, nil
}

// settle decides on the read candidates: the alerts, the writes and the explain record.
func (nt *Notifier) settle(p *plan, cands []*candidate, now time.Time) {
	nt.decide(p, p.contacts, cands, now)
	nt.rememberScheduled(p)
	nt.recordExplain(p, p.contacts, now)
}

// candidate is one contact's medium that the rules chose and the contact has an address for.
type candidate struct {
	contact *roster.Contact
	medium  string
	address string
	// filled by the reads:
	suppressed      bool
	suppressedUntil int64 // when the notifier's own interval ends (0: a drop_alerts key says so)
	throttled       bool
	alerting        *alertingState // read when the medium rolls up: rollup decides on the set
	interval        int64
}

// candidates applies the rules of every contact (docs/flapjack-1x.md 3.4 steps 1-7, 9).
func (nt *Notifier) candidates(p *plan, contacts []roster.Contact, entity string, now time.Time) []*candidate {
	n := p.notification
	var out []*candidate
	for i := range contacts {
		c := &contacts[i]
		loc := nt.zones.location(c.Timezone, func(err error) {
			nt.log.Warn("contact timezone unknown; using the default", zap.String("contact", c.ID), zap.Error(err))
		})
		r := nt.router.route(c, n, entity, now, loc)
		if p.rules == nil {
			p.rules = make(map[string][]string, len(contacts))
		}
		p.rules[c.ID] = r.notes
		for _, problem := range r.problems {
			nt.m.ruleProblems.Inc()
			nt.log.Error("notification rule skipped", zap.String("contact", c.ID), zap.String("problem", problem))
		}
		if r.blackholed {
			p.skipped = append(p.skipped, skip{contact: c.ID, reason: "blackholed: a matching rule drops " + n.Severity})
			continue
		}
		if len(r.media) == 0 {
			p.skipped = append(p.skipped, skip{contact: c.ID, reason: "no rule selects a medium for severity " + n.Severity})
			continue
		}
		for _, m := range r.media {
			addr := c.Media[m]
			if addr == "" {
				p.skipped = append(p.skipped, skip{contact: c.ID, medium: m, reason: "no address for this medium"})
				continue
			}
			interval := c.Intervals[m]
			if interval <= 0 {
				interval = int64(nt.cfg.DefaultInterval / time.Second)
			}
			out = append(out, &candidate{contact: c, medium: m, address: addr, interval: interval})
		}
	}
	return out
}

// isRecoveryOrAck: notifications that bypass and reset intervals.
func isRecoveryOrAck(n *schema.Notification) bool {
	return n.Type == schema.NotificationRecovery || n.Type == schema.NotificationAcknowledgement
}

// probe is one key whose existence suppresses a candidate (or throttles its rollup).
type probe struct {
	c      *candidate
	key    string
	rollup bool // the rollup throttle, not the interval
}

// suppressionProbes settles what contact_alert_state says of cands and lists the keys whose
// existence decides the rest.
func (nt *Notifier) suppressionProbes(n *schema.Notification, cands []*candidate, now time.Time) []probe {
	var probes []probe
	for _, c := range cands {
		suppress, throttle := nt.suppressionKeys(n, c, now)
		for _, k := range suppress {
			probes = append(probes, probe{c: c, key: k})
		}
		for _, k := range throttle {
			probes = append(probes, probe{c: c, key: k, rollup: true})
		}
	}
	return probes
}

// suppressionKeys settles what contact_alert_state says of a candidate (docs/flapjack-1x.md 3.4 step 8:
// the notifier's own suppressions end at the time kept there) and returns the keys whose
// existence suppresses it or throttles its rollup: the documented drop_alerts_for_contact keys
// count by existence only when set by someone else (manual hooks).
func (nt *Notifier) suppressionKeys(n *schema.Notification, c *candidate, now time.Time) (suppress, throttle []string) {
	cid := c.contact.ID
	suppress = []string{nt.keys.DropAlerts(cid), nt.keys.DropAlerts(cid, c.medium), nt.keys.DropAlerts(cid, c.medium, n.EventID)}
	field := schema.DropField(c.medium, n.EventID, n.State)
	if until, ok := c.contact.SuppressedUntil[field]; ok {
		c.suppressed = until > now.Unix()
		c.suppressedUntil = until
	} else {
		suppress = append(suppress, nt.keys.DropAlerts(cid, c.medium, n.EventID, n.State))
	}
	rollupField := schema.RollupDropField(c.medium)
	if until, ok := c.contact.SuppressedUntil[rollupField]; ok {
		c.throttled = until > now.Unix()
	} else {
		throttle = []string{nt.keys.DropRollupAlerts(cid, c.medium)}
	}
	return suppress, throttle
}

// readCandidates finds which candidates an interval suppresses or a rollup throttles, and reads
// the alerting sets of rollup media (tracks) of those contact_alert_state does not suppress, in
// one round trip for all of ns (cands[i] are ns[i]'s candidates); then what cleaning those sets
// needs, in one more (cleanAlerting). A set is read even when a drop_alerts_for_contact key turns
// out to suppress its candidate, and then dropped: only manual hooks set those keys, so that is
// rare, and waiting for them would cost every notification a round trip.
func (nt *Notifier) readCandidates(conn redis.Conn, ns []*schema.Notification, cands [][]*candidate, now time.Time) error {
	reads := make([]*candidateReads, len(ns))
	var gathered roster.StateReads
	for i, n := range ns {
		if len(cands[i]) > 0 {
			reads[i] = nt.candidateReads(n, cands[i], now)
			gathered.Add(reads[i].keys(), reads[i].sets())
		}
	}
	replies, err := gathered.Run(conn, nt.keys)
	if err != nil || replies == nil {
		return err
	}
	var cleanings []cleaning
	k := 0
	for i, r := range reads {
		if r == nil {
			continue
		}
		r.took(replies[k])
		k++
		cleanings = append(cleanings, cleaning{n: ns[i], tracked: r.kept})
	}
	return nt.cleanAlerting(conn, cleanings, now)
}

// candidateReads are one notification's reads of readCandidates: the probes of interval keys
// and the candidates whose alerting sets rollup decides on.
type candidateReads struct {
	probes  []probe
	tracked []*candidate
	kept    []*candidate // after took: the tracked candidates not suppressed, their sets read
}

// candidateReads settles what contact_alert_state says and lists the rest of the reads: whether
// each probe's key exists, the alerting set of each candidate rollup decides on.
func (nt *Notifier) candidateReads(n *schema.Notification, cands []*candidate, now time.Time) *candidateReads {
	r := &candidateReads{probes: nt.suppressionProbes(n, cands, now)}
	for _, c := range cands {
		if !c.suppressed && nt.tracks(c) {
			r.tracked = append(r.tracked, c)
		}
	}
	return r
}

func (r *candidateReads) keys() []string {
	keys := make([]string, len(r.probes))
	for i, pr := range r.probes {
		keys[i] = pr.key
	}
	return keys
}

func (r *candidateReads) sets() []roster.AlertingSet {
	sets := make([]roster.AlertingSet, len(r.tracked))
	for i, c := range r.tracked {
		sets[i] = roster.AlertingSet{ContactID: c.contact.ID, Medium: c.medium}
	}
	return sets
}

// took takes the reads' reply: the candidates of probes whose keys exist are suppressed, the
// others tracked get the alerting set read.
func (r *candidateReads) took(reply roster.StateReply) {
	for i, pr := range r.probes {
		if reply.Exists[i] {
			pr.found()
		}
	}
	for i, c := range r.tracked {
		if c.suppressed {
			continue
		}
		c.alerting = &alertingState{members: reply.Members[i]}
		if rolls(c) {
			c.alerting.threshold = c.contact.RollupThresholds[c.medium]
		}
		r.kept = append(r.kept, c)
	}
}

// found marks the candidate of a probe whose key exists.
func (pr probe) found() {
	if pr.rollup {
		pr.c.throttled = true
	} else {
		pr.c.suppressed = true
	}
}

func (nt *Notifier) observe(p *plan, took time.Duration) {
	typ := "invalid"
	if p.notification != nil {
		typ = p.notification.Type
	}
	nt.m.notifications.WithLabelValues(typ, p.verdict).Inc()
	nt.m.latency.Observe(took.Seconds())
	nt.m.processed.Add(1)
	nt.observeEscalation(p)
	nt.observeSchedules(p)
	if p.notification == nil {
		return
	}
	for _, note := range p.escalationNotes {
		nt.log.Info(note, zap.String("check", p.notification.EventID))
	}
	for _, s := range p.skipped {
		if ce := nt.log.Check(zap.DebugLevel, "no alert"); ce != nil {
			ce.Write(zap.String("check", p.notification.EventID), zap.String("contact", s.contact),
				zap.String("medium", s.medium), zap.String("reason", s.reason))
		}
	}
	if p.verdict == "no_contacts" {
		nt.log.Info("no contacts for check", zap.String("check", p.notification.EventID), zap.String("type", p.notification.Type))
	}
	nt.observeAlerts(p)
}

// observeEscalation counts the ladders a plan started, stopped and moved on.
func (nt *Notifier) observeEscalation(p *plan) {
	nt.m.escalationsStarted.Add(float64(p.escStarted))
	for _, r := range p.escStopped {
		nt.m.escalationsStopped.WithLabelValues(r).Inc()
		if p.notification != nil {
			nt.log.Info("escalation stopped", zap.String("check", p.notification.EventID), zap.String("reason", r))
		}
	}
	if p.escFired > 0 {
		nt.m.escalationSteps.WithLabelValues(strconv.Itoa(p.escFired)).Inc()
	}
}

// observeAlerts counts and logs the alerts a plan queued.
func (nt *Notifier) observeAlerts(p *plan) {
	for _, a := range p.alerts {
		rollup := schema.Deref(a.Rollup)
		nt.m.alerts.WithLabelValues(a.Media, a.NotificationType, rollupLabel(rollup)).Inc()
		fields := []zap.Field{zap.String("check", a.EventID), zap.String("type", a.NotificationType),
			zap.String("contact", a.ContactID), zap.String("medium", a.Media), zap.String("rollup", rollup)}
		if a.Media != "pagerduty" { // a PagerDuty address is a routing key: a secret
			fields = append(fields, zap.String("address", a.Address))
		}
		nt.log.Info("alert queued", fields...)
	}
}

func rollupLabel(r string) string {
	if r == "" {
		return "none"
	}
	return r
}

func isShutdownMarker(raw string) bool {
	var m struct {
		Type string `json:"type"`
	}
	return len(raw) < 64 && json.Unmarshal([]byte(raw), &m) == nil && m.Type == "shutdown"
}

// alertID is "<hash>-<secs>.<usecs>" as Flapjack's message ids: unique per message and stable
// for a given notification, contact, medium and instant (replays print the same ids).
func alertID(raw, contact, medium string, now time.Time) string {
	h := sha1.New()
	h.Write([]byte(raw))
	h.Write([]byte{0})
	h.Write([]byte(contact))
	h.Write([]byte{0})
	h.Write([]byte(medium))
	return hex.EncodeToString(h.Sum(nil)[:6]) + "-" + strconv.FormatInt(now.Unix(), 10) + "." +
		fmt.Sprintf("%06d", now.Nanosecond()/1000)
}

// zoneCache loads timezones once.
type zoneCache struct {
	mu    sync.Mutex
	def   *time.Location
	zones map[string]*time.Location
}

func newZoneCache(def *time.Location) *zoneCache {
	return &zoneCache{def: def, zones: map[string]*time.Location{}}
}

func (z *zoneCache) location(name string, onError func(error)) *time.Location {
	if name == "" {
		return z.def
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	if loc, ok := z.zones[name]; ok {
		return loc
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		onError(err)
		loc = z.def
	}
	z.zones[name] = loc
	return loc
}
