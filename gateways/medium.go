package gateways

import (
	"fmt"
	"io"
	"strings"

	"github.com/gomodule/redigo/redis"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/config"
	"github.com/flapjackgo/flapjack/events"
	"github.com/flapjackgo/flapjack/lifecycle"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/schema"
)

// Medium describes one medium once: its name, its own settings (keys under gateways.<Name>.)
// and how its gateway is built. gateways/media lists every medium; the settings table, the
// notifier's queues, `server`, `gateway <name>` and `status` are all derived from that list.
type Medium struct {
	Name string
	// Settings are the gateway's own settings; the queue (notifier.<Name>_queue) and the
	// gateways.<Name>.enabled switch are added for every medium with a gateway.
	Settings []config.Setting
	// EnabledByDefault runs the gateway in `server` unless gateways.<Name>.enabled says no.
	EnabledByDefault bool
	// Stages builds the gateway's stages; nil for a medium that is only queued (for a
	// third-party gateway).
	Stages func(env Env) ([]lifecycle.Stage, error)
	// Templates are the names of the texts operators may replace (TemplateAlertText, ...), each
	// a setting gateways.<Name>.templates.<name>.
	Templates []string
	// Unqueued marks a gateway that takes no alerts from the notifier (oobetet watches chat
	// rooms): it has no notifier.<Name>_queue and no instance records unless OwnQueue is set.
	Unqueued bool
	// OwnQueue is the list an Unqueued gateway fills itself and drains with the shared runner
	// (the alertmanager gateway's silence jobs), so `status` reports its depth and instances.
	OwnQueue string
}

// EnabledSetting switches the medium's gateway on in `server`.
func EnabledSetting(medium string) string { return "gateways." + medium + ".enabled" }

// Env is what a gateway's constructor may use.
type Env struct {
	Values     *config.Values
	Pool       *redis.Pool
	Keys       schema.Keys
	Clock      clock.Clock
	Log        *zap.Logger
	Metrics    *Metrics
	Registerer prometheus.Registerer
	Identity   queue.Identity
	Version    string
	Events     *events.Publisher
	Stdout     io.Writer
	// ReplyCodes, set by an SMS medium whose replies are on, makes its runner issue reply codes.
	ReplyCodes *ReplyCodes
}

// ReplyCodesFrom reads the shared reply code settings (gateways.sms_replies.*).
func ReplyCodesFrom(v *config.Values) *ReplyCodes {
	return &ReplyCodes{Lifetime: v.Duration("gateways.sms_replies.code_lifetime"), MaxFailures: v.Int("gateways.sms_replies.max_failures")}
}

// Delivery is the shared runner's options for medium, from the queue, retry and heartbeat
// settings.
func (e Env) Delivery(medium string) Options {
	v := e.Values
	return Options{
		Pool: e.Pool, Keys: e.Keys, Medium: medium, Queue: v.String(config.MediumQueueSetting(medium)),
		Identity: e.Identity, Clock: e.Clock, Log: e.Log, Metrics: e.Metrics, Version: e.Version,
		MaxAttempts: v.Int("gateways.retry.max_attempts"), FirstBackoff: v.Duration("gateways.retry.first_backoff"),
		MaxBackoff: v.Duration("gateways.retry.max_backoff"), Beat: v.Duration("instance.heartbeat"),
		ReplyCodes: e.ReplyCodes,
	}
}

// SettingsTable is every setting of a process running media: config.Core with each medium's queue among the notifier's settings
// and each gateway's settings before the shared gateway retry settings.
func SettingsTable(media []Medium) config.Table {
	var queues, gws config.Table
	for _, m := range media {
		if !m.Unqueued {
			queues = append(queues, queueSetting(m))
		}
		if m.Stages == nil {
			continue
		}
		gws = append(gws, config.Setting{Key: EnabledSetting(m.Name), Kind: config.Bool,
			Default: fmt.Sprint(m.EnabledByDefault), Usage: fmt.Sprintf("run the %s gateway in `server`", m.Name)})
		if !m.Unqueued {
			gws = append(gws, config.Setting{Key: "gateways." + m.Name + ".queue", AliasOf: config.MediumQueueSetting(m.Name),
				Usage: "deprecated: use " + config.MediumQueueSetting(m.Name)})
		}
		gws = append(gws, m.Settings...)
		gws = append(gws, TemplateSettings(m.Name, m.Templates...)...)
	}
	out := make(config.Table, 0, len(config.Core)+len(queues)+len(gws))
	for i, s := range config.Core {
		if strings.HasPrefix(s.Key, "gateways.") && gws != nil {
			out, gws = append(out, gws...), nil
		}
		out = append(out, s)
		lastOfNotifier := strings.HasPrefix(s.Key, "notifier.") &&
			(i+1 == len(config.Core) || !strings.HasPrefix(config.Core[i+1].Key, "notifier."))
		if lastOfNotifier && queues != nil {
			out, queues = append(out, queues...), nil
		}
	}
	return append(append(out, queues...), gws...)
}

func queueSetting(m Medium) config.Setting {
	usage := fmt.Sprintf("list of the %s medium: the notifier pushes its alerts there", m.Name)
	if m.Stages != nil {
		usage += fmt.Sprintf(" and `gateway %s` takes them from it", m.Name)
	} else {
		usage += " for a gateway outside flapjack"
	}
	usage += " (any notifier.<medium>_queue maps a medium; empty disables the medium)"
	return config.Setting{Key: config.MediumQueueSetting(m.Name), Default: schema.DefaultMediumQueue(m.Name), Usage: usage}
}
