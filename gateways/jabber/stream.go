package jabber

import (
	"context"
	"sync"
	"time"

	xmpp "github.com/xmppo/go-xmpp"
	"go.uber.org/zap"
)

// Stream is the plumbing every logged-in XMPP connection of flapjack needs around go-xmpp (the
// Jabber gateway's session, oobetet's): writes serialised (go-xmpp writes each stanza with one
// Write), an end after which writes fail, one reader goroutine whose stanzas the session
// handles on its own goroutine, and a close that lets the reader stop before the client closes.
type Stream struct {
	Client *xmpp.Client

	writeMu sync.Mutex
	done    chan struct{}
	endOnce sync.Once
	ended   error

	incoming chan any
	recvErr  chan error
	recvDone chan struct{}
}

// StartStream starts reading client. A stanza for which consumed returns true is taken by the
// reader itself (a ping answer); the others wait for Serve. Write returns ended once the
// stream has ended.
func StartStream(client *xmpp.Client, ended error, consumed func(any) bool) *Stream {
	s := &Stream{Client: client, done: make(chan struct{}), ended: ended,
		incoming: make(chan any, 64), recvErr: make(chan error, 1), recvDone: make(chan struct{})}
	go s.read(consumed)
	return s
}

func (s *Stream) read(consumed func(any) bool) {
	defer close(s.recvDone)
	for {
		st, err := s.Client.Recv()
		if err != nil {
			s.recvErr <- err
			return
		}
		if consumed != nil && consumed(st) {
			continue
		}
		select {
		case s.incoming <- st:
		case <-s.done:
			return
		}
	}
}

// Done is closed when the stream has ended.
func (s *Stream) Done() <-chan struct{} { return s.done }

// End marks the stream ended: later writes fail and the reader stops handing on stanzas.
func (s *Stream) End() { s.endOnce.Do(func() { close(s.done) }) }

// Write runs fn with the write lock, unless the stream has ended.
func (s *Stream) Write(fn func(*xmpp.Client) error) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	select {
	case <-s.done:
		return s.ended
	default:
	}
	return fn(s.Client)
}

// Serve hands each stanza read to handle, on the caller's goroutine, until ctx ends (nil) or
// the connection fails (its error).
func (s *Stream) Serve(ctx context.Context, handle func(any)) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-s.recvErr:
			return err
		case st := <-s.incoming:
			handle(st)
		}
	}
}

// Close ends the stream: the server is asked to close it so the reader's Recv fails, and once
// the reader has stopped the client is closed. go-xmpp's Close must not run while Recv does;
// when the server does not answer within a few seconds the reader is left to the keepalive,
// which closes the connection.
func (s *Stream) Close(log *zap.Logger) {
	s.End()
	s.writeMu.Lock()
	_, _ = s.Client.SendOrg("</stream:stream>")
	s.writeMu.Unlock()
	select {
	case <-s.recvDone:
		go s.Client.Close()
	case <-time.After(3 * time.Second):
		log.Warn("the XMPP server did not close the stream; leaving the connection to the keepalive")
	}
}
