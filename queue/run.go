package queue

import (
	"context"
	"time"

	"go.uber.org/zap"
)

// Worker handles batches of one stage.
type Worker interface {
	// Start prepares the stage once registered (counters, caches); it may be a no-op.
	Start(ctx context.Context) error
	// ProcessNext claims one batch, blocking up to wait for the first item, and handles it,
	// returning how many items it finished. ctx ends at shutdown: a worker stops claiming then,
	// and decides itself how much in-flight work to finish (see Grace).
	ProcessNext(ctx context.Context, wait time.Duration) (int, error)
}

// Finisher is a Worker that may hold claimed work between calls of ProcessNext (the executive's
// batch claimed ahead of the one it processed). Close has it finish that work before handing
// back what is still claimed, so a stopping stage does not give back work it had in hand.
type Finisher interface {
	FinishClaimed(ctx context.Context) (int, error)
}

// Loop runs a stage: register and recover dead peers, then process batches until ctx ends
// (finishing the batch in hand) or, with ExitWhenEmpty, until the queue is empty. Redis errors
// are logged and retried with capped backoff; a stage never exits because Redis went away.
type Loop struct {
	Registry      *Registry
	Consumer      *Consumer
	Worker        Worker
	Log           *zap.Logger
	ExitWhenEmpty bool
	// OnError is called for each failed attempt (metrics).
	OnError func(error)
}

// Run runs the stage until ctx ends.
func (l *Loop) Run(ctx context.Context) error {
	if err := l.start(ctx); err != nil {
		return err
	}
	beatCtx, stopBeat := context.WithCancel(context.WithoutCancel(ctx))
	beatDone := make(chan struct{})
	go func() { l.Registry.Run(beatCtx); close(beatDone) }()
	defer func() {
		stopBeat()
		<-beatDone
		l.shutdown()
	}()

	wait := time.Second
	if l.ExitWhenEmpty {
		wait = 0
	}
	var backoff Backoff
	reconnected := true
	for ctx.Err() == nil {
		// After a failure, re-registering is the first act: the record may have expired while
		// Redis was away, and a peer must see it before this instance claims anything.
		if !reconnected {
			if err := l.Registry.Heartbeat(ctx); err != nil {
				if ctx.Err() != nil {
					break
				}
				l.retry(ctx, &backoff, err, "cannot reach Redis to re-register; retrying")
				continue
			}
			reconnected = true
		}
		n, err := l.Worker.ProcessNext(ctx, wait)
		if err != nil && ctx.Err() != nil {
			break
		}
		if err != nil {
			l.Registry.LostRedis()
			reconnected = false
			l.retry(ctx, &backoff, err, "processing failed; claimed items stay claimed and are retried")
			continue
		}
		backoff.Reset()
		if n == 0 && l.ExitWhenEmpty {
			return nil
		}
	}
	return nil
}

// retry counts and logs a failed attempt and waits out the next backoff delay.
func (l *Loop) retry(ctx context.Context, backoff *Backoff, err error, msg string) {
	if l.OnError != nil {
		l.OnError(err)
	}
	delay := backoff.Next()
	l.Log.Error(msg, zap.Error(err), zap.Duration("retry_in", delay))
	Sleep(ctx, delay)
}

// Open registers the instance, starts the worker and recovers dead peers' work, once, returning
// how many items it recovered. Run does it (retrying); callers that drive ProcessNext
// themselves (replay, tests) call Open and Close around it.
func (l *Loop) Open(ctx context.Context) (int, error) {
	if err := l.Registry.Register(ctx); err != nil {
		return 0, err
	}
	if err := l.Worker.Start(ctx); err != nil {
		return 0, err
	}
	return l.Registry.RecoverDead(ctx)
}

// Close finishes the work the worker holds claimed between calls (see Finisher), hands back
// anything still claimed (a failed last batch), returning how many items, and deregisters the
// instance.
func (l *Loop) Close(ctx context.Context) (int, error) {
	if f, ok := l.Worker.(Finisher); ok {
		if _, err := f.FinishClaimed(ctx); err != nil {
			l.Log.Warn("could not finish the work claimed ahead; it is handed back", zap.Error(err))
		}
	}
	n, err := l.Consumer.RequeueOwn(ctx)
	if err != nil {
		return 0, err
	}
	return n, l.Registry.Deregister(ctx)
}

func (l *Loop) start(ctx context.Context) error {
	var backoff Backoff
	for {
		n, err := l.Open(ctx)
		if err == nil {
			l.Log.Info("stage started", zap.String("instance", l.Consumer.Identity().ID()),
				zap.String("queue", l.Consumer.Spec().Source), zap.Int("recovered", n))
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		l.retry(ctx, &backoff, err, "cannot start; retrying")
	}
}

// shutdown hands back anything still claimed (a failed last batch) and deregisters.
func (l *Loop) shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n, err := l.Close(ctx)
	if n > 0 {
		l.Log.Warn("handed unfinished items back to the queue", zap.Int("items", n))
	}
	if err != nil {
		l.Log.Error("could not hand unfinished items back or deregister; a peer will recover them", zap.Error(err))
		return
	}
	l.Log.Info("stage stopped")
}

// Defaults of Backoff: a stage's delays while Redis fails are 100ms, 200ms, 400ms, 800ms, then
// 1s. The cap is low because a stage waiting for Redis to come back (a restart, a Sentinel
// failover) adds up to one delay to the alerting gap, while a retry costs Redis next to nothing.
const (
	DefaultBackoffFirst = 100 * time.Millisecond
	DefaultBackoffMax   = time.Second
)

// maxDoublings bounds the doubling whatever First and Max are: past it, delays stay at First
// doubled maxDoublings times (about 12 days from 1s) even if Max is larger.
const maxDoublings = 20

// Backoff yields capped doubling delays: First, twice First, four times First …, never more than
// Max. A zero First or Max means DefaultBackoffFirst or DefaultBackoffMax. It is the one backoff
// of the project: the stages, the gateways' delivery retries, the Jabber reconnect and the Nagios
// receiver's enqueue retries each set their own bounds.
type Backoff struct {
	First time.Duration
	Max   time.Duration

	attempt int
}

// Next returns the next delay.
func (b *Backoff) Next() time.Duration {
	d := b.Delay(b.attempt)
	b.attempt++
	return d
}

// Delay is the delay that follows n earlier ones (Delay(0) is First), for a caller that counts
// its attempts itself; it does not advance Next.
func (b *Backoff) Delay(n int) time.Duration {
	first, limit := b.First, b.Max
	if first <= 0 {
		first = DefaultBackoffFirst
	}
	if limit <= 0 {
		limit = DefaultBackoffMax
	}
	d := first
	for range min(n, maxDoublings) {
		if d > limit/2 {
			return limit // doubling would pass the cap (or overflow)
		}
		d *= 2
	}
	return min(d, limit)
}

// Reset starts over after a success.
func (b *Backoff) Reset() { b.attempt = 0 }

// Sleep waits d or until ctx ends.
func Sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// Grace returns a context for in-flight work that outlives ctx by at most grace: work started
// before a shutdown gets a bounded time to finish.
func Grace(ctx context.Context, grace time.Duration) (context.Context, context.CancelFunc) {
	inflight, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() {
		t := time.AfterFunc(grace, cancel)
		context.AfterFunc(inflight, func() { t.Stop() })
	})
	return inflight, func() { stop(); cancel() }
}
