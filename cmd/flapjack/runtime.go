package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/urfave/cli/v2"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/config"
	"github.com/flapjackgo/flapjack/events"
	"github.com/flapjackgo/flapjack/executive"
	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/gateways/media"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/notifier"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/receiver"
	"github.com/flapjackgo/flapjack/schema"
	"github.com/flapjackgo/flapjack/staleness"
	"github.com/flapjackgo/flapjack/status"
)

// runtime is what every command needs: settings, a logger, Redis, the key builder.
type runtime struct {
	values   *config.Values
	log      *zap.Logger
	level    zap.AtomicLevel
	pool     *redis.Pool
	keys     schema.Keys
	clock    clock.Clock
	identity queue.Identity
	redisURL string
	closers  []func()
	// for SIGHUP reloads
	cli *cli.Context
	// redisOverride replaces redis.url (the embedded server's address).
	redisOverride string
}

// setup loads settings and builds the logger; connect adds Redis.
func setup(c *cli.Context) (*runtime, error) {
	v, err := loadSettings(c)
	if err != nil {
		return nil, err
	}
	rt := &runtime{values: v, keys: schema.NewKeys(v.String("redis.key_prefix")), clock: clock.Real{},
		identity: queue.LocalIdentity(), cli: c}
	rt.log, rt.level = newLogger(v.String("log.level"), v.String("log.format"))
	for _, w := range v.Warnings() {
		rt.log.Warn("deprecated setting", zap.String("warning", w))
	}
	return rt, nil
}

// close releases what the runtime opened.
func (rt *runtime) close() {
	for i := len(rt.closers) - 1; i >= 0; i-- {
		rt.closers[i]()
	}
	if rt.log != nil {
		rt.log.Sync()
	}
}

// newLogger writes structured logs to stderr (stdout belongs to command output such as replay's
// alerts and the log gateway). level and format were checked against their choices at load.
func newLogger(level, format string) (*zap.Logger, zap.AtomicLevel) {
	lvl, err := zap.ParseAtomicLevel(level)
	if err != nil {
		lvl = zap.NewAtomicLevel()
	}
	encCfg := zap.NewProductionEncoderConfig()
	encCfg.EncodeTime = zapcore.ISO8601TimeEncoder
	encCfg.EncodeDuration = zapcore.StringDurationEncoder
	var enc zapcore.Encoder
	if format == "json" {
		enc = zapcore.NewJSONEncoder(encCfg)
	} else {
		encCfg.EncodeLevel = zapcore.CapitalLevelEncoder
		enc = zapcore.NewConsoleEncoder(encCfg)
	}
	return zap.New(zapcore.NewCore(enc, zapcore.Lock(os.Stderr), lvl)), lvl
}

// settingsError makes a component's validation error exit with status 2.
func settingsError(err error) error {
	if err == nil {
		return nil
	}
	return cli.Exit("invalid configuration:\n  "+err.Error(), 2)
}

// executiveConfig builds and checks the executive's settings.
func (rt *runtime) executiveConfig() (executive.Config, error) {
	v := rt.values
	cfg := executive.DefaultConfig()
	cfg.Queue = v.String("executive.queue")
	cfg.NotifierQueue = v.String("notifier.queue")
	cfg.InitialFailureDelay = v.Duration("executive.initial_failure_delay")
	cfg.RepeatFailureDelay = v.Duration("executive.repeat_failure_delay")
	cfg.NewCheckScheduledMaintenanceDuration = v.Duration("executive.new_check_scheduled_maintenance_duration")
	cfg.NewCheckScheduledMaintenanceIgnoreTags = v.List("executive.new_check_scheduled_maintenance_ignore_tags")
	cfg.AcknowledgementDuration = v.Duration("executive.acknowledgement_duration")
	cfg.ArchiveEvents = v.Bool("executive.archive_events")
	cfg.ArchiveMaxAge = v.Duration("executive.events_archive_maxage")
	cfg.RejectedMaxAge = v.Duration("executive.rejected_events_maxage")
	cfg.MaxFutureSkew = v.Duration("executive.max_future_skew")
	cfg.BatchSize = v.Int("executive.batch_size")
	cfg.ExplainEntries = v.Int("executive.explain_entries")
	cfg.FactsCacheChecks = v.Int("executive.facts_cache_checks")
	var errs []error
	ttl, err := staleness.DurationSeconds(v.Duration("executive.default_ttl"))
	if err != nil {
		errs = append(errs, v.Invalid("executive.default_ttl", "%v", err))
	}
	rules, err := staleness.ParseRules(v.List("executive.ttl_by_check"))
	if err != nil {
		errs = append(errs, v.Invalid("executive.ttl_by_check", "%v", err))
	}
	if v.Duration("executive.staleness_interval") <= 0 {
		errs = append(errs, v.Invalid("executive.staleness_interval", "must be positive"))
	}
	cfg.Staleness = staleness.Policy{Default: ttl, Rules: rules}
	return cfg, settingsError(errors.Join(append(errs, cfg.Validate())...))
}

