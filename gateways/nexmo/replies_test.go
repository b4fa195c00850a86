package nexmo_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/api"
	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/events"
	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/gateways/nexmo"
	"github.com/flapjackgo/flapjack/gateways/smsreply"
	"github.com/flapjackgo/flapjack/internal/testing/testproviders"
	"github.com/flapjackgo/flapjack/model/views"
	"github.com/flapjackgo/flapjack/schema"
)

const sigSecret = "vonage-signature-s3cret"

// A reply to a Vonage SMS acknowledges from the number the alert went to, in a request signed
// with the signature secret (as a form or as JSON); unsigned, badly signed, old, or from another
// number, it acknowledges nothing.
func TestVonageReplyAcknowledges(t *testing.T) {
	t.Parallel()
	g := testproviders.NewGateway(t, nexmo.Medium)
	srv := testproviders.NewServer(t, testproviders.Nexmo("vonage-key", "vonage-s3cret-9876"))
	clk := clock.NewFake(time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC))
	sender, err := nexmo.NewSender(nexmo.Options{Config: nexmo.Config{APIKey: "vonage-key", Secret: "vonage-s3cret-9876",
		From: "447700900000", Endpoint: srv.URL, Timeout: 2 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	codes := gateways.ReplyCodes{Lifetime: 24 * time.Hour, MaxFailures: 10}
	g.Start(sender, nil, testproviders.RunOptions{Clock: clk, ReplyCodes: &codes})
	pub := events.NewPublisher(g.DB.Pool, g.Keys, "")
	in := &nexmo.Inbound{SignatureSecret: sigSecret, Clock: clk, Log: zap.NewNop(), Replies: &smsreply.Acknowledger{Pool: g.DB.Pool,
		Keys: g.Keys, Clock: clk, Events: pub, Codes: codes, AckDuration: 4 * time.Hour, Log: zap.NewNop()}}
	hs := httptest.NewServer(api.Handler(api.Options{Pool: g.DB.Pool, Keys: g.Keys, Events: pub, EventsEnabled: true, Token: "t0ken",
		Intakes: []api.Intake{{Path: nexmo.InboundPath, What: "Vonage", Handler: in.Handle, Signed: true}}}))
	t.Cleanup(hs.Close)

	a := testproviders.Alert(nexmo.Medium, "+44 7700 900123", "problem", "critical", "HTTP 500")
	g.QueueLogged(a, clk.Now().Unix())
	g.Settle("the alert", func() bool { _, acc, _ := srv.Snapshot(); return len(acc) == 1 })
	conn := g.DB.Pool.Get()
	recs, err := views.ReadDeliveries(conn, g.Keys, views.DeliveryFilter{Contact: "ops"})
	conn.Close()
	if err != nil || len(recs) != 1 || recs[0].Status != schema.DeliveryDelivered || recs[0].MessageID != "0C000000217B7F02" {
		t.Errorf("delivery log %+v (%v), want delivered with Vonage's message-id", recs, err)
	}
	_, accepted, _ := srv.Snapshot()
	m := regexp.MustCompile(`\. Reply ACK ([0-9]{4})$`).FindStringSubmatch(accepted[0].Form.Get("text"))
	if m == nil {
		t.Fatalf("SMS %q has no reply code", accepted[0].Form.Get("text"))
	}
	now := clk.Now().Unix()
	post := func(p map[string]string, asJSON bool) int {
		var req *http.Request
		if asJSON {
			b, _ := json.Marshal(p)
			req, _ = http.NewRequest(http.MethodPost, hs.URL+nexmo.InboundPath, strings.NewReader(string(b)))
			req.Header.Set("Content-Type", "application/json")
		} else {
			form := url.Values{}
			for k, v := range p {
				form.Set(k, v)
			}
			req, _ = http.NewRequest(http.MethodPost, hs.URL+nexmo.InboundPath, strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	tampered := testproviders.VonageInbound("447700900123", "447700900000", "ACK "+m[1], sigSecret, now)
	tampered["msisdn"] = "447700900999"
	for _, tc := range []struct {
		name   string
		p      map[string]string
		status int
	}{
		{"unsigned", testproviders.VonageInbound("447700900123", "447700900000", "ACK "+m[1], "", now), http.StatusUnauthorized},
		{"another secret", testproviders.VonageInbound("447700900123", "447700900000", "ACK "+m[1], "other", now), http.StatusUnauthorized},
		{"sender changed after signing", tampered, http.StatusUnauthorized},
		{"ten minutes old", testproviders.VonageInbound("447700900123", "447700900000", "ACK "+m[1], sigSecret, now-600), http.StatusUnauthorized},
		{"another number", testproviders.VonageInbound("447700900999", "447700900000", "ACK "+m[1], sigSecret, now), http.StatusNoContent},
	} {
		if status := post(tc.p, false); status != tc.status {
			t.Errorf("%s: HTTP %d, want %d", tc.name, status, tc.status)
		}
	}
	if n, _ := redis.Int(g.DB.Do(t, "LLEN", g.Keys.Events()), nil); n != 0 {
		t.Fatalf("%d events queued before the right reply", n)
	}
	if status := post(testproviders.VonageInbound("447700900123", "447700900000", "ACK "+m[1], sigSecret, now), true); status != http.StatusNoContent {
		t.Fatalf("right reply: HTTP %d", status)
	}
	raw, _ := redis.Bytes(g.DB.Do(t, "LINDEX", g.Keys.Events(), 0), nil)
	ev, err := schema.ParseEvent(raw)
	if err != nil || !ev.IsAcknowledgement() || ev.ID() != "web-01:HTTP" || ev.Summary != "acknowledged by ops by SMS reply" {
		t.Errorf("queued %s (%v)", raw, err)
	}
	srv.AssertNoViolations(t)
}
