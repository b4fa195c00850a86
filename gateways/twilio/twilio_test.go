package twilio

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
	sid   = "AC0123456789abcdef0123456789abcdef"
	token = "tw-s3cret-auth-t0ken-9876"
	from  = "+15017122661"
)

func alert(typ, state, summary string) schema.Alert {
	return testproviders.Alert(Medium, "+61 414 123 456", typ, state, summary)
}

func newSender(t testing.TB, endpoint string, log *zap.Logger) *Sender {
	t.Helper()
	s, err := NewSender(Options{Config: Config{AccountSID: sid, AuthToken: token, From: from, Endpoint: endpoint,
		Timeout: 2 * time.Second}, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSendsTheMessagesAPIRequest(t *testing.T) {
	t.Parallel()
	srv := testproviders.NewServer(t, testproviders.Twilio(sid, token))
	s := newSender(t, srv.URL, nil)
	long := alert("problem", "critical", strings.Repeat("très long résumé ", 20))
	service := newSender(t, srv.URL, nil)
	service.cfg.From = "MG0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		name   string
		s      *Sender
		a      schema.Alert
		field  string
		want   string
		absent string
	}{
		{"problem", s, alert("problem", "critical", "HTTP 500"), "Body",
			"Problem: 'HTTP' on web-01 is Critical at 5 Jan 10:00, HTTP 500 (ACKID 8f4a2b1c)", "MessagingServiceSid"},
		{"recovery", s, alert("recovery", "ok", "HTTP 200"), "Body", "Recovery: 'HTTP' on web-01 is OK at 5 Jan 10:00, HTTP 200", ""},
		{"long text keeps the hint", s, long, "Body", "(ACKID 8f4a2b1c)", ""},
		{"number tidied", s, alert("problem", "critical", "x"), "To", "+61414123456", ""},
		{"sender number", s, alert("problem", "critical", "x"), "From", from, ""},
		{"messaging service", service, alert("problem", "critical", "x"), "MessagingServiceSid", "MG0123456789abcdef0123456789abcdef", "From"},
	} {
		if err := tc.s.Send(context.Background(), tc.a); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		_, accepted, _ := srv.Snapshot()
		form := accepted[len(accepted)-1].Form
		if got := form.Get(tc.field); !strings.Contains(got, tc.want) {
			t.Errorf("%s: %s = %q, want %q in it", tc.name, tc.field, got, tc.want)
		}
		if tc.absent != "" && form.Has(tc.absent) {
			t.Errorf("%s: %s sent", tc.name, tc.absent)
		}
		if body := form.Get("Body"); len([]rune(body)) > gateways.SMSMaxLength {
			t.Errorf("%s: body of %d characters", tc.name, len([]rune(body)))
		}
	}
	srv.AssertNoViolations(t)
}

func TestClassifiesTwilioAnswers(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		reply     testproviders.Reply
		permanent bool
		after     time.Duration
		want      string
	}{
		{"invalid number", testproviders.Reply{Status: 400}, true, 0, "HTTP 400 for web-01:HTTP: error 21211"},
		{"bad credentials", testproviders.Reply{Status: 401}, true, 0, "error 20003"},
		{"throttled", testproviders.Reply{Status: 429, RetryAfter: "7"}, false, 7 * time.Second, "HTTP 429"},
		{"throttled without Retry-After", testproviders.Reply{Status: 429}, false, 5 * time.Second, "HTTP 429"},
		{"server error", testproviders.Reply{Status: 503}, false, 0, "HTTP 503"},
		{"redirect", testproviders.Reply{Status: 302, Body: "moved"}, true, 0, "HTTP 302"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := testproviders.NewServer(t, testproviders.Twilio(sid, token))
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

func TestWrongCredentialsBreakTheContract(t *testing.T) {
	t.Parallel()
	srv := testproviders.NewServer(t, testproviders.Twilio(sid, token))
	s := newSender(t, srv.URL, nil)
	s.cfg.AuthToken = "wrong-t0ken-for-the-acct"
	err := s.Send(context.Background(), alert("problem", "critical", "x"))
	var de *gateways.DeliveryError
	if !errors.As(err, &de) || !de.Permanent || !strings.Contains(err.Error(), "HTTP 401") {
		t.Fatalf("got %v, want a permanent 401", err)
	}
	if _, _, v := srv.Snapshot(); len(v) != 1 {
		t.Fatalf("violations %q, want the refused credentials", v)
	}
	testproviders.AssertNoSecrets(t, "the error", err.Error(), "wrong-t0ken-for-the-acct")
}

func TestNetworkErrorsAreRetriedWithoutSecrets(t *testing.T) {
	t.Parallel()
	srv := testproviders.NewServer(t, testproviders.Twilio(sid, token))
	srv.Answer(testproviders.Reply{Hang: true})
	s := newSender(t, srv.URL, nil)
	s.cfg.Timeout = 200 * time.Millisecond
	s.Client.Timeout = 200 * time.Millisecond
	err := s.Send(context.Background(), alert("problem", "critical", "x"))
	var de *gateways.DeliveryError
	if !errors.As(err, &de) || de.Permanent || !strings.Contains(err.Error(), "no answer within 200ms") {
		t.Fatalf("got %v, want a retryable timeout", err)
	}
	srv.Close()
	err = s.Send(context.Background(), alert("problem", "critical", "x"))
	if !errors.As(err, &de) || de.Permanent {
		t.Fatalf("got %v, want a retryable connection error", err)
	}
	testproviders.AssertNoSecrets(t, "the error", err.Error(), token)
}

func TestConfigNamesEveryProblem(t *testing.T) {
	t.Parallel()
	err := Config{Endpoint: "ftp://x", Timeout: -time.Second}.Validate()
	for _, want := range []string{"gateways.sms_twilio.account_sid is required", "gateways.sms_twilio.auth_token is required",
		"gateways.sms_twilio.from is required", "gateways.sms_twilio.endpoint must be an http", "gateways.sms_twilio.timeout must be positive"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
}

// TestDelivery runs the gateway on a real Redis against the contract server.
func TestDelivery(t *testing.T) {
	t.Parallel()
	testproviders.Scenarios{
		Medium:   Medium,
		Contract: func() testproviders.Contract { return testproviders.Twilio(sid, token) },
		Sender: func(t testing.TB, url string, log *zap.Logger) gateways.Sender {
			return newSender(t, url, log)
		},
		Alert:         alert("problem", "critical", "HTTP 500"),
		Secrets:       []string{token},
		WantPermanent: "the Twilio API answered HTTP 400 for web-01:HTTP: error 21211",
		WantRetryable: "answered HTTP 500 for web-01:HTTP",
		Check: func(t testing.TB, req testproviders.Request) {
			if got := req.Form.Get("Body"); got != "Problem: 'HTTP' on web-01 is Critical at 5 Jan 10:00, HTTP 500 (ACKID 8f4a2b1c)" {
				t.Errorf("Body %q", got)
			}
		},
	}.Run(t)
}
