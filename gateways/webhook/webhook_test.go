package webhook

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/internal/testing/testproviders"
	"github.com/flapjackgo/flapjack/schema"
)

const secret = "webhook-shared-s3cret"

func alert(address string) schema.Alert {
	at, hash, summary := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC).Unix(), "8f4a2b1c", "HTTP 500"
	return schema.Alert{Media: Medium, Address: address, ID: "a1", ContactID: "ops", EventID: "web-01:HTTP",
		EventHash: &hash, State: "critical", Summary: &summary, Time: &at, NotificationType: "problem"}
}

func newSender(t testing.TB, cfg Config, log *zap.Logger) *Sender {
	t.Helper()
	if cfg.Timeout == 0 {
		cfg.Timeout = 2 * time.Second
	}
	s, err := NewSender(Options{Config: cfg, Log: log, Version: "1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSignsTheQueuedPayload(t *testing.T) {
	t.Parallel()
	srv := testproviders.NewServer(t, testproviders.Webhook(secret))
	s := newSender(t, Config{Secret: secret}, nil)
	// Field order, spacing and a field flapjack does not know: the receiver gets it all as queued.
	raw := []byte(`{"state": "critical", "address": "` + srv.URL + `/hooks/flapjack?token=t0k3n", "event_id": "web-01:HTTP",
		"notification_type": "problem", "x_extra": {"kept": true}}`)
	a, err := schema.ParseAlert(raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SendPayload(context.Background(), a, raw); err != nil {
		t.Fatal(err)
	}
	srv.AssertNoViolations(t)
	_, accepted, _ := srv.Snapshot()
	req := accepted[0]
	if string(req.Body) != string(raw) || req.Header.Get(SignatureHeader) != testproviders.Sign(secret, raw) ||
		req.Header.Get("User-Agent") != "flapjack/1.2.3" || req.Path != "/hooks/flapjack" || req.Query.Get("token") != "t0k3n" {
		t.Errorf("request %s %v %q", req.Path, req.Header, req.Body)
	}

	unsigned := testproviders.NewServer(t, testproviders.Webhook(""))
	if err := newSender(t, Config{}, nil).Send(context.Background(), alert(unsigned.URL+"/in")); err != nil {
		t.Fatal(err)
	}
	unsigned.AssertNoViolations(t)
}

func TestRedirectsStayOnTheHostAndKeepThePOST(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		redirect testproviders.Reply
		ok       bool
		want     string
	}{
		{"307 on the same host is followed", testproviders.Reply{Status: 307, Location: "/moved"}, true, ""},
		{"308 on the same host is followed", testproviders.Reply{Status: 308, Location: "/moved"}, true, ""},
		{"302 would drop the body", testproviders.Reply{Status: 302, Location: "/moved"}, false, "would turn the POST into a GET"},
		{"another host", testproviders.Reply{Status: 307, Location: "http://localhost:1/x"}, false, "to another host (localhost:1)"},
		{"3xx without Location", testproviders.Reply{Status: 307}, false, "HTTP 307"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := testproviders.NewServer(t, testproviders.Webhook(secret))
			srv.Answer(testproviders.Reply{}, tc.redirect)
			err := newSender(t, Config{Secret: secret}, nil).Send(context.Background(), alert(srv.URL+"/in"))
			srv.AssertNoViolations(t)
			n, accepted, _ := srv.Snapshot()
			if tc.ok {
				if err != nil || n != 2 || len(accepted) != 1 || accepted[0].Path != "/moved" {
					t.Fatalf("err %v, %d requests, accepted %v", err, n, accepted)
				}
				return
			}
			var de *gateways.DeliveryError
			if !errors.As(err, &de) || !de.Permanent || !strings.Contains(err.Error(), tc.want) || n != 1 {
				t.Fatalf("got %v after %d requests, want a permanent error containing %q", err, n, tc.want)
			}
		})
	}
}

func TestAllowedHosts(t *testing.T) {
	t.Parallel()
	srv := testproviders.NewServer(t, testproviders.Webhook(""))
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	cases := []struct {
		hosts   []string
		address string
		ok      bool
	}{
		{nil, srv.URL + "/in", true},
		{[]string{"127.0.0.1"}, srv.URL + "/in", true},
		{[]string{"127.0.0.1:" + port}, srv.URL + "/in", true},
		{[]string{"127.0.0.1:1"}, srv.URL + "/in", false},
		{[]string{"hooks.example.com"}, srv.URL + "/in", false},
		{[]string{"*.example.com"}, "http://hooks.example.com/in", true},
		{[]string{"*.example.com"}, "http://example.com.evil.test/in", false},
		{[]string{"LOCALHOST"}, "http://localhost:" + port + "/in", true},
	}
	for _, tc := range cases {
		s := newSender(t, Config{AllowedHosts: tc.hosts}, nil)
		u, err := s.target(tc.address)
		if (err == nil) != tc.ok {
			t.Errorf("hosts %v, %s: allowed %v (%v)", tc.hosts, tc.address, err == nil, err)
		}
		if err == nil && strings.Contains(tc.address, "127.0.0.1") {
			if err := s.Send(context.Background(), alert(u.String())); err != nil {
				t.Errorf("hosts %v: %v", tc.hosts, err)
			}
		}
	}
	err := newSender(t, Config{AllowedHosts: []string{"hooks.example.com"}}, nil).Send(context.Background(), alert(srv.URL+"/in"))
	var de *gateways.DeliveryError
	if !errors.As(err, &de) || !de.Permanent || !strings.Contains(err.Error(), "not in gateways.webhook.allowed_hosts") {
		t.Fatalf("refused host: %v", err)
	}
	for _, bad := range []string{"ftp://x/y", "/relative", "http:///nohost"} {
		if err := newSender(t, Config{}, nil).Send(context.Background(), alert(bad)); !errors.As(err, &de) || !de.Permanent {
			t.Errorf("address %q: %v", bad, err)
		}
	}
	if err := (Config{AllowedHosts: []string{"https://x.example"}}).Validate(); err == nil || !strings.Contains(err.Error(), "gateways.webhook.allowed_hosts") {
		t.Errorf("a URL in allowed_hosts: %v", err)
	}
}

func TestAnswersAreReadUpToALimit(t *testing.T) {
	t.Parallel()
	huge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		chunk := []byte(strings.Repeat("x", 64<<10))
		for i := 0; i < 1024; i++ { // 64 MiB unless the client stops reading
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer huge.Close()
	start := time.Now()
	if err := newSender(t, Config{}, nil).Send(context.Background(), alert(huge.URL)); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s: the whole answer was read", d)
	}
}

func TestNoSecretInErrors(t *testing.T) {
	t.Parallel()
	srv := testproviders.NewServer(t, testproviders.Webhook(secret))
	srv.Answer(testproviders.Reply{Status: 400, Body: `{"error": "bad token t0k3n-in-the-url"}`})
	address := srv.URL + "/hooks/abcdefgh-path-secret?token=t0k3n-in-the-url"
	err := newSender(t, Config{Secret: secret}, nil).Send(context.Background(), alert(address))
	if err == nil || !strings.Contains(err.Error(), "webhook http://127.0.0.1:") {
		t.Fatalf("error %v", err)
	}
	testproviders.AssertNoSecrets(t, "the error", err.Error(), secret, "t0k3n-in-the-url", "abcdefgh-path-secret")
	srv.Close()
	err = newSender(t, Config{Secret: secret}, nil).Send(context.Background(), alert(address))
	var de *gateways.DeliveryError
	if !errors.As(err, &de) || de.Permanent {
		t.Fatalf("unreachable receiver: %v", err)
	}
	testproviders.AssertNoSecrets(t, "the error", err.Error(), secret, "t0k3n-in-the-url", "abcdefgh-path-secret")
}

// TestDelivery runs the gateway on a real Redis: the receiver gets the queued JSON, signed.
func TestDelivery(t *testing.T) {
	t.Parallel()
	testproviders.Scenarios{
		Medium:   Medium,
		Contract: func() testproviders.Contract { return testproviders.Webhook(secret) },
		Sender: func(t testing.TB, url string, log *zap.Logger) gateways.Sender {
			return newSender(t, Config{Secret: secret, AllowedHosts: []string{"127.0.0.1"}}, log)
		},
		Alert:         alert(""),
		Address:       func(url string) string { return url + "/hooks/flapjack" },
		Secrets:       []string{secret},
		WantPermanent: "answered HTTP 400 for web-01:HTTP",
		WantRetryable: "answered HTTP 500 for web-01:HTTP",
	}.Run(t)
}

// TestTheRunnerForwardsTheQueuedBytes: what a third party queued, fields flapjack does not know
// included, reaches the receiver byte for byte, signed.
func TestTheRunnerForwardsTheQueuedBytes(t *testing.T) {
	t.Parallel()
	srv := testproviders.NewServer(t, testproviders.Webhook(secret))
	log, logs := testproviders.NewLogger()
	g := testproviders.RunGateway(t, Medium, newSender(t, Config{Secret: secret}, log), log)
	raw := []byte(`{"address":"` + srv.URL + `/in",  "state":"critical","event_id":"web-01:HTTP","notification_type":"problem","custom":[1,2]}`)
	g.QueueRaw(raw)
	g.Settle("the delivery", func() bool { _, acc, _ := srv.Snapshot(); return len(acc) == 1 })
	srv.AssertNoViolations(t)
	_, accepted, _ := srv.Snapshot()
	if string(accepted[0].Body) != string(raw) || accepted[0].Header.Get(SignatureHeader) != testproviders.Sign(secret, raw) {
		t.Fatalf("received %q with %q\nlogs:\n%s", accepted[0].Body, accepted[0].Header.Get(SignatureHeader), testproviders.LogText(logs))
	}
}
