package testproviders

import (
	"context"
	"encoding/json"
	"fmt"
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
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/views"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/schema"
)

// Gateway is a medium's gateway as deployed: the shared runner (gateways.New) draining
// <medium>_notifications on a real Redis into a Sender, with 3 attempts and short backoffs.
type Gateway struct {
	t      testing.TB
	DB     *testredis.DB
	Keys   schema.Keys
	Medium string
	queue  string
	id     queue.Identity
}

// NewLogger is a debug-level logger whose entries the test can read (to look for secrets).
func NewLogger() (*zap.Logger, *observer.ObservedLogs) {
	core, logs := observer.New(zapcore.DebugLevel)
	return zap.New(core), logs
}

// LogText is every entry with its fields, one per line.
func LogText(logs *observer.ObservedLogs) string {
	var b strings.Builder
	for _, e := range logs.All() {
		b.WriteString(e.Level.String() + " " + e.Message)
		for k, v := range e.ContextMap() {
			fmt.Fprintf(&b, " %s=%v", k, v)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// RunOptions tune the runner of Start; zero values: 3 attempts, backoffs of 20 to 50 ms, a
// fake clock at 2026-01-05 10:00 UTC.
type RunOptions struct {
	MaxAttempts              int
	FirstBackoff, MaxBackoff time.Duration
	Clock                    clock.Clock
	ReplyCodes               *gateways.ReplyCodes // SMS reply codes issued by the runner
}

// RunGateway runs medium's gateway around sender until the test ends.
func RunGateway(t testing.TB, medium string, sender gateways.Sender, log *zap.Logger) *Gateway {
	t.Helper()
	g := NewGateway(t, medium)
	g.Start(sender, log, RunOptions{})
	return g
}

// NewGateway prepares medium's gateway on a fresh Redis database; Start runs it. A sender that
// needs Redis itself is built on g.DB between the two.
func NewGateway(t testing.TB, medium string) *Gateway {
	return &Gateway{t: t, DB: testredis.New(t), Keys: schema.NewKeys(""), Medium: medium, queue: schema.DefaultMediumQueue(medium),
		id: queue.LocalIdentity()}
}

// Start runs the gateway around sender until the test ends or the returned stop is called
// (a gateway restart: stop waits until the runner has handed its alerts back).
func (g *Gateway) Start(sender gateways.Sender, log *zap.Logger, o RunOptions) (stop func()) {
	t, medium := g.t, g.Medium
	t.Helper()
	if log == nil {
		log = zap.NewNop()
	}
	if o.MaxAttempts == 0 {
		o.MaxAttempts = 3
	}
	if o.FirstBackoff == 0 {
		o.FirstBackoff, o.MaxBackoff = 20*time.Millisecond, 50*time.Millisecond
	}
	if o.Clock == nil {
		o.Clock = clock.NewFake(time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC))
	}
	runner := gateways.New(gateways.Options{Pool: g.DB.Pool, Keys: g.Keys, Medium: medium, Identity: g.id,
		Clock: o.Clock, Log: log, Version: "test", MaxAttempts: o.MaxAttempts,
		FirstBackoff: o.FirstBackoff, MaxBackoff: o.MaxBackoff, ReplyCodes: o.ReplyCodes}, sender)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = runner.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			done := make(chan struct{})
			go func() { wg.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(15 * time.Second):
				t.Errorf("%s gateway did not stop within 15s", medium)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// Queue RPUSHes an alert onto the medium's list, as the notifier does, and returns the JSON.
func (g *Gateway) Queue(a schema.Alert) []byte {
	g.t.Helper()
	raw, err := json.Marshal(a)
	if err != nil {
		g.t.Fatal(err)
	}
	g.QueueRaw(raw)
	return raw
}

// QueueLogged queues an alert exactly as the notifier does: the push onto its medium's list
// (the alert's media) and the delivery log's queued record in one atomic write, at the unix
// time at.
func (g *Gateway) QueueLogged(a schema.Alert, at int64) {
	g.t.Helper()
	raw, err := json.Marshal(a)
	if err != nil {
		g.t.Fatal(err)
	}
	var ops model.Ops
	ops.RPush(g.Keys.Queue(schema.DefaultMediumQueue(a.Media)), raw)
	model.QueueDelivery(&ops, g.Keys, a, at)
	conn := g.DB.Pool.Get()
	defer conn.Close()
	if _, err := model.Apply(conn, model.ApplyTarget{}, []model.Record{{Ops: ops}}); err != nil {
		g.t.Fatal(err)
	}
}

// QueueRaw RPUSHes raw onto the medium's list.
func (g *Gateway) QueueRaw(raw []byte) {
	g.t.Helper()
	g.DB.Do(g.t, "RPUSH", g.Keys.Queue(g.queue), raw)
}

// QueueLen is how many alerts wait on the medium's list.
func (g *Gateway) QueueLen() int {
	g.t.Helper()
	n, err := redis.Int(g.DB.Do(g.t, "LLEN", g.Keys.Queue(g.queue)), nil)
	if err != nil {
		g.t.Fatal(err)
	}
	return n
}

// Failed returns the dead-lettered records of <medium>_notifications_failed.
func (g *Gateway) Failed() []map[string]any {
	g.t.Helper()
	raw, err := redis.Strings(g.DB.Do(g.t, "LRANGE", g.Keys.FailedQueue(g.queue), 0, -1), nil)
	if err != nil {
		g.t.Fatal(err)
	}
	var out []map[string]any
	for _, r := range raw {
		var m map[string]any
		if err := json.Unmarshal([]byte(r), &m); err != nil {
			g.t.Fatalf("failed record %s: %v", r, err)
		}
		out = append(out, m)
	}
	return out
}

// Claimed is how many alerts the gateway holds in its processing list: claimed, and not yet
// recorded as delivered or dead-lettered.
func (g *Gateway) Claimed() int {
	g.t.Helper()
	n, err := redis.Int(g.DB.Do(g.t, "LLEN", g.Keys.Processing(gateways.Stage(g.Medium), g.id.ID())), nil)
	if err != nil {
		g.t.Fatal(err)
	}
	return n
}

// Settle waits until cond holds and the gateway is done with every alert: none waits on the
// list and none is claimed. An alert recorded as delivered or dead-lettered has left the
// processing list, so nothing can send it again: what the test then counts is final.
func (g *Gateway) Settle(what string, cond func() bool) {
	g.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() || g.QueueLen() != 0 || g.Claimed() != 0 {
		if time.Now().After(deadline) {
			g.t.Fatalf("timed out waiting for %s: %d queued, %d claimed, %d dead-lettered", what, g.QueueLen(), g.Claimed(), len(g.Failed()))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Delivered waits until the delivery log records alert a (queued with QueueLogged) as
// delivered and returns its record.
func (g *Gateway) Delivered(a schema.Alert) schema.DeliveryRecord {
	g.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		conn := g.DB.Pool.Get()
		recs, err := views.ReadDeliveries(conn, g.Keys, views.DeliveryFilter{Contact: a.ContactID})
		conn.Close()
		if err != nil {
			g.t.Fatal(err)
		}
		for _, r := range recs {
			if r.ID == a.ID && r.Status == schema.DeliveryDelivered {
				return r
			}
		}
		if time.Now().After(deadline) {
			g.t.Fatalf("alert %s not delivered: %+v", a.ID, recs)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// LoggedIDs queues alerts as the notifier does, runs a gateway with sender until each is
// delivered, and returns the message id each one's delivered record carries, by alert id.
func (g *Gateway) LoggedIDs(sender gateways.Sender, alerts ...schema.Alert) map[string]string {
	g.t.Helper()
	for _, a := range alerts {
		var at int64
		if a.Time != nil {
			at = *a.Time
		}
		g.QueueLogged(a, at)
	}
	stop := g.Start(sender, nil, RunOptions{})
	defer stop()
	ids := map[string]string{}
	for _, a := range alerts {
		ids[a.ID] = g.Delivered(a).MessageID
	}
	return ids
}

// Alert is the alert the media's tests send: a notification of type typ about web-01:HTTP in
// state with summary, for contact ops at address, timed 2026-01-05 10:00 UTC.
func Alert(medium, address, typ, state, summary string) schema.Alert {
	at, hash := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC).Unix(), "8f4a2b1c"
	return schema.Alert{Media: medium, Address: address, ID: "a1", ContactID: "ops", EventID: "web-01:HTTP",
		EventHash: &hash, State: state, Summary: &summary, Time: &at, NotificationType: typ}
}
