package receiver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/events"
	"github.com/flapjackgo/flapjack/schema"
)

// DefaultSpoolMaxBytes bounds the Nagios receiver's spool: an hour of 10,000 services at one
// result a minute (600,000 events) at about 400 bytes an event.
const DefaultSpoolMaxBytes = 256 << 20

// spoolSuffix names segment files: <sequence>.spool, oldest first.
const spoolSuffix = ".spool"

// ErrSpoolBusy is DrainOldest's answer when another process (or goroutine) is draining the spool.
var ErrSpoolBusy = errors.New("spool: being drained by another process")

// Spool is a bounded, ordered on-disk queue of events (one JSON event per line) kept while Redis
// is away. Events are appended in batches to the newest segment file and taken back oldest
// segment first; when appending would pass the bound, the oldest segments are deleted and their
// events counted (Dropped) and logged as dropped.
//
// Several processes may share a directory (Sensu pipe handlers, one process per event, and a
// long-running receiver): every change is made under a lock on the directory after reading it
// again, so appends from all of them go in order and the bound holds over all of them, and one
// process at a time drains (DrainOldest, Drain). Segments left by an earlier run are kept and
// drained first. A Spool is safe for concurrent use.
type Spool struct {
	dir    string
	max    int64
	segMax int64

	mu      sync.Mutex
	log     *zap.Logger
	segs    []spoolSeg // oldest first, as last read from the directory
	next    uint64     // sequence of the next new segment
	fresh   uint64     // this process appends only to segments from this sequence on
	dropped int64
	taken   spoolTaken // what Oldest returned, for Remove
}

type spoolSeg struct {
	seq    uint64
	bytes  int64
	events int64 // -1: not counted yet
}

// spoolTaken is the segment Oldest read: which file, and where each event's line ends.
type spoolTaken struct {
	seq  uint64
	file os.FileInfo // nil: nothing taken
	ends []int64
	read int64
}

// OpenSpool opens (creating it if needed) the spool directory dir, bounded to maxBytes
// (0: DefaultSpoolMaxBytes).
func OpenSpool(dir string, maxBytes int64) (*Spool, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultSpoolMaxBytes
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("spool directory: %w", err)
	}
	// Segments of a sixteenth of the bound (dropping loses that much at a time), at least 64 KiB
	// unless the bound is tiny, at most 8 MiB.
	s := &Spool{dir: dir, max: maxBytes, segMax: min(max(maxBytes/16, min(64<<10, maxBytes/4)), 8<<20), log: zap.NewNop()}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.refreshLocked(); err != nil {
		return nil, err
	}
	// A segment from an earlier run may end in a line cut short: start a new one.
	s.fresh = s.next
	return s, nil
}

// SetLogger sets where dropped events are logged (by default nowhere); call it before use.
func (s *Spool) SetLogger(log *zap.Logger) {
	if log == nil {
		log = zap.NewNop()
	}
	s.mu.Lock()
	s.log = log
	s.mu.Unlock()
}

// Dir is the spool's directory.
func (s *Spool) Dir() string { return s.dir }

func (s *Spool) path(seq uint64) string {
	return filepath.Join(s.dir, fmt.Sprintf("%016d%s", seq, spoolSuffix))
}

// refreshLocked reads the directory again (other processes may have appended, drained or
// dropped), keeping the event counts of segments that have not changed.
func (s *Spool) refreshLocked() error {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("spool directory: %w", err)
	}
	known := make(map[uint64]spoolSeg, len(s.segs))
	for _, g := range s.segs {
		known[g.seq] = g
	}
	var segs []spoolSeg
	for _, e := range entries {
		seq, err := strconv.ParseUint(strings.TrimSuffix(e.Name(), spoolSuffix), 10, 64)
		if err != nil || !strings.HasSuffix(e.Name(), spoolSuffix) || !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		g := spoolSeg{seq: seq, bytes: info.Size(), events: -1}
		if k, ok := known[seq]; ok && k.bytes == g.bytes {
			g.events = k.events
		}
		segs = append(segs, g)
	}
	sort.Slice(segs, func(i, j int) bool { return segs[i].seq < segs[j].seq })
	s.segs = segs
	if len(segs) > 0 {
		s.next = max(s.next, segs[len(segs)-1].seq+1)
	}
	return nil
}

