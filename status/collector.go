package status

import (
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/schema"
)

// Collector exports a Snapshot read from Redis at scrape time (as asynq's x/metrics does), at
// most once per MaxAge: reading it costs a few commands per failing check, and several scrapers
// or a short scrape interval must not load a large installation's Redis.
type Collector struct {
	Pool    *redis.Pool
	Keys    schema.Keys
	Options Options
	Clock   clock.Clock
	Log     *zap.Logger
	// MaxAge is how long a snapshot is reused (default 5 s).
	MaxAge time.Duration

	mu   sync.Mutex
	last Snapshot
	read time.Time
}

var (
	queueDepth = prometheus.NewDesc("flapjack_queue_depth",
		"Items in a Redis list: kind is queue, processing (claimed, unfinished) or failed (dead letters).",
		[]string{"queue", "kind"}, nil)
	instances = prometheus.NewDesc("flapjack_instances",
		"Registered stage instances, by stage and state (live or stale).", []string{"stage", "state"}, nil)
	failing = prometheus.NewDesc("flapjack_checks_failing",
		"Checks currently failing (members of failed_checks).", nil, nil)
	acknowledged = prometheus.NewDesc("flapjack_checks_failing_acknowledged",
		"Failing checks in unscheduled maintenance (acknowledged).", nil, nil)
	maintained = prometheus.NewDesc("flapjack_checks_failing_in_scheduled_maintenance",
		"Failing checks in scheduled maintenance.", nil, nil)
	scrapeErrors = prometheus.NewDesc("flapjack_status_scrape_error",
		"1 when the last scrape could not read the status from Redis.", nil, nil)
)

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{queueDepth, instances, failing, acknowledged, maintained, scrapeErrors} {
		ch <- d
	}
}

// snapshot returns a recent snapshot, reading a new one when the last is older than MaxAge.
func (c *Collector) snapshot() (Snapshot, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	maxAge := c.MaxAge
	if maxAge <= 0 {
		maxAge = 5 * time.Second
	}
	now := c.Clock.Now()
	if !c.read.IsZero() && now.Sub(c.read) < maxAge {
		return c.last, nil
	}
	conn := c.Pool.Get()
	defer conn.Close()
	o := c.Options
	o.FailingLimit = -1 // no metric shows the list
	s, err := Read(conn, c.Keys, o, now)
	if err != nil {
		return s, err
	}
	c.last, c.read = s, now
	return s, nil
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	s, err := c.snapshot()
	if err != nil {
		c.Log.Warn("status scrape failed", zap.Error(err))
		ch <- prometheus.MustNewConstMetric(scrapeErrors, prometheus.GaugeValue, 1)
		return
	}
	ch <- prometheus.MustNewConstMetric(scrapeErrors, prometheus.GaugeValue, 0)
	for _, q := range s.Queues {
		ch <- prometheus.MustNewConstMetric(queueDepth, prometheus.GaugeValue, float64(q.Depth), q.Name, q.Kind)
	}
	counts := map[[2]string]int{}
	for _, st := range c.Options.Stages {
		counts[[2]string{st, "live"}] = 0
		counts[[2]string{st, "stale"}] = 0
	}
	for _, in := range s.Instances {
		state := "live"
		if in.Stale {
			state = "stale"
		}
		counts[[2]string{in.Stage, state}]++
	}
	for k, n := range counts {
		ch <- prometheus.MustNewConstMetric(instances, prometheus.GaugeValue, float64(n), k[0], k[1])
	}
	ch <- prometheus.MustNewConstMetric(failing, prometheus.GaugeValue, float64(s.Failing))
	ch <- prometheus.MustNewConstMetric(acknowledged, prometheus.GaugeValue, float64(s.Acknowledged))
	ch <- prometheus.MustNewConstMetric(maintained, prometheus.GaugeValue, float64(s.InMaintenance))
}
