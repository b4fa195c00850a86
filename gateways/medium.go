package gateways

import (
	"io"

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
	// Unqueued marks a gateway that takes no alerts from a queue (oobetet watches chat rooms):
	// it has no notifier.<Name>_queue and no instance records.
	Unqueued bool
}

// QueueSetting is the one setting naming the medium's list, read by the notifier (producer)
// and the gateway (consumer).
func QueueSetting(medium string) string { return "notifier." + medium + "_queue" }

// EnabledSetting switches the medium's gateway on in `server`.
func EnabledSetting(medium string) string { return "gateways." + medium + ".enabled" }

// DefaultQueue is the list of a medium unless configured otherwise (SPEC 3.3).
func DefaultQueue(medium string) string { return medium + "_notifications" }

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
}

// Delivery is the shared runner's options for medium, from the queue, retry and heartbeat
// settings.
func (e Env) Delivery(medium string) Options {
	v := e.Values
	return Options{
		Pool: e.Pool, Keys: e.Keys, Medium: medium, Queue: v.String(QueueSetting(medium)),
		Identity: e.Identity, Clock: e.Clock, Log: e.Log, Metrics: e.Metrics, Version: e.Version,
		MaxAttempts: v.Int("gateways.retry.max_attempts"), FirstBackoff: v.Duration("gateways.retry.first_backoff"),
		MaxBackoff: v.Duration("gateways.retry.max_backoff"), Beat: v.Duration("instance.heartbeat"),
	}
}
