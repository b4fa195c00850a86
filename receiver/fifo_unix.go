//go:build unix

package receiver

import (
	"context"
	"os"
	"syscall"
	"time"
)

// Wake-up tuning for openFIFO: how often to poke a blocked open, and for how long.
const (
	wakeInterval = 5 * time.Millisecond
	wakeGiveUp   = 2 * time.Second
)

// openFIFO opens the named pipe for reading, waiting for a writer, and gives up when ctx ends.
//
// The open is a plain blocking O_RDONLY open, run in a goroutine, rather than O_RDWR or
// O_NONBLOCK: with O_RDWR we would be a writer ourselves and never see EOF when Nagios goes away,
// and an O_NONBLOCK reader with no writer reads EOF at once, which would have us spin through
// reopen delays and leave Nagios' own open waiting in every delay. After the open, Go sets the
// descriptor non-blocking and reads it through its poller, so a read can be interrupted with
// SetReadDeadline.
//
// An open blocked in the kernel cannot be cancelled, so on cancellation we wake it by opening
// the pipe for writing ourselves (O_NONBLOCK: this fails at once with ENXIO until the reader's
// open is actually waiting, so we retry briefly), then close what it opened.
func openFIFO(ctx context.Context, path string) (*os.File, error) {
	type result struct {
		f   *os.File
		err error
	}
	done := make(chan result, 1)
	go func() {
		f, err := os.OpenFile(path, os.O_RDONLY, 0)
		done <- result{f, err}
	}()
	select {
	case r := <-done:
		return r.f, r.err
	case <-ctx.Done():
	}
	deadline := time.Now().Add(wakeGiveUp)
	for {
		if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		select {
		case r := <-done:
			if r.f != nil {
				r.f.Close()
			}
			return nil, ctx.Err()
		case <-time.After(wakeInterval):
		}
		if time.Now().After(deadline) {
			// The path no longer leads to the pipe the open waits on (removed or replaced).
			// Leave the open behind and close whatever it eventually returns.
			go func() {
				if r := <-done; r.f != nil {
					r.f.Close()
				}
			}()
			return nil, ctx.Err()
		}
	}
}
