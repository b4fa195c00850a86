package email

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/internal/testing/testproviders"
	"github.com/flapjackgo/flapjack/internal/testing/testsmtp"
)

// deliveryEnv is the email gateway as deployed (the shared kit's runner on a real Redis) with a
// Sender that talks to a real SMTP server.
type deliveryEnv struct {
	*testproviders.Gateway
	srv  *testsmtp.Server
	logs *observer.ObservedLogs
}

// startDelivery runs the gateway until the test ends, retrying every 20–100 ms up to attempts
// times.
func startDelivery(t *testing.T, srv *testsmtp.Server, attempts int) *deliveryEnv {
	t.Helper()
	e := &deliveryEnv{Gateway: testproviders.NewGateway(t, Medium), srv: srv}
	core, logs := observer.New(zapcore.InfoLevel)
	e.logs = logs
	log := zap.New(core)
	clk := clock.NewFake(t0)
	cfg := serverAt(srv)
	cfg.Timeout = 5 * time.Second
	sender, err := NewSender(SenderOptions{Config: cfg, Pool: e.DB.Pool, Keys: e.Keys, Clock: clk, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	e.Start(sender, log, testproviders.RunOptions{MaxAttempts: attempts, FirstBackoff: 20 * time.Millisecond,
		MaxBackoff: 100 * time.Millisecond, Clock: clk})
	return e
}

// drained checks that nothing is left queued, claimed or dead-lettered.
func (e *deliveryEnv) drained(t *testing.T) {
	t.Helper()
	if q, p, f := e.QueueLen(), e.Claimed(), len(e.Failed()); q+p+f != 0 {
		t.Errorf("%d alerts left queued, %d claimed, %d dead-lettered", q, p, f)
	}
}

// TestTemporaryReplyIsRetriedThenDelivered: 451 twice at RCPT, then 250: the runner retries
// and the mail arrives once.
func TestTemporaryReplyIsRetriedThenDelivered(t *testing.T) {
	t.Parallel()
	srv := testsmtp.Start(t, testsmtp.Options{Replies: map[string]testsmtp.Reply{"ada@example.com": {Code: 451, Times: 2}}})
	e := startDelivery(t, srv, 6)
	e.Queue(problem())
	e.Settle("the delivery", func() bool { return len(srv.Messages(t)) >= 1 })
	if n := len(srv.Messages(t)); n != 1 {
		t.Fatalf("%d messages, want 1", n)
	}
	if got := strings.Join(rcptEvents(srv), " "); got != "451 451 250" {
		t.Errorf("RCPT replies %q, want 451 451 250", got)
	}
	if n := e.logs.FilterMessage("delivery failed; retrying").Len(); n != 2 {
		t.Errorf("%d retries logged, want 2:\n%s", n, testproviders.LogText(e.logs))
	}
	e.drained(t)
}

// TestPermanentReplyIsDeadLettered: 550 at RCPT moves the alert to email_notifications_failed
// with the server's words, after one attempt.
func TestPermanentReplyIsDeadLettered(t *testing.T) {
	t.Parallel()
	srv := testsmtp.Start(t, testsmtp.Options{Replies: map[string]testsmtp.Reply{"ada@example.com": {Code: 550}}})
	e := startDelivery(t, srv, 6)
	e.Queue(problem())
	e.Settle("the dead letter", func() bool { return len(e.Failed()) >= 1 })
	f := e.Failed()
	if len(f) != 1 {
		t.Fatalf("%d dead letters", len(f))
	}
	msg, _ := f[0]["error"].(string)
	if !strings.Contains(msg, "RCPT TO:<ada@example.com>: 550") || f[0]["media"] != Medium {
		t.Errorf("dead letter %v", f[0])
	}
	if alert, _ := f[0]["alert"].(map[string]any); alert["id"] != problem().ID {
		t.Errorf("dead letter keeps %v, not the alert", f[0]["alert"])
	}
	if got := rcptEvents(srv); len(got) != 1 || len(srv.Messages(t)) != 0 {
		t.Errorf("RCPT replies %v, %d messages: a 5xx was retried or delivered", got, len(srv.Messages(t)))
	}
	if e.QueueLen() != 0 {
		t.Error("alert still queued")
	}
}

// TestServerRestartLosesNothing: 50 alerts queued, the SMTP server stopped (as an MTA is, with
// SIGTERM) after about 10 and started again a little later: every alert arrives exactly once.
func TestServerRestartLosesNothing(t *testing.T) {
	t.Parallel()
	srv := testsmtp.Start(t, testsmtp.Options{DataDelay: 20 * time.Millisecond})
	e := startDelivery(t, srv, 1000)
	const n = 50
	for i := range n {
		a := problem()
		a.ID = fmt.Sprintf("alert-%02d", i)
		a.EventID = fmt.Sprintf("web-%02d:HTTP", i)
		e.Queue(a)
	}
	srv.WaitMessages(t, 10, 20*time.Second)
	srv.Stop(t)
	stoppedAfter := len(srv.Messages(t))
	// The server stays down until the gateway has met it down (a retry is logged).
	for deadline := time.Now().Add(20 * time.Second); e.logs.FilterMessage("delivery failed; retrying").Len() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the gateway never met the server down")
		}
	}
	srv.Restart(t)
	e.Settle("every alert", func() bool { return len(srv.Messages(t)) >= n })
	if stoppedAfter >= n {
		t.Fatalf("all %d alerts were delivered before the server stopped: the test proves nothing", n)
	}
	seen := map[string]int{}
	for _, m := range srv.Messages(t) {
		seen[parseMail(t, m.Data).Header.Get("Message-Id")]++
	}
	for i := range n {
		id := fmt.Sprintf("<alert-%02d@mon.example.com>", i)
		if seen[id] != 1 {
			t.Errorf("%s delivered %d times", id, seen[id])
		}
	}
	if len(seen) != n {
		t.Errorf("%d distinct messages, want %d", len(seen), n)
	}
	if e.logs.FilterMessage("delivery failed; retrying").Len() == 0 {
		t.Error("no delivery failed while the server was down")
	}
	t.Logf("%d delivered before the stop, %d retries while it was down", stoppedAfter, e.logs.FilterMessage("delivery failed; retrying").Len())
	e.drained(t)
}

