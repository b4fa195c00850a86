package slack

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

const hookPath = "/services/T00000000/B00000000/XXXXsl4ckS3cretXXXX"

func alert(address, typ, state, summary string) schema.Alert {
	at, hash := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC).Unix(), "8f4a2b1c"
	return schema.Alert{Media: Medium, Address: address, ID: "a1", ContactID: "ops", EventID: "web-01:HTTP",
		EventHash: &hash, State: state, Summary: &summary, Time: &at, NotificationType: typ}
}

func newSender(t testing.TB, cfg Config, log *zap.Logger) *Sender {
	t.Helper()
	if cfg.Timeout == 0 {
		cfg.Timeout = 2 * time.Second
	}
	s, err := NewSender(Options{Config: cfg, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestPostsToTheWebhook(t *testing.T) {
	t.Parallel()
	srv := testproviders.NewServer(t, testproviders.Slack())
	s := newSender(t, Config{Endpoint: srv.URL + hookPath, From: "flapjack"}, nil)
	rollup, r := alert("ops", "problem", "critical", ""), schema.RollupProblem
	rollup.Rollup, rollup.RollupAlerts = &r, map[string]schema.RollupEntry{"a:x": {State: "warning"}, "b:x": {State: "critical"}}
	cases := []struct {
		name, channel, color, text string
		a                          schema.Alert
	}{
		{"webhook URL address", "", "danger", `Problem: "HTTP" on web-01 is Critical, HTTP 500 &lt;b&gt; &amp; co`,
			alert(srv.URL+hookPath, "problem", "critical", "HTTP 500 <b> & co")},
		{"channel name", "#ops", "warning", `Problem: "HTTP" on web-01 is Warning, slow`, alert("ops", "problem", "warning", "slow")},
		{"#channel", "#ops", "good", `Recovery: "HTTP" on web-01 is OK, fine`, alert("#ops", "recovery", "ok", "fine")},
		{"direct message", "@ada", "#439FE0", "Acknowledgement: ", alert("@ada", "acknowledgement", "critical", "ada: on it")},
		{"rollup", "#ops", "danger", "Problem summary: Critical: 1, Warning: 1 (Critical: b:x; Warning: a:x)", rollup},
	}
	for _, tc := range cases {
		if err := s.Send(context.Background(), tc.a); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		srv.AssertNoViolations(t)
		_, accepted, _ := srv.Snapshot()
		req := accepted[len(accepted)-1]
		m, err := testproviders.DecodeSlack(req.Body)
		if err != nil {
			t.Fatal(err)
		}
		if req.Path != hookPath || m.Channel != tc.channel || !strings.HasPrefix(m.Text, tc.text) ||
			m.Attachments[0].Color != tc.color || m.Username != "flapjack" || m.IconEmoji != ":ghost:" {
			t.Errorf("%s: path %s, message %+v", tc.name, req.Path, m)
		}
	}
	_, accepted, _ := srv.Snapshot()
	m, _ := testproviders.DecodeSlack(accepted[0].Body)
	if footer := m.Attachments[0].Blocks[1].Elements; len(footer) != 2 || footer[0].PlainText() != "5 Jan 10:00 UTC" || footer[1].PlainText() != "`ACKID 8f4a2b1c`" {
		t.Errorf("context line %+v", footer)
	}
}

func TestRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		reply     testproviders.Reply
		permanent bool
		after     time.Duration
		want      string
	}{
		{"invalid payload", testproviders.Reply{Status: 400}, true, 0, "HTTP 400 for web-01:HTTP: invalid_payload"},
		{"archived", testproviders.Reply{Status: 410}, true, 0, "channel_is_archived"},
		{"not found", testproviders.Reply{Status: 404}, true, 0, "channel_not_found"},
		{"rate limited", testproviders.Reply{Status: 429, RetryAfter: "9"}, false, 9 * time.Second, "HTTP 429"},
		{"rollup_error", testproviders.Reply{Status: 500}, false, 0, "rollup_error"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := testproviders.NewServer(t, testproviders.Slack())
			srv.Answer(tc.reply)
			err := newSender(t, Config{}, nil).Send(context.Background(), alert(srv.URL+hookPath, "problem", "critical", "x"))
			var de *gateways.DeliveryError
			if !errors.As(err, &de) || de.Permanent != tc.permanent || de.RetryAfter != tc.after || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want permanent %v after %s containing %q", err, tc.permanent, tc.after, tc.want)
			}
			testproviders.AssertNoSecrets(t, "the error", err.Error(), hookPath)
			if !strings.Contains(err.Error(), "slack webhook http://127.0.0.1:") || !strings.Contains(err.Error(), "/…") {
				t.Errorf("error %q should name the webhook's host only", err)
			}
		})
	}
	err := newSender(t, Config{}, nil).Send(context.Background(), alert("ops", "problem", "critical", "x"))
	var de *gateways.DeliveryError
	if !errors.As(err, &de) || !de.Permanent || !strings.Contains(err.Error(), "gateways.slack.endpoint is not set") {
		t.Fatalf("channel without endpoint: %v", err)
	}
}

func TestConfig(t *testing.T) {
	t.Parallel()
	err := Config{Endpoint: "hooks.slack.com/services/x", IconEmoji: "ghost", Timeout: -1}.Validate()
	for _, want := range []string{"gateways.slack.endpoint must be an http", "gateways.slack.icon_emoji", "gateways.slack.timeout"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
	if err := (Config{IconEmoji: "none"}).Validate(); err != nil {
		t.Error(err)
	}
}

func TestDelivery(t *testing.T) {
	t.Parallel()
	testproviders.Scenarios{
		Medium:   Medium,
		Contract: testproviders.Slack,
		Sender: func(t testing.TB, url string, log *zap.Logger) gateways.Sender {
			return newSender(t, Config{Endpoint: url + hookPath}, log)
		},
		Alert:         alert("ops", "problem", "critical", "HTTP 500"),
		Secrets:       []string{hookPath, "XXXXsl4ckS3cretXXXX"},
		WantPermanent: "HTTP 400 for web-01:HTTP: invalid_payload",
		WantRetryable: "answered HTTP 500 for web-01:HTTP",
	}.Run(t)
}
