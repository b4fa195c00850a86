// Package gateways owns what every delivery gateway shares: draining a medium's queue
// (`<medium>_notifications`) reliably, retrying transient failures with capped exponential
// backoff (honouring Retry-After), dead-lettering what cannot be delivered to
// `<medium>_notifications_failed` with the error (docs/decisions.md D13), and the delivery metrics. Each
// medium lives in its own sub-package and implements Sender.
package gateways

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/schema"
)

// Sender delivers one alert to its peer. It returns nil once the peer has accepted the alert,
// a *DeliveryError saying whether and when to retry, or any other error (treated as retryable).
type Sender interface {
	Send(ctx context.Context, alert schema.Alert) error
}

// PayloadSender is implemented by senders that forward the alert exactly as it was queued (the
// webhook medium): the gateway calls SendPayload, with the queued JSON, instead of Send.
type PayloadSender interface {
	SendPayload(ctx context.Context, alert schema.Alert, payload []byte) error
}

// ReceiptSender is implemented by senders whose provider answers an accepted message with its
// id (Twilio's sid, Vonage's message-id, SNS's MessageId, PagerDuty's dedup_key, an SMTP
// server's queue id): the gateway calls SendReceipt instead of Send and keeps the id in the
// delivery log.
type ReceiptSender interface {
	SendReceipt(ctx context.Context, alert schema.Alert) (messageID string, err error)
}

// Readier is implemented by senders that can only deliver while connected (Jabber): the
// gateway claims nothing until Ready returns, so alerts wait in the queue, not in a retry loop.
type Readier interface {
	Ready(ctx context.Context) error
}

// DeliveryError classifies a failed delivery.
type DeliveryError struct {
	Err        error
	Permanent  bool          // retrying cannot help (e.g. HTTP 400): dead-letter at once
	RetryAfter time.Duration // the peer asked to wait this long (HTTP 429 Retry-After)
}

func (e *DeliveryError) Error() string { return e.Err.Error() }
func (e *DeliveryError) Unwrap() error { return e.Err }

// Permanent wraps err as a failure retrying cannot fix.
func Permanent(err error) error { return &DeliveryError{Err: err, Permanent: true} }

// Retryable wraps err as a transient failure, to retry after at least `after` (0: backoff).
func Retryable(err error, after time.Duration) error {
	return &DeliveryError{Err: err, RetryAfter: after}
}

// Retry policy defaults: 6 attempts, 1 s doubling to at most 1 min between them.
const (
	DefaultMaxAttempts  = 6
	DefaultFirstBackoff = time.Second
	DefaultMaxBackoff   = time.Minute
)

// Options wires a Gateway.
type Options struct {
	Pool         *redis.Pool
	Keys         schema.Keys
	Medium       string // "jabber", "pagerduty", "log" ...
	Queue        string // list name, default schema.DefaultMediumQueue(Medium)
	Identity     queue.Identity
	Clock        clock.Clock
	Log          *zap.Logger
	Metrics      *Metrics
	Version      string
	MaxAttempts  int
	FirstBackoff time.Duration
	MaxBackoff   time.Duration
	Beat         time.Duration
	// ReplyCodes, when set, gives each problem alert of one check a code to reply with (the
	// SMS media that take replies): "Reply ACK 4821".
	ReplyCodes *ReplyCodes
}

// ReplyCodes issues reply codes (docs/decisions.md D25).
type ReplyCodes struct {
	Lifetime    time.Duration // how long a code acknowledges
	MaxFailures int           // unknown codes a number may reply with per Lifetime
}

// Gateway drains one medium's queue into a Sender.
type Gateway struct {
	o        Options
	sender   Sender
	consumer *queue.Consumer
	registry *queue.Registry
	failed   string
	log      *zap.Logger
	m        *Metrics
	sleep    func(context.Context, time.Duration)
}

// Stage is the instance-record name of a medium's gateway, e.g. "jabber_gateway".
func Stage(medium string) string { return medium + "_gateway" }

