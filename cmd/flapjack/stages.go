package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/urfave/cli/v2"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/api"
	"github.com/flapjackgo/flapjack/config"
	"github.com/flapjackgo/flapjack/executive"
	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/gateways/media"
	"github.com/flapjackgo/flapjack/lifecycle"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/notifier"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/receiver"
	"github.com/flapjackgo/flapjack/retention"
	"github.com/flapjackgo/flapjack/staleness"
	"github.com/flapjackgo/flapjack/status"
	"github.com/flapjackgo/flapjack/web"
)

// shutdownGrace bounds how long stages get to finish their in-flight work after SIGTERM.
const shutdownGrace = 20 * time.Second

// process is one running process's shared parts: the runtime, its metrics registry and the
// tracker /readyz asks.
type process struct {
	*runtime
	reg     *prometheus.Registry
	tracker *lifecycle.Tracker
}

// stageBuilder adds the stages of one command to a process.
type stageBuilder func(p *process) ([]lifecycle.Stage, error)

// hooks let `server` start the embedded Redis before connecting and seed it afterwards.
type hooks struct {
	beforeConnect func(rt *runtime) error
	afterConnect  func(ctx context.Context, rt *runtime) error
}

// runStages is the one lifecycle of every long-running command: load settings, connect,
// refuse bad credentials, build the stages, serve metrics, run until SIGINT/SIGTERM or until a
// main stage ends. When the stages do not serve HTTP themselves and metrics.addr is set, a
// listener serves /metrics, /healthz and /readyz for them.
func runStages(c *cli.Context, h hooks, builders ...stageBuilder) error {
	rt, err := setup(c)
	if err != nil {
		return err
	}
	defer rt.close()
	if h.beforeConnect != nil {
		if err := h.beforeConnect(rt); err != nil {
			return err
		}
	}
	if err := rt.connect(c.Context); err != nil {
		return err
	}
	rt.log.Info("using Redis", zap.String("redis", rt.redisURL), zap.String("key_prefix", rt.keys.Prefix()))
	if err := rt.refuseBadCredentials(c.Context); err != nil {
		return err
	}
	if h.afterConnect != nil {
		if err := h.afterConnect(c.Context, rt); err != nil {
			return err
		}
	}
	p := &process{runtime: rt, reg: newRegistry(), tracker: &lifecycle.Tracker{}}
	var stages []lifecycle.Stage
	for _, build := range builders {
		s, err := build(p)
		if err != nil {
			return err
		}
		stages = append(stages, s...)
	}
	if len(stages) == 0 {
		return usageError("nothing to run: every stage of this command is switched off (%s)", strings.Join(stageSwitches(), ", "))
	}
	p.reg.MustRegister(rt.statusCollector())
	if addr := rt.values.String("metrics.addr"); addr != "" && !servesHTTP(stages) {
		stages = append(stages, lifecycle.Stage{Name: "metrics listener", Auxiliary: true, Run: func(ctx context.Context) error {
			return api.Serve(ctx, p.httpOptions(addr, false))
		}})
	}
	rt.log.Info("starting", zap.String("version", version), zap.Strings("stages", lifecycle.Names(stages)))
	stages = append(stages, processRecord(p, lifecycle.Names(stages)))
	ctx, cancel := context.WithCancel(c.Context)
	defer cancel()
	go rt.reloadOnHUP(ctx)
	if err := lifecycle.Run(ctx, rt.log, stages, p.tracker, shutdownGrace); err != nil {
		return cli.Exit(err.Error(), 1)
	}
	return nil
}

const httpStage = "http"

func servesHTTP(stages []lifecycle.Stage) bool {
	for _, s := range stages {
		if s.Name == httpStage {
			return true
		}
	}
	return false
}

// httpOptions configure the HTTP listener at addr; withEvents mounts POST /events and the JSON
// API (a metrics-only listener of a single stage has neither).
func (p *process) httpOptions(addr string, withEvents bool) api.Options {
	return api.Options{Addr: addr, Token: p.values.String("http.token"), MaxBody: int64(p.values.Int("http.max_body_bytes")),
		Pool: p.pool, Keys: p.keys, Events: p.publisher(), Gatherer: p.reg, Ready: p.tracker.Ready, Clock: p.clock,
		Log: p.log.With(zap.String("stage", httpStage)), EventsEnabled: withEvents,
		JSONAPI: withEvents, ReadToken: p.values.String("http.read_token"),
		CORSOrigins: p.values.List("http.cors_origins"), BaseURL: p.values.String("http.base_url"),
		RedisTimeout: p.values.Duration("redis.command_timeout")}
}

