package main

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/urfave/cli/v2"

	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/gateways/jabber"
	"github.com/flapjackgo/flapjack/gateways/pagerduty"
)

// jabberConfig builds gateways.jabber.*.
func (rt *runtime) jabberConfig() jabber.Config {
	v := rt.values
	return jabber.Config{
		Server: v.String("gateways.jabber.server"), Port: v.Int("gateways.jabber.port"),
		JabberID: v.String("gateways.jabber.jabberid"), Password: jabber.Secret(v.String("gateways.jabber.password")),
		Alias: v.String("gateways.jabber.alias"), Identifiers: v.List("gateways.jabber.identifiers"),
		Rooms: v.List("gateways.jabber.rooms"), TLS: v.String("gateways.jabber.tls"),
		AllowPlaintext:     v.Bool("gateways.jabber.allow_plaintext"),
		InsecureSkipVerify: v.Bool("gateways.jabber.insecure_skip_verify"),
		AllowedJIDs:        v.List("gateways.jabber.allowed_jids"),
		AckDuration:        v.Duration("gateways.jabber.ack_duration"),
		Keepalive:          v.Duration("gateways.jabber.keepalive"), KeepaliveTimeout: v.Duration("gateways.jabber.keepalive_timeout"),
		ReconnectMin: v.Duration("gateways.jabber.reconnect_min"), ReconnectMax: v.Duration("gateways.jabber.reconnect_max"),
		SendTimeout: v.Duration("gateways.jabber.send_timeout"), DialTimeout: v.Duration("gateways.jabber.dial_timeout"),
	}
}

// jabberStages: the bot's connection and the delivery loop feeding it.
func (rt *runtime) jabberStages(m *gateways.Metrics) ([]stage, error) {
	cfg := rt.jabberConfig()
	if err := rt.checkSettings(); err != nil {
		return nil, err
	}
	bot, err := jabber.NewClient(jabber.ClientOptions{Config: cfg, Pool: rt.pool, Keys: rt.keys,
		EventsQueue: rt.values.String("executive.queue"), Clock: rt.clock, Log: rt.log, Metrics: m, Version: version})
	if err != nil {
		return nil, cli.Exit(err.Error(), 2)
	}
	delivery := gateways.New(rt.gatewayOptions("jabber", m), bot)
	return []stage{{name: "jabber connection", run: bot.Run}, {name: "jabber gateway", run: delivery.Run}}, nil
}

// pagerdutyConfig builds gateways.pagerduty.*.
func (rt *runtime) pagerdutyConfig() pagerduty.Config {
	v := rt.values
	return pagerduty.Config{
		EventsBaseURL: v.String("gateways.pagerduty.events_base_url"), APIBaseURL: v.String("gateways.pagerduty.api_base_url"),
		V1APIURLTemplate: v.String("gateways.pagerduty.v1_api_url_template"), UseV1Events: v.Bool("gateways.pagerduty.use_v1_events"),
		Timeout: v.Duration("gateways.pagerduty.timeout"), AckPollInterval: v.Duration("gateways.pagerduty.ack_poll_interval"),
		AckLockTTL: v.Duration("gateways.pagerduty.ack_lock_ttl"), SinceWindow: v.Duration("gateways.pagerduty.since_window"),
		AckDuration: v.Duration("gateways.pagerduty.ack_duration"),
	}
}

// pagerdutyStages: delivery to the Events API, and the acknowledgement poller (one run at a
// time across all instances).
func (rt *runtime) pagerdutyStages(m *gateways.Metrics, reg prometheus.Registerer) ([]stage, error) {
	cfg := rt.pagerdutyConfig()
	if err := rt.checkSettings(); err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, cli.Exit(err.Error(), 2)
	}
	sender, err := pagerduty.NewSender(pagerduty.SenderOptions{Config: cfg, Log: rt.log})
	if err != nil {
		return nil, cli.Exit(err.Error(), 2)
	}
	poller, err := pagerduty.NewAckPoller(pagerduty.AckPollerOptions{Config: cfg, Pool: rt.pool, Keys: rt.keys,
		EventsQueue: rt.values.String("executive.queue"), Clock: rt.clock, Log: rt.log, Metrics: pagerduty.NewMetrics(reg)})
	if err != nil {
		return nil, cli.Exit(err.Error(), 2)
	}
	delivery := gateways.New(rt.gatewayOptions("pagerduty", m), sender)
	return []stage{{name: "pagerduty gateway", run: delivery.Run},
		{name: "pagerduty acknowledgement poller", run: poller.Run, auxiliary: true}}, nil
}