// rcptEvents are the server's RCPT reply codes, in order.
func rcptEvents(srv *testsmtp.Server) []string {
	var out []string
	for _, ev := range srv.Events() {
		if rest, ok := strings.CutPrefix(ev, "rcpt "); ok {
			out = append(out, rest[strings.LastIndexByte(rest, ' ')+1:])
		}
	}
	return out
}

// The delivery log keeps the queue id the server gave each message in its reply to the end of
// DATA ("250 2.0.0 Ok: queued as 4F1A2B3C5D").
func TestDeliveryLogKeepsTheQueueID(t *testing.T) {
	t.Parallel()
	srv := testsmtp.Start(t, testsmtp.Options{})
	e := startDelivery(t, srv, 3)
	ada, bob := problem(), problem()
	ada.ID, bob.ID, bob.ContactID, bob.Address = "alert-ada", "alert-bob", "bob", "bob@example.com"
	e.QueueLogged(ada, *ada.Time)
	e.QueueLogged(bob, *bob.Time)
	logged := map[string]string{ada.Address: e.Delivered(ada).MessageID, bob.Address: e.Delivered(bob).MessageID}
	issued := map[string]string{}
	for _, m := range srv.Messages(t) {
		issued[strings.Join(m.To, ",")] = m.QueueID
	}
	if len(issued) != 2 || issued[ada.Address] == "" || issued[ada.Address] == issued[bob.Address] {
		t.Fatalf("the server queued %v, want one id per message", issued)
	}
	for to, want := range issued {
		if logged[to] != want {
			t.Errorf("mail to %s: delivery log has message id %q, the server queued it as %q", to, logged[to], want)
		}
	}
}

func TestQueueIDOfAReply(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ reply, want string }{
		{"2.0.0 Ok: queued as 4F1A2", "4F1A2"},
		{"OK id=1tK9Zq-000Abc-3x", "1tK9Zq-000Abc-3x"},
		{"2.0.0 OK  1700000000 d75a77b69052e-42a1b2c3 - gsmtp", "2.0.0 OK  1700000000 d75a77b69052e-42a1b2c3 - gsmtp"},
		{" Message accepted \n", "Message accepted"},
	} {
		if got := QueueID(tc.reply); got != tc.want {
			t.Errorf("QueueID(%q) = %q, want %q", tc.reply, got, tc.want)
		}
	}
}