// spoolLines splits a segment into its events and the offset just after each one's line. A
// last line without its newline was cut short by a crash and is left out; empty lines are
// skipped.
func spoolLines(data []byte) (evs [][]byte, ends []int64) {
	off := 0
	for {
		i := bytes.IndexByte(data[off:], '\n')
		if i < 0 {
			return evs, ends
		}
		if line := bytes.TrimSpace(data[off : off+i]); len(line) > 0 {
			evs = append(evs, append([]byte(nil), line...))
			ends = append(ends, int64(off+i+1))
		}
		off += i + 1
	}
}

// Append adds events (JSON without newlines) after everything already spooled. It returns how
// many events were dropped to make room: whole oldest segments, or this batch itself, with an
// error, when it alone is over the bound.
func (s *Spool) Append(evs [][]byte) (dropped int, err error) {
	if len(evs) == 0 {
		return 0, nil
	}
	var buf bytes.Buffer
	for _, e := range evs {
		buf.Write(e)
		buf.WriteByte('\n')
	}
	size := int64(buf.Len())
	s.mu.Lock()
	defer s.mu.Unlock()
	if size > s.max {
		return len(evs), fmt.Errorf("spool: %d events of %d bytes do not fit its bound of %d bytes (%s): not spooled", len(evs), size, s.max, s.dir)
	}
	unlock, err := lockDir(s.dir)
	if err != nil {
		return 0, err
	}
	defer unlock()
	if err := s.refreshLocked(); err != nil {
		return 0, err
	}
	for s.bytesLocked()+size > s.max && len(s.segs) > 0 {
		n, err := s.dropOldestLocked()
		dropped += n
		if err != nil {
			return dropped, err
		}
	}
	f, err := s.headLocked(size)
	if err != nil {
		return dropped, err
	}
	_, err = f.Write(buf.Bytes())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return dropped, fmt.Errorf("spool: %w", err)
	}
	last := &s.segs[len(s.segs)-1]
	last.bytes += size
	if last.events >= 0 {
		last.events += int64(len(evs))
	}
	return dropped, nil
}

