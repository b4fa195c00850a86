package reliability

import (
	"crypto/tls"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	xmpp "github.com/xmppo/go-xmpp"

	"github.com/flapjackgo/flapjack/internal/testpagerduty"
	"github.com/flapjackgo/flapjack/internal/testprosody"
)

// ---- PagerDuty Events API v2 ----

// pdDelivery is one event the PagerDuty server accepted.
type pdDelivery struct {
	RoutingKey string
	DedupKey   string
	Action     string
	Summary    string // payload.summary ("" for acknowledge and resolve)
	At         time.Time
}

// pagerDutyServer is a local Events API v2 endpoint that checks the contract as PagerDuty does
// (a request breaking it is answered 400 and recorded as a violation), accepts valid events
// with 202 and records them. It records an event as soon as it is valid and answers after a
// random delay (up to maxDelay): PagerDuty has the event even if the client dies before the
// answer arrives, which is the window in which a gateway may repeat one delivery.
type pagerDutyServer struct {
	srv      *httptest.Server
	maxDelay time.Duration

	mu         sync.Mutex
	rng        *rand.Rand
	accepted   []pdDelivery
	violations []string
	aborted    int // requests whose body never arrived whole (client killed mid-request)
}

func newPagerDutyServer(t *testing.T, seed uint64, maxDelay time.Duration) *pagerDutyServer {
	t.Helper()
	s := &pagerDutyServer{maxDelay: maxDelay, rng: rand.New(rand.NewPCG(seed, 7))}
	mux := http.NewServeMux()
	mux.HandleFunc(testpagerduty.V2Path, s.enqueue)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.violation("unexpected %s %s", r.Method, r.URL.Path)
		http.NotFound(w, r)
	})
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the events_base_url to configure.
func (s *pagerDutyServer) URL() string { return s.srv.URL }

func (s *pagerDutyServer) violation(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.violations = append(s.violations, fmt.Sprintf(format, args...))
}

func (s *pagerDutyServer) enqueue(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		// The client died while sending: nothing was delivered, nothing to answer.
		s.mu.Lock()
		s.aborted++
		s.mu.Unlock()
		return
	}
	ev, problems := testpagerduty.CheckV2(r, body)
	if len(problems) > 0 {
		s.violation("%s", strings.Join(problems, "; "))
		testpagerduty.WriteInvalid(w, problems)
		return
	}
	d := pdDelivery{RoutingKey: ev.RoutingKey, DedupKey: *ev.DedupKey, Action: ev.EventAction, At: time.Now()}
	if ev.Payload != nil {
		d.Summary = ev.Payload.Summary
	}
	s.mu.Lock()
	s.accepted = append(s.accepted, d)
	delay := time.Duration(0)
	if s.maxDelay > 0 {
		delay = time.Duration(s.rng.Int64N(int64(s.maxDelay)))
	}
	s.mu.Unlock()
	time.Sleep(delay)
	testpagerduty.WriteAccepted(w, d.DedupKey)
}

func (s *pagerDutyServer) snapshot() (accepted []pdDelivery, violations []string, aborted int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]pdDelivery(nil), s.accepted...), append([]string(nil), s.violations...), s.aborted
}

// ---- XMPP: the person on the other side ----

// xmppMessage is one message a person received.
type xmppMessage struct {
	Type string // chat or groupchat
	From string
	Text string
}

// xmppPeer is a plain go-xmpp client logged in as a person, recording every message it gets.
type xmppPeer struct {
	t    *testing.T
	jid  string
	c    *xmpp.Client
	wmu  sync.Mutex
	seq  atomic.Int64
	iqs  chan string
	dead chan struct{}

	mu   sync.Mutex
	msgs []xmppMessage
	err  error
}

func connectPeer(t *testing.T, s *testprosody.Server, user, password string) *xmppPeer {
	t.Helper()
	o := xmpp.Options{Host: s.Addr(), User: testprosody.JID(user), Password: password, Resource: "phone",
		NoTLS: true, StartTLS: true, TLSConfig: &tls.Config{ServerName: testprosody.Domain, InsecureSkipVerify: true},
		DialTimeout: 5 * time.Second, Status: "chat"}
	c, err := o.NewClient()
	if err != nil {
		t.Fatalf("login %s: %v\n%s", user, err, s.LogTail(10))
	}
	p := &xmppPeer{t: t, jid: testprosody.JID(user), c: c, iqs: make(chan string, 16), dead: make(chan struct{})}
	go func() {
		defer close(p.dead)
		for {
			st, err := c.Recv()
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
					p.msgs = append(p.msgs, xmppMessage{Type: v.Type, From: v.Remote, Text: v.Text})
					p.mu.Unlock()
				}
			case xmpp.IQ:
				select {
				case p.iqs <- v.ID:
				default:
				}
			}
		}
	}()
	t.Cleanup(func() {
		// go-xmpp's Close must not run while Recv does: end the stream, let the server close
		// it, and close the client once the reader has stopped.
		p.wmu.Lock()
		_, _ = p.c.SendOrg("</stream:stream>")
		p.wmu.Unlock()
		select {
		case <-p.dead:
			_ = p.c.Close()
		case <-time.After(3 * time.Second):
			// prosody is stopped after this cleanup, which ends the reader.
		}
	})
	return p
}

