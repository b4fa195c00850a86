package jabber

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/internal/testing/testprosody"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/schema"
)

func TestMain(m *testing.M) {
	testprosody.EnsureNoProxy()
	os.Exit(m.Run())
}

const (
	botPassword   = "b0t-Pa55word-xyzzy"
	alicePassword = "alice-pw"
	waitFor       = 10 * time.Second
)

// env is a running bot: a private prosody, a Redis database, the Jabber Client and the shared
// queue runner (gateways.New) draining jabber_notifications into it.
type env struct {
	t       *testing.T
	xmpp    *testprosody.Server
	db      *testredis.DB
	keys    schema.Keys
	clk     *clock.Fake
	gw      *Client
	metrics *gateways.Metrics
	logs    *observer.ObservedLogs
	room    string
	bot     string // bare JID
	alice   string // bare JID, allowed in direct chat
	cancel  context.CancelFunc
	stopped chan struct{}
}

type envOption func(*env, *Config)

// startEnv starts prosody (registering flapjack, alice and mallory) and Redis, then the
// gateway with cfg adjusted by opts, and waits until it is connected.
func startEnv(t *testing.T, tlsMode string, opts ...envOption) *env {
	t.Helper()
	e := newEnv(t, tlsMode)
	cfg := e.config(tlsMode)
	for _, o := range opts {
		o(e, &cfg)
	}
	e.start(cfg)
	e.waitConnected()
	return e
}

// newEnv starts the peers without the gateway.
func newEnv(t *testing.T, tlsMode string) *env {
	t.Helper()
	s := testprosody.Start(t)
	e := &env{t: t, xmpp: s, db: testredis.New(t), keys: schema.NewKeys(""), clk: clock.NewFake(t0),
		room: testprosody.Room("ops")}
	e.bot = s.Register(t, "flapjack", botPassword)
	e.alice = s.Register(t, "alice", alicePassword)
	s.Register(t, "mallory", "mallory-pw")
	return e
}

func (e *env) config(tlsMode string) Config {
	cfg := Config{
		Server: "127.0.0.1", Port: e.xmpp.Port, JabberID: e.bot + "/test", Password: botPassword,
		Rooms: []string{e.room}, AllowedJIDs: []string{e.alice}, Identifiers: []string{"fj"},
		TLS: tlsMode, InsecureSkipVerify: true, AllowPlaintext: tlsMode == TLSPlain,
		ReconnectMin: 100 * time.Millisecond, ReconnectMax: 500 * time.Millisecond, SendTimeout: 5 * time.Second,
		DialTimeout: 5 * time.Second,
	}
	if tlsMode == TLSDirect {
		cfg.Port = e.xmpp.TLSPort
	}
	return cfg
}

// start runs the gateway and its queue runner until the test ends.
func (e *env) start(cfg Config) {
	t := e.t
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	e.logs = logs
	log := zap.New(core)
	e.metrics = gateways.NewMetrics(nil)
	gw, err := NewClient(ClientOptions{Config: cfg, Pool: e.db.Pool, Keys: e.keys, Clock: e.clk, Log: log,
		Metrics: e.metrics, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	e.gw = gw
	runner := gateways.New(gateways.Options{Pool: e.db.Pool, Keys: e.keys, Medium: Medium,
		Identity: queue.LocalIdentity(), Clock: e.clk, Log: log, Metrics: e.metrics, Version: "test",
		// Short backoff: were alerts retried while disconnected, they would be dead-lettered
		// within a second.
		FirstBackoff: 20 * time.Millisecond, MaxBackoff: 50 * time.Millisecond}, gw)
	ctx, cancel := context.WithCancel(context.Background())
	e.cancel = cancel
	e.stopped = make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = gw.Run(ctx) }()
	go func() { defer wg.Done(); _ = runner.Run(ctx) }()
	go func() { wg.Wait(); close(e.stopped) }()
	t.Cleanup(e.stop)
}

func (e *env) stop() {
	if e.cancel == nil {
		return
	}
	e.cancel()
	select {
	case <-e.stopped:
	case <-time.After(15 * time.Second):
		e.t.Errorf("gateway did not stop within 15s")
	}
	e.cancel = nil
}

func (e *env) waitConnected() {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if err := e.gw.Ready(ctx); err != nil {
		e.t.Fatalf("gateway not connected within %s: %v\nlogs: %s\nprosody: %s", waitFor, err, e.logText(), e.xmpp.LogTail(15))
	}
}

// logText renders every captured log entry with its fields.
func (e *env) logText() string {
	var b strings.Builder
	for _, entry := range e.logs.All() {
		b.WriteString(entry.Level.String() + " " + entry.Message)
		for k, v := range entry.ContextMap() {
			fmt.Fprintf(&b, " %s=%v", k, v)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// queueAlert RPUSHes an alert onto jabber_notifications, as the notifier does.
func (e *env) queueAlert(a schema.Alert) {
	e.t.Helper()
	raw, err := json.Marshal(a)
	if err != nil {
		e.t.Fatal(err)
	}
	e.db.Do(e.t, "RPUSH", e.keys.Queue("jabber_notifications"), raw)
}

func (e *env) llen(key string) int {
	e.t.Helper()
	n, err := redis.Int(e.db.Do(e.t, "LLEN", key), nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// events returns the events pushed onto `events` (oldest first) without removing them.
func (e *env) events() []schema.Event {
	e.t.Helper()
	raw, err := redis.Strings(e.db.Do(e.t, "LRANGE", e.keys.Events(), 0, -1), nil)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []schema.Event
	for i := len(raw) - 1; i >= 0; i-- {
		ev, err := schema.ParseEvent([]byte(raw[i]))
		if err != nil {
			e.t.Fatalf("queued event %s is invalid: %v", raw[i], err)
		}
		out = append(out, ev)
	}
	return out
}

func problemAlert(address, entity, check, summary string) schema.Alert {
	id := schema.CheckID(entity, check)
	hash := schema.AckHash(id)
	return schema.Alert{Media: Medium, Address: address, ID: "test-" + hash, ContactID: "c1", EventID: id,
		EventHash: &hash, State: "critical", Summary: &summary, NotificationType: "problem", EventCount: 1}
}

// waitUntil polls cond until it holds.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
