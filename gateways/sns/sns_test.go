package sns

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/internal/testing/testproviders"
	"github.com/flapjackgo/flapjack/schema"
)

const (
	accessKey = "AKIAIOSFODNN7EXAMPLE"
	secretKey = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	topic     = "arn:aws:sns:eu-west-1:123456789012:ops-alerts"
)

func alert(typ, state, summary string) schema.Alert {
	a, details := testproviders.Alert(Medium, topic, typ, state, summary), "stack trace"
	a.Details = &details
	return a
}

func newSender(t testing.TB, endpoint string, log *zap.Logger) *Sender {
	t.Helper()
	s, err := NewSender(Options{Config: Config{AccessKey: accessKey, SecretKey: secretKey, Endpoint: endpoint,
		Timeout: 2 * time.Second}, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestPublishesSignedRequests(t *testing.T) {
	t.Parallel()
	srv := testproviders.NewServer(t, testproviders.SNS(accessKey, secretKey, "eu-west-1"))
	s := newSender(t, srv.URL, nil)
	long := alert("problem", "critical", "HTTP 500")
	long.EventID = "web-01:" + strings.Repeat("Very long check name ", 10)
	fifo := alert("recovery", "ok", "HTTP 200")
	fifo.Address = "arn:aws:sns:eu-west-1:123456789012:ops.fifo"
	for _, tc := range []struct {
		name             string
		a                schema.Alert
		subject, message string
		group            string
	}{
		{"problem", alert("problem", "critical", "HTTP 500"), "Problem: 'HTTP' on web-01 is Critical",
			"Problem: 'HTTP' on web-01 is Critical at 5 Jan 10:00, HTTP 500 (ACKID 8f4a2b1c)\n\nstack trace", ""},
		{"subject cut to 99", long, "Problem: 'Very long check name", "", ""},
		{"FIFO topic", fifo, "Recovery: 'HTTP' on web-01 is OK", "", "web-01:HTTP"},
	} {
		if err := s.Send(context.Background(), tc.a); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		srv.AssertNoViolations(t)
		_, accepted, _ := srv.Snapshot()
		f := accepted[len(accepted)-1].Form
		if !strings.HasPrefix(f.Get("Subject"), tc.subject) || utf8.RuneCountInString(f.Get("Subject")) > MaxSubject {
			t.Errorf("%s: Subject %q", tc.name, f.Get("Subject"))
		}
		if tc.message != "" && f.Get("Message") != tc.message {
			t.Errorf("%s: Message %q", tc.name, f.Get("Message"))
		}
		if f.Get("MessageGroupId") != tc.group || (tc.group != "" && len(f.Get("MessageDeduplicationId")) != 64) {
			t.Errorf("%s: group %q dedup %q", tc.name, f.Get("MessageGroupId"), f.Get("MessageDeduplicationId"))
		}
		if auth := accepted[len(accepted)-1].Header.Get("Authorization"); !strings.Contains(auth, "/eu-west-1/sns/aws4_request") {
			t.Errorf("%s: signed for another region: %s", tc.name, auth)
		}
	}
}

func TestClassifiesSNSAnswers(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		reply     testproviders.Reply
		permanent bool
		after     time.Duration
		want      string
	}{
		{"invalid parameter", testproviders.Reply{Status: 400}, true, 0, "SNS answered HTTP 400 InvalidParameter for web-01:HTTP: scripted 400"},
		{"authorization", testproviders.Reply{Status: 403}, true, 0, "HTTP 403 AuthorizationError"},
		{"no such topic", testproviders.Reply{Status: 404}, true, 0, "HTTP 404 NotFound"},
		{"throttled", testproviders.Reply{Status: 429, RetryAfter: "2"}, false, 2 * time.Second, "HTTP 429 Throttled"},
		{"throttling as 400", testproviders.Reply{Status: 400, ContentType: "text/xml",
			Body: `<ErrorResponse><Error><Type>Sender</Type><Code>Throttling</Code><Message>Rate exceeded</Message></Error></ErrorResponse>`},
			false, 5 * time.Second, "HTTP 400 Throttling"},
		{"internal error", testproviders.Reply{Status: 500}, false, 0, "HTTP 500 InternalError"},
		{"unavailable", testproviders.Reply{Status: 503, RetryAfter: "3"}, false, 3 * time.Second, "HTTP 503"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := testproviders.NewServer(t, testproviders.SNS(accessKey, secretKey, "eu-west-1"))
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

func TestRefusedSignatureAndBadAddresses(t *testing.T) {
	t.Parallel()
	srv := testproviders.NewServer(t, testproviders.SNS(accessKey, secretKey, "eu-west-1"))
	s := newSender(t, srv.URL, nil)
	s2, err := NewSender(Options{Config: Config{AccessKey: accessKey, SecretKey: "not-the-secret-key-000", Endpoint: srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	err = s2.Send(context.Background(), alert("problem", "critical", "x"))
	var de *gateways.DeliveryError
	if !errors.As(err, &de) || !de.Permanent || !strings.Contains(err.Error(), "SignatureDoesNotMatch") {
		t.Fatalf("wrong secret: %v", err)
	}
	testproviders.AssertNoSecrets(t, "the error", err.Error(), "not-the-secret-key-000", secretKey)
	bad := alert("problem", "critical", "x")
	bad.Address = "ops-alerts"
	if err := s.Send(context.Background(), bad); !errors.As(err, &de) || !de.Permanent || !strings.Contains(err.Error(), "not an SNS topic ARN") {
		t.Fatalf("bad address: %v", err)
	}
	srv.Close()
	err = s.Send(context.Background(), alert("problem", "critical", "x"))
	if !errors.As(err, &de) || de.Permanent {
		t.Fatalf("unreachable SNS: %v, want retryable", err)
	}
	testproviders.AssertNoSecrets(t, "the error", err.Error(), secretKey)
}

func TestConfigNamesEveryProblem(t *testing.T) {
	t.Parallel()
	err := Config{Region: "Ireland", Endpoint: "sns"}.Validate()
	for _, want := range []string{"gateways.sns.access_key is required", "gateways.sns.secret_key is required",
		"gateways.sns.region_name \"Ireland\"", "gateways.sns.endpoint"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
}

func TestDelivery(t *testing.T) {
	t.Parallel()
	testproviders.Scenarios{
		Medium:   Medium,
		Contract: func() testproviders.Contract { return testproviders.SNS(accessKey, secretKey, "eu-west-1") },
		Sender: func(t testing.TB, url string, log *zap.Logger) gateways.Sender {
			return newSender(t, url, log)
		},
		Alert:         alert("problem", "critical", "HTTP 500"),
		Secrets:       []string{secretKey},
		WantPermanent: "SNS answered HTTP 400 InvalidParameter for web-01:HTTP",
		WantRetryable: "SNS answered HTTP 500 InternalError for web-01:HTTP",
	}.Run(t)
}

// The delivery log keeps the MessageId SNS gave each published alert.
func TestDeliveryLogKeepsTheMessageID(t *testing.T) {
	t.Parallel()
	srv := testproviders.NewServer(t, testproviders.SNS(accessKey, secretKey, "eu-west-1"))
	problem, recovery := alert("problem", "critical", "HTTP 500"), alert("recovery", "ok", "HTTP 200")
	problem.ID, recovery.ID = "alert-1", "alert-2"
	logged := testproviders.NewGateway(t, Medium).LoggedIDs(newSender(t, srv.URL, nil), problem, recovery)
	_, accepted, _ := srv.Snapshot()
	issued := map[string]string{}
	for _, req := range accepted {
		id := problem.ID
		if strings.Contains(req.Form.Get("Message"), "HTTP 200") {
			id = recovery.ID
		}
		issued[id] = testproviders.SNSMessageID(req.Body)
	}
	if len(issued) != 2 || issued[problem.ID] == issued[recovery.ID] {
		t.Fatalf("SNS issued %v, want one id per alert", issued)
	}
	for id, want := range issued {
		if logged[id] != want {
			t.Errorf("%s: delivery log has message id %q, SNS issued %q", id, logged[id], want)
		}
	}
}
