package oobetet

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/events"
	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/gateways/internal/httpsend"
	"github.com/flapjackgo/flapjack/gateways/pagerduty"
	"github.com/flapjackgo/flapjack/internal/humantime"
	"github.com/flapjackgo/flapjack/schema"
)

// Options wire a Watcher.
type Options struct {
	Config Config
	// PagerDuty is where and how the alarm is paged (gateways.pagerduty.events_base_url,
	// timeout, use_v1_events); only used when Config.PagerDutyContact is set.
	PagerDuty pagerduty.Config
	// HTTPClient sends the PagerDuty events; nil: pagerduty.Sender's default.
	HTTPClient *http.Client
	// Events queues the injected canary events; required when Config.InjectInterval is set.
	Events *events.Publisher
	// Clock is the time of every sighting and decision; default the wall clock. The ticker
	// that looks at it is a real one.
	Clock clock.Clock
	Log   *zap.Logger
	// Metrics default to unregistered ones.
	Metrics *Metrics
	// Connected, when set, follows the connection too (the gateways'
	// flapjack_gateway_connected{medium="oobetet"}).
	Connected prometheus.Gauge
	Version   string
	// CheckEvery is the time between two looks at the clock; default a tenth of max_latency,
	// at most 10s.
	CheckEvery time.Duration
}

// Watcher is oobetet: run it once with Run; Health may be called at any time.
type Watcher struct {
	cfg        Config
	clock      clock.Clock
	log        *zap.Logger
	m          *Metrics
	connected  prometheus.Gauge
	conn       *roomConn
	sender     *pagerduty.Sender // nil: no pagerduty_contact
	events     *events.Publisher
	checkEvery time.Duration
	host       string
	running    atomic.Bool
	// ticks counts the completed looks at the clock: a caller that moved an injected clock can
	// tell when the watcher has decided (and delivered) at the new time.
	ticks atomic.Int64

	mu     sync.Mutex
	watch  Watch
	breach breach
	// Injection schedule (tick goroutine only).
	nextFailure, recoveryDue time.Time
}

// breach is the open breach and what is still owed for it: each alarm is delivered once, and
// retried on the next tick while it fails for a reason that may pass (PagerDuty unreachable,
// XMPP disconnected).
type breach struct {
	since  time.Time
	reason string
	// Owed deliveries.
	pageTrigger, pageResolve, sayTrigger, sayResolve bool
	// paged: PagerDuty accepted the trigger (a resolve is owed on recovery); said: the rooms
	// were told.
	paged, said bool
}

// New validates the configuration and builds the Watcher; it connects only when Run is called.
// The latencies count from now: a canary that never alerts is a breach max_latency after New.
func New(o Options) (*Watcher, error) {
	if err := o.Config.Validate(); err != nil {
		return nil, err
	}
	cfg := o.Config.withDefaults()
	if cfg.InjectInterval > 0 && o.Events == nil {
		return nil, errors.New("gateways.oobetet.inject_interval is set but there is no events publisher to inject with")
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	if o.Metrics == nil {
		o.Metrics = NewMetrics(nil)
	}
	if o.CheckEvery <= 0 {
		o.CheckEvery = cfg.checkEvery()
	}
	log := o.Log.With(zap.String("stage", Name))
	w := &Watcher{cfg: cfg, clock: o.Clock, log: log, m: o.Metrics, connected: o.Connected, events: o.Events,
		checkEvery: o.CheckEvery, host: hostname(), watch: Watch{MaxLatency: cfg.MaxLatency, Since: o.Clock.Now()}}
	if cfg.PagerDutyContact != "" {
		s, err := pagerduty.NewSender(pagerduty.SenderOptions{Config: o.PagerDuty, HTTPClient: o.HTTPClient, Log: log})
		if err != nil {
			return nil, err
		}
		w.sender = s
	}
	w.conn = newRoomConn(cfg, o.Version, log)
	w.conn.heard = w.heard
	w.conn.greeting = w.greeting
	w.conn.changed = w.setConnected
	w.setConnected(false)
	return w, nil
}

// Run watches until ctx ends: the XMPP connection on one goroutine, the ticker on this one. It
// returns nil when ctx ends.
func (w *Watcher) Run(ctx context.Context) error {
	if !w.running.CompareAndSwap(false, true) {
		return errors.New("oobetet: Run called twice")
	}
	defer w.running.Store(false)
	w.log.Info("oobetet watching", zap.String("check", w.watchedID()), zap.Strings("rooms", w.cfg.Rooms),
		zap.Duration("max_latency", w.cfg.MaxLatency), zap.Bool("pagerduty", w.sender != nil),
		zap.Duration("inject_interval", w.cfg.InjectInterval))
	connDone := make(chan struct{})
	go func() {
		defer close(connDone)
		w.conn.run(ctx)
	}()
	ticker := time.NewTicker(w.checkEvery)
	defer ticker.Stop()
	for {
		w.tick(ctx)
		select {
		case <-ctx.Done():
			<-connDone
			w.log.Info("oobetet stopped")
			return nil
		case <-ticker.C:
		}
	}
}

// Health is nil while oobetet is connected and in no breach; otherwise it says what is wrong.
// It suits a /readyz-style check.
func (w *Watcher) Health() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	var errs []error
	if w.watch.Breached() {
		errs = append(errs, fmt.Errorf("oobetet: alerts of %s not getting through since %s: %s", w.watchedID(),
			w.breach.since.UTC().Format(time.RFC3339), w.breach.reason))
	}
	if !w.conn.connected() {
		errs = append(errs, fmt.Errorf("oobetet: %w", errNotConnected))
	}
	return errors.Join(errs...)
}