// headLocked opens the segment to append size bytes to: the newest one, unless it is being
// drained by this process, is from an earlier run, is full, or ends in a line cut short; else
// a new one.
func (s *Spool) headLocked(size int64) (*os.File, error) {
	if n := len(s.segs); n > 0 {
		last := s.segs[n-1]
		if last.seq >= s.fresh && last.bytes > 0 && last.bytes+size <= s.segMax {
			f, err := os.OpenFile(s.path(last.seq), os.O_RDWR|os.O_APPEND, 0)
			if err == nil {
				b := make([]byte, 1)
				if _, err := f.ReadAt(b, last.bytes-1); err == nil && b[0] == '\n' {
					return f, nil
				}
				f.Close()
			}
		}
	}
	f, err := os.OpenFile(s.path(s.next), os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	s.segs = append(s.segs, spoolSeg{seq: s.next, events: 0})
	s.next++
	return f, nil
}

func (s *Spool) bytesLocked() int64 {
	var n int64
	for _, g := range s.segs {
		n += g.bytes
	}
	return n
}

// dropOldestLocked deletes the oldest segment, counting and logging its events.
func (s *Spool) dropOldestLocked() (int, error) {
	g := s.segs[0]
	s.segs = s.segs[1:]
	data, _ := os.ReadFile(s.path(g.seq))
	evs, _ := spoolLines(data)
	if err := os.Remove(s.path(g.seq)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, fmt.Errorf("spool: %w", err)
	}
	s.dropped += int64(len(evs))
	if len(evs) > 0 {
		s.log.Error("spool full: oldest spooled events dropped", zap.String("spool_dir", s.dir),
			zap.Int64("spool_max_bytes", s.max), zap.Int("events", len(evs)), zap.Int64("dropped_total", s.dropped),
			zap.ByteString("first", evs[0]), zap.ByteString("last", evs[len(evs)-1]))
	}
	return len(evs), nil
}

// Oldest returns the events of the oldest segment, in order, and its sequence number for
// Remove; nil when the spool is empty. A line cut short by a crash is skipped. This process
// appends to a new segment from then on.
func (s *Spool) Oldest() (seq uint64, evs [][]byte, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	unlock, err := lockDir(s.dir)
	if err != nil {
		return 0, nil, err
	}
	defer unlock()
	s.taken = spoolTaken{}
	if err := s.refreshLocked(); err != nil {
		return 0, nil, err
	}
	for len(s.segs) > 0 {
		g := s.segs[0]
		s.fresh = max(s.fresh, g.seq+1)
		f, err := os.Open(s.path(g.seq))
		if errors.Is(err, os.ErrNotExist) {
			s.segs = s.segs[1:]
			continue
		}
		if err != nil {
			return g.seq, nil, fmt.Errorf("spool: %w", err)
		}
		info, err := f.Stat()
		var data []byte
		if err == nil {
			data, err = io.ReadAll(f)
		}
		f.Close()
		if err != nil {
			return g.seq, nil, fmt.Errorf("spool: %w", err)
		}
		evs, ends := spoolLines(data)
		if len(evs) == 0 { // empty, or only a line cut short
			if err := os.Remove(s.path(g.seq)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return g.seq, nil, fmt.Errorf("spool: %w", err)
			}
			s.segs = s.segs[1:]
			continue
		}
		s.segs[0].events = int64(len(evs))
		s.taken = spoolTaken{seq: g.seq, file: info, ends: ends, read: int64(len(data))}
		return g.seq, evs, nil
	}
	return 0, nil, nil
}

// Remove deletes what Oldest returned of segment seq once its events are safely queued (events
// another process appended since stay). It is a no-op if that segment was dropped meanwhile.
func (s *Spool) Remove(seq uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.taken.file == nil || s.taken.seq != seq {
		return nil
	}
	return s.consumeLocked(s.taken.read)
}

// trim deletes the first n events Oldest returned of segment seq (they were queued; the rest
// were not), so they are not queued twice.
func (s *Spool) trim(seq uint64, n int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.taken.file == nil || s.taken.seq != seq || n <= 0 {
		return nil
	}
	return s.consumeLocked(s.taken.ends[min(n, len(s.taken.ends))-1])
}

// consumeLocked deletes the first off bytes of the taken segment: the file, or its beginning.
func (s *Spool) consumeLocked(off int64) error {
	t := s.taken
	s.taken = spoolTaken{}
	unlock, err := lockDir(s.dir)
	if err != nil {
		return err
	}
	defer unlock()
	defer s.refreshLocked() //nolint:errcheck // the next operation reads it again
	p := s.path(t.seq)
	info, err := os.Stat(p)
	if errors.Is(err, os.ErrNotExist) || (err == nil && !os.SameFile(info, t.file)) {
		return nil // dropped meanwhile
	}
	if err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	if info.Size() <= off {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("spool: %w", err)
		}
		return nil
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	tmp := filepath.Join(s.dir, fmt.Sprintf(".%016d.tmp", t.seq))
	if err := os.WriteFile(tmp, data[off:], 0o640); err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("spool: %w", err)
	}
	return nil
}

// DrainOldest delivers the oldest segment's events, in order, through deliver, which returns how
// many of them it is done with (queued, or refused for good) before an error. Those done are
// removed from the spool, so nothing is queued twice. It returns how many were done: 0 and nil
// when the spool is empty, ErrSpoolBusy when another process is draining it.
func (s *Spool) DrainOldest(ctx context.Context, deliver func(context.Context, [][]byte) (int, error)) (int, error) {
	unlock, ok, err := tryLockDrain(s.dir)
	if err != nil {
		return 0, fmt.Errorf("spool: %w", err)
	}
	if !ok {
		return 0, ErrSpoolBusy
	}
	defer unlock()
	n, _, err := s.drainOldest(ctx, deliver)
	return n, err
}

// drainOldest is DrainOldest with the drain lock held; more is false when the spool was empty.
func (s *Spool) drainOldest(ctx context.Context, deliver func(context.Context, [][]byte) (int, error)) (n int, more bool, err error) {
	seq, evs, err := s.Oldest()
	if err != nil || evs == nil {
		return 0, false, err
	}
	n, err = deliver(ctx, evs)
	if err != nil {
		if terr := s.trim(seq, n); terr != nil {
			s.logger().Error("removing delivered events from the spool", zap.Error(terr))
		}
		return n, true, err
	}
	return n, true, s.Remove(seq)
}

func (s *Spool) logger() *zap.Logger {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log
}

