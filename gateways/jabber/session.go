package jabber

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	xmpp "github.com/xmppo/go-xmpp"
	"go.uber.org/zap"
)

// session is one logged-in connection.
type session struct {
	*Stream
	domain string

	mu      sync.Mutex
	pending map[string]chan struct{} // ping id -> closed when answered
	seq     atomic.Uint64

	// occupants maps room -> nick -> real bare JID ("" when the room hides it); serve goroutine
	// only.
	occupants map[string]map[string]string
}

var errSessionEnded = errors.New("XMPP connection lost")

// sendConfirmed sends msg followed by a ping to the server and waits for the answer: the server
// handles a client's stanzas in order, so the answer proves it took the message.
func (s *session) sendConfirmed(ctx context.Context, msg xmpp.Chat, timeout time.Duration) error {
	id := fmt.Sprintf("flapjack-%d", s.seq.Add(1))
	answered := make(chan struct{})
	s.mu.Lock()
	s.pending[id] = answered
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.pending, id)
		s.mu.Unlock()
	}()
	var to strings.Builder
	_ = xml.EscapeText(&to, []byte(s.domain))
	err := s.Write(func(c *xmpp.Client) error {
		if _, err := c.Send(msg); err != nil {
			return err
		}
		_, err := c.SendOrg(fmt.Sprintf("<iq type='get' id='%s' to='%s'><ping xmlns='urn:xmpp:ping'/></iq>", id, to.String()))
		return err
	})
	if err != nil {
		return err
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-answered:
		return nil
	case <-s.Done():
		return fmt.Errorf("%w before the server confirmed the message", errSessionEnded)
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return fmt.Errorf("the server did not confirm the message within %s", timeout)
	}
}

// consumed takes the answers to our pings off the stream (the reader calls it).
func (s *session) consumed(st any) bool {
	iq, ok := st.(xmpp.IQ)
	return ok && s.confirm(iq.ID)
}

// confirm marks a ping answered; false when id is not one of ours.
func (s *session) confirm(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, ok := s.pending[id]
	if ok {
		close(ch)
		delete(s.pending, id)
	}
	return ok
}

func (s *session) reply(log *zap.Logger, to, typ, text string) {
	err := s.Write(func(c *xmpp.Client) error {
		_, err := c.Send(xmpp.Chat{Remote: to, Type: typ, Text: text})
		return err
	})
	if err != nil {
		log.Warn("cannot send a reply", zap.String("to", to), zap.Error(err))
	}
}