// New builds a gateway for sender.
func New(o Options, sender Sender) *Gateway {
	if o.Queue == "" {
		o.Queue = schema.DefaultMediumQueue(o.Medium)
	}
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	if o.Metrics == nil {
		o.Metrics = NewMetrics(nil)
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = DefaultMaxAttempts
	}
	if o.FirstBackoff <= 0 {
		o.FirstBackoff = DefaultFirstBackoff
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = DefaultMaxBackoff
	}
	spec := queue.Spec{Stage: Stage(o.Medium), Source: o.Keys.Queue(o.Queue), End: queue.Left}
	g := &Gateway{
		o: o, sender: sender,
		consumer: queue.NewConsumer(o.Pool, o.Keys, spec, o.Identity),
		failed:   o.Keys.FailedQueue(o.Queue),
		log:      o.Log.With(zap.String("stage", Stage(o.Medium))),
		m:        o.Metrics,
		sleep:    queue.Sleep,
	}
	g.registry = &queue.Registry{Pool: o.Pool, Keys: o.Keys, Spec: spec, ID: o.Identity,
		Clock: o.Clock, Version: o.Version, Beat: o.Beat, Log: g.log}
	return g
}

// Run delivers alerts until ctx ends, finishing the alert in hand.
func (g *Gateway) Run(ctx context.Context) error {
	loop := &queue.Loop{Registry: g.registry, Consumer: g.consumer, Worker: g, Log: g.log,
		OnError: func(error) { g.m.redisErrors.WithLabelValues(g.o.Medium).Inc() }}
	return loop.Run(ctx)
}

// Start implements queue.Worker.
func (g *Gateway) Start(context.Context) error { return nil }

// ProcessNext claims alerts (one batch) and delivers them one by one.
func (g *Gateway) ProcessNext(ctx context.Context, wait time.Duration) (int, error) {
	if r, ok := g.sender.(Readier); ok {
		if err := r.Ready(ctx); err != nil {
			return 0, nil
		}
	}
	batch, err := g.consumer.Next(ctx, 16, wait)
	if err != nil {
		return 0, err
	}
	done := 0
	for _, raw := range batch.Items {
		if ctx.Err() != nil {
			// Stopping: what is not started yet goes back to the queue at shutdown.
			g.consumer.MarkUnfinished()
			return done, nil
		}
		if err := g.deliver(ctx, raw); err != nil {
			g.consumer.MarkUnfinished()
			return done, err
		}
		done++
	}
	return done, nil
}

// failure is what `<medium>_notifications_failed` keeps for a dead-lettered alert.
type failure struct {
	Alert    json.RawMessage `json:"alert"`
	Raw      string          `json:"raw,omitempty"`
	Error    string          `json:"error"`
	Attempts int             `json:"attempts"`
	FailedAt int64           `json:"failed_at"`
	Medium   string          `json:"media"`
}

