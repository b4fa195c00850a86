package testproviders

import (
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/schema"
)

// Scenarios drive one medium through the shared runner on a real Redis against its contract
// server: delivered once; a retryable failure then delivered; a 429 whose Retry-After is
// waited for; a permanent failure dead-lettered at once; a failure that never ends
// dead-lettered after the attempts. No request may break the contract, and neither the logs
// nor the dead letters may hold a secret.
type Scenarios struct {
	Medium   string
	Contract func() Contract
	// Sender builds the medium's sender for the server at url, logging to log.
	Sender func(t testing.TB, url string, log *zap.Logger) gateways.Sender
	Alert  schema.Alert
	// Address, when set, is the alert's address for the server at url (a webhook's URL).
	Address func(url string) string
	// Secrets must appear in no log entry and no dead letter.
	Secrets []string
	// Permanent, Retryable and Throttled are the provider's answers of each kind; defaults
	// 400, 500 and 429 with "Retry-After: 1".
	Permanent, Retryable, Throttled Reply
	// WantPermanent and WantRetryable are parts of the dead-letter error for Permanent and for
	// Retryable answered on every attempt; both are required.
	WantPermanent, WantRetryable string
	// Check, when set, inspects each accepted request.
	Check func(t testing.TB, req Request)
}

// Run runs every scenario as a parallel subtest.
func (s Scenarios) Run(t *testing.T) {
	t.Helper()
	if s.WantPermanent == "" || s.WantRetryable == "" {
		t.Fatal("Scenarios need WantPermanent and WantRetryable: the dead-letter errors they expect")
	}
	if s.Permanent == (Reply{}) {
		s.Permanent = Reply{Status: 400}
	}
	if s.Retryable == (Reply{}) {
		s.Retryable = Reply{Status: 500}
	}
	if s.Throttled == (Reply{}) {
		s.Throttled = Reply{Status: 429, RetryAfter: "1"}
	}
	success := Reply{}
	cases := []struct {
		name         string
		fallback     Reply
		script       []Reply
		wantRequests int
		wantAccepted int
		dead         bool   // dead-lettered
		wantFailed   string // part of the dead-letter error
		minGap       time.Duration
	}{
		{name: "delivered once", wantRequests: 1, wantAccepted: 1},
		{name: "retryable failure, then delivered", fallback: success, script: []Reply{s.Retryable}, wantRequests: 2, wantAccepted: 1},
		{name: "429 waits for Retry-After", fallback: success, script: []Reply{s.Throttled}, wantRequests: 2, wantAccepted: 1, minGap: time.Second},
		{name: "permanent failure dead-lettered at once", fallback: s.Permanent, wantRequests: 1, dead: true, wantFailed: s.WantPermanent},
		{name: "endless failure dead-lettered after the attempts", fallback: s.Retryable, wantRequests: 3, dead: true, wantFailed: s.WantRetryable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := NewServer(t, s.Contract())
			srv.Answer(tc.fallback, tc.script...)
			log, logs := NewLogger()
			g := RunGateway(t, s.Medium, s.Sender(t, srv.URL, log), log)
			a := s.Alert
			if s.Address != nil {
				a.Address = s.Address(srv.URL)
			}
			g.Queue(a)
			g.Settle("the alert's fate", func() bool {
				_, acc, _ := srv.Snapshot()
				return len(acc)+len(g.Failed()) >= 1
			})
			n, accepted, violations := srv.Snapshot()
			if len(violations) > 0 {
				t.Fatalf("contract violations: %q\nlogs:\n%s", violations, LogText(logs))
			}
			if n != tc.wantRequests || len(accepted) != tc.wantAccepted {
				t.Fatalf("%d requests, %d accepted; want %d and %d\nlogs:\n%s", n, len(accepted), tc.wantRequests, tc.wantAccepted, LogText(logs))
			}
			if s.Check != nil {
				for _, req := range accepted {
					s.Check(t, req)
				}
			}
			if tc.minGap > 0 {
				at := srv.Arrivals()
				if gap := at[1].Sub(at[0]); gap < tc.minGap {
					t.Errorf("retried after %s, want at least %s (Retry-After)", gap, tc.minGap)
				}
			}
			failed := g.Failed()
			switch {
			case !tc.dead && len(failed) != 0:
				t.Fatalf("dead-lettered: %v", failed)
			case tc.dead:
				if len(failed) != 1 {
					t.Fatalf("%d dead-lettered records, want 1\nlogs:\n%s", len(failed), LogText(logs))
				}
				msg, _ := failed[0]["error"].(string)
				if !strings.Contains(msg, tc.wantFailed) {
					t.Errorf("dead-letter error %q does not contain %q", msg, tc.wantFailed)
				}
				if failed[0]["media"] != s.Medium || failed[0]["alert"] == nil {
					t.Errorf("dead-letter record = %v", failed[0])
				}
				AssertNoSecrets(t, "the dead letter", msg, s.Secrets...)
			}
			AssertNoSecrets(t, "the logs", LogText(logs), s.Secrets...)
		})
	}
}

// AssertNoSecrets fails when text (described by where) contains any secret.
func AssertNoSecrets(t testing.TB, where, text string, secrets ...string) {
	t.Helper()
	for _, secret := range secrets {
		if secret != "" && strings.Contains(text, secret) {
			t.Errorf("%s leak a secret (…%s):\n%s", where, secret[len(secret)-min(4, len(secret)):], text)
		}
	}
}
