package receiver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/events"
	"github.com/flapjackgo/flapjack/schema"
)

// spoolSuffix names the files of a spool: one event each, named so that sorting the names sorts
// them by the time they were spooled.
const spoolSuffix = ".event"

// Spool is a bounded on-disk queue of events that could not be enqueued because Redis was away.
// Each event is one file in Dir, written under a temporary name and renamed, so a crash never
// leaves half an event; names start with the time in nanoseconds and the process id, so several
// processes (pipe handlers, a long-running receiver) can share a directory and a drain takes
// the events in the order they were spooled. When the files would exceed MaxBytes the oldest
// are dropped, each one logged and counted (Dropped), never silently.
type Spool struct {
	Dir      string
	MaxBytes int64
	Log      *zap.Logger

	seq     atomic.Uint64
	dropped atomic.Int64
}

// Dropped is how many spooled events this Spool dropped to stay within MaxBytes.
func (s *Spool) Dropped() int64 { return s.dropped.Load() }

func (s *Spool) log() *zap.Logger {
	if s.Log == nil {
		return zap.NewNop()
	}
	return s.Log
}

// files lists the spooled events, oldest first, with their sizes.
func (s *Spool) files() ([]string, []int64, error) {
	entries, err := os.ReadDir(s.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var names []string
	var sizes []int64
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), spoolSuffix) || !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // drained meanwhile
		}
		names = append(names, e.Name())
		sizes = append(sizes, info.Size())
	}
	return names, sizes, nil // ReadDir sorts by name
}

// Len is the number of events in the spool.
func (s *Spool) Len() int {
	names, _, _ := s.files()
	return len(names)
}

// Add writes one event to the spool, first dropping the oldest events if it would not fit
// within MaxBytes. It returns how many were dropped.
func (s *Spool) Add(event []byte) (int, error) {
	if s.MaxBytes > 0 && int64(len(event)) > s.MaxBytes {
		return 0, fmt.Errorf("spool: a %d-byte event does not fit receiver.sensu.spool_max_bytes (%d)", len(event), s.MaxBytes)
	}
	if err := os.MkdirAll(s.Dir, 0o750); err != nil {
		return 0, fmt.Errorf("spool: %w", err)
	}
	dropped := 0
	if s.MaxBytes > 0 {
		names, sizes, err := s.files()
		if err != nil {
			return 0, fmt.Errorf("spool: %w", err)
		}
		var total int64
		for _, n := range sizes {
			total += n
		}
		for i := 0; i < len(names) && total+int64(len(event)) > s.MaxBytes; i++ {
			p := filepath.Join(s.Dir, names[i])
			old, _ := os.ReadFile(p)
			if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				return dropped, fmt.Errorf("spool: %w", err)
			}
			total -= sizes[i]
			dropped++
			s.dropped.Add(1)
			s.log().Error("spool full: oldest spooled event dropped", zap.String("spool_dir", s.Dir),
				zap.Int64("spool_max_bytes", s.MaxBytes), zap.ByteString("event", old))
		}
	}
	name := fmt.Sprintf("%020d-%010d-%06d", time.Now().UnixNano(), os.Getpid(), s.seq.Add(1)%1000000)
	tmp := filepath.Join(s.Dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, event, 0o640); err != nil {
		return dropped, fmt.Errorf("spool: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(s.Dir, name+spoolSuffix)); err != nil {
		os.Remove(tmp)
		return dropped, fmt.Errorf("spool: %w", err)
	}
	return dropped, nil
}

// Drain enqueues the spooled events oldest first, removing each once enqueued, and stops at the
// first failure (Redis still away: the rest stay, in order). An event Redis's side refuses as
// invalid is removed and logged. Only one process drains a directory at a time: if another
// holds the lock, Drain returns (0, nil) and leaves the events to it.
func (s *Spool) Drain(ctx context.Context, enq Enqueuer) (int, error) {
	names, _, err := s.files()
	if err != nil || len(names) == 0 {
		return 0, err
	}
	unlock, ok, err := lockDir(s.Dir)
	if err != nil || !ok {
		return 0, err
	}
	defer unlock()
	names, _, err = s.files() // another drainer may have taken some
	if err != nil {
		return 0, err
	}
	n := 0
	for _, name := range names {
		if ctx.Err() != nil {
			return n, nil
		}
		p := filepath.Join(s.Dir, name)
		event, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return n, fmt.Errorf("spool: %w", err)
		}
		if err := enq.Enqueue(context.WithoutCancel(ctx), event); err != nil {
			var invalid *events.InvalidError
			var rej *schema.RejectError
			if !errors.As(err, &invalid) && !errors.As(err, &rej) {
				return n, err
			}
			s.log().Error("spooled event refused as invalid; removed", zap.Error(err), zap.ByteString("event", event))
		} else {
			n++
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return n, fmt.Errorf("spool: %w", err)
		}
	}
	if n > 0 {
		s.log().Info("spooled events delivered", zap.Int("events", n), zap.String("spool_dir", s.Dir))
	}
	return n, nil
}

// SpoolingEnqueuer enqueues through Next while Redis answers and spools events while it does
// not. While the spool holds events, new ones are spooled behind them (after a drain attempt),
// so events reach Redis in the order they arrived.
type SpoolingEnqueuer struct {
	Next  Enqueuer
	Spool *Spool

	mu      sync.Mutex
	spooled atomic.Int64
}

// Spooled is how many events this enqueuer spooled.
func (e *SpoolingEnqueuer) Spooled() int64 { return e.spooled.Load() }

// Enqueue implements Enqueuer; it fails only when the event could neither be enqueued nor
// spooled.
func (e *SpoolingEnqueuer) Enqueue(ctx context.Context, event []byte) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	err := errors.New("spool not empty")
	if _, derr := e.Spool.Drain(ctx, e.Next); derr == nil && e.Spool.Len() == 0 {
		err = e.Next.Enqueue(ctx, event)
	} else if derr != nil {
		err = derr
	}
	if err == nil {
		return nil
	}
	var invalid *events.InvalidError
	if errors.As(err, &invalid) {
		return err
	}
	if _, serr := e.Spool.Add(event); serr != nil {
		return fmt.Errorf("%w (and not spooled: %v)", err, serr)
	}
	e.spooled.Add(1)
	e.Spool.log().Warn("Redis unavailable: event spooled", zap.Error(err), zap.String("spool_dir", e.Spool.Dir))
	return nil
}

// DrainEvery drains the spool every interval until ctx ends (the long-running receiver's way of
// delivering what was spooled, by itself or by pipe handlers, once Redis is back).
func (e *SpoolingEnqueuer) DrainEvery(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		e.mu.Lock()
		_, _ = e.Spool.Drain(ctx, e.Next)
		e.mu.Unlock()
	}
}
