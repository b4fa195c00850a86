//go:build unix

package receiver

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/schema"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

func mkfifo(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "event_stream.fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	return path
}

// writeFIFO opens the pipe as Nagios does (blocking until the receiver has it open for
// reading), writes the lines and closes it.
func writeFIFO(t *testing.T, path string, lines ...string) error {
	w, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = w.WriteString(strings.Join(lines, "\n") + "\n")
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return err
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

func TestRunNagiosFIFOReopens(t *testing.T) {
	t.Parallel()
	path := mkfifo(t)
	lines := fixtureLines(t)
	core, logs := observer.New(zapcore.InfoLevel)
	enq := &memEnqueuer{}
	var rej rejections
	stop := runNagios(t, NagiosOptions{FIFO: path, ReopenDelay: 5 * time.Millisecond, OnReject: rej.add}, enq, zap.New(core))

	// First writer: the first half of the fixture (lines 1-10: 8 good, 2 bad), then it closes.
	writeErr := make(chan error, 1)
	go func() { writeErr <- writeFIFO(t, path, lines[1:11]...) }()
	if err := <-writeErr; err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the receiver to see the writer go and close its end", 5*time.Second, func() bool {
		return logs.FilterMessage("all writers closed the FIFO; reopening after a delay").Len() >= 1
	})
	if n := enq.count(); n != 8 {
		t.Fatalf("%d events after the first writer, want 8", n)
	}

	// Second writer (Nagios restarted): its open waits for the receiver's reopen.
	go func() { writeErr <- writeFIFO(t, path, lines[11:17]...) }()
	if err := <-writeErr; err != nil {
		t.Fatal(err)
	}
	waitFor(t, "all events", 5*time.Second, func() bool { return enq.count() == len(fixtureEvents) })
	waitFor(t, "all rejections", 5*time.Second, func() bool { return len(rej.get()) == len(fixtureRejections) })

	// Cancelled while waiting for a third writer: returns promptly.
	time.Sleep(20 * time.Millisecond)
	if took := stop(); took > time.Second {
		t.Errorf("RunNagios took %v to return after cancellation", took)
	}
	assertEvents(t, enq.parsed(t), fixtureEvents)
	// Line numbers run on across the reopen, so they match the fixture's.
	assertRejections(t, rej.get(), wantFixtureRejections(t, 0))
	if n := logs.FilterMessage("FIFO opened by a writer; reading").Len(); n != 2 {
		t.Errorf("FIFO opened %d times, want 2", n)
	}
	assertNoReader(t, path)
}

func TestRunNagiosCancelWhileWaitingForWriter(t *testing.T) {
	t.Parallel()
	path := mkfifo(t)
	stop := runNagios(t, NagiosOptions{FIFO: path, ReopenDelay: time.Hour}, &memEnqueuer{}, zap.NewNop())
	time.Sleep(50 * time.Millisecond) // let it block in open
	if took := stop(); took > time.Second {
		t.Errorf("RunNagios took %v to return after cancellation", took)
	}
	assertNoReader(t, path)
}

func TestRunNagiosCancelWhileWriterIdle(t *testing.T) {
	t.Parallel()
	path := mkfifo(t)
	enq := &memEnqueuer{}
	stop := runNagios(t, NagiosOptions{FIFO: path, ReopenDelay: time.Hour}, enq, zap.NewNop())
	w, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	line := tabs("[SERVICEPERFDATA]", "1700000000", "web-01", "HTTP", "OK", "0.01", "0.1", "HTTP OK", "", "")
	if _, err := w.WriteString(line + "\n"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the event", 5*time.Second, func() bool { return enq.count() == 1 })
	// The writer stays connected, so the receiver is blocked in read.
	if took := stop(); took > time.Second {
		t.Errorf("RunNagios took %v to return after cancellation", took)
	}
	assertEvents(t, enq.parsed(t), []schema.Event{svc("web-01", "HTTP", "ok", 1700000000, "HTTP OK", "", "")})
}

// assertNoReader checks the receiver left nothing holding the pipe open for reading: a
// non-blocking open for writing fails with ENXIO exactly when there is no reader.
func assertNoReader(t *testing.T, path string) {
	t.Helper()
	w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err == nil {
		w.Close()
		t.Fatal("the FIFO is still open for reading after RunNagios returned")
	}
	if !errors.Is(err, syscall.ENXIO) {
		t.Fatalf("opening FIFO for writing: %v, want ENXIO", err)
	}
}

func TestRunNagiosBadPath(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	regular := filepath.Join(dir, "perfdata.log")
	if err := os.WriteFile(regular, []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.fifo")
	tests := []struct {
		name string
		opts NagiosOptions
		want string
	}{
		{"missing", NagiosOptions{FIFO: missing}, "nagios receiver: FIFO " + missing + " does not exist (create it with mkfifo and point Nagios' perfdata file at it)"},
		{"regular file", NagiosOptions{FIFO: regular}, "nagios receiver: " + regular + " is not a named pipe (mode -rw-------)"},
		{"no path", NagiosOptions{}, "nagios receiver: no FIFO path given"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := RunNagios(context.Background(), tc.opts, &memEnqueuer{}, zap.NewNop())
			if err == nil || err.Error() != tc.want {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}
