package silences

import (
	"net/url"

	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/lifecycle"
	"github.com/flapjackgo/flapjack/schema"
)

// Spec describes the silence mirror like a medium: its switch and its stages (its settings,
// alertmanager.*, are a section of their own in config.Core). It takes no alerts from the
// notifier (Unqueued): contacts cannot have it as a medium; its own queue is filled by the
// Watcher.
var Spec = gateways.Medium{
	Name:             Medium,
	Unqueued:         true,
	OwnQueue:         schema.AlertmanagerSilenceQueue,
	EnabledByDefault: true,
	Stages:           stages,
}

// stages are the watcher and the gateway delivering its jobs; none without alertmanager.url.
func stages(env gateways.Env) ([]lifecycle.Stage, error) {
	v := env.Values
	cfg := Config{URL: v.String("alertmanager.url"), Username: v.String("alertmanager.username"),
		Password: v.String("alertmanager.password"), BearerToken: v.String("alertmanager.bearer_token"),
		Timeout: v.Duration("alertmanager.timeout")}
	if cfg.URL == "" {
		return nil, nil
	}
	interval := v.Duration("alertmanager.sync_interval")
	if interval <= 0 {
		return nil, v.Invalid("alertmanager.sync_interval", "must be longer than 0 while alertmanager.url is set")
	}
	sender, err := NewSender(cfg, env.Clock)
	if err != nil {
		return nil, err
	}
	delivery := env.Delivery(Medium)
	delivery.Queue = schema.AlertmanagerSilenceQueue
	w := &Watcher{Pool: env.Pool, Keys: env.Keys, Clock: env.Clock, Log: env.Log.Named("silences"),
		Interval: interval, Address: withoutUserinfo(sender.base),
		Resolver: &Resolver{Pool: env.Pool, Keys: env.Keys, Sender: sender, Events: env.Events, Log: env.Log.Named("silences")}}
	return []lifecycle.Stage{
		{Name: Medium + " silence watcher", Run: w.Run},
		{Name: Medium + " gateway", Run: gateways.New(delivery, sender).Run},
	}, nil
}

func withoutUserinfo(u *url.URL) string {
	c := *u
	c.User = nil
	return c.String()
}