// deliver sends one claimed alert with retries; it returns an error only when Redis failed
// (the alert then stays claimed and is retried).
func (g *Gateway) deliver(ctx context.Context, raw string) error {
	started := time.Now()
	alert, err := schema.ParseAlert([]byte(raw))
	if err != nil {
		// Not the raw alert: its address may be a secret (a PagerDuty routing key). The failed
		// list keeps it for inspection.
		g.log.Error("alert rejected; kept in the failed list", zap.Error(err), zap.Int("bytes", len(raw)),
			zap.String("failed_list", g.failed))
		return g.finish(ctx, raw, "invalid", g.failureRecord(raw, err, 0))
	}
	alert.ReplyCode = g.replyCode(ctx, alert)
	var last error
	for attempt := 1; attempt <= g.o.MaxAttempts; attempt++ {
		// A send in progress at shutdown gets a few seconds to complete.
		sendCtx, cancel := queue.Grace(ctx, 5*time.Second)
		messageID, err := g.send(sendCtx, alert, raw)
		cancel()
		if err == nil {
			g.record(ctx, alert, model.Attempt{Status: schema.DeliveryDelivered, MessageID: messageID, Tried: true})
			g.m.latency.WithLabelValues(g.o.Medium).Observe(time.Since(started).Seconds())
			g.log.Info("alert delivered", zap.String("check", alert.EventID), zap.String("contact", alert.ContactID),
				zap.String("type", alert.AlertType()), zap.Int("attempt", attempt))
			return g.finish(ctx, raw, "delivered", "")
		}
		last = err
		var de *DeliveryError
		permanent := errors.As(err, &de) && de.Permanent
		if permanent || attempt == g.o.MaxAttempts || ctx.Err() != nil {
			g.record(ctx, alert, model.Attempt{Status: g.failedStatus(ctx), Error: err.Error(), Tried: true})
			break
		}
		g.record(ctx, alert, model.Attempt{Status: schema.DeliveryRetrying, Error: err.Error(), Tried: true})
		delay := g.backoff(attempt, de)
		g.m.retries.WithLabelValues(g.o.Medium).Inc()
		g.log.Warn("delivery failed; retrying", zap.String("check", alert.EventID), zap.String("contact", alert.ContactID),
			zap.Int("attempt", attempt), zap.Duration("retry_in", delay), zap.Error(err))
		g.sleep(ctx, delay)
		if ctx.Err() != nil {
			// Stopping: leave the alert claimed; shutdown hands it back to the queue.
			return fmt.Errorf("stopped while retrying alert for %s", alert.EventID)
		}
	}
	if ctx.Err() != nil {
		return fmt.Errorf("stopped while delivering alert for %s", alert.EventID)
	}
	g.log.Error("alert dead-lettered", zap.String("check", alert.EventID), zap.String("contact", alert.ContactID),
		zap.String("failed_list", g.failed), zap.Error(last))
	return g.finish(ctx, raw, "failed", g.failureRecord(raw, last, g.o.MaxAttempts))
}

// send hands one alert to the sender, with its queued JSON when the sender forwards it, and
// returns the provider's message id when the sender gives one.
func (g *Gateway) send(ctx context.Context, alert schema.Alert, raw string) (string, error) {
	switch s := g.sender.(type) {
	case PayloadSender:
		return "", s.SendPayload(ctx, alert, []byte(raw))
	case ReceiptSender:
		return s.SendReceipt(ctx, alert)
	}
	return "", g.sender.Send(ctx, alert)
}

// replyCode issues the code a problem alert of one check asks to be replied with; "" when the
// medium takes no replies or no code could be written (the alert then goes without one).
func (g *Gateway) replyCode(ctx context.Context, alert schema.Alert) string {
	number := model.ReplyNumber(alert.Address)
	if g.o.ReplyCodes == nil || alert.AlertType() != schema.NotificationProblem || number == "" {
		return ""
	}
	now := g.o.Clock.Now()
	conn, err := g.o.Pool.GetContext(ctx)
	if err != nil {
		g.log.Error("cannot issue a reply code; the alert goes without", zap.Error(err))
		return ""
	}
	defer conn.Close()
	code, err := model.IssueReplyCode(conn, g.o.Keys, number, model.ReplyCode{Check: alert.EventID, Contact: alert.ContactID, Alert: alert.ID,
		Medium: g.o.Medium, Expires: now.Add(g.o.ReplyCodes.Lifetime).Unix()}, now.Unix())
	if err != nil {
		g.m.redisErrors.WithLabelValues(g.o.Medium).Inc()
		g.log.Error("cannot issue a reply code; the alert goes without", zap.Error(err))
		return ""
	}
	return code
}

// failedStatus is the delivery log's status of a last failed attempt: failed, unless the gateway
// is stopping, when the alert goes back to the queue and will be retried.
func (g *Gateway) failedStatus(ctx context.Context) string {
	if ctx.Err() != nil {
		return schema.DeliveryRetrying
	}
	return schema.DeliveryFailed
}

