package oobetet

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/flapjackgo/flapjack/schema"
)

// Metrics are oobetet's Prometheus metrics.
type Metrics struct {
	// lastSeen is the Unix time of the last alert of the canary seen, by kind (0: never).
	lastSeen *prometheus.GaugeVec
	breached prometheus.Gauge
	// connected is 1 while the XMPP connection stands and the rooms are joined.
	connected prometheus.Gauge
	// alarms counts alarm deliveries by channel (pagerduty, rooms), action (trigger, resolve)
	// and result (sent, failed).
	alarms *prometheus.CounterVec
	// injected counts canary events queued, by state (critical, ok).
	injected *prometheus.CounterVec
}

// NewMetrics registers oobetet's metrics on reg (nil: unregistered, for tests and embedding).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	f := promauto.With(reg)
	m := &Metrics{
		lastSeen: f.NewGaugeVec(prometheus.GaugeOpts{
			Name: "flapjack_oobetet_last_seen_timestamp_seconds",
			Help: "Unix time at which oobetet last saw an alert of the canary check in a room, by type (problem, recovery, acknowledgement); 0 = never.",
		}, []string{"type"}),
		breached: f.NewGauge(prometheus.GaugeOpts{
			Name: "flapjack_oobetet_breached",
			Help: "1 while the canary's problem or recovery alerts have not been seen within gateways.oobetet.max_latency, else 0.",
		}),
		connected: f.NewGauge(prometheus.GaugeOpts{
			Name: "flapjack_oobetet_connected",
			Help: "1 while oobetet is connected to the XMPP server and in its rooms, else 0.",
		}),
		alarms: f.NewCounterVec(prometheus.CounterOpts{
			Name: "flapjack_oobetet_alarms_total",
			Help: "Alarm messages oobetet delivered or failed to deliver, by channel (pagerduty, rooms), action (trigger, resolve) and result (sent, failed).",
		}, []string{"channel", "action", "result"}),
		injected: f.NewCounterVec(prometheus.CounterOpts{
			Name: "flapjack_oobetet_injected_events_total",
			Help: "Canary events oobetet queued for the executive (gateways.oobetet.inject_interval), by state (critical, ok).",
		}, []string{"state"}),
	}
	for _, k := range []Kind{Problem, Recovery, Acknowledgement} {
		m.lastSeen.WithLabelValues(k.String())
	}
	for _, ch := range []string{channelPagerDuty, channelRooms} {
		for _, a := range []string{actionTrigger, actionResolve} {
			for _, r := range []string{resultSent, resultFailed} {
				m.alarms.WithLabelValues(ch, a, r)
			}
		}
	}
	for _, st := range []string{schema.StateCritical, schema.StateOK} {
		m.injected.WithLabelValues(st)
	}
	return m
}

// Labels of flapjack_oobetet_alarms_total.
const (
	channelPagerDuty = "pagerduty"
	channelRooms     = "rooms"
	actionTrigger    = "trigger"
	actionResolve    = "resolve"
	resultSent       = "sent"
	resultFailed     = "failed"
)
