package email

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
	"github.com/flapjackgo/flapjack/internal/testing/testsmtp"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/schema"
)

const queueName = "email_notifications"

// deliveryEnv is the email gateway as deployed: the shared queue runner (gateways.New) draining
// email_notifications on a real Redis into a Sender that talks to a real SMTP server.
type deliveryEnv struct {
	t    *testing.T
	db   *testredis.DB
	keys schema.Keys
	srv  *testsmtp.Server
	g    *gateways.Gateway
	logs *observer.ObservedLogs
}

// startDelivery runs the gateway until the test ends, retrying every 20–100 ms up to attempts
// times.
func startDelivery(t *testing.T, srv *testsmtp.Server, attempts int) *deliveryEnv {
	t.Helper()
	e := &deliveryEnv{t: t, db: testredis.New(t), keys: schema.NewKeys(""), srv: srv}
	core, logs := observer.New(zapcore.InfoLevel)
	e.logs = logs
	log := zap.New(core)
	clk := clock.NewFake(t0)
	cfg := serverAt(srv)
	cfg.Timeout = 5 * time.Second
	sender, err := NewSender(SenderOptions{Config: cfg, Pool: e.db.Pool, Keys: e.keys, Clock: clk, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	e.g = gateways.New(gateways.Options{Pool: e.db.Pool, Keys: e.keys, Medium: Medium, Identity: queue.LocalIdentity(),
		Clock: clk, Log: log, Version: "test", MaxAttempts: attempts,
		FirstBackoff: 20 * time.Millisecond, MaxBackoff: 100 * time.Millisecond}, sender)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = e.g.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			t.Errorf("gateway did not stop within 15s")
		}
	})
	return e
}

// queueAlert RPUSHes an alert onto email_notifications, as the notifier does.
func (e *deliveryEnv) queueAlert(a schema.Alert) {
	e.t.Helper()
	raw, err := json.Marshal(a)
	if err != nil {
		e.t.Fatal(err)
	}
	e.db.Do(e.t, "RPUSH", e.keys.Queue(queueName), raw)
}

