package oobetet

import (
	"github.com/flapjackgo/flapjack/config"
	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/gateways/jabber"
	"github.com/flapjackgo/flapjack/gateways/pagerduty"
	"github.com/flapjackgo/flapjack/lifecycle"
)

// Spec describes oobetet like a medium: its settings (keys under gateways.oobetet.) and its
// stage. It is not a medium (it consumes no alert queue) and is not in gateways/media.All; its
// PagerDuty events go where gateways.pagerduty.events_base_url says, with that section's
// timeout and use_v1_events.
var Spec = gateways.Medium{
	Name:     Name,
	Unqueued: true,
	Settings: []config.Setting{
		{Key: "gateways.oobetet.server", Default: "", Usage: "XMPP server host (default: the domain of gateways.oobetet.jabberid)"},
		{Key: "gateways.oobetet.port", Kind: config.Int, Default: "5222", Usage: "XMPP server port"},
		{Key: "gateways.oobetet.jabberid", Default: "", Usage: "oobetet's own JID user@domain, not the Jabber gateway's (a resource /<hostname> is added when none is given)"},
		{Key: "gateways.oobetet.password", Default: "", Usage: "oobetet's password", Secret: true},
		{Key: "gateways.oobetet.alias", Default: DefaultAlias, Usage: "oobetet's nickname in the rooms (not the Jabber gateway's alias)"},
		{Key: "gateways.oobetet.rooms", Kind: config.List, Usage: "MUC rooms where the Jabber gateway posts the canary's alerts; the alarm is said there too"},
		{Key: "gateways.oobetet.tls", Default: jabber.TLSStartTLS, Choices: []string{jabber.TLSStartTLS, jabber.TLSDirect, jabber.TLSPlain}, Usage: "starttls, tls (direct) or plain (needs gateways.oobetet.allow_plaintext)"},
		{Key: "gateways.oobetet.allow_plaintext", Kind: config.Bool, Default: "false", Usage: "allow a plaintext XMPP connection"},
		{Key: "gateways.oobetet.insecure_skip_verify", Kind: config.Bool, Default: "false", Usage: "do not verify the XMPP server certificate (testing only)"},
		{Key: "gateways.oobetet.watched_entity", Default: "", Usage: "entity of the canary check whose alerts are watched"},
		{Key: "gateways.oobetet.watched_check", Default: "", Usage: "the canary check whose alerts are watched"},
		{Key: "gateways.oobetet.max_latency", Kind: config.Duration, Default: "300s", Usage: "longest time without a problem alert, or without a recovery alert, of the canary before the alarm"},
		{Key: "gateways.oobetet.pagerduty_contact", Default: "", Usage: "PagerDuty routing key paged on a breach (resolved when alerts flow again); empty: the rooms only", Secret: true},
		{Key: "gateways.oobetet.inject_interval", Kind: config.Duration, Default: "0", Usage: "queue a failure of the canary this often, and its recovery half an interval later (0 = off: something else makes the canary alert); shorter than max_latency"},
	},
	Stages: stages,
}

func stages(env gateways.Env) ([]lifecycle.Stage, error) {
	w, err := NewFromEnv(env)
	if err != nil {
		return nil, err
	}
	return w.Stages(), nil
}

// NewFromEnv builds a Watcher from the settings (gateways.oobetet.*, and
// gateways.pagerduty.events_base_url, timeout and use_v1_events) and env's clock, logger,
// registry and events publisher. Spec.Stages uses it; a command that also wants Health builds
// the Watcher with it and runs Stages.
func NewFromEnv(env gateways.Env) (*Watcher, error) {
	v := env.Values
	o := Options{Config: configFrom(v), Events: env.Events, Clock: env.Clock, Log: env.Log,
		Metrics: NewMetrics(env.Registerer), Version: env.Version,
		PagerDuty: pagerduty.Config{EventsBaseURL: v.String("gateways.pagerduty.events_base_url"),
			Timeout: v.Duration("gateways.pagerduty.timeout"), UseV1Events: v.Bool("gateways.pagerduty.use_v1_events")}}
	if env.Metrics != nil {
		o.Connected = env.Metrics.Connected.WithLabelValues(Name)
	}
	return New(o)
}

// Stages is the Watcher as the one stage "oobetet"; its Health is the process's readiness.
func (w *Watcher) Stages() []lifecycle.Stage {
	return []lifecycle.Stage{{Name: Name, Run: w.Run, Health: w.Health}}
}

// configFrom reads gateways.oobetet.*.
func configFrom(v *config.Values) Config {
	return Config{
		Server: v.String("gateways.oobetet.server"), Port: v.Int("gateways.oobetet.port"),
		JabberID: v.String("gateways.oobetet.jabberid"), Password: jabber.Secret(v.String("gateways.oobetet.password")),
		Alias: v.String("gateways.oobetet.alias"), Rooms: v.List("gateways.oobetet.rooms"),
		TLS: v.String("gateways.oobetet.tls"), AllowPlaintext: v.Bool("gateways.oobetet.allow_plaintext"),
		InsecureSkipVerify: v.Bool("gateways.oobetet.insecure_skip_verify"),
		WatchedEntity:      v.String("gateways.oobetet.watched_entity"), WatchedCheck: v.String("gateways.oobetet.watched_check"),
		MaxLatency:       v.Duration("gateways.oobetet.max_latency"),
		PagerDutyContact: jabber.Secret(v.String("gateways.oobetet.pagerduty_contact")),
		InjectInterval:   v.Duration("gateways.oobetet.inject_interval"),
	}
}