// notifierConfig builds and checks the notifier's settings.
func (rt *runtime) notifierConfig() (notifier.Config, error) {
	v := rt.values
	cfg := notifier.DefaultConfig()
	cfg.Queue = v.String("notifier.queue")
	cfg.MediaQueues = v.MediumQueues()
	cfg.DefaultInterval = v.Duration("notifier.default_interval")
	cfg.BatchSize = v.Int("notifier.batch_size")
	cfg.ExplainEntries = max(v.Int("executive.explain_entries"), 0)
	loc, err := v.DefaultContactTimezone()
	if err != nil {
		return cfg, settingsError(err)
	}
	cfg.DefaultTimezone = loc
	return cfg, nil
}

// heartbeat is the instance beat.
func (rt *runtime) heartbeat() time.Duration { return rt.values.Duration("instance.heartbeat") }

// publisher queues events on the executive's list (executive.queue).
func (rt *runtime) publisher() *events.Publisher {
	return events.NewPublisher(rt.pool, rt.keys, rt.values.String("executive.queue")).
		WithTimeout(rt.values.Duration("redis.command_timeout"))
}

// statusOptions name every queue and stage `status` reports on.
func (rt *runtime) statusOptions() status.Options {
	queues := []string{rt.values.String("executive.queue"), rt.values.String("notifier.queue")}
	stages := []string{executive.Stage, notifier.Stage}
	mediumQueues := rt.values.MediumQueues()
	for _, m := range media.All {
		if q, ok := mediumQueues[m.Name]; ok {
			queues = append(queues, q)
			delete(mediumQueues, m.Name)
		}
		if m.OwnQueue != "" {
			queues = append(queues, m.OwnQueue)
		}
		if m.Stages != nil && (!m.Unqueued || m.OwnQueue != "") {
			stages = append(stages, gateways.Stage(m.Name))
		}
	}
	for _, m := range slices.Sorted(maps.Keys(mediumQueues)) {
		queues = append(queues, mediumQueues[m])
	}
	return status.Options{Queues: queues, Stages: stages, StaleAfter: 3 * rt.heartbeat()}
}

// withConn runs f with one Redis connection.
func (rt *runtime) withConn(ctx context.Context, f func(redis.Conn) error) error {
	conn, err := rt.pool.GetContext(ctx)
	if err != nil {
		return fmt.Errorf("connect to Redis at %s: %w", rt.redisURL, err)
	}
	defer conn.Close()
	return f(conn)
}

// oneShot runs a command body with settings loaded and Redis connected.
func oneShot(f func(c *cli.Context, rt *runtime) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		rt, err := setup(c)
		if err != nil {
			return err
		}
		defer rt.close()
		if err := rt.connectNow(c.Context); err != nil {
			return err
		}
		return f(c, rt)
	}
}

// writeJSONList prints list as an indented JSON array ([] when empty, never null).
func writeJSONList[T any](w io.Writer, list []T) error {
	if list == nil {
		list = []T{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(list)
}

// usageError is a bad flag value: exit status 2.
func usageError(format string, args ...any) error { return cli.Exit(fmt.Sprintf(format, args...), 2) }

// rejectKeeper keeps receivers' rejected inputs beside the executive's rejections, for as long.
func (rt *runtime) rejectKeeper() *events.Keeper {
	return events.NewKeeper(rt.pool, rt.keys, rt.clock, rt.values.Duration("executive.rejected_events_maxage"),
		rt.log.With(zap.String("stage", "rejections")))
}

// keepRejectedNow writes a one-shot receiver's rejections before it exits; Redis being away is
// said, not fatal (the rejections were printed and logged).
func (rt *runtime) keepRejectedNow(ctx context.Context, source string, rejected []receiver.Rejection) {
	if len(rejected) == 0 {
		return
	}
	batch := make([]checkstate.Rejected, len(rejected))
	for i, r := range rejected {
		batch[i] = checkstate.Rejected{Source: source, Input: r.Input, Reasons: r.Reasons}
	}
	if err := rt.rejectKeeper().Write(ctx, batch); err != nil {
		rt.log.Warn("rejected records not kept in Redis", zap.Error(err))
	}
}
