package staleness

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// Metrics count what the ticks did, registered on the registerer given (nil: not exported).
type Metrics struct {
	results  prometheus.Counter
	disarmed prometheus.Counter
	errors   prometheus.Counter
	tick     prometheus.Histogram
}

// NewMetrics creates the metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	f := promauto.With(reg)
	return &Metrics{
		results: f.NewCounter(prometheus.CounterOpts{
			Name: "flapjack_stale_results_total",
			Help: "Stale results (unknown, \"stale: no result for ...\") queued for checks whose ttl ran out.",
		}),
		disarmed: f.NewCounter(prometheus.CounterOpts{
			Name: "flapjack_stale_deadlines_disarmed_total",
			Help: "Staleness deadlines dropped at their claim: the check's latest result had no ttl, or the check is disabled or gone.",
		}),
		errors: f.NewCounter(prometheus.CounterOpts{
			Name: "flapjack_stale_tick_errors_total",
			Help: "Staleness ticks that failed (retried at the next tick).",
		}),
		tick: f.NewHistogram(prometheus.HistogramOpts{
			Name:    "flapjack_stale_tick_seconds",
			Help:    "Time one staleness tick took: claiming the due checks and queueing their stale results.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1},
		}),
	}
}
