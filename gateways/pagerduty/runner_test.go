package pagerduty

import (
	"encoding/json"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/internal/testing/testpagerduty"
	"github.com/flapjackgo/flapjack/internal/testing/testproviders"
	"github.com/flapjackgo/flapjack/schema"
)

// startDelivery runs the PagerDuty gateway as deployed (the shared kit's runner on a real Redis,
// 3 attempts, short backoffs) with a Sender talking to the Events API at url, until the test
// ends.
func startDelivery(t *testing.T, cfg Config, url string) (*testproviders.Gateway, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	log := zap.New(core)
	cfg.EventsBaseURL = url
	sender, err := NewSender(SenderOptions{Config: cfg, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	g := testproviders.NewGateway(t, Medium)
	g.Start(sender, log, testproviders.RunOptions{Clock: clock.NewFake(t0)})
	return g, logs
}

// TestDeliveryLifecycle: a problem, its acknowledgement and its recovery reach PagerDuty once
// each, in order, as trigger / acknowledge / resolve of one incident (one dedup_key).
func TestDeliveryLifecycle(t *testing.T) {
	t.Parallel()
	srv := testproviders.NewServer(t, testproviders.PagerDuty())
	g, logs := startDelivery(t, Config{}, srv.URL)
	for _, a := range []schema.Alert{
		alert("problem", "critical", "HTTP 500"),
		alert("acknowledgement", "critical", "ada: on it"),
		alert("recovery", "ok", "HTTP 200"),
	} {
		g.Queue(a)
	}
	g.Settle("three deliveries", func() bool { _, acc, _ := srv.Snapshot(); return len(acc) >= 3 })
	srv.AssertNoViolations(t)
	n, accepted, _ := srv.Snapshot()
	if n != 3 || len(accepted) != 3 {
		t.Fatalf("%d requests, %d accepted; want 3 and 3\nlogs:\n%s", n, len(accepted), testproviders.LogText(logs))
	}
	for i, want := range []string{"trigger", "acknowledge", "resolve"} {
		var ev testpagerduty.V2Event
		if err := json.Unmarshal(accepted[i].Body, &ev); err != nil {
			t.Fatal(err)
		}
		if ev.EventAction != want || ev.DedupKey == nil || *ev.DedupKey != "web-01:HTTP" || ev.RoutingKey != routingKey {
			t.Errorf("event %d: %s, want %s of dedup_key web-01:HTTP", i, accepted[i].Body, want)
		}
	}
	if f := g.Failed(); len(f) != 0 {
		t.Fatalf("dead-lettered: %v", f)
	}
}

// TestDelivery drives the shared runner's retry and dead-letter policy (docs/decisions.md D13)
// through the Sender's classification of PagerDuty's answers, with the kit's scenarios.
func TestDelivery(t *testing.T) {
	testproviders.Scenarios{
		Medium:   Medium,
		Contract: testproviders.PagerDuty,
		Sender: func(t testing.TB, url string, log *zap.Logger) gateways.Sender {
			s, err := NewSender(SenderOptions{Config: Config{EventsBaseURL: url}, Log: log})
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		Alert:         alert("problem", "critical", "HTTP 500"),
		Secrets:       []string{routingKey},
		WantPermanent: "HTTP 400 for web-01:HTTP (routing key …cdef): Event object is invalid: scripted 400",
		WantRetryable: "HTTP 500 for web-01:HTTP",
	}.Run(t)
}

// TestHungRequestTimesOutAndIsRetried: a request PagerDuty never answers is given up after
// gateways.pagerduty.timeout and sent again; the second one is delivered.
func TestHungRequestTimesOutAndIsRetried(t *testing.T) {
	t.Parallel()
	srv := testproviders.NewServer(t, testproviders.PagerDuty())
	srv.Answer(testproviders.Reply{}, testproviders.Reply{Hang: true})
	g, logs := startDelivery(t, Config{Timeout: 300 * time.Millisecond}, srv.URL)
	g.Queue(alert("problem", "critical", "HTTP 500"))
	g.Settle("the delivery", func() bool { _, acc, _ := srv.Snapshot(); return len(acc) >= 1 })
	srv.AssertNoViolations(t)
	if n, accepted, _ := srv.Snapshot(); n != 2 || len(accepted) != 1 {
		t.Fatalf("%d requests, %d accepted; want 2 and 1\nlogs:\n%s", n, len(accepted), testproviders.LogText(logs))
	}
	if f := g.Failed(); len(f) != 0 {
		t.Fatalf("dead-lettered: %v", f)
	}
}

// The delivery log keeps the dedup_key PagerDuty answered each accepted event with: the key of
// the incident it went to.
func TestDeliveryLogKeepsTheDedupKey(t *testing.T) {
	t.Parallel()
	srv := testproviders.NewServer(t, testproviders.PagerDuty())
	sender, err := NewSender(SenderOptions{Config: Config{EventsBaseURL: srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	web, db := alert("problem", "critical", "HTTP 500"), alert("problem", "critical", "MySQL down")
	web.ID, db.ID, db.EventID = "alert-web", "alert-db", "db-01:MySQL"
	logged := testproviders.NewGateway(t, Medium).LoggedIDs(sender, web, db)
	srv.AssertNoViolations(t)
	_, accepted, _ := srv.Snapshot()
	issued := map[string]string{}
	for _, req := range accepted {
		var ev testpagerduty.V2Event
		if err := json.Unmarshal(req.Body, &ev); err != nil || ev.DedupKey == nil || ev.Payload == nil {
			t.Fatalf("accepted event %s: %v", req.Body, err)
		}
		id := web.ID
		if ev.Payload.Source == "db-01" {
			id = db.ID
		}
		issued[id] = *ev.DedupKey
	}
	if len(issued) != 2 || issued[web.ID] == issued[db.ID] {
		t.Fatalf("PagerDuty answered %v, want one key per check", issued)
	}
	for id, want := range issued {
		if logged[id] != want {
			t.Errorf("%s: delivery log has message id %q, PagerDuty answered dedup_key %q", id, logged[id], want)
		}
	}
}