func (w *Watcher) watchedID() string { return schema.CheckID(w.cfg.WatchedEntity, w.cfg.WatchedCheck) }

// heard records a room message that is an alert of the watched check.
func (w *Watcher) heard(room, nick, text string) {
	kind := Match(text, w.cfg.WatchedEntity, w.cfg.WatchedCheck)
	if kind == None {
		return
	}
	now := w.clock.Now()
	w.mu.Lock()
	w.watch.See(kind, now)
	w.mu.Unlock()
	w.m.lastSeen.WithLabelValues(kind.String()).Set(float64(now.UnixNano()) / 1e9)
	w.log.Debug("canary alert seen", zap.String("type", kind.String()), zap.String("room", room), zap.String("from", nick))
}

func (w *Watcher) greeting(first bool) string {
	// The text must not start with a word the Jabber gateway answers to ("flapjack"): it would
	// take it for a command.
	verb := "started"
	if !first {
		verb = "reconnected"
	}
	return fmt.Sprintf("Self-monitoring (oobetet) %s at %s on %s: watching the alerts of %s, max latency %s.",
		verb, w.clock.Now().UTC().Format("2006-01-02 15:04:05 MST"), w.host, w.quoted(), humantime.Words(w.cfg.MaxLatency))
}

// quoted names the check as alerts do: "CHECK" on ENTITY.
func (w *Watcher) quoted() string {
	return `"` + w.cfg.WatchedCheck + `" on ` + w.cfg.WatchedEntity
}

func (w *Watcher) setConnected(up bool) {
	v := 0.0
	if up {
		v = 1
	}
	w.m.connected.Set(v)
	if w.connected != nil {
		w.connected.Set(v)
	}
}

// tick reads the clock once, injects the canary when due, decides and delivers what is owed.
func (w *Watcher) tick(ctx context.Context) {
	now := w.clock.Now()
	if w.cfg.InjectInterval > 0 {
		w.inject(ctx, now)
	}
	w.decide(now)
	w.deliver(ctx, now)
	w.ticks.Add(1)
}

// decide looks at the sightings at now and opens or closes the breach.
func (w *Watcher) decide(now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	outcome, reason := w.watch.Check(now)
	switch outcome {
	case Breached:
		w.breach = breach{since: now, reason: reason, pageTrigger: w.sender != nil, sayTrigger: true}
		w.m.breached.Set(1)
		w.log.Error("self-monitoring breach: the canary's alerts are not getting through",
			zap.String("check", w.watchedID()), zap.String("reason", reason), zap.Bool("xmpp_connected", w.conn.connected()))
	case Recovered:
		b := &w.breach
		b.pageTrigger, b.sayTrigger = false, false
		b.pageResolve, b.sayResolve = b.paged, b.said
		w.m.breached.Set(0)
		w.log.Info("self-monitoring recovered: the canary's alerts are getting through again",
			zap.String("check", w.watchedID()), zap.Duration("breach", now.Sub(b.since)))
	}
}

// deliver sends the alarms owed; a failure that may pass leaves the alarm owed for the next tick.
func (w *Watcher) deliver(ctx context.Context, now time.Time) {
	w.mu.Lock()
	b := w.breach
	w.mu.Unlock()
	if b.pageTrigger {
		err := w.page(ctx, pagerduty.ActionTrigger, b, now)
		w.mu.Lock()
		w.breach.pageTrigger = retry(err)
		w.breach.paged = err == nil
		w.mu.Unlock()
	}
	if b.pageResolve {
		err := w.page(ctx, pagerduty.ActionResolve, b, now)
		w.mu.Lock()
		w.breach.pageResolve = retry(err)
		w.mu.Unlock()
	}
	if b.sayTrigger {
		err := w.say(actionTrigger, w.breachText(b))
		w.mu.Lock()
		w.breach.sayTrigger = err != nil
		w.breach.said = err == nil
		w.mu.Unlock()
	}
	if b.sayResolve {
		err := w.say(actionResolve, fmt.Sprintf("Self-monitoring OK: the alerts of %s are getting through again (after %s without).",
			w.quoted(), humantime.Words(now.Sub(b.since).Round(time.Second))))
		w.mu.Lock()
		w.breach.sayResolve = err != nil
		w.mu.Unlock()
	}
}