// httpStages serve http.addr: POST /events, the JSON API, metrics, health.
func httpStages(p *process) ([]lifecycle.Stage, error) {
	o := p.httpOptions(p.values.String("http.addr"), true)
	if err := o.Validate(); err != nil {
		return nil, settingsError(err)
	}
	intakes, err := p.alertIntakes()
	if err != nil {
		return nil, settingsError(err)
	}
	signed, err := p.integrationIntakes()
	if err != nil {
		return nil, settingsError(err)
	}
	o.Intakes = append(intakes, signed...)
	return []lifecycle.Stage{{Name: httpStage, Run: func(ctx context.Context) error { return api.Serve(ctx, o) }}}, nil
}

const webStage = "web"

// webStages serve the web UI on web.addr.
func webStages(p *process) ([]lifecycle.Stage, error) {
	v := p.values
	o := web.Options{Addr: v.String("web.addr"), Pool: p.pool, Keys: p.keys, Events: p.publisher(), Clock: p.clock,
		Log: p.log.With(zap.String("stage", webStage)), Status: p.statusOptions(), AutoRefresh: v.Duration("web.auto_refresh"),
		BaseURL: v.String("web.base_url"), LogoPath: v.String("web.logo_image_path"), Users: v.List("web.users"),
		AuthHeader: v.String("web.auth_header")}
	if key := v.String("web.csrf_key"); key != "" {
		o.CSRFKey = []byte(key)
	}
	if err := o.Validate(); err != nil {
		return nil, settingsError(err)
	}
	return []lifecycle.Stage{{Name: webStage, Run: func(ctx context.Context) error { return web.Serve(ctx, o) }}}, nil
}

// processRecord keeps this process's record (process_instance:HOST:PID, with the names of its
// stages) alive while it runs, so `status` lists every process and what it runs.
func processRecord(p *process, names []string) lifecycle.Stage {
	reg := &queue.Registry{Pool: p.pool, Keys: p.keys, Spec: queue.Spec{Stage: status.ProcessStage}, ID: p.identity,
		Clock: p.clock, Version: version, Beat: p.heartbeat(), Log: p.log.With(zap.String("stage", status.ProcessStage)),
		Fields: map[string]string{"stages": strings.Join(names, ",")}}
	return lifecycle.Stage{Name: "process record", Auxiliary: true, Run: func(ctx context.Context) error {
		if err := reg.Register(ctx); err != nil {
			p.log.Warn("process record not written; status will not list this process until Redis answers", zap.Error(err))
		}
		reg.Run(ctx)
		// A receiver stopped during a Redis outage has done its job (its spool holds what Redis
		// could not take): the stale record it leaves is reported as such by status, and a clean
		// stop must still exit 0.
		if err := reg.Deregister(context.WithoutCancel(ctx)); err != nil {
			p.log.Warn("process record not removed; status will list this process as stale until it ages out", zap.Error(err))
		}
		return nil
	}}
}

// serverStages are the stages whose switches are on: everything by default.
func serverStages(p *process) ([]lifecycle.Stage, error) {
	v := p.values
	var builders []stageBuilder
	if v.Bool("executive.enabled") {
		builders = append(builders, executiveStages(false))
	}
	builders = append(builders, retentionStages)
	if v.Bool("notifier.enabled") {
		builders = append(builders, notifierStages)
	}
	builders = append(builders, gatewayStages(enabledGateways(v)...))
	if v.Bool("http.enabled") {
		builders = append(builders, httpStages)
	}
	if v.Bool("web.enabled") {
		builders = append(builders, webStages)
	}
	if v.Bool("receiver.sensu.enabled") {
		builders = append(builders, sensuStages)
	}
	var stages []lifecycle.Stage
	for _, build := range builders {
		s, err := build(p)
		if err != nil {
			return nil, err
		}
		stages = append(stages, s...)
	}
	return stages, nil
}

// stageSwitches are the settings that switch `server`'s stages on and off.
func stageSwitches() []string {
	out := []string{"executive.enabled", "notifier.enabled", "retention.enabled", "http.enabled", "web.enabled", "receiver.sensu.enabled"}
	for _, m := range media.WithGateway() {
		out = append(out, gateways.EnabledSetting(m.Name))
	}
	return out
}

// retentionStages trim history continuously (docs/decisions.md D12) unless retention.enabled is off.
func retentionStages(p *process) ([]lifecycle.Stage, error) {
	if !p.values.Bool("retention.enabled") {
		return nil, nil
	}
	return []lifecycle.Stage{retentionStage(p)}, nil
}