// Drain queues the spooled events through enq, oldest first, until the spool is empty, enq
// fails (Redis still away: the rest stay, in order) or ctx ends. An event refused as invalid is
// removed and logged. If another process is draining, Drain leaves the events to it and returns
// (0, nil). It returns how many events were queued.
func (s *Spool) Drain(ctx context.Context, enq Enqueuer) (int, error) {
	unlock, ok, err := tryLockDrain(s.dir)
	if err != nil {
		return 0, fmt.Errorf("spool: %w", err)
	}
	if !ok {
		s.mu.Lock()
		defer s.mu.Unlock()
		return 0, s.refreshLocked()
	}
	defer unlock()
	log := s.logger()
	queued := 0
	deliver := func(ctx context.Context, evs [][]byte) (int, error) {
		for i, ev := range evs {
			if err := enq.Enqueue(ctx, ev); err != nil {
				var invalid *events.InvalidError
				var rej *schema.RejectError
				if !errors.As(err, &invalid) && !errors.As(err, &rej) {
					return i, err
				}
				log.Error("spooled event refused as invalid; removed", zap.Error(err), zap.ByteString("event", ev))
				continue
			}
			queued++
		}
		return len(evs), nil
	}
	for ctx.Err() == nil {
		_, more, err := s.drainOldest(context.WithoutCancel(ctx), deliver)
		if err != nil || !more {
			if queued > 0 {
				log.Info("spooled events delivered", zap.Int("events", queued), zap.String("spool_dir", s.dir))
			}
			return queued, err
		}
	}
	return queued, nil
}

// empty reports whether the spool held nothing when last read.
func (s *Spool) empty() bool { s.mu.Lock(); defer s.mu.Unlock(); return len(s.segs) == 0 }

// Len is the number of events spooled, as of this Spool's last look at the directory (each
// Append, Oldest, Remove and Drain looks again).
func (s *Spool) Len() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	for i := range s.segs {
		g := &s.segs[i]
		if g.events < 0 {
			data, err := os.ReadFile(s.path(g.seq))
			if err != nil {
				continue
			}
			evs, _ := spoolLines(data)
			g.events = int64(len(evs))
		}
		n += g.events
	}
	return n
}

// Bytes is the size of the spool on disk, as of this Spool's last look at the directory.
func (s *Spool) Bytes() int64 { s.mu.Lock(); defer s.mu.Unlock(); return s.bytesLocked() }

// Dropped counts events this Spool dropped to keep within its bound since it was opened.
func (s *Spool) Dropped() int64 { s.mu.Lock(); defer s.mu.Unlock(); return s.dropped }

// Close releases the spool; the files stay for the next run.
func (s *Spool) Close() error { return nil }

// SpoolingEnqueuer enqueues through Next while Redis answers and appends events to Spool while it
// does not. While the spool holds events, new ones are spooled behind them (after a drain
// attempt), so events reach Redis in the order they arrived.
type SpoolingEnqueuer struct {
	Next  Enqueuer
	Spool *Spool

	mu      sync.Mutex
	spooled atomic.Int64
}

// Spooled is how many events this enqueuer spooled.
func (e *SpoolingEnqueuer) Spooled() int64 { return e.spooled.Load() }

// Enqueue implements Enqueuer; it fails only when the event could neither be enqueued nor
// spooled, or is invalid.
func (e *SpoolingEnqueuer) Enqueue(ctx context.Context, event []byte) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, err := e.Spool.Drain(ctx, e.Next)
	if err == nil {
		if !e.Spool.empty() {
			err = errors.New("events spooled earlier are still waiting")
		} else if err = e.Next.Enqueue(ctx, event); err == nil {
			return nil
		}
	}
	var invalid *events.InvalidError
	if errors.As(err, &invalid) {
		return err
	}
	if _, serr := e.Spool.Append([][]byte{event}); serr != nil {
		return fmt.Errorf("%w (and not spooled: %v)", err, serr)
	}
	e.spooled.Add(1)
	e.Spool.logger().Warn("Redis unavailable: event spooled", zap.Error(err), zap.String("spool_dir", e.Spool.dir))
	return nil
}

// DrainEvery drains the spool every interval until ctx ends (the long-running receiver's way of
// delivering what was spooled, by itself or by other processes, once Redis is back).
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
