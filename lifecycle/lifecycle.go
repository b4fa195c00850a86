// Package lifecycle owns how a process runs its long-running parts: every command that runs
// stages (`server`, `executive`, `notifier`, `gateway`, `receiver http`) hands a list of Stage
// to Run, which starts them together, stops them all when a main stage ends or fails, and
// gives them a grace period to finish their in-flight work (STYLE: asynq's shutdown order).
package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"
)

// Stage is one long-running part of a process. When a main stage returns, the process is done
// (`executive --exit-when-empty`) and the others stop; auxiliary stages (metrics listener,
// retention, pollers) may return early without that meaning anything.
type Stage struct {
	Name      string
	Run       func(ctx context.Context) error
	Auxiliary bool
	// Health, when set, is asked by readiness while the stage runs: nil when it is doing its job
	// (oobetet: connected and alerts flowing).
	Health func() error
}

// Names lists the stages' names in order.
func Names(stages []Stage) []string {
	names := make([]string, len(stages))
	for i, s := range stages {
		names[i] = s.Name
	}
	return names
}

// ErrGraceExceeded is returned when stages are still running after the grace period.
var ErrGraceExceeded = errors.New("stages still running after the shutdown grace period")

// Run runs stages until ctx ends or a main stage returns; the first failure stops the others.
// After that, stages get grace to finish their in-flight work.
func Run(ctx context.Context, log *zap.Logger, stages []Stage, tracker *Tracker, grace time.Duration) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	for _, s := range stages {
		tracker.start(s.Name, s.Health)
		wg.Go(func() {
			err := s.Run(ctx)
			tracker.stop(s.Name)
			if !s.Auxiliary {
				cancel()
			}
			if err == nil || errors.Is(err, context.Canceled) {
				return
			}
			log.Error("stage failed", zap.String("stage", s.Name), zap.Error(err))
			mu.Lock()
			if firstErr == nil {
				firstErr = fmt.Errorf("%s: %w", s.Name, err)
			}
			mu.Unlock()
			cancel()
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		log.Info("stopping: finishing in-flight work", zap.Duration("grace", grace))
		select {
		case <-done:
			log.Info("stopped cleanly")
		case <-time.After(grace):
			return fmt.Errorf("%w (%v): %v", ErrGraceExceeded, grace, tracker.Running())
		}
	}
	mu.Lock()
	defer mu.Unlock()
	return firstErr
}

// Tracker knows which stages are running, and how they are, for /readyz.
type Tracker struct {
	mu      sync.Mutex
	live    map[string]func() error // a running stage's health (nil: none)
	stopped []string
}

func (t *Tracker) start(name string, health func() error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.live == nil {
		t.live = map[string]func() error{}
	}
	t.live[name] = health
}

func (t *Tracker) stop(name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.live, name)
	t.stopped = append(t.stopped, name)
}

// Ready is nil while no stage has stopped and every running stage's health is nil.
func (t *Tracker) Ready() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.stopped) > 0 {
		return fmt.Errorf("stages stopped: %v", t.stopped)
	}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(t.live)) {
		if health := t.live[name]; health != nil {
			if err := health(); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// Running lists the stages still running, sorted.
func (t *Tracker) Running() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Sorted(maps.Keys(t.live))
}