// record writes an attempt into the delivery log (docs/decisions.md D24). A failed write is
// logged and counted; it never holds up the delivery itself.
func (g *Gateway) record(ctx context.Context, alert schema.Alert, a model.Attempt) {
	a.At = g.o.Clock.Now().Unix()
	conn, err := g.o.Pool.GetContext(context.WithoutCancel(ctx))
	if err == nil {
		err = model.RecordAttempt(conn, g.o.Keys, alert, a)
		conn.Close()
	}
	if err != nil {
		g.m.redisErrors.WithLabelValues(g.o.Medium).Inc()
		g.log.Error("cannot record a delivery attempt", zap.String("alert", alert.ID), zap.Error(err))
	}
}

func (g *Gateway) backoff(attempt int, de *DeliveryError) time.Duration {
	retry := queue.Backoff{First: g.o.FirstBackoff, Max: g.o.MaxBackoff}
	d := retry.Delay(attempt - 1)
	if de != nil && de.RetryAfter > d {
		d = de.RetryAfter
	}
	return d
}

func (g *Gateway) failureRecord(raw string, err error, attempts int) string {
	f := failure{Error: err.Error(), Attempts: attempts, FailedAt: g.o.Clock.Now().Unix(), Medium: g.o.Medium}
	if json.Valid([]byte(raw)) {
		f.Alert = json.RawMessage(raw)
	} else {
		f.Raw = raw
	}
	b, _ := json.Marshal(f)
	return string(b)
}

func (g *Gateway) finish(ctx context.Context, raw, result, failedRecord string) error {
	list := ""
	if failedRecord != "" {
		list = g.failed
	}
	var backoff queue.Backoff
	for {
		claimed, err := g.consumer.Finish(context.WithoutCancel(ctx), raw, list, failedRecord)
		if err == nil {
			if !claimed {
				g.log.Warn("alert had been requeued by a peer while being delivered")
			}
			g.m.deliveries.WithLabelValues(g.o.Medium, result).Inc()
			return nil
		}
		if result != "delivered" {
			return err
		}
		// Delivered but not recorded: retrying the record (not the delivery) keeps the
		// duplicate window as small as Redis allows.
		g.m.redisErrors.WithLabelValues(g.o.Medium).Inc()
		delay := backoff.Next()
		g.log.Error("cannot record a delivered alert; retrying", zap.Error(err), zap.Duration("retry_in", delay))
		if delay >= 10*time.Second && ctx.Err() != nil {
			return err
		}
		g.sleep(context.WithoutCancel(ctx), delay)
	}
}

// Metrics are the gateways' Prometheus metrics, labelled by medium.
type Metrics struct {
	deliveries  *prometheus.CounterVec
	retries     *prometheus.CounterVec
	latency     *prometheus.HistogramVec
	redisErrors *prometheus.CounterVec
	Connected   *prometheus.GaugeVec
}

// NewMetrics registers the gateway metrics on reg (nil: unregistered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	f := promauto.With(reg)
	return &Metrics{
		deliveries: f.NewCounterVec(prometheus.CounterOpts{
			Name: "flapjack_gateway_deliveries_total",
			Help: "Alerts handled by gateways, by medium and result (delivered, failed, invalid).",
		}, []string{"medium", "result"}),
		retries: f.NewCounterVec(prometheus.CounterOpts{
			Name: "flapjack_gateway_retries_total",
			Help: "Delivery attempts that failed transiently and were retried.",
		}, []string{"medium"}),
		latency: f.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "flapjack_gateway_delivery_seconds",
			Help:    "Time from claiming an alert to its delivery, retries included.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300},
		}, []string{"medium"}),
		redisErrors: f.NewCounterVec(prometheus.CounterOpts{
			Name: "flapjack_gateway_redis_errors_total",
			Help: "Failed Redis operations in gateways, by medium.",
		}, []string{"medium"}),
		Connected: f.NewGaugeVec(prometheus.GaugeOpts{
			Name: "flapjack_gateway_connected",
			Help: "1 while a gateway holds a working connection to its peer (Jabber), else 0.",
		}, []string{"medium"}),
	}
}
