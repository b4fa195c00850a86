package messagenet

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
	username = "ops"
	password = "messagenet-pa55word"
)

func alert(typ, state, summary string) schema.Alert {
	return testproviders.Alert(Medium, "0414 123 456", typ, state, summary)
}

func newSender(t testing.TB, base string, log *zap.Logger) *Sender {
	t.Helper()
	s, err := NewSender(Options{Config: Config{Username: username, Password: password,
		Endpoint: base + testproviders.MessageNetPath, Timeout: 2 * time.Second}, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestLodgesTheMessage(t *testing.T) {
	t.Parallel()
	srv := testproviders.NewServer(t, testproviders.MessageNet(username, password))
	s := newSender(t, srv.URL, nil)
	if err := s.Send(context.Background(), alert("problem", "critical", strings.Repeat("disk full ", 30))); err != nil {
		t.Fatal(err)
	}
	srv.AssertNoViolations(t)
	_, accepted, _ := srv.Snapshot()
	q := accepted[0].Query
	msg := q.Get("PhoneMessage")
	if q.Get("PhoneNumber") != "0414123456" || !strings.HasPrefix(msg, "Problem: 'HTTP' on web-01 is Critical at 5 Jan 10:00, disk full") ||
		!strings.HasSuffix(msg, "... (ACKID 8f4a2b1c)") || len([]rune(msg)) != gateways.SMSMaxLength {
		t.Errorf("query %v", q)
	}
}

func TestClassifiesMessageNetAnswers(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		reply     testproviders.Reply
		ok        bool
		permanent bool
		after     time.Duration
	}{
		{"206 is sent (Flapjack's range)", testproviders.Reply{Status: 206, Body: "partial"}, true, false, 0},
		{"207 is not", testproviders.Reply{Status: 207, Body: "multi"}, false, true, 0},
		{"400", testproviders.Reply{Status: 400}, false, true, 0},
		{"429", testproviders.Reply{Status: 429, RetryAfter: "4"}, false, false, 4 * time.Second},
		{"502", testproviders.Reply{Status: 502}, false, false, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := testproviders.NewServer(t, testproviders.MessageNet(username, password))
			srv.Answer(tc.reply)
			err := newSender(t, srv.URL, nil).Send(context.Background(), alert("problem", "critical", "x"))
			if tc.ok {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var de *gateways.DeliveryError
			if !errors.As(err, &de) || de.Permanent != tc.permanent || de.RetryAfter != tc.after {
				t.Errorf("got %v, want permanent %v after %s", err, tc.permanent, tc.after)
			}
			testproviders.AssertNoSecrets(t, "the error", err.Error(), password)
		})
	}
}

func TestPasswordNeverShown(t *testing.T) {
	t.Parallel()
	srv := testproviders.NewServer(t, testproviders.MessageNet(username, password))
	s := newSender(t, srv.URL, nil)
	s.cfg.Timeout = 150 * time.Millisecond
	s.Client.Timeout = 150 * time.Millisecond
	srv.Answer(testproviders.Reply{Status: 403, Body: "login " + password + " refused", ContentType: "text/plain"}, testproviders.Reply{Hang: true})
	for i := 0; i < 2; i++ {
		err := s.Send(context.Background(), alert("problem", "critical", "x"))
		if err == nil {
			t.Fatal("delivered")
		}
		testproviders.AssertNoSecrets(t, "the error", err.Error(), password)
	}
	srv.Close()
	err := s.Send(context.Background(), alert("problem", "critical", "x"))
	testproviders.AssertNoSecrets(t, "the error", err.Error(), password)
}

func TestConfigNamesEveryProblem(t *testing.T) {
	t.Parallel()
	err := Config{Endpoint: "https://x/?Pwd=1"}.Validate()
	for _, want := range []string{"gateways.sms.username is required", "gateways.sms.password is required", "gateways.sms.endpoint must not have a query"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
}

func TestDelivery(t *testing.T) {
	t.Parallel()
	testproviders.Scenarios{
		Medium:   Medium,
		Contract: func() testproviders.Contract { return testproviders.MessageNet(username, password) },
		Sender: func(t testing.TB, url string, log *zap.Logger) gateways.Sender {
			return newSender(t, url, log)
		},
		Alert:         alert("problem", "critical", "HTTP 500"),
		Secrets:       []string{password},
		WantPermanent: "MessageNet answered HTTP 400 for web-01:HTTP",
		WantRetryable: "answered HTTP 500 for web-01:HTTP",
	}.Run(t)
}
