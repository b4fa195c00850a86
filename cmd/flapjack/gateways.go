package main

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/urfave/cli/v2"

	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/gateways/jabber"
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
	bot, err := jabber.New(jabber.Options{Config: cfg, Pool: rt.pool, Keys: rt.keys,
		EventsQueue: rt.values.String("executive.queue"), Clock: rt.clock, Log: rt.log, Metrics: m, Version: version})
	if err != nil {
		return nil, cli.Exit(err.Error(), 2)
	}
	delivery := gateways.New(rt.gatewayOptions("jabber", m), bot)
	return []stage{{"jabber connection", bot.Run}, {"jabber gateway", delivery.Run}}, nil
}

var _ = prometheus.NewRegistry
