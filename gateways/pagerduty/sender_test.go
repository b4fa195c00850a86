package pagerduty

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/gateways/internal/httpsend"
	"github.com/flapjackgo/flapjack/internal/testing/testpagerduty"
	"github.com/flapjackgo/flapjack/schema"
)

func newSender(t *testing.T, cfg Config) *Sender {
	t.Helper()
	s, err := NewSender(SenderOptions{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSendV2Payloads checks every field of the events sent for each notification type against
// what the contract server accepted.
func TestSendV2Payloads(t *testing.T) {
	t.Parallel()
	withDetails := alert("problem", "critical", "HTTP 500")
	withDetails.Details, withDetails.Perfdata = ptr("stack trace"), ptr("time=3s")
	noTime := alert("problem", "warning", "")
	noTime.Time, noTime.StateDuration = nil, nil
	tests := []struct {
		name    string
		a       schema.Alert
		action  string
		payload *testpagerduty.V2Payload // nil: no payload expected
	}{
		{"problem", withDetails, "trigger", &testpagerduty.V2Payload{
			Summary: `Problem: "HTTP" on web-01 is Critical, HTTP 500`, Source: "web-01", Severity: "critical",
			Timestamp: "2026-03-01T12:00:00Z", CustomDetails: map[string]any{"check": "HTTP", "state": "critical",
				"summary": "HTTP 500", "details": "stack trace", "perfdata": "time=3s", "event_count": 7.0, "state_duration": 90.0}}},
		{"problem without time", noTime, "trigger", &testpagerduty.V2Payload{
			Summary: `Problem: "HTTP" on web-01 is Warning`, Source: "web-01", Severity: "warning",
			CustomDetails: map[string]any{"check": "HTTP", "state": "warning", "event_count": 7.0}}},
		{"test", alert("test", "test_notifications", "Testing"), "trigger", &testpagerduty.V2Payload{
			Summary: `Test: "HTTP" on web-01, Testing`, Source: "web-01", Severity: "info", Timestamp: "2026-03-01T12:00:00Z",
			CustomDetails: map[string]any{"check": "HTTP", "state": "test_notifications", "summary": "Testing", "event_count": 7.0, "state_duration": 90.0}}},
		{"acknowledgement", alert("acknowledgement", "critical", "ada: on it"), "acknowledge", nil},
		{"recovery", alert("recovery", "ok", "HTTP 200"), "resolve", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newEventsServer(t)
			s := newSender(t, Config{EventsBaseURL: srv.srv.URL})
			if err := s.Send(context.Background(), tt.a); err != nil {
				t.Fatalf("Send: %v", err)
			}
			_, accepted, violations := srv.snapshot()
			if len(violations) > 0 || len(accepted) != 1 {
				t.Fatalf("accepted %d events, violations %q", len(accepted), violations)
			}
			ev := accepted[0].V2
			if ev.RoutingKey != routingKey || ev.EventAction != tt.action || *ev.DedupKey != "web-01:HTTP" {
				t.Errorf("event = %s %s %s", httpsend.Redact(ev.RoutingKey), ev.EventAction, *ev.DedupKey)
			}
			if tt.payload == nil {
				if ev.Payload != nil {
					t.Errorf("unexpected payload %+v", ev.Payload)
				}
				return
			}
			if ev.Client != "flapjack" {
				t.Errorf("client = %q", ev.Client)
			}
			if !equalJSONish(ev.Payload, tt.payload) {
				t.Errorf("payload =\n%+v\nwant\n%+v", *ev.Payload, *tt.payload)
			}
		})
	}
}

func equalJSONish(a, b *testpagerduty.V2Payload) bool {
	if a.Summary != b.Summary || a.Source != b.Source || a.Severity != b.Severity || a.Timestamp != b.Timestamp ||
		len(a.CustomDetails) != len(b.CustomDetails) {
		return false
	}
	for k, v := range b.CustomDetails {
		if a.CustomDetails[k] != v {
			return false
		}
	}
	return true
}

// TestSendClassification checks how each answer of PagerDuty is turned into the gateways'
// contract (delivered / permanent / retryable with a delay).
func TestSendClassification(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		reply      reply
		wantErr    bool
		permanent  bool
		retryAfter time.Duration
		errHas     string
	}{
		{"202 accepted", reply{}, false, false, 0, ""},
		{"400 invalid event", reply{status: 400, errors: []string{"'payload.summary' is missing or blank"}}, true, true, 0,
			"HTTP 400 for web-01:HTTP (routing key …cdef): Event object is invalid: 'payload.summary' is missing or blank"},
		{"401", reply{status: 401}, true, true, 0, "HTTP 401"},
		{"404", reply{status: 404}, true, true, 0, "HTTP 404"},
		{"413", reply{status: 413}, true, true, 0, "HTTP 413"},
		{"429 seconds", reply{status: 429, retryAfter: "7"}, true, false, 7 * time.Second, "Requests for this service are arriving too quickly"},
		{"429 date", reply{status: 429, retryAfter: "in:90s"}, true, false, 90 * time.Second, "HTTP 429"},
		{"429 without Retry-After", reply{status: 429}, true, false, httpsend.DefaultRetryAfter, "HTTP 429"},
		{"500", reply{status: 500}, true, false, 0, "HTTP 500"},
		{"502", reply{status: 502}, true, false, 0, "HTTP 502"},
		{"503 with Retry-After", reply{status: 503, retryAfter: "3"}, true, false, 3 * time.Second, "HTTP 503"},
		{"408", reply{status: 408}, true, false, 0, "HTTP 408"},
		{"hang past the timeout", reply{hang: true}, true, false, 0, "no answer within 200ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newEventsServer(t)
			srv.answer(tt.reply)
			s := newSender(t, Config{EventsBaseURL: srv.srv.URL, Timeout: 200 * time.Millisecond})
			start := time.Now()
			err := s.Send(context.Background(), alert("problem", "critical", "HTTP 500"))
			if time.Since(start) > 5*time.Second {
				t.Errorf("Send took %s", time.Since(start))
			}
			checkClassified(t, err, tt.wantErr, tt.permanent, tt.retryAfter, tt.errHas)
			if _, _, v := srv.snapshot(); len(v) > 0 {
				t.Errorf("contract violations: %q", v)
			}
		})
	}
}

