package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/urfave/cli/v2"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/flapjackgo/flapjack/api"
	"github.com/flapjackgo/flapjack/config"
	"github.com/flapjackgo/flapjack/retention"
	"github.com/flapjackgo/flapjack/status"
)

// stage is one long-running part of a process. When a main stage returns, the process is done
// (`executive --exit-when-empty`) and the others stop; auxiliary stages (metrics listener,
// retention, pollers) may return early without that meaning anything.
type stage struct {
	name      string
	run       func(ctx context.Context) error
	auxiliary bool
}

// shutdownGrace bounds how long stages get to finish their in-flight work after SIGTERM.
const shutdownGrace = 20 * time.Second

// runStages connects, builds the stages and runs them until SIGINT/SIGTERM or until one fails.
// When metrics.addr is set, a listener serves /metrics, /healthz and /readyz for them.
// The registry handed to build is a *prometheus.Registry, so a stage may also serve it.
func runStages(c *cli.Context, build func(*runtime, prometheus.Registerer) ([]stage, error)) error {
	rt, err := setup(c)
	if err != nil {
		return err
	}
	defer rt.close()
	if err := rt.connect(c.Context); err != nil {
		return err
	}
	logRedis(rt)
	if err := rt.refuseBadCredentials(c.Context); err != nil {
		return err
	}
	reg := newRegistry()
	stages, err := build(rt, reg)
	if err != nil {
		return err
	}
	if err := rt.checkSettings(); err != nil {
		return err
	}
	tracker := &stageTracker{}
	if addr := rt.values.String("metrics.addr"); addr != "" {
		reg.MustRegister(rt.statusCollector())
		stages = append(stages, stage{name: "metrics listener", auxiliary: true, run: func(ctx context.Context) error {
			return api.Serve(ctx, api.Options{Addr: addr, Pool: rt.pool, Keys: rt.keys, Gatherer: reg,
				Ready: tracker.ready, Log: rt.log})
		}})
	}
	return rt.runAll(c.Context, stages, tracker)
}

// runAll runs stages together: the first to fail stops the others; SIGHUP re-reads the log
// level.
func (rt *runtime) runAll(ctx context.Context, stages []stage, tracker *stageTracker) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go rt.reloadOnHUP(ctx)
	g, gctx := errgroup.WithContext(ctx)
	for _, s := range stages {
		tracker.start(s.name)
		g.Go(func() error {
			err := s.run(gctx)
			tracker.stop(s.name)
			if !s.auxiliary {
				cancel()
			}
			if err != nil && !errors.Is(err, context.Canceled) {
				rt.log.Error("stage failed", zap.String("stage", s.name), zap.Error(err))
				return fmt.Errorf("%s: %w", s.name, err)
			}
			return nil
		})
	}
	done := make(chan error, 1)
	go func() { done <- g.Wait() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	rt.log.Info("stopping: finishing in-flight work", zap.Duration("grace", shutdownGrace))
	select {
	case err := <-done:
		rt.log.Info("stopped cleanly")
		return err
	case <-time.After(shutdownGrace):
		return cli.Exit(fmt.Sprintf("stages still running after %v: %v", shutdownGrace, tracker.running()), 1)
	}
}

// reloadOnHUP re-reads the configuration file on SIGHUP and applies what can change safely at
// run time: the log level.
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
		v, err := config.Load(rt.configPath, rt.cli, os.Environ())
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

// statusCollector exports queue depths, instances and failing checks at scrape time.
func (rt *runtime) statusCollector() *status.Collector {
	return &status.Collector{Pool: rt.pool, Keys: rt.keys, Options: rt.statusOptions(), Clock: rt.clock, Log: rt.log}
}

func (rt *runtime) statusOptions() status.Options {
	queues := []string{rt.values.String("executive.queue"), rt.values.String("notifier.queue")}
	queues = append(queues, sortedValues(rt.values.MediumQueues())...)
	return status.Options{Queues: queues, StaleAfter: 3 * rt.heartbeat()}
}

// retentionStage trims history continuously (SPEC 4.12).
func (rt *runtime) retentionStage(prometheus.Registerer) stage {
	s := &retention.Sweeper{Pool: rt.pool, Keys: rt.keys, Clock: rt.clock, Log: rt.log.With(zap.String("stage", "retention")),
		Policy: retention.Policy{MaxAge: rt.values.Duration("retention.max_age"), MaxEntries: rt.values.Int("retention.max_entries")}}
	interval := rt.values.Duration("retention.interval")
	return stage{name: "retention", auxiliary: true, run: func(ctx context.Context) error { s.Run(ctx, interval); return nil }}
}

// stageTracker knows which stages are running, for /readyz.
type stageTracker struct {
	mu      sync.Mutex
	live    map[string]bool
	stopped []string
}

func (t *stageTracker) start(name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.live == nil {
		t.live = map[string]bool{}
	}
	t.live[name] = true
}

func (t *stageTracker) stop(name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.live, name)
	t.stopped = append(t.stopped, name)
}

func (t *stageTracker) ready() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.stopped) > 0 {
		return fmt.Errorf("stages stopped: %v", t.stopped)
	}
	return nil
}

func (t *stageTracker) running() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return sortedKeysOf(t.live)
}