// executiveStages run the executive; exitWhenEmpty ends it (and the process) once events is
// empty.
func executiveStages(exitWhenEmpty bool) stageBuilder {
	return func(p *process) ([]lifecycle.Stage, error) {
		cfg, err := p.executiveConfig()
		if err != nil {
			return nil, err
		}
		x := executive.New(executive.Options{
			Pool: p.pool, Keys: p.keys, Config: cfg, Clock: p.clock, Log: p.log,
			Metrics: executive.NewMetrics(p.reg), Identity: p.identity, Version: version, Beat: p.heartbeat(),
		})
		stale := &staleness.Ticker{Pool: p.pool, Keys: p.keys, Clock: p.clock, Events: p.publisher(),
			Log: p.log.With(zap.String("stage", "staleness")), Metrics: staleness.NewMetrics(p.reg)}
		every := p.values.Duration("executive.staleness_interval")
		return []lifecycle.Stage{
			{Name: executive.Stage, Run: func(ctx context.Context) error { return x.Run(ctx, exitWhenEmpty) }},
			{Name: "staleness", Auxiliary: true, Run: func(ctx context.Context) error { stale.Run(ctx, every); return nil }},
		}, nil
	}
}

// notifierStages run the notifier.
func notifierStages(p *process) ([]lifecycle.Stage, error) {
	cfg, err := p.notifierConfig()
	if err != nil {
		return nil, err
	}
	n := notifier.New(notifier.Options{
		Pool: p.pool, Keys: p.keys, Config: cfg, Clock: p.clock, Log: p.log,
		Metrics: notifier.NewMetrics(p.reg), Identity: p.identity, Version: version, Beat: p.heartbeat(),
	})
	return []lifecycle.Stage{{Name: notifier.Stage, Run: func(ctx context.Context) error { return n.Run(ctx, false) }}}, nil
}

// retentionStage trims history continuously (docs/decisions.md D12).
func retentionStage(p *process) lifecycle.Stage {
	s := &retention.Sweeper{Pool: p.pool, Keys: p.keys, Clock: p.clock, Log: p.log.With(zap.String("stage", "retention")),
		Policy: retention.Policy{MaxAge: p.values.Duration("retention.max_age"), MaxEntries: p.values.Int("retention.max_entries"),
			MaxDeliveries: p.values.Int("retention.max_deliveries")}}
	interval := p.values.Duration("retention.interval")
	return lifecycle.Stage{Name: "retention", Auxiliary: true, Run: func(ctx context.Context) error { s.Run(ctx, interval); return nil }}
}

// gatewayStages run the gateways of the named media; the metrics are shared between them.
func gatewayStages(names ...string) stageBuilder {
	return func(p *process) ([]lifecycle.Stage, error) {
		env := gateways.Env{Values: p.values, Pool: p.pool, Keys: p.keys, Clock: p.clock, Log: p.log,
			Metrics: gateways.NewMetrics(p.reg), Registerer: p.reg, Identity: p.identity, Version: version,
			Events: p.publisher(), Stdout: os.Stdout}
		var stages []lifecycle.Stage
		for _, name := range names {
			m, ok := media.Lookup(name)
			if !ok || m.Stages == nil {
				return nil, usageError("unknown gateway %q: %s", name, media.GatewayNames(", "))
			}
			s, err := m.Stages(env)
			if err != nil {
				return nil, settingsError(fmt.Errorf("gateways.%s: %w", name, err))
			}
			stages = append(stages, s...)
		}
		return stages, nil
	}
}

// enabledGateways are the media whose gateways.<name>.enabled is on.
func enabledGateways(v *config.Values) []string {
	var names []string
	for _, m := range media.WithGateway() {
		if v.Bool(gateways.EnabledSetting(m.Name)) {
			names = append(names, m.Name)
		}
	}
	return names
}

// reloadOnHUP re-reads the configuration on SIGHUP and applies what can change safely at run
// time: the log level.
func (rt *runtime) reloadOnHUP(ctx context.Context) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
		}
		v, err := loadSettings(rt.cli)
		if err != nil {
			rt.log.Error("SIGHUP: configuration not reloaded", zap.Error(err))
			continue
		}
		level := v.String("log.level")
		if err := rt.level.UnmarshalText([]byte(level)); err != nil {
			rt.log.Error("SIGHUP: invalid log.level; keeping the current one", zap.String("log.level", level))
			continue
		}
		rt.log.Info("SIGHUP: reloaded log.level; other settings need a restart", zap.String("log.level", level))
	}
}

func newRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "flapjack_build_info", Help: "Build information; the value is always 1.",
		ConstLabels: prometheus.Labels{"version": version},
	}, func() float64 { return 1 }))
	return reg
}

// keepRejected keeps what the receiver named source refuses in events_rejected (events.Keeper):
// the callback for its OnReject and the stage that writes them.
func (p *process) keepRejected(source string) (func(receiver.Rejection), lifecycle.Stage) {
	k := p.rejectKeeper()
	return func(r receiver.Rejection) {
		k.Keep(checkstate.Rejected{Source: source, Input: r.Input, Reasons: r.Reasons})
	}, lifecycle.Stage{Name: source + " rejections", Auxiliary: true, Run: k.Run}
}
