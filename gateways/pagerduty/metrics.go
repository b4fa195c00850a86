package pagerduty

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// Results of a poller run (label "result" of flapjack_pagerduty_ack_poll_runs_total).
const (
	RunCompleted = "completed" // the run looked at every failing check
	RunLocked    = "locked"    // another poller held the lock: nothing done
	RunRecent    = "recent"    // a poller ran less than a poll interval ago: nothing done
	RunFailed    = "failed"    // Redis failed before the checks could be listed, or the run was cut short
)

// Kinds of poller errors (label "kind" of flapjack_pagerduty_ack_poll_errors_total).
const (
	ErrorRedis = "redis" // reading a check, its contacts, or pushing the event
	ErrorAPI   = "api"   // a PagerDuty REST request failed or was refused
)

// Metrics are the acknowledgement poller's Prometheus metrics. Delivery metrics are the shared
// gateways.Metrics (medium "pagerduty").
type Metrics struct {
	runs     *prometheus.CounterVec
	acks     prometheus.Counter
	errors   *prometheus.CounterVec
	duration prometheus.Histogram
}

// NewMetrics registers the poller metrics on reg (nil: unregistered, for tests and embedding).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	f := promauto.With(reg)
	m := &Metrics{
		runs: f.NewCounterVec(prometheus.CounterOpts{
			Name: "flapjack_pagerduty_ack_poll_runs_total",
			Help: "Runs of the PagerDuty acknowledgement poller, by result (completed, locked, recent, failed).",
		}, []string{"result"}),
		acks: f.NewCounter(prometheus.CounterOpts{
			Name: "flapjack_pagerduty_acks_enqueued_total",
			Help: "Acknowledgement events pushed onto the events queue for incidents acknowledged in PagerDuty.",
		}),
		errors: f.NewCounterVec(prometheus.CounterOpts{
			Name: "flapjack_pagerduty_ack_poll_errors_total",
			Help: "Errors of the PagerDuty acknowledgement poller, by kind (redis, api); the run goes on with the next check.",
		}, []string{"kind"}),
		duration: f.NewHistogram(prometheus.HistogramOpts{
			Name:    "flapjack_pagerduty_ack_poll_duration_seconds",
			Help:    "Wall time of the PagerDuty acknowledgement poller's completed runs.",
			Buckets: []float64{.01, .05, .1, .5, 1, 5, 10, 30, 60, 300, 900},
		}),
	}
	for _, r := range []string{RunCompleted, RunLocked, RunRecent, RunFailed} {
		m.runs.WithLabelValues(r)
	}
	for _, k := range []string{ErrorRedis, ErrorAPI} {
		m.errors.WithLabelValues(k)
	}
	return m
}