func checkClassified(t *testing.T, err error, wantErr, permanent bool, retryAfter time.Duration, errHas string) {
	t.Helper()
	if !wantErr {
		if err != nil {
			t.Fatalf("Send = %v, want nil", err)
		}
		return
	}
	var de *gateways.DeliveryError
	if !errors.As(err, &de) {
		t.Fatalf("Send = %v (%T), want a *gateways.DeliveryError", err, err)
	}
	if de.Permanent != permanent {
		t.Errorf("permanent = %v, want %v (%v)", de.Permanent, permanent, err)
	}
	// HTTP dates have a one-second resolution.
	if d := de.RetryAfter - retryAfter; d < -time.Second || d > time.Second || (retryAfter == 0) != (de.RetryAfter == 0) {
		t.Errorf("RetryAfter = %s, want %s", de.RetryAfter, retryAfter)
	}
	if !strings.Contains(err.Error(), errHas) {
		t.Errorf("error %q does not contain %q", err, errHas)
	}
	if strings.Contains(err.Error(), routingKey) {
		t.Errorf("error leaks the routing key: %q", err)
	}
}

func TestSendNetworkErrorIsRetryable(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there any more: connection refused
	s := newSender(t, Config{EventsBaseURL: "http://" + addr, Timeout: time.Second})
	err = s.Send(context.Background(), alert("problem", "critical", "x"))
	checkClassified(t, err, true, false, 0, "POST /v2/enqueue")
}

func TestSendRejectsUnknownNotificationType(t *testing.T) {
	t.Parallel()
	srv := newEventsServer(t)
	s := newSender(t, Config{EventsBaseURL: srv.srv.URL})
	err := s.Send(context.Background(), alert("shutdown", "ok", ""))
	checkClassified(t, err, true, true, 0, `notification type "shutdown"`)
	if n, _, _ := srv.snapshot(); n != 0 {
		t.Fatalf("%d requests sent for an alert that has no action", n)
	}
}

// TestSendV1 covers Config.UseV1Events: Flapjack 1.x's generic create_event.json.
func TestSendV1(t *testing.T) {
	t.Parallel()
	srv := newEventsServer(t)
	s := newSender(t, Config{EventsBaseURL: srv.srv.URL, UseV1Events: true, Timeout: time.Second})
	for _, a := range []schema.Alert{alert("problem", "critical", "HTTP 500"), alert("acknowledgement", "critical", ""), alert("recovery", "ok", "")} {
		if err := s.Send(context.Background(), a); err != nil {
			t.Fatalf("Send %s: %v", a.NotificationType, err)
		}
	}
	_, accepted, violations := srv.snapshot()
	if len(violations) > 0 || len(accepted) != 3 {
		t.Fatalf("accepted %d, violations %q", len(accepted), violations)
	}
	wantTypes := []string{"trigger", "acknowledge", "resolve"}
	for i, ev := range accepted {
		e := ev.V1
		if ev.Version != 1 || e.ServiceKey != routingKey || e.IncidentKey != "web-01:HTTP" || e.EventType != wantTypes[i] ||
			e.Details["HOSTNAME"] != "web-01" || e.Details["SERVICE"] != "HTTP" || e.Client != "flapjack" {
			t.Errorf("v1 event %d = %+v", i, e)
		}
	}
	if d := accepted[0].V1.Description; d != `Problem: "HTTP" on web-01 is Critical, HTTP 500` {
		t.Errorf("description = %q", d)
	}
	// The message id of an accepted v1 event is the incident_key of PagerDuty's answer.
	if key, err := s.SendReceipt(context.Background(), alert("problem", "critical", "HTTP 500")); err != nil || key != "web-01:HTTP" {
		t.Errorf("SendReceipt = %q, %v; want the incident_key answered, web-01:HTTP", key, err)
	}
	// v1 signals throttling with 403: retryable.
	srv.answer(reply{status: 403, retryAfter: "2"})
	err := s.Send(context.Background(), alert("problem", "critical", "x"))
	checkClassified(t, err, true, false, 2*time.Second, "HTTP 403")
}
