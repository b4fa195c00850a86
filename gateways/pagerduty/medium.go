package pagerduty

import (
	"github.com/flapjackgo/flapjack/config"
	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/lifecycle"
)

// Spec describes the pagerduty medium: delivery to the Events API, and the acknowledgement poller
// (one run at a time across all instances).
var Spec = gateways.Medium{
	Name: Medium,
	Settings: []config.Setting{
		{Key: "gateways.pagerduty.events_base_url", Default: "https://events.pagerduty.com", Usage: "Events API v2 base URL"},
		{Key: "gateways.pagerduty.api_base_url", Default: "https://api.pagerduty.com", Usage: "REST API base URL (acknowledgement sync)"},
		{Key: "gateways.pagerduty.v1_api_url_template", Default: "https://%s.pagerduty.com/api/v1", Usage: "REST v1 URL for subdomain accounts (%s = subdomain)"},
		{Key: "gateways.pagerduty.timeout", Kind: config.Duration, Default: "10s", Usage: "HTTP request timeout"},
		{Key: "gateways.pagerduty.ack_poll_interval", Kind: config.Duration, Default: "10s", Usage: "how often acknowledgements made in PagerDuty are looked for (0 = never)"},
		{Key: "gateways.pagerduty.ack_duration", Kind: config.Duration, Default: "4h", Usage: "length of an acknowledgement made in PagerDuty"},
		{Key: "gateways.pagerduty.ack_lock_ttl", Kind: config.Duration, Default: "1h", Usage: "longest a poll run may hold the lock (sem_pagerduty_acks_running) that keeps pollers of all instances from overlapping"},
		{Key: "gateways.pagerduty.since_window", Kind: config.Duration, Default: "7 days", Usage: "how far back acknowledged incidents are looked for"},
		{Key: "gateways.pagerduty.use_v1_events", Kind: config.Bool, Default: "false", Usage: "send alerts to the old v1 generic events API (service keys of old accounts) instead of Events API v2"},
	},
	Stages: stages,
}

func stages(env gateways.Env) ([]lifecycle.Stage, error) {
	cfg := configFrom(env.Values)
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	sender, err := NewSender(SenderOptions{Config: cfg, Log: env.Log})
	if err != nil {
		return nil, err
	}
	poller, err := NewAckPoller(AckPollerOptions{Config: cfg, Pool: env.Pool, Keys: env.Keys,
		EventsQueue: env.Values.String("executive.queue"), Clock: env.Clock, Log: env.Log, Metrics: NewMetrics(env.Registerer)})
	if err != nil {
		return nil, err
	}
	delivery := gateways.New(env.Delivery(Medium), sender)
	return []lifecycle.Stage{{Name: "pagerduty gateway", Run: delivery.Run},
		{Name: "pagerduty acknowledgement poller", Run: poller.Run, Auxiliary: true}}, nil
}

// configFrom reads gateways.pagerduty.*.
func configFrom(v *config.Values) Config {
	return Config{
		EventsBaseURL: v.String("gateways.pagerduty.events_base_url"), APIBaseURL: v.String("gateways.pagerduty.api_base_url"),
		V1APIURLTemplate: v.String("gateways.pagerduty.v1_api_url_template"), UseV1Events: v.Bool("gateways.pagerduty.use_v1_events"),
		Timeout: v.Duration("gateways.pagerduty.timeout"), AckPollInterval: v.Duration("gateways.pagerduty.ack_poll_interval"),
		AckLockTTL: v.Duration("gateways.pagerduty.ack_lock_ttl"), SinceWindow: v.Duration("gateways.pagerduty.since_window"),
		AckDuration: v.Duration("gateways.pagerduty.ack_duration"),
	}
}
