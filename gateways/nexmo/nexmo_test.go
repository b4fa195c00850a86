package nexmo

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/internal/testing/testproviders"
	"github.com/flapjackgo/flapjack/schema"
)

const (
	apiKey = "a1b2c3d4"
	secret = "vonage-s3cret-9876"
	from   = "Flapjack"
)

func alert(typ, state, summary string) schema.Alert {
	return testproviders.Alert(Medium, "+44 7700 900000", typ, state, summary)
}

func newSender(t testing.TB, endpoint string, log *zap.Logger) *Sender {
	t.Helper()
	s, err := NewSender(Options{Config: Config{APIKey: apiKey, Secret: secret, From: from, Endpoint: endpoint,
		Timeout: 2 * time.Second}, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSendsTheSMSAPIRequest(t *testing.T) {
	t.Parallel()
	srv := testproviders.NewServer(t, testproviders.Nexmo(apiKey, secret))
	s := newSender(t, srv.URL, nil)
	for _, tc := range []struct {
		name       string
		a          schema.Alert
		text, typ  string
		wantNumber string
	}{
		{"problem", alert("problem", "critical", "HTTP 500"),
			"Problem: 'HTTP' on web-01 is Critical at 5 Jan 10:00, HTTP 500 (ACKID 8f4a2b1c)", "", "447700900000"},
		{"GSM accents stay text", alert("recovery", "ok", "café à Zürich"), "Recovery: 'HTTP' on web-01 is OK at 5 Jan 10:00, café à Zürich", "", "447700900000"},
		{"other characters are unicode", alert("recovery", "ok", "Ошибка ✓"), "Recovery: 'HTTP' on web-01 is OK at 5 Jan 10:00, Ошибка ✓", "unicode", "447700900000"},
	} {
		if err := s.Send(context.Background(), tc.a); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		_, accepted, _ := srv.Snapshot()
		f := accepted[len(accepted)-1].Form
		if f.Get("text") != tc.text || f.Get("type") != tc.typ || f.Get("to") != tc.wantNumber || f.Get("from") != from {
			t.Errorf("%s: form %v", tc.name, f)
		}
	}
	srv.AssertNoViolations(t)
	if got := PhoneNumber("0044 (7700) 900-000"); got != "447700900000" {
		t.Errorf("PhoneNumber = %q", got)
	}
}

func TestClassifiesVonageAnswers(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		reply     testproviders.Reply
		permanent bool
		after     time.Duration
		want      string
	}{
		{"throttled", testproviders.NexmoStatus("1", "Throughput Rate Exceeded"), false, 0, "status 1 (Throttled): Throughput Rate Exceeded"},
		{"internal error", testproviders.NexmoStatus("5", "Internal Error"), false, 0, "status 5 (Internal Error)"},
		{"too many binds", testproviders.NexmoStatus("10", "Too many binds"), false, 0, "status 10"},
		{"invalid parameters", testproviders.NexmoStatus("3", "Invalid to address"), true, 0, "status 3 (Invalid Parameters): Invalid to address"},
		{"no credit", testproviders.NexmoStatus("9", "Quota Exceeded - rejected"), true, 0, "status 9 (Partner Quota Violation)"},
		{"barred", testproviders.NexmoStatus("7", "Number barred."), true, 0, "status 7"},
		{"undocumented", testproviders.NexmoStatus("99", "?"), true, 0, "status 99 (undocumented status)"},
		{"unreadable 200", testproviders.Reply{Status: 200, Body: "<html>proxy</html>", ContentType: "text/html"}, false, 0, "no message status"},
		{"HTTP 429", testproviders.Reply{Status: 429, RetryAfter: "3"}, false, 3 * time.Second, "HTTP 429"},
		{"HTTP 500", testproviders.Reply{Status: 500}, false, 0, "HTTP 500"},
		{"HTTP 401", testproviders.Reply{Status: 401}, true, 0, "HTTP 401"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := testproviders.NewServer(t, testproviders.Nexmo(apiKey, secret))
			srv.Answer(tc.reply)
			err := newSender(t, srv.URL, nil).Send(context.Background(), alert("problem", "critical", "x"))
			var de *gateways.DeliveryError
			if !errors.As(err, &de) {
				t.Fatalf("error %v is not a DeliveryError", err)
			}
			if de.Permanent != tc.permanent || de.RetryAfter != tc.after || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v (permanent %v, after %s), want permanent %v after %s containing %q",
					err, de.Permanent, de.RetryAfter, tc.permanent, tc.after, tc.want)
			}
			srv.AssertNoViolations(t)
		})
	}
}

func TestWrongSecretIsPermanentAndNotShown(t *testing.T) {
	t.Parallel()
	srv := testproviders.NewServer(t, testproviders.Nexmo(apiKey, secret))
	s := newSender(t, srv.URL, nil)
	s.cfg.Secret = "wrong-vonage-s3cret"
	err := s.Send(context.Background(), alert("problem", "critical", "x"))
	var de *gateways.DeliveryError
	if !errors.As(err, &de) || !de.Permanent || !strings.Contains(err.Error(), "status 4 (Invalid Credentials)") {
		t.Fatalf("got %v, want a permanent status 4", err)
	}
	testproviders.AssertNoSecrets(t, "the error", err.Error(), "wrong-vonage-s3cret")
}

func TestConfigNamesEveryProblem(t *testing.T) {
	t.Parallel()
	err := Config{Endpoint: "rest.nexmo.com"}.Validate()
	for _, want := range []string{"gateways.sms_nexmo.api_key is required", "gateways.sms_nexmo.secret is required",
		"gateways.sms_nexmo.from is required", "gateways.sms_nexmo.endpoint"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
}

// TestDelivery runs the gateway on a real Redis against the contract server; Vonage's refusals
// come as statuses inside HTTP 200 answers.
func TestDelivery(t *testing.T) {
	t.Parallel()
	testproviders.Scenarios{
		Medium:   Medium,
		Contract: func() testproviders.Contract { return testproviders.Nexmo(apiKey, secret) },
		Sender: func(t testing.TB, url string, log *zap.Logger) gateways.Sender {
			return newSender(t, url, log)
		},
		Alert:         alert("problem", "critical", "HTTP 500"),
		Secrets:       []string{secret},
		Permanent:     testproviders.NexmoStatus("6", "Unroutable message - rejected"),
		Retryable:     testproviders.NexmoStatus("5", "Internal Error"),
		WantPermanent: "status 6 (Invalid Message): Unroutable message - rejected",
		WantRetryable: "status 5 (Internal Error): Internal Error",
	}.Run(t)
}
