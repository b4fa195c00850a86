package receiver

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// DefaultSpoolMaxBytes bounds the Nagios receiver's spool: an hour of 10,000 services at one
// result a minute (600,000 events) at about 400 bytes an event.
const DefaultSpoolMaxBytes = 256 << 20

// spoolSuffix names segment files: <sequence>.spool, oldest first.
const spoolSuffix = ".spool"

// Spool is a bounded, ordered on-disk queue of events (one JSON event per line) kept while Redis
// is away. Events are appended in batches and taken back oldest segment first; when appending
// would pass MaxBytes, the oldest segments are deleted and their events counted as dropped.
// A Spool is safe for concurrent use.
type Spool struct {
	dir    string
	max    int64
	segMax int64

	mu      sync.Mutex
	segs    []spoolSeg // oldest first; the last may be open for appending (head)
	head    *os.File
	next    uint64
	bytes   int64
	events  int64
	dropped int64
}

type spoolSeg struct {
	seq    uint64
	bytes  int64
	events int64
}

// OpenSpool opens (creating it if needed) the spool directory dir, bounded to maxBytes
// (0: DefaultSpoolMaxBytes). Segments left by an earlier run are kept and drained first.
func OpenSpool(dir string, maxBytes int64) (*Spool, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultSpoolMaxBytes
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("spool directory: %w", err)
	}
	s := &Spool{dir: dir, max: maxBytes, segMax: min(max(maxBytes/16, 64<<10), 8<<20)}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("spool directory: %w", err)
	}
	for _, e := range entries {
		seq, err := strconv.ParseUint(strings.TrimSuffix(e.Name(), spoolSuffix), 10, 64)
		if err != nil || !strings.HasSuffix(e.Name(), spoolSuffix) || !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("spool: %w", err)
		}
		seg := spoolSeg{seq: seq, bytes: int64(len(b)), events: int64(bytes.Count(b, []byte{'\n'}))}
		s.segs = append(s.segs, seg)
		s.bytes += seg.bytes
		s.events += seg.events
		s.next = max(s.next, seq+1)
	}
	sort.Slice(s.segs, func(i, j int) bool { return s.segs[i].seq < s.segs[j].seq })
	return s, nil
}

func (s *Spool) path(seq uint64) string {
	return filepath.Join(s.dir, fmt.Sprintf("%016d%s", seq, spoolSuffix))
}

// Append adds events (JSON without newlines) after everything already spooled. It returns how
// many events were dropped to make room: whole oldest segments, or this batch itself when it
// alone is over the bound.
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
		s.dropped += int64(len(evs))
		return len(evs), nil
	}
	for s.bytes+size > s.max && len(s.segs) > 0 {
		n, err := s.dropOldestLocked()
		dropped += n
		if err != nil {
			return dropped, err
		}
	}
	if s.head == nil || s.segs[len(s.segs)-1].bytes+size > s.segMax {
		s.sealLocked()
		f, err := os.OpenFile(s.path(s.next), os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o640)
		if err != nil {
			return dropped, fmt.Errorf("spool: %w", err)
		}
		s.head = f
		s.segs = append(s.segs, spoolSeg{seq: s.next})
		s.next++
	}
	if _, err := s.head.Write(buf.Bytes()); err != nil {
		return dropped, fmt.Errorf("spool: %w", err)
	}
	last := &s.segs[len(s.segs)-1]
	last.bytes += size
	last.events += int64(len(evs))
	s.bytes += size
	s.events += int64(len(evs))
	return dropped, nil
}

func (s *Spool) sealLocked() {
	if s.head != nil {
		s.head.Close()
		s.head = nil
	}
}

func (s *Spool) dropOldestLocked() (int, error) {
	seg := s.segs[0]
	if len(s.segs) == 1 {
		s.sealLocked()
	}
	s.segs = s.segs[1:]
	s.bytes -= seg.bytes
	s.events -= seg.events
	s.dropped += seg.events
	if err := os.Remove(s.path(seg.seq)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return int(seg.events), fmt.Errorf("spool: %w", err)
	}
	return int(seg.events), nil
}

// Oldest returns the events of the oldest segment, in order, and its sequence number for
// Remove; nil when the spool is empty. A line cut short by a crash is skipped.
func (s *Spool) Oldest() (seq uint64, evs [][]byte, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.segs) == 0 {
		return 0, nil, nil
	}
	if len(s.segs) == 1 {
		s.sealLocked() // appends go to a new segment from now on
	}
	seq = s.segs[0].seq
	f, err := os.Open(s.path(seq))
	if err != nil {
		return seq, nil, fmt.Errorf("spool: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLineBytes*4)
	for sc.Scan() {
		if len(sc.Bytes()) > 0 {
			evs = append(evs, append([]byte(nil), sc.Bytes()...))
		}
	}
	return seq, evs, sc.Err()
}

// Remove deletes segment seq (as returned by Oldest) once its events are safely queued. It is
// a no-op if that segment was dropped meanwhile.
func (s *Spool) Remove(seq uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.segs) == 0 || s.segs[0].seq != seq {
		return nil
	}
	seg := s.segs[0]
	s.segs = s.segs[1:]
	s.bytes -= seg.bytes
	s.events -= seg.events
	if err := os.Remove(s.path(seq)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("spool: %w", err)
	}
	return nil
}

// Len is the number of events spooled.
func (s *Spool) Len() int64 { s.mu.Lock(); defer s.mu.Unlock(); return s.events }

// Bytes is the size of the spool on disk.
func (s *Spool) Bytes() int64 { s.mu.Lock(); defer s.mu.Unlock(); return s.bytes }

// Dropped counts events dropped to keep the spool within its bound since it was opened.
func (s *Spool) Dropped() int64 { s.mu.Lock(); defer s.mu.Unlock(); return s.dropped }

// Close closes the segment being appended to; the files stay for the next run.
func (s *Spool) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sealLocked()
	return nil
}