// retry tells whether a failed delivery is tried again on the next tick.
func retry(err error) bool {
	var de *gateways.DeliveryError
	return err != nil && !(errors.As(err, &de) && de.Permanent)
}

func (w *Watcher) breachText(b breach) string {
	return fmt.Sprintf("Self-monitoring CRITICAL: the alerts of %s are not getting through: %s. Detected by oobetet on %s at %s.",
		w.quoted(), b.reason, w.host, b.since.UTC().Format("2006-01-02 15:04:05 MST"))
}

// page sends one PagerDuty event about the breach, deduplicated per oobetet host and canary.
func (w *Watcher) page(ctx context.Context, action string, b breach, now time.Time) error {
	summary := fmt.Sprintf("alerts of %s not getting through: %s", w.quoted(), b.reason)
	at := b.since.Unix()
	a := schema.Alert{Media: pagerduty.Medium, Address: string(w.cfg.PagerDutyContact), ID: Name,
		EventID: schema.CheckID(w.host, "self-monitoring of "+w.watchedID()), Summary: &summary, Time: &at,
		State: schema.StateCritical, NotificationType: schema.NotificationProblem}
	if action == pagerduty.ActionResolve {
		summary, at = "alerts of "+w.quoted()+" getting through again", now.Unix()
		a.State, a.NotificationType = schema.StateOK, schema.NotificationRecovery
	}
	err := w.sender.Send(ctx, a)
	if err != nil && ctx.Err() != nil {
		return err // shutting down: not a failure of PagerDuty
	}
	if err != nil {
		w.m.alarms.WithLabelValues(channelPagerDuty, action, resultFailed).Inc()
		level := w.log.Warn
		if !retry(err) {
			level = w.log.Error
		}
		level("cannot page the self-monitoring breach", zap.String("action", action),
			zap.String("routing_key", httpsend.Redact(string(w.cfg.PagerDutyContact))), zap.Bool("retrying", retry(err)), zap.Error(err))
		return err
	}
	w.m.alarms.WithLabelValues(channelPagerDuty, action, resultSent).Inc()
	w.log.Info("paged the self-monitoring breach", zap.String("action", action))
	return nil
}

// say tells the rooms; while disconnected it fails quietly and is tried again.
func (w *Watcher) say(action, text string) error {
	err := w.conn.say(text)
	if err != nil {
		w.m.alarms.WithLabelValues(channelRooms, action, resultFailed).Inc()
		w.log.Debug("cannot tell the rooms yet", zap.String("action", action), zap.Error(err))
		return err
	}
	w.m.alarms.WithLabelValues(channelRooms, action, resultSent).Inc()
	return nil
}

// inject queues the canary's failure every InjectInterval and its recovery half an interval
// later; a failed push is tried again on the next tick.
func (w *Watcher) inject(ctx context.Context, now time.Time) {
	if !w.nextFailure.After(now) {
		if w.publish(ctx, schema.StateCritical, now) {
			w.nextFailure = now.Add(w.cfg.InjectInterval)
			w.recoveryDue = now.Add(w.cfg.InjectInterval / 2)
		}
		return
	}
	if !w.recoveryDue.IsZero() && !w.recoveryDue.After(now) {
		if w.publish(ctx, schema.StateOK, now) {
			w.recoveryDue = time.Time{}
		}
	}
}

func (w *Watcher) publish(ctx context.Context, state string, now time.Time) bool {
	summary := "canary recovery injected by oobetet on " + w.host
	if state != schema.StateOK {
		summary = "canary failure injected by oobetet on " + w.host
	}
	// Delays of 0: the failure alerts at once and every time (the executive would otherwise
	// hold it back for initial_failure_delay).
	ev := schema.Event{Entity: w.cfg.WatchedEntity, Check: w.cfg.WatchedCheck, Type: schema.TypeService, State: state,
		Summary: summary, Time: now.Unix(), HasTime: true, HasInitialDelay: true, HasRepeatDelay: true}
	if _, err := w.events.Publish(ctx, ev); err != nil {
		if ctx.Err() == nil {
			w.log.Warn("cannot inject the canary event", zap.String("state", state), zap.Error(err))
		}
		return false
	}
	w.m.injected.WithLabelValues(state).Inc()
	w.log.Debug("canary event injected", zap.String("state", state))
	return true
}
