package oobetet

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/flapjackgo/flapjack/internal/testing/testpagerduty"
	"github.com/flapjackgo/flapjack/internal/testing/testprosody"
)

func TestMain(m *testing.M) {
	testprosody.EnsureNoProxy()
	os.Exit(m.Run())
}

const (
	routingKey     = "0123456789abcdef0123456789abcdef"
	canaryEntity   = "canary"
	canaryCheck    = "oobetet canary"
	oobetetPass    = "oobetet-Pa55"
	botPass        = "b0t-Pa55"
	alicePass      = "alice-pw"
	waitFor        = 10 * time.Second
	testMaxLatency = 2 * time.Second
)

// ---- PagerDuty ----

// pdServer is PagerDuty's Events API v2 as a local server enforcing the contract
// (testpagerduty.CheckV2): it records the events it accepted, answers 500 to the next failNext
// valid ones (as PagerDuty's outages do) and records every contract violation, which fails
// the test.
type pdServer struct {
	t   *testing.T
	srv *httptest.Server

	mu         sync.Mutex
	accepted   []testpagerduty.V2Event
	failNext   int
	status     int // when not 0: the answer to every valid event (recorded as refused)
	refused    int
	violations []string
}

func newPDServer(t *testing.T) *pdServer {
	t.Helper()
	s := &pdServer{t: t}
	mux := http.NewServeMux()
	mux.HandleFunc(testpagerduty.V2Path, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		ev, problems := testpagerduty.CheckV2(r, body)
		s.mu.Lock()
		defer s.mu.Unlock()
		switch {
		case len(problems) > 0:
			s.violations = append(s.violations, strings.Join(problems, "; "))
			testpagerduty.WriteInvalid(w, problems)
		case s.failNext > 0:
			s.failNext--
			s.refused++
			testpagerduty.WriteJSON(w, http.StatusInternalServerError, map[string]any{"status": "error", "message": "outage"})
		case s.status != 0:
			s.refused++
			testpagerduty.WriteJSON(w, s.status, map[string]any{"status": "invalid event", "message": "refused"})
		default:
			s.accepted = append(s.accepted, ev)
			testpagerduty.WriteAccepted(w, *ev.DedupKey)
		}
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.violations = append(s.violations, "unexpected "+r.Method+" "+r.URL.Path)
		s.mu.Unlock()
		http.NotFound(w, r)
	})
	s.srv = httptest.NewServer(mux)
	t.Cleanup(func() {
		s.srv.Close()
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, v := range s.violations {
			t.Errorf("PagerDuty contract violated: %s", v)
		}
	})
	return s
}

func (s *pdServer) events() []testpagerduty.V2Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]testpagerduty.V2Event(nil), s.accepted...)
}

func (s *pdServer) refusals() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused
}

func (s *pdServer) setFailNext(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failNext = n
}

func (s *pdServer) setStatus(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status = status
}

// actions lists the accepted events' actions, in order.
func (s *pdServer) actions() []string {
	var out []string
	for _, ev := range s.events() {
		out = append(out, ev.EventAction)
	}
	return out
}

// waitEvents waits until n events were accepted and returns them.
func (s *pdServer) waitEvents(n int) []testpagerduty.V2Event {
	s.t.Helper()
	waitUntil(s.t, fmt.Sprintf("%d PagerDuty events", n), func() bool { return len(s.events()) >= n })
	return s.events()
}

// ---- XMPP ----

// room is a private prosody with three accounts — flapjacktest (oobetet), flapjack (the
// Jabber gateway, or a person playing it) and alice — and the room ops, which alice joins
// first (creating it) to read everything said there.
type room struct {
	t     *testing.T
	xmpp  *testprosody.Server
	jid   string
	alice *testprosody.Person
}

func newRoom(t *testing.T) *room {
	t.Helper()
	s := testprosody.Start(t)
	r := &room{t: t, xmpp: s, jid: testprosody.Room("ops")}
	s.Register(t, "flapjacktest", oobetetPass)
	s.Register(t, "flapjack", botPass)
	s.Register(t, "alice", alicePass)
	r.alice = testprosody.Connect(t, s, "alice", alicePass)
	r.alice.Join(r.jid, "alice")
	return r
}

// config is oobetet's configuration for this room, watching the canary.
func (r *room) config() Config {
	return Config{Server: "127.0.0.1", Port: r.xmpp.Port, JabberID: testprosody.JID("flapjacktest") + "/test",
		Password: oobetetPass, Rooms: []string{r.jid}, InsecureSkipVerify: true,
		WatchedEntity: canaryEntity, WatchedCheck: canaryCheck, MaxLatency: testMaxLatency, PagerDutyContact: routingKey}
}

