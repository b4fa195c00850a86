package notifier

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/flapjackgo/flapjack/schema"
)

// Metrics are the notifier's Prometheus metrics (nil registerer: not exported).
type Metrics struct {
	notifications *prometheus.CounterVec
	alerts        *prometheus.CounterVec
	latency       prometheus.Histogram
	ruleProblems  prometheus.Counter
	unqueued      *prometheus.CounterVec
	conflicts     prometheus.Counter
	redisErrors   prometheus.Counter

	escalationsStarted prometheus.Counter
	escalationSteps    *prometheus.CounterVec
	escalationsStopped *prometheus.CounterVec

	scheduleFallbacks *prometheus.CounterVec
	uncovered         prometheus.Gauge
	onCall            *prometheus.GaugeVec

	processed atomic.Int64
}

// NewMetrics creates the notifier metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	f := promauto.With(reg)
	m := &Metrics{
		notifications: f.NewCounterVec(prometheus.CounterOpts{
			Name: "flapjack_notifier_notifications_total",
			Help: "Notifications routed by the notifier, by type and result (routed, no_contacts, invalid, marker).",
		}, []string{"type", "result"}),
		alerts: f.NewCounterVec(prometheus.CounterOpts{
			Name: "flapjack_alerts_total",
			Help: "Alerts queued for gateways, by medium, notification type and rollup (none, problem, recovery).",
		}, []string{"medium", "type", "rollup"}),
		latency: f.NewHistogram(prometheus.HistogramOpts{
			Name:    "flapjack_notifier_routing_seconds",
			Help:    "Time to route one notification, from the start of its routing (of the notifications routed with it) to its alerts being queued.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1},
		}),
		ruleProblems: f.NewCounter(prometheus.CounterOpts{
			Name: "flapjack_notifier_rule_errors_total",
			Help: "Notification rules skipped because a regex, time restriction or stored value could not be read.",
		}),
		unqueued: f.NewCounterVec(prometheus.CounterOpts{
			Name: "flapjack_notifier_unqueued_alerts_total",
			Help: "Alerts skipped because their medium has no configured queue.",
		}, []string{"medium"}),
		conflicts: f.NewCounter(prometheus.CounterOpts{
			Name: "flapjack_notifier_conflicts_total",
			Help: "Notifications re-routed because another notifier changed one of their contacts first.",
		}),
		redisErrors: f.NewCounter(prometheus.CounterOpts{
			Name:        "flapjack_redis_errors_total",
			Help:        "Failed Redis operations, by stage.",
			ConstLabels: prometheus.Labels{"stage": Stage},
		}),
		escalationsStarted: f.NewCounter(prometheus.CounterOpts{
			Name: "flapjack_escalations_started_total",
			Help: "Escalation ladders started or resumed by a problem notification.",
		}),
		escalationSteps: f.NewCounterVec(prometheus.CounterOpts{
			Name: "flapjack_escalation_steps_fired_total",
			Help: "Escalation steps fired, by step number (repeats of the last step count as it).",
		}, []string{"step"}),
		escalationsStopped: f.NewCounterVec(prometheus.CounterOpts{
			Name: "flapjack_escalations_stopped_total",
			Help: "Escalation ladders stopped, by reason (acknowledged, recovered, maintenance, disabled, severity, policy_removed).",
		}, []string{"reason"}),
		scheduleFallbacks: f.NewCounterVec(prometheus.CounterOpts{
			Name: "flapjack_schedule_fallback_total",
			Help: "Notifications and escalation steps that found nobody on call in a schedule's layers and overrides, so its fallback contacts (or nobody, without any) were alerted, by schedule.",
		}, []string{"schedule"}),
		uncovered: f.NewGauge(prometheus.GaugeOpts{
			Name: "flapjack_schedules_uncovered",
			Help: "Schedules with nobody on call in their layers and overrides (fallback or nobody) at this notifier's latest tick.",
		}),
		onCall: f.NewGaugeVec(prometheus.GaugeOpts{
			Name: "flapjack_schedule_on_call",
			Help: "Contacts a schedule puts on call at this notifier's latest tick (its fallback when nobody else is), by schedule.",
		}, []string{"schedule"}),
	}
	for _, t := range []string{schema.NotificationProblem, schema.NotificationRecovery, schema.NotificationAcknowledgement, schema.NotificationTest} {
		for _, r := range []string{"routed", "no_contacts"} {
			m.notifications.WithLabelValues(t, r)
		}
	}
	m.notifications.WithLabelValues("invalid", "invalid")
	return m
}

func (m *Metrics) instanceStats() map[string]int64 {
	return map[string]int64{"processed": m.processed.Load()}
}
