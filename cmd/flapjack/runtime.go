package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/urfave/cli/v2"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/config"
	"github.com/flapjackgo/flapjack/executive"
	"github.com/flapjackgo/flapjack/notifier"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/schema"
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
	configPath string
	cli        config.Source
	// redisOverride replaces redis.url (the embedded server's address).
	redisOverride string
}

// overrideRedisURL points the runtime at url whatever the settings say.
func (rt *runtime) overrideRedisURL(url string) { rt.redisOverride = url }

// loadSettings reads the configuration; problems exit with status 2 naming the setting.
func loadSettings(c *cli.Context) (*config.Values, error) {
	v, err := config.Load(c.String("config"), c, os.Environ())
	if err != nil {
		return nil, cli.Exit(err.Error(), 2)
	}
	return v, nil
}

// setup loads settings and builds the logger; connect adds Redis.
func setup(c *cli.Context) (*runtime, error) {
	v, err := loadSettings(c)
	if err != nil {
		return nil, err
	}
	rt := &runtime{values: v, keys: schema.NewKeys(v.String("redis.key_prefix")), clock: clock.Real{},
		identity: queue.LocalIdentity(), configPath: c.String("config"), cli: c}
	rt.log, rt.level, err = newLogger(v.String("log.level"), v.String("log.format"))
	if err != nil {
		v.Invalid("log.level", "%v", err)
	}
	if err := v.Err(); err != nil {
		return nil, cli.Exit(err.Error(), 2)
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
// alerts and the log gateway).
func newLogger(level, format string) (*zap.Logger, zap.AtomicLevel, error) {
	lvl, err := zap.ParseAtomicLevel(level)
	if err != nil {
		return zap.NewNop(), zap.NewAtomicLevel(), fmt.Errorf("unknown log level %q (debug, info, warn, error)", level)
	}
	encCfg := zap.NewProductionEncoderConfig()
	encCfg.EncodeTime = zapcore.ISO8601TimeEncoder
	encCfg.EncodeDuration = zapcore.StringDurationEncoder
	var enc zapcore.Encoder
	switch format {
	case "json":
		enc = zapcore.NewJSONEncoder(encCfg)
	case "console", "":
		encCfg.EncodeLevel = zapcore.CapitalLevelEncoder
		enc = zapcore.NewConsoleEncoder(encCfg)
	default:
		return zap.NewNop(), lvl, fmt.Errorf("unknown log format %q (console, json)", format)
	}
	return zap.New(zapcore.NewCore(enc, zapcore.Lock(os.Stderr), lvl)), lvl, nil
}

// executiveConfig builds the executive's settings.
func (rt *runtime) executiveConfig() executive.Config {
	v := rt.values
	cfg := executive.DefaultConfig()
	cfg.Queue = v.String("executive.queue")
	cfg.NotifierQueue = v.String("executive.notifier_queue")
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
	if cfg.BatchSize < 1 || cfg.BatchSize > 10000 {
		v.Invalid("executive.batch_size", "must be between 1 and 10000")
	}
	if cfg.AcknowledgementDuration < time.Second {
		v.Invalid("executive.acknowledgement_duration", "must be at least 1 second")
	}
	if cfg.ArchiveEvents && cfg.ArchiveMaxAge < time.Second {
		v.Invalid("executive.events_archive_maxage", "must be set when executive.archive_events is on")
	}
	return cfg
}

// notifierConfig builds the notifier's settings.
func (rt *runtime) notifierConfig() notifier.Config {
	v := rt.values
	cfg := notifier.DefaultConfig()
	cfg.Queue = v.String("notifier.queue")
	cfg.MediaQueues = v.MediumQueues()
	cfg.DefaultInterval = v.Duration("notifier.default_interval")
	cfg.BatchSize = v.Int("notifier.batch_size")
	zone := v.String("notifier.default_contact_timezone")
	if zone == "" {
		zone = os.Getenv("TZ")
	}
	cfg.DefaultTimezone = time.UTC
	if zone != "" {
		loc, err := time.LoadLocation(zone)
		if err != nil {
			v.Invalid("notifier.default_contact_timezone", "unknown timezone %q", zone)
		} else {
			cfg.DefaultTimezone = loc
		}
	}
	return cfg
}

// checkSettings turns validation problems into exit status 2.
func (rt *runtime) checkSettings() error {
	if err := rt.values.Err(); err != nil {
		return cli.Exit(err.Error(), 2)
	}
	return nil
}

// heartbeat is the instance beat.
func (rt *runtime) heartbeat() time.Duration {
	return rt.values.Duration("instance.heartbeat")
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