// expectFromOobetet waits for alice to read, in the room, a message from oobetet starting with
// prefix.
func (r *room) expectFromOobetet(prefix string) testprosody.Message {
	r.t.Helper()
	return r.alice.Expect("from oobetet starting "+prefix, func(m testprosody.Message) bool {
		return m.Type == "groupchat" && m.From == r.jid+"/"+DefaultAlias && strings.HasPrefix(m.Text, prefix)
	})
}

// countFromOobetet counts the messages alice got from oobetet starting with prefix.
func (r *room) countFromOobetet(prefix string) int {
	n := 0
	for _, m := range r.alice.Messages() {
		if m.From == r.jid+"/"+DefaultAlias && strings.HasPrefix(m.Text, prefix) {
			n++
		}
	}
	return n
}

// cutter is a TCP relay between oobetet and prosody that the test can cut, so oobetet loses its
// connection while alice keeps hers.
type cutter struct {
	t      *testing.T
	ln     net.Listener
	target string

	mu    sync.Mutex
	cut   bool
	conns []net.Conn
}

func newCutter(t *testing.T, target string) *cutter {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &cutter{t: t, ln: ln, target: target}
	go c.accept()
	t.Cleanup(func() { ln.Close(); c.setCut(true) })
	return c
}

func (c *cutter) port() int { return c.ln.Addr().(*net.TCPAddr).Port }

func (c *cutter) accept() {
	for {
		in, err := c.ln.Accept()
		if err != nil {
			return
		}
		c.mu.Lock()
		cut := c.cut
		c.mu.Unlock()
		if cut {
			in.Close()
			continue
		}
		out, err := net.Dial("tcp", c.target)
		if err != nil {
			in.Close()
			continue
		}
		c.mu.Lock()
		c.conns = append(c.conns, in, out)
		c.mu.Unlock()
		go func() { _, _ = io.Copy(out, in); out.Close() }()
		go func() { _, _ = io.Copy(in, out); in.Close() }()
	}
}

// setCut closes every relayed connection and refuses new ones (true), or accepts again (false).
func (c *cutter) setCut(cut bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cut = cut
	if cut {
		for _, conn := range c.conns {
			conn.Close()
		}
		c.conns = nil
	}
}

// ---- the watcher ----

// running is a Watcher running until the test ends (or stop).
type running struct {
	t      *testing.T
	w      *Watcher
	reg    *prometheus.Registry
	logs   *observer.ObservedLogs
	cancel context.CancelFunc
	done   chan struct{}
}

func newWatcher(t *testing.T, o Options) (*Watcher, *prometheus.Registry, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	reg := prometheus.NewRegistry()
	o.Log, o.Metrics = zap.New(core), NewMetrics(reg)
	w, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return w, reg, logs
}

// looked waits until the watcher has completed a whole look at the clock (decided and delivered)
// that began after this call: what it owes at the clock's present time has gone out.
func (r *running) looked() {
	r.t.Helper()
	from := r.w.ticks.Load()
	// A tick in progress may have read the clock before the caller moved it; the one after it
	// cannot have.
	waitUntil(r.t, "a look at the clock", func() bool { return r.w.ticks.Load() >= from+2 })
}

func runWatcher(t *testing.T, o Options) *running {
	t.Helper()
	w, reg, logs := newWatcher(t, o)
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{t: t, w: w, reg: reg, logs: logs, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		if err := w.Run(ctx); err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	t.Cleanup(r.stop)
	return r
}

func (r *running) stop() {
	r.cancel()
	select {
	case <-r.done:
	case <-time.After(15 * time.Second):
		r.t.Errorf("oobetet did not stop within 15s")
	}
}

// seen waits until the watcher has seen an alert of kind at exactly at (fake clock).
func (r *running) seen(kind Kind, at time.Time) {
	r.t.Helper()
	waitUntil(r.t, fmt.Sprintf("oobetet to see the %s alert", kind), func() bool {
		r.w.mu.Lock()
		defer r.w.mu.Unlock()
		last := r.w.watch.LastProblem
		if kind == Recovery {
			last = r.w.watch.LastRecovery
		}
		return last.Equal(at)
	})
}

// gauge reads a metric of the registry (no labels).
func gauge(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// injected is how many canary events the watcher has queued, of both states.
func injected(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, mf := range mfs {
		if mf.GetName() == "flapjack_oobetet_injected_events_total" {
			for _, m := range mf.GetMetric() {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return n
}

func alarms(w *Watcher, channel, action, result string) float64 {
	return testutil.ToFloat64(w.m.alarms.WithLabelValues(channel, action, result))
}

// canaryText is the Jabber gateway's text of an alert of the canary.
func canaryText(kind Kind) string {
	switch kind {
	case Recovery:
		return `Recovery: "` + canaryCheck + `" on ` + canaryEntity + ` is OK, injected`
	}
	return `Problem: flapjack: ACKID 0a1b2c3d, "` + canaryCheck + `" on ` + canaryEntity + ` is Critical, injected`
}

// waitUntil polls cond until it holds.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
