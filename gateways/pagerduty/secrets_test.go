package pagerduty

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap/zaptest/observer"

	"github.com/flapjackgo/flapjack/gateways/internal/httpsend"
	"github.com/flapjackgo/flapjack/internal/testing/testproviders"
)

// TestNoSecretsInLogs drives failing deliveries and failing acknowledgement lookups, logging
// at debug level, and checks that no routing key, token or password appears in any message or
// field.
func TestNoSecretsInLogs(t *testing.T) {
	t.Parallel()
	const (
		wrongToken    = "WR0NG-s3cret-t0ken-4242"
		wrongPassword = "wr0ng-pa55w0rd-4242"
	)
	secrets := []string{routingKey, apiToken, password, wrongToken, wrongPassword}

	// Deliveries: a 500, a hang past the timeout, then a 400 whose explanation echoes the key.
	srv := newEventsServer(t)
	srv.answer(reply{status: 400, errors: []string{"routing key " + routingKey + " is not known"}},
		reply{status: 500}, reply{hang: true})
	d, dLogs := startDelivery(t, Config{Timeout: 200 * time.Millisecond}, srv.srv.URL)
	d.Queue(alert("problem", "critical", "HTTP 500"))
	d.Settle("dead-lettering", func() bool { return len(d.Failed()) == 1 })

	// An events endpoint that refuses connections.
	down := newEventsServer(t)
	down.srv.Close()
	d2, d2Logs := startDelivery(t, Config{}, down.srv.URL)
	d2.Queue(alert("recovery", "ok", ""))
	d2.Settle("dead-lettering", func() bool { return len(d2.Failed()) == 1 })

	// Lookups: a refused token, refused basic auth, a failing API, an unreachable API.
	e := newPollEnv(t)
	e.rest.basic["acme"] = "ops:" + password
	for _, id := range []string{"web-01:HTTP", "web-01:PING"} {
		e.check(id, "critical")
		e.rest.add(incident{key: id, status: "acknowledged", created: t0.Add(-time.Hour)})
	}
	e.contact("c1", "web-01", pdMedia, map[string]string{"subdomain": "acme", "token": wrongToken})
	e.contact("c2", "web-01", pdMedia, map[string]string{"subdomain": "acme", "username": "ops", "password": wrongPassword})
	e.contact("c3", "web-01", pdMedia, map[string]string{"subdomain": "acme", "username": "ops", "password": password})
	cfg := e.config()
	cfg.AckPollInterval = 0 // no "next run" marker: each RunOnce below runs
	if res := runOnce(t, e.poller(cfg, nil)); res.Errors != 2 || len(res.Enqueued) != 2 {
		t.Fatalf("run with refused credentials = %+v", res)
	}
	e.clk.Advance(10 * time.Minute)
	e.process()
	e.clk.Advance(5 * time.Hour) // the acknowledgements are over: look again
	e.rest.forceCode = 500
	if res := runOnce(t, e.poller(cfg, nil)); res.Errors == 0 {
		t.Fatalf("run against a failing API = %+v", res)
	}
	cfg.APIBaseURL, cfg.V1APIURLTemplate = down.srv.URL, down.srv.URL+"/%s"
	if res := runOnce(t, e.poller(cfg, nil)); res.Errors == 0 {
		t.Fatalf("run against an unreachable API = %+v", res)
	}

	var checked int
	for _, logs := range []*observer.ObservedLogs{dLogs, d2Logs, e.logs} {
		for _, entry := range logs.All() {
			checked++
			text := entry.Message
			for k, v := range entry.ContextMap() {
				text += fmt.Sprintf(" %s=%v", k, v)
			}
			for _, s := range secrets {
				if strings.Contains(text, s) {
					t.Errorf("log entry leaks %s: %s", httpsend.Redact(s), text)
				}
			}
		}
	}
	// The logs did record the failures (this test would pass vacuously otherwise).
	all := testproviders.LogText(dLogs) + testproviders.LogText(d2Logs) + testproviders.LogText(e.logs)
	for _, want := range []string{"HTTP 500", "no answer within 200ms", "HTTP 400", "routing key …cdef", "connection refused",
		"HTTP 401", "cannot ask PagerDuty", "token …4242"} {
		if !strings.Contains(all, want) {
			t.Errorf("logs never mention %q (%d entries):\n%s", want, checked, all)
		}
	}
}

func TestMetricsNilRegistererAndLint(t *testing.T) {
	t.Parallel()
	m := NewMetrics(nil)
	m.acks.Inc()
	m.runs.WithLabelValues(RunCompleted).Inc()
	reg := prometheus.NewRegistry()
	NewMetrics(reg)
	problems, err := testutil.GatherAndLint(reg)
	if err != nil || len(problems) > 0 {
		t.Fatalf("lint: %v %+v", err, problems)
	}
	n, err := testutil.GatherAndCount(reg)
	if err != nil || n != 4+2+1+1 {
		t.Fatalf("series = %d (%v), want runs×4, errors×2, acks, duration", n, err)
	}
	if _, err := NewAckPoller(AckPollerOptions{}); err == nil {
		t.Fatal("a poller without Redis was built")
	}
	if _, err := NewSender(SenderOptions{Config: Config{Timeout: -1}}); err == nil || !strings.Contains(err.Error(), "gateways.pagerduty.timeout") {
		t.Fatalf("NewSender with a bad config = %v", err)
	}
}