func (e *deliveryEnv) llen(key string) int {
	e.t.Helper()
	n, err := redis.Int(e.db.Do(e.t, "LLEN", key), nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// failed returns the dead-lettered records.
func (e *deliveryEnv) failed() []map[string]any {
	e.t.Helper()
	raw, err := redis.Strings(e.db.Do(e.t, "LRANGE", e.keys.FailedQueue(queueName), 0, -1), nil)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []map[string]any
	for _, r := range raw {
		var m map[string]any
		if err := json.Unmarshal([]byte(r), &m); err != nil {
			e.t.Fatalf("failed record %s: %v", r, err)
		}
		out = append(out, m)
	}
	return out
}

// drained checks that nothing is left queued, claimed or dead-lettered.
func (e *deliveryEnv) drained() {
	e.t.Helper()
	processing := e.keys.Processing(gateways.Stage(Medium), queue.LocalIdentity().ID())
	if q, p, f := e.llen(e.keys.Queue(queueName)), e.llen(processing), len(e.failed()); q+p+f != 0 {
		e.t.Errorf("%d alerts left queued, %d claimed, %d dead-lettered", q, p, f)
	}
}

// settle waits until cond holds, then a little longer to catch late duplicates.
func (e *deliveryEnv) settle(what string, cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out waiting for %s: %d messages, %d failed\nserver events:\n%s\nlogs:\n%s",
				what, len(e.srv.Messages(e.t)), len(e.failed()), e.srv.EventsText(), logText(e.logs))
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
}

func logText(logs *observer.ObservedLogs) string {
	var b strings.Builder
	for _, entry := range logs.All() {
		b.WriteString(entry.Level.String() + " " + entry.Message)
		for k, v := range entry.ContextMap() {
			fmt.Fprintf(&b, " %s=%v", k, v)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// TestTemporaryReplyIsRetriedThenDelivered: 451 twice at RCPT, then 250: the runner retries
// and the mail arrives once.
func TestTemporaryReplyIsRetriedThenDelivered(t *testing.T) {
	t.Parallel()
	srv := testsmtp.Start(t, testsmtp.Options{Replies: map[string]testsmtp.Reply{"ada@example.com": {Code: 451, Times: 2}}})
	e := startDelivery(t, srv, 6)
	e.queueAlert(problem())
	e.settle("the delivery", func() bool { return len(srv.Messages(t)) >= 1 })
	if n := len(srv.Messages(t)); n != 1 {
		t.Fatalf("%d messages, want 1", n)
	}
	if got := strings.Join(rcptEvents(srv), " "); got != "451 451 250" {
		t.Errorf("RCPT replies %q, want 451 451 250", got)
	}
	if n := e.logs.FilterMessage("delivery failed; retrying").Len(); n != 2 {
		t.Errorf("%d retries logged, want 2:\n%s", n, logText(e.logs))
	}
	e.drained()
}

// TestPermanentReplyIsDeadLettered: 550 at RCPT moves the alert to email_notifications_failed
// with the server's words, after one attempt.
func TestPermanentReplyIsDeadLettered(t *testing.T) {
	t.Parallel()
	srv := testsmtp.Start(t, testsmtp.Options{Replies: map[string]testsmtp.Reply{"ada@example.com": {Code: 550}}})
	e := startDelivery(t, srv, 6)
	e.queueAlert(problem())
	e.settle("the dead letter", func() bool { return len(e.failed()) >= 1 })
	f := e.failed()
	if len(f) != 1 {
		t.Fatalf("%d dead letters", len(f))
	}
	msg, _ := f[0]["error"].(string)
	if !strings.Contains(msg, "RCPT TO:<ada@example.com>: 550") || f[0]["media"] != Medium {
		t.Errorf("dead letter %v", f[0])
	}
	if alert, _ := f[0]["alert"].(map[string]any); alert["id"] != problem().ID {
		t.Errorf("dead letter keeps %v, not the alert", f[0]["alert"])
	}
	if got := rcptEvents(srv); len(got) != 1 || len(srv.Messages(t)) != 0 {
		t.Errorf("RCPT replies %v, %d messages: a 5xx was retried or delivered", got, len(srv.Messages(t)))
	}
	if e.llen(e.keys.Queue(queueName)) != 0 {
		t.Error("alert still queued")
	}
}

// TestServerRestartLosesNothing: 50 alerts queued, the SMTP server stopped (as an MTA is, with
// SIGTERM) after about 10 and started again a little later: every alert arrives exactly once.
func TestServerRestartLosesNothing(t *testing.T) {
	t.Parallel()
	srv := testsmtp.Start(t, testsmtp.Options{DataDelay: 20 * time.Millisecond})
	e := startDelivery(t, srv, 1000)
	const n = 50
	for i := range n {
		a := problem()
		a.ID = fmt.Sprintf("alert-%02d", i)
		a.EventID = fmt.Sprintf("web-%02d:HTTP", i)
		e.queueAlert(a)
	}
	srv.WaitMessages(t, 10, 20*time.Second)
	srv.Stop(t)
	stoppedAfter := len(srv.Messages(t))
	time.Sleep(500 * time.Millisecond)
	srv.Restart(t)
	e.settle("every alert", func() bool { return len(srv.Messages(t)) >= n })
	if stoppedAfter >= n {
		t.Fatalf("all %d alerts were delivered before the server stopped: the test proves nothing", n)
	}
	seen := map[string]int{}
	for _, m := range srv.Messages(t) {
		seen[parseMail(t, m.Data).Header.Get("Message-Id")]++
	}
	for i := range n {
		id := fmt.Sprintf("<alert-%02d@mon.example.com>", i)
		if seen[id] != 1 {
			t.Errorf("%s delivered %d times", id, seen[id])
		}
	}
	if len(seen) != n {
		t.Errorf("%d distinct messages, want %d", len(seen), n)
	}
	if e.logs.FilterMessage("delivery failed; retrying").Len() == 0 {
		t.Error("no delivery failed while the server was down")
	}
	t.Logf("%d delivered before the stop, %d retries while it was down", stoppedAfter, e.logs.FilterMessage("delivery failed; retrying").Len())
	e.drained()
}

// rcptEvents are the server's RCPT reply codes, in order.
func rcptEvents(srv *testsmtp.Server) []string {
	var out []string
	for _, ev := range srv.Events() {
		if rest, ok := strings.CutPrefix(ev, "rcpt "); ok {
			out = append(out, rest[strings.LastIndexByte(rest, ' ')+1:])
		}
	}
	return out
}
