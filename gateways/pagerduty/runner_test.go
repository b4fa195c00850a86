package pagerduty

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
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/schema"
)

const queueName = "pagerduty_notifications"

// deliveryEnv is the PagerDuty gateway as deployed: the shared queue runner (gateways.New)
// draining pagerduty_notifications on a real Redis into a Sender, which talks to the contract
// server.
type deliveryEnv struct {
	t    *testing.T
	db   *testredis.DB
	keys schema.Keys
	clk  *clock.Fake
	srv  *eventsServer
	logs *observer.ObservedLogs
}

// startDelivery runs the gateway until the test ends; retry backoffs are short, 3 attempts.
func startDelivery(t *testing.T, cfg Config, srv *eventsServer) *deliveryEnv {
	t.Helper()
	e := &deliveryEnv{t: t, db: testredis.New(t), keys: schema.NewKeys(""), clk: clock.NewFake(t0), srv: srv}
	core, logs := observer.New(zapcore.DebugLevel)
	e.logs = logs
	log := zap.New(core)
	cfg.EventsBaseURL = srv.srv.URL
	sender, err := NewSender(SenderOptions{Config: cfg, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	g := gateways.New(gateways.Options{Pool: e.db.Pool, Keys: e.keys, Medium: Medium, Identity: queue.LocalIdentity(),
		Clock: e.clk, Log: log, Version: "test", MaxAttempts: 3,
		FirstBackoff: 20 * time.Millisecond, MaxBackoff: 50 * time.Millisecond}, sender)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = g.Run(ctx) }()
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

// queueAlert RPUSHes an alert onto pagerduty_notifications, as the notifier does.
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

// settle waits until cond holds, then a little longer to catch late duplicates.
func (e *deliveryEnv) settle(what string, cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			n, accepted, violations := e.srv.snapshot()
			e.t.Fatalf("timed out waiting for %s: %d requests, %d accepted, violations %q, %d failed\nlogs:\n%s",
				what, n, len(accepted), violations, len(e.failed()), logText(e.logs))
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(150 * time.Millisecond)
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

// TestDeliveryLifecycle: a problem, its acknowledgement and its recovery reach PagerDuty once
// each, in order, as trigger / acknowledge / resolve of one incident (one dedup_key).
func TestDeliveryLifecycle(t *testing.T) {
	t.Parallel()
	srv := newEventsServer(t)
	e := startDelivery(t, Config{}, srv)
	for _, a := range []schema.Alert{
		alert("problem", "critical", "HTTP 500"),
		alert("acknowledgement", "critical", "ada: on it"),
		alert("recovery", "ok", "HTTP 200"),
	} {
		e.queueAlert(a)
	}
	e.settle("three deliveries", func() bool { _, acc, _ := srv.snapshot(); return len(acc) >= 3 })
	n, accepted, violations := srv.snapshot()
	if len(violations) > 0 {
		t.Fatalf("contract violations: %q", violations)
	}
	if n != 3 || len(accepted) != 3 {
		t.Fatalf("%d requests, %d accepted; want 3 and 3", n, len(accepted))
	}
	for i, want := range []string{"trigger", "acknowledge", "resolve"} {
		ev := accepted[i].V2
		if ev.EventAction != want || *ev.DedupKey != "web-01:HTTP" || ev.RoutingKey != routingKey {
			t.Errorf("event %d: action %s dedup_key %s, want %s web-01:HTTP", i, ev.EventAction, *ev.DedupKey, want)
		}
	}
	if q, f := e.llen(e.keys.Queue(queueName)), len(e.failed()); q != 0 || f != 0 {
		t.Fatalf("queue has %d alerts left, %d dead-lettered", q, f)
	}
}

// TestDeliveryFailures drives the shared runner's retry and dead-letter policy (docs/decisions.md D13)
// through the Sender's classification of PagerDuty's answers.
func TestDeliveryFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		fallback     reply
		script       []reply
		timeout      time.Duration
		wantRequests int
		wantAccepted int
		wantFailed   string // substring of the dead-letter error; "" = nothing dead-lettered
		minGap       time.Duration
	}{
		{name: "500 then 202 is retried and delivered once", script: []reply{{status: 500}},
			wantRequests: 2, wantAccepted: 1},
		{name: "a hung request times out and is retried", script: []reply{{hang: true}}, timeout: 300 * time.Millisecond,
			wantRequests: 2, wantAccepted: 1},
		{name: "429 waits for Retry-After", script: []reply{{status: 429, retryAfter: "1"}},
			wantRequests: 2, wantAccepted: 1, minGap: time.Second},
		{name: "400 is dead-lettered at once", fallback: reply{status: 400, errors: []string{"'payload.severity' is invalid"}},
			wantRequests: 1, wantFailed: "HTTP 400 for web-01:HTTP (routing key …cdef): Event object is invalid: 'payload.severity' is invalid"},
		{name: "always 500 is dead-lettered after the attempts", fallback: reply{status: 500},
			wantRequests: 3, wantFailed: "HTTP 500"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newEventsServer(t)
			srv.answer(tt.fallback, tt.script...)
			e := startDelivery(t, Config{Timeout: tt.timeout}, srv)
			e.queueAlert(alert("problem", "critical", "HTTP 500"))
			e.settle("the alert's fate", func() bool {
				_, acc, _ := srv.snapshot()
				return len(acc)+len(e.failed()) >= 1
			})
			n, accepted, violations := srv.snapshot()
			if len(violations) > 0 {
				t.Fatalf("contract violations: %q", violations)
			}
			if n != tt.wantRequests || len(accepted) != tt.wantAccepted {
				t.Fatalf("%d requests, %d accepted; want %d and %d\nlogs:\n%s", n, len(accepted), tt.wantRequests, tt.wantAccepted, logText(e.logs))
			}
			if tt.minGap > 0 {
				at := srv.arrivals()
				if gap := at[1].Sub(at[0]); gap < tt.minGap {
					t.Errorf("retried after %s, want at least %s (Retry-After)", gap, tt.minGap)
				}
			}
			failed := e.failed()
			if tt.wantFailed == "" {
				if len(failed) != 0 {
					t.Fatalf("dead-lettered: %v", failed)
				}
			} else {
				if len(failed) != 1 {
					t.Fatalf("%d dead-lettered records, want 1", len(failed))
				}
				msg, _ := failed[0]["error"].(string)
				if !strings.Contains(msg, tt.wantFailed) {
					t.Errorf("dead-letter error %q does not contain %q", msg, tt.wantFailed)
				}
				if strings.Contains(msg, routingKey) {
					t.Errorf("dead-letter error leaks the routing key: %q", msg)
				}
				if failed[0]["media"] != Medium || failed[0]["alert"] == nil {
					t.Errorf("dead-letter record = %v", failed[0])
				}
			}
			if q := e.llen(e.keys.Queue(queueName)); q != 0 {
				t.Fatalf("queue has %d alerts left", q)
			}
		})
	}
}
