//go:build linux

package receiver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/schema"
	"go.uber.org/zap"
)

func mkfifo(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "flapjack.fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	return path
}

// writeNagios writes lines as Nagios 4 does: open O_RDWR|O_NONBLOCK (never waiting for a
// reader), write, close at once.
func writeNagios(t *testing.T, path string, lines ...string) {
	t.Helper()
	w, err := os.OpenFile(path, os.O_RDWR|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteString(strings.Join(lines, "\n") + "\n"); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// runNagios starts RunNagios and returns a function that cancels it and reports how long it
// took to return.
func runNagios(t *testing.T, opts NagiosOptions, enq Enqueuer, log *zap.Logger) (stop func() time.Duration) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- RunNagios(ctx, opts, enq, log) }()
	t.Cleanup(cancel)
	return func() time.Duration {
		start := time.Now()
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("RunNagios returned %v after cancellation, want nil", err)
			}
			return time.Since(start)
		case <-time.After(5 * time.Second):
			t.Fatal("RunNagios did not return within 5s of cancellation")
			return 0
		}
	}
}

func waitOpen(t *testing.T, stats *NagiosStats) {
	waitFor(t, "the FIFO to be open", 5*time.Second, func() bool { return stats.PipeSize.Load() > 0 })
}

// Nagios closing its end (reload, restart) is not an end of file: nothing is lost, there is no
// reopen delay, and line numbers run on.
func TestRunNagiosReadsThroughWriterRestarts(t *testing.T) {
	t.Parallel()
	path := mkfifo(t)
	lines := fixtureLines(t)
	enq := &memEnqueuer{}
	var rej rejections
	stats := NewNagiosStats(nil)
	stop := runNagios(t, NagiosOptions{FIFO: path, OnReject: rej.add, Stats: stats}, enq, zap.NewNop())
	waitOpen(t, stats)
	writeNagios(t, path, lines[1:11]...)
	writeNagios(t, path, lines[11:17]...) // "restarted" Nagios writes straight away
	waitFor(t, "all events", 5*time.Second, func() bool { return enq.count() == len(fixtureEvents) })
	waitFor(t, "all rejections", 5*time.Second, func() bool { return len(rej.get()) == len(fixtureRejections) })
	if took := stop(); took > time.Second {
		t.Errorf("RunNagios took %v to return after cancellation", took)
	}
	assertEvents(t, enq.parsed(t), fixtureEvents)
	assertRejections(t, rej.get(), wantFixtureRejections(t, 0))
	if got := stats.LinesRead.Load(); got != 16 {
		t.Errorf("lines read %d, want 16", got)
	}
	assertNoReader(t, path)
}

// Lines written while nobody else has the pipe open survive: the receiver's own write end keeps
// the pipe's buffer alive.
func TestRunNagiosPipeBufferAndNoLoss(t *testing.T) {
	t.Parallel()
	path := mkfifo(t)
	enq := &memEnqueuer{}
	stats := NewNagiosStats(nil)
	stop := runNagios(t, NagiosOptions{FIFO: path, Stats: stats}, enq, zap.NewNop())
	defer stop()
	waitOpen(t, stats)
	want := int64(DefaultPipeSize)
	if b, err := os.ReadFile("/proc/sys/fs/pipe-max-size"); err == nil {
		var m int64
		fmt.Sscan(string(b), &m)
		want = min(want, m)
	}
	if got := stats.PipeSize.Load(); got < want {
		t.Errorf("pipe size %d, want at least %d", got, want)
	}
	const n = 2000
	for i := range n {
		writeNagios(t, path, tabs("[SERVICEPERFDATA]", "1700000000", "web-01", "HTTP", "OK", "0", "0", fmt.Sprintf("result %d", i), "", ""))
	}
	waitFor(t, "every line", 10*time.Second, func() bool { return enq.count() == n })
	for i, ev := range enq.parsed(t) {
		if ev.Summary != fmt.Sprintf("result %d", i) {
			t.Fatalf("event %d has summary %q: out of order", i, ev.Summary)
		}
	}
}

func TestRunNagiosCancelWhileIdle(t *testing.T) {
	t.Parallel()
	path := mkfifo(t)
	stats := NewNagiosStats(nil)
	stop := runNagios(t, NagiosOptions{FIFO: path, Stats: stats}, &memEnqueuer{}, zap.NewNop())
	waitOpen(t, stats)
	if took := stop(); took > time.Second {
		t.Errorf("RunNagios took %v to return after cancellation", took)
	}
	assertNoReader(t, path)
}

