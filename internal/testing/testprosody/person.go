package testprosody

import (
	"crypto/tls"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	xmpp "github.com/xmppo/go-xmpp"
)

// WaitFor bounds every wait of a Person: for a message, for the server's answer to a ping.
const WaitFor = 10 * time.Second

// Message is one chat message a Person received.
type Message struct {
	Type string // chat or groupchat
	From string // full JID: user@domain/resource, or room@muc/nick
	Text string
}

// Person is the human on the other side of a bot: a plain go-xmpp client logged in to the
// server (STARTTLS, certificate not verified) that records every message with a body it gets.
// Expect and Quiet read the messages in order, each once; Messages returns all of them.
type Person struct {
	t    testing.TB
	name string
	jid  string
	c    *xmpp.Client
	wmu  sync.Mutex // go-xmpp's writes are not safe for concurrent use
	seq  atomic.Int64
	iqs  chan string
	dead chan struct{} // closed when the reader stops

	mu      sync.Mutex
	msgs    []Message
	read    int           // how many of msgs Expect and Quiet have looked at
	arrived chan struct{} // closed (and replaced) when a message arrives
	err     error         // why the reader stopped
}

// Connect logs user in and starts recording what it receives. The connection is closed at the
// end of the test.
func Connect(t testing.TB, s *Server, user, password string) *Person {
	t.Helper()
	o := xmpp.Options{Host: s.Addr(), User: JID(user), Password: password, Resource: "phone",
		NoTLS: true, StartTLS: true, TLSConfig: &tls.Config{ServerName: Domain, InsecureSkipVerify: true},
		DialTimeout: 5 * time.Second, Status: "chat"}
	c, err := o.NewClient()
	if err != nil {
		t.Fatalf("login %s: %v\n%s", user, err, s.LogTail(10))
	}
	p := &Person{t: t, name: user, jid: JID(user), c: c, iqs: make(chan string, 16), dead: make(chan struct{}),
		arrived: make(chan struct{})}
	go p.receive()
	t.Cleanup(p.close)
	return p
}

func (p *Person) receive() {
	defer close(p.dead)
	for {
		st, err := p.c.Recv()
		if err != nil {
			p.mu.Lock()
			p.err = err
			p.mu.Unlock()
			return
		}
		switch v := st.(type) {
		case xmpp.Chat:
			if v.Text != "" {
				p.mu.Lock()
				p.msgs = append(p.msgs, Message{Type: v.Type, From: v.Remote, Text: v.Text})
				close(p.arrived)
				p.arrived = make(chan struct{})
				p.mu.Unlock()
			}
		case xmpp.IQ:
			select {
			case p.iqs <- v.ID:
			default:
			}
		}
	}
}

// close ends the stream and closes the client once the server has closed it: go-xmpp's Close
// must not run while Recv does.
func (p *Person) close() {
	p.wmu.Lock()
	_, _ = p.c.SendOrg("</stream:stream>")
	p.wmu.Unlock()
	select {
	case <-p.dead:
		_ = p.c.Close()
	case <-time.After(3 * time.Second):
		// The server is stopped after this cleanup (cleanups run last first), which ends the reader.
	}
}

// JID is the person's bare JID.
func (p *Person) JID() string { return p.jid }

// Say sends a message of type typ (chat or groupchat) to a JID or room.
func (p *Person) Say(to, typ, text string) {
	p.t.Helper()
	p.wmu.Lock()
	defer p.wmu.Unlock()
	if _, err := p.c.Send(xmpp.Chat{Remote: to, Type: typ, Text: text}); err != nil {
		p.t.Fatalf("%s: send: %v", p.name, err)
	}
}

// Join enters a room with no history and waits until the server has handled it.
func (p *Person) Join(room, nick string) {
	p.t.Helper()
	p.wmu.Lock()
	_, err := p.c.JoinMUC(room, nick, xmpp.StanzaHistory, 0, nil)
	p.wmu.Unlock()
	if err != nil {
		p.t.Fatalf("%s: join %s: %v", p.name, room, err)
	}
	p.Sync()
}

// Sync pings the server and waits for the answer: everything sent before has been handled.
func (p *Person) Sync() {
	p.t.Helper()
	id := "sync-" + strconv.FormatInt(p.seq.Add(1), 10)
	p.wmu.Lock()
	_, err := p.c.SendOrg(fmt.Sprintf("<iq type='get' id='%s' to='%s'><ping xmlns='urn:xmpp:ping'/></iq>", id, Domain))
	p.wmu.Unlock()
	if err != nil {
		p.t.Fatalf("%s: ping: %v", p.name, err)
	}
	deadline := time.After(WaitFor)
	for {
		select {
		case got := <-p.iqs:
			if got == id {
				return
			}
		case <-deadline:
			p.t.Fatalf("%s: no ping answer within %s", p.name, WaitFor)
		}
	}
}

// Messages returns every message received so far, oldest first.
func (p *Person) Messages() []Message {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Message(nil), p.msgs...)
}

// unread returns the next message not yet looked at, or a channel closed when one arrives.
func (p *Person) unread() (Message, bool, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.read < len(p.msgs) {
		p.read++
		return p.msgs[p.read-1], true, nil
	}
	return Message{}, false, p.arrived
}

// Expect waits for the next message satisfying match; the ones before it (greetings, noise)
// are passed over and listed if none matches in time.
func (p *Person) Expect(what string, match func(Message) bool) Message {
	p.t.Helper()
	deadline := time.After(WaitFor)
	var skipped []string
	for {
		m, ok, arrived := p.unread()
		if ok {
			if match(m) {
				return m
			}
			skipped = append(skipped, fmt.Sprintf("%s %s: %q", m.Type, m.From, m.Text))
			continue
		}
		select {
		case <-arrived:
		case <-deadline:
			p.t.Fatalf("%s: no message %s within %s; got instead:\n%s", p.name, what, WaitFor, strings.Join(skipped, "\n"))
		}
	}
}

// ExpectText waits for a message of type typ, from a JID starting with from, reading exactly text.
func (p *Person) ExpectText(typ, from, text string) Message {
	p.t.Helper()
	return p.Expect(fmt.Sprintf("%s from %s %q", typ, from, text), func(m Message) bool {
		return m.Type == typ && strings.HasPrefix(m.From, from) && m.Text == text
	})
}

// Quiet asserts that no message is waiting or arrives during d.
func (p *Person) Quiet(d time.Duration) {
	p.t.Helper()
	m, ok, arrived := p.unread()
	if !ok {
		select {
		case <-arrived:
			m, ok, _ = p.unread()
		case <-time.After(d):
		}
	}
	if ok {
		p.t.Errorf("%s: unexpected message %s from %s: %q", p.name, m.Type, m.From, m.Text)
	}
}

// Alive reports whether the connection still stands, and why not.
func (p *Person) Alive() (bool, error) {
	select {
	case <-p.dead:
		p.mu.Lock()
		defer p.mu.Unlock()
		return false, p.err
	default:
		return true, nil
	}
}