// join enters a room with no history and waits until the server has handled it.
func (p *xmppPeer) join(room, nick string) {
	p.t.Helper()
	p.wmu.Lock()
	_, err := p.c.JoinMUC(room, nick, xmpp.StanzaHistory, 0, nil)
	p.wmu.Unlock()
	if err != nil {
		p.t.Fatalf("%s: join %s: %v", p.jid, room, err)
	}
	p.sync()
}

// sync pings the server and waits for the answer: everything sent before has been handled.
func (p *xmppPeer) sync() {
	p.t.Helper()
	id := "sync-" + strconv.FormatInt(p.seq.Add(1), 10)
	p.wmu.Lock()
	_, err := p.c.SendOrg(fmt.Sprintf("<iq type='get' id='%s' to='%s'><ping xmlns='urn:xmpp:ping'/></iq>", id, testprosody.Domain))
	p.wmu.Unlock()
	if err != nil {
		p.t.Fatalf("%s: ping: %v", p.jid, err)
	}
	deadline := time.After(10 * time.Second)
	for {
		select {
		case got := <-p.iqs:
			if got == id {
				return
			}
		case <-deadline:
			p.t.Fatalf("%s: no ping answer within 10s", p.jid)
		}
	}
}

func (p *xmppPeer) messages() []xmppMessage {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]xmppMessage(nil), p.msgs...)
}

// alive reports whether the connection still stands (and why not).
func (p *xmppPeer) alive() (bool, error) {
	select {
	case <-p.dead:
		p.mu.Lock()
		defer p.mu.Unlock()
		return false, p.err
	default:
		return true, nil
	}
}

// ---- Redis MONITOR: every push onto the watched lists ----

// pushTap watches a Redis server with MONITOR and records every value RPUSHed or LPUSHed onto
// the watched keys of one database, by anyone, scripts included. It shows what the stages
// queued, even after the next stage has consumed it.
type pushTap struct {
	conn    redis.Conn
	db      string
	watched map[string]bool
	done    chan struct{}

	mu     sync.Mutex
	pushes map[string][]string
	err    error
}

func startPushTap(t *testing.T, addr string, db int, keys ...string) *pushTap {
	t.Helper()
	conn, err := redis.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("monitor: %v", err)
	}
	tap := &pushTap{conn: conn, db: strconv.Itoa(db), watched: map[string]bool{}, done: make(chan struct{}),
		pushes: map[string][]string{}}
	for _, k := range keys {
		tap.watched[k] = true
	}
	if ok, err := redis.String(conn.Do("MONITOR")); err != nil || ok != "OK" {
		t.Fatalf("MONITOR: %v %v", ok, err)
	}
	go func() {
		defer close(tap.done)
		for {
			line, err := redis.String(conn.Receive())
			if err != nil {
				tap.mu.Lock()
				tap.err = err
				tap.mu.Unlock()
				return
			}
			tap.observe(line)
		}
	}()
	t.Cleanup(tap.close)
	return tap
}

func (tap *pushTap) close() {
	_ = tap.conn.Close()
	<-tap.done
}

// observe parses `1700000000.123456 [0 lua] "RPUSH" "key" "value" ...`.
func (tap *pushTap) observe(line string) {
	open := strings.IndexByte(line, '[')
	end := strings.IndexByte(line, ']')
	if open < 0 || end < open {
		return
	}
	db, _, _ := strings.Cut(line[open+1:end], " ")
	if db != tap.db {
		return
	}
	args, ok := parseMonitorArgs(line[end+1:])
	if !ok || len(args) < 3 {
		return
	}
	cmd := strings.ToUpper(args[0])
	if (cmd != "RPUSH" && cmd != "LPUSH") || !tap.watched[args[1]] {
		return
	}
	tap.mu.Lock()
	tap.pushes[args[1]] = append(tap.pushes[args[1]], args[2:]...)
	tap.mu.Unlock()
}

// values returns everything pushed onto key so far, in order.
func (tap *pushTap) values(key string) []string {
	tap.mu.Lock()
	defer tap.mu.Unlock()
	return append([]string(nil), tap.pushes[key]...)
}

// parseMonitorArgs splits the quoted, escaped arguments of a MONITOR line (Redis's sdscatrepr:
// \\ \" \n \r \t \a \b and \xHH).
func parseMonitorArgs(s string) ([]string, bool) {
	var args []string
	i := 0
	for {
		for i < len(s) && s[i] == ' ' {
			i++
		}
		if i >= len(s) {
			return args, true
		}
		if s[i] != '"' {
			return nil, false
		}
		i++
		var b strings.Builder
		for {
			if i >= len(s) {
				return nil, false
			}
			c := s[i]
			if c == '"' {
				i++
				break
			}
			if c != '\\' {
				b.WriteByte(c)
				i++
				continue
			}
			if i+1 >= len(s) {
				return nil, false
			}
			switch s[i+1] {
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'a':
				b.WriteByte('\a')
			case 'b':
				b.WriteByte('\b')
			case 'x':
				if i+3 >= len(s) {
					return nil, false
				}
				v, err := strconv.ParseUint(s[i+2:i+4], 16, 8)
				if err != nil {
					return nil, false
				}
				b.WriteByte(byte(v))
				i += 2
			default:
				b.WriteByte(s[i+1])
			}
			i += 2
		}
		args = append(args, b.String())
	}
}
