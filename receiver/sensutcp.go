package receiver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"go.uber.org/zap"
)

// DefaultSensuListen is where `flapjack receiver sensu` listens (receiver.sensu.listen).
const DefaultSensuListen = "127.0.0.1:3031"

// sensuReadTimeout bounds one connection: Sensu Go's TCP handler writes the event at once and
// closes (its own timeout defaults to 60 s).
const sensuReadTimeout = 60 * time.Second

// SensuOptions configures ServeSensu.
type SensuOptions struct {
	// Listen is the TCP address to listen on (DefaultSensuListen when empty), unless Listener
	// is given.
	Listen   string
	Listener net.Listener
	// OnReject, if set, is called with every rejected event.
	OnReject func(Rejection)
	// Ready, if set, is called with the listening address once connections are accepted.
	Ready func(addr net.Addr)
}

// ServeSensu accepts Sensu Go TCP handler connections (handler `type: tcp`) until ctx ends.
// The backend opens one connection per event, writes the event's JSON (the JSON mutator's
// output, no delimiter) and closes; each connection is read to its end like `receiver json
// --sensu` input, so several events on one connection (Sensu 1.x's TCP handler, or anything
// that writes JSON) work too. A rejected event is logged with its reasons; it cannot be
// reported back to Sensu, which does not read the socket. Events go to enq (a
// SpoolingEnqueuer keeps them through a Redis outage). On cancellation the listener closes and
// connections in progress are finished.
func ServeSensu(ctx context.Context, opts SensuOptions, enq Enqueuer, log *zap.Logger) error {
	if enq == nil {
		return errors.New("sensu receiver: no Enqueuer given")
	}
	if log == nil {
		log = zap.NewNop()
	}
	ln := opts.Listener
	if ln == nil {
		addr := opts.Listen
		if addr == "" {
			addr = DefaultSensuListen
		}
		var err error
		if ln, err = net.Listen("tcp", addr); err != nil {
			return fmt.Errorf("sensu receiver: %w", err)
		}
	}
	log = log.With(zap.String("receiver", "sensu"), zap.String("listen", ln.Addr().String()))
	log.Info("accepting Sensu TCP handler connections")
	if opts.Ready != nil {
		opts.Ready(ln.Addr())
	}
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return fmt.Errorf("sensu receiver: %w", err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer conn.Close()
			_ = conn.SetReadDeadline(time.Now().Add(sensuReadTimeout))
			// At shutdown a connection still open stops waiting; what it sent is handled.
			stopConn := context.AfterFunc(ctx, func() { _ = conn.SetReadDeadline(time.Now()) })
			defer stopConn()
			clog := log.With(zap.String("remote", conn.RemoteAddr().String()))
			rep, err := RunJSON(context.WithoutCancel(ctx), conn, JSONOptions{Sensu: true, OnReject: opts.OnReject}, enq, clog)
			if err != nil {
				clog.Error("Sensu connection", zap.Error(err), zap.Int("records", rep.Records), zap.Int("queued", rep.Enqueued))
				return
			}
			clog.Debug("Sensu connection", zap.Int("records", rep.Records), zap.Int("queued", rep.Enqueued), zap.Int("rejected", rep.Rejected))
		}()
	}
}