// assertNoReader checks the receiver left nothing holding the pipe open for reading: a
// non-blocking open for writing fails with ENXIO exactly when there is no reader.
//
// A test running beside this one that starts a process (nsca, Nagios) forks a copy of every
// descriptor, the FIFO's included, for the instant between fork and exec: so the FIFO may look
// open for a moment; it must be closed within a second.
func assertNoReader(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	for {
		w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			if !errors.Is(err, syscall.ENXIO) {
				t.Fatalf("opening FIFO for writing: %v, want ENXIO", err)
			}
			return
		}
		w.Close()
		if time.Now().After(deadline) {
			t.Fatal("the FIFO is still open for reading a second after RunNagios returned")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestRunNagiosCreatesFIFO(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "flapjack.fifo")
	stats := NewNagiosStats(nil)
	stop := runNagios(t, NagiosOptions{FIFO: path, Stats: stats}, &memEnqueuer{}, zap.NewNop())
	defer stop()
	waitOpen(t, stats)
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode()&os.ModeNamedPipe == 0 || st.Mode().Perm() != 0o660 {
		t.Errorf("created %s with mode %s, want a named pipe with 0660", path, st.Mode())
	}
}

func TestRunNagiosRegularFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "flapjack.fifo")
	line := tabs("[SERVICEPERFDATA]", "1700000000", "web-01", "HTTP", "OK", "0.01", "0.1", "HTTP OK", "", "")
	if err := os.WriteFile(path, []byte(line+"\n"+line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := RunNagios(context.Background(), NagiosOptions{FIFO: path}, &memEnqueuer{}, zap.NewNop())
	if err == nil || !strings.Contains(err.Error(), "is a regular file") || !strings.Contains(err.Error(), "--replace-file") {
		t.Fatalf("got %v, want advice naming --replace-file", err)
	}

	enq := &memEnqueuer{}
	stats := NewNagiosStats(nil)
	stop := runNagios(t, NagiosOptions{FIFO: path, ReplaceFile: true, Stats: stats}, enq, zap.NewNop())
	defer stop()
	waitFor(t, "the file's lines", 5*time.Second, func() bool { return enq.count() == 2 })
	if st, err := os.Stat(path); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("no pipe at %s after replacing: %v", path, err)
	}
	aside, _ := filepath.Glob(path + ".replaced-*")
	if len(aside) != 1 {
		t.Fatalf("moved-aside files %v, want one", aside)
	}
	writeNagios(t, path, line)
	waitFor(t, "the pipe's line", 5*time.Second, func() bool { return enq.count() == 3 })
	assertEvents(t, enq.parsed(t)[:1], []schema.Event{svc("web-01", "HTTP", "ok", 1700000000, "HTTP OK", "", "")})
}

func TestRunNagiosBadPath(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	err := RunNagios(context.Background(), NagiosOptions{FIFO: dir}, &memEnqueuer{}, zap.NewNop())
	if err == nil || !strings.Contains(err.Error(), "is not a named pipe") {
		t.Fatalf("directory: got %v", err)
	}
	if err := RunNagios(context.Background(), NagiosOptions{}, &memEnqueuer{}, zap.NewNop()); err == nil || err.Error() != "nagios receiver: no FIFO path given" {
		t.Fatalf("no path: got %v", err)
	}
}

// switchEnqueuer fails while down is set.
type switchEnqueuer struct {
	memEnqueuer
	mu   sync.Mutex
	down bool
}

func (s *switchEnqueuer) set(down bool) { s.mu.Lock(); s.down = down; s.mu.Unlock() }

func (s *switchEnqueuer) Enqueue(ctx context.Context, ev []byte) error {
	s.mu.Lock()
	down := s.down
	s.mu.Unlock()
	if down {
		return errEnqueue
	}
	return s.memEnqueuer.Enqueue(ctx, ev)
}

// While Redis is away lines go on being read, into the spool, and arrive in order when it returns.
func TestRunNagiosSpoolsWhileRedisAway(t *testing.T) {
	t.Parallel()
	path := mkfifo(t)
	spool, err := OpenSpool(t.TempDir(), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	enq := &switchEnqueuer{}
	stats := NewNagiosStats(nil)
	stop := runNagios(t, NagiosOptions{FIFO: path, Stats: stats, Spool: spool}, enq, zap.NewNop())
	defer stop()
	waitOpen(t, stats)
	line := func(i int) string {
		return tabs("[SERVICEPERFDATA]", "1700000000", "web-01", "HTTP", "OK", "0", "0", fmt.Sprintf("r%d", i), "", "")
	}
	writeNagios(t, path, line(0))
	waitFor(t, "the first event", 5*time.Second, func() bool { return enq.count() == 1 })
	enq.set(true)
	for i := 1; i <= 500; i++ {
		writeNagios(t, path, line(i))
	}
	waitFor(t, "500 spooled", 5*time.Second, func() bool { return stats.Spooled.Load() == 500 })
	enq.set(false)
	writeNagios(t, path, line(501))
	waitFor(t, "every event", 10*time.Second, func() bool { return enq.count() == 502 })
	for i, ev := range enq.parsed(t) {
		if ev.Summary != fmt.Sprintf("r%d", i) {
			t.Fatalf("event %d is %q: out of order", i, ev.Summary)
		}
	}
	if spool.Len() != 0 || stats.Dropped.Load() != 0 {
		t.Errorf("spool holds %d, dropped %d; want 0, 0", spool.Len(), stats.Dropped.Load())
	}
}
