package jabber

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/internal/testing/testprosody"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/schema"
)

// TestDeliver logs the bot in with each TLS mode, and delivers alerts through the queue to a
// person (chat) and to a room (groupchat).
func TestDeliver(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{TLSStartTLS, TLSPlain, TLSDirect} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			e := startEnv(t, mode)
			if got := testutil.ToFloat64(e.metrics.Connected.WithLabelValues(Medium)); got != 1 {
				t.Errorf("connected gauge = %v, want 1", got)
			}
			encrypted := e.logs.FilterMessage("connected to the XMPP server").All()
			if len(encrypted) != 1 || encrypted[0].ContextMap()["encrypted"] != (mode != TLSPlain) {
				t.Errorf("connection log: %+v", encrypted)
			}

			alice := testprosody.Connect(t, e.xmpp, "alice", alicePassword)
			alice.Join(e.room, "alice")

			e.queueAlert(problemAlert(e.alice, "app-01.example.com", "HTTP Port 80", "HTTP 500"))
			hash := schema.AckHash("app-01.example.com:HTTP Port 80")
			alice.ExpectText("chat", e.bot+"/test",
				fmt.Sprintf(`Problem: flapjack: ACKID %s, "HTTP Port 80" on app-01.example.com is Critical, HTTP 500`, hash))

			recovery := problemAlert(strings.ToUpper(e.room), "app-01.example.com", "HTTP Port 80", "HTTP 200")
			recovery.State, recovery.NotificationType = "ok", "recovery"
			e.queueAlert(recovery)
			alice.ExpectText("groupchat", e.room+"/flapjack", `Recovery: "HTTP Port 80" on app-01.example.com is OK, HTTP 200`)

			waitUntil(t, "queue drained", func() bool { return e.llen(e.keys.Queue("jabber_notifications")) == 0 })
			if n := e.llen(e.keys.FailedQueue("jabber_notifications")); n != 0 {
				t.Errorf("%d alerts dead-lettered", n)
			}
		})
	}
}

// TestAcknowledgeEndToEnd: a failing check notified by the real executive (and notifier), the
// person acknowledges it by the ACKID of the alert, the acknowledgement event reaches the
// executive, which emits an acknowledgement notification (and the notifier an alert the bot
// delivers).
func TestAcknowledgeEndToEnd(t *testing.T) {
	t.Parallel()
	e := startEnv(t, TLSStartTLS)
	alice := testprosody.Connect(t, e.xmpp, "alice", alicePassword)
	alice.Join(e.room, "alice")
	p := newPipeline(t, e)

	const entity, check = "app-01.example.com", "HTTP"
	id := schema.CheckID(entity, check)
	hash := schema.AckHash(id)
	e.db.Do(t, "HSET", e.keys.ChecksByHash(), hash, id)
	p.contact("c1", e.alice)

	// The check fails for longer than the initial failure delay: a problem notification.
	critical := fmt.Sprintf(`{"entity":"App-01.example.com","check":%q,"type":"service","state":"critical","summary":"HTTP 500"}`, check)
	p.event(critical)
	e.clk.Advance(40 * time.Second)
	p.event(critical)
	if n := p.lastNotification(); n.Type != schema.NotificationProblem || n.EventID != id {
		t.Fatalf("notification = %+v, want a problem for %s", n, id)
	}
	p.routeNotifications()
	alice.ExpectText("chat", e.bot, fmt.Sprintf(`Problem: flapjack: ACKID %s, "HTTP" on app-01.example.com is Critical, HTTP 500`, hash))

	// Alice acknowledges in direct chat, with the hash in capitals and a duration.
	alice.Say(e.bot, "chat", fmt.Sprintf("ACKID %s fixing it duration: 2h", strings.ToUpper(hash)))
	alice.ExpectText("chat", e.bot, fmt.Sprintf("ACKing %s on %s (%s)", check, entity, hash))
	evs := e.events()
	if len(evs) != 1 {
		t.Fatalf("events = %+v, want one acknowledgement", evs)
	}
	ack := evs[0]
	if ack.Entity != entity || ack.Check != check || !ack.IsAcknowledgement() || ack.Duration != 7200 ||
		!strings.Contains(ack.Summary, "fixing it") || ack.Summary != e.alice+": fixing it" || ack.AcknowledgementID != hash {
		t.Fatalf("acknowledgement event = %+v", ack)
	}

	// The executive turns it into unscheduled maintenance and an acknowledgement notification.
	e.clk.Advance(5 * time.Second)
	p.process()
	n := p.lastNotification()
	if n.Type != schema.NotificationAcknowledgement || n.EventID != id || schema.Deref(n.Summary) != e.alice+": fixing it" ||
		n.Duration == nil || *n.Duration != 7200 {
		t.Fatalf("notification = %+v (duration %v), want an acknowledgement of %s for 7200s", n, n.Duration, id)
	}
	p.routeNotifications()
	alice.ExpectText("chat", e.bot, fmt.Sprintf(`Acknowledgement: "HTTP" on %s has been acknowledged, unscheduled maintenance created for 2 hours, %s: fixing it`, entity, e.alice))

	// In the room, addressed to the bot: the check is acknowledged now, so the ACK changes.
	alice.Say(e.room, "groupchat", fmt.Sprintf("fj: ACKID %s still fixing duration: 1 hour", hash))
	alice.ExpectText("groupchat", e.room+"/flapjack", fmt.Sprintf("Changing ACK for %s on %s (%s)", check, entity, hash))
	evs = e.events() // the first acknowledgement was consumed by the executive
	if len(evs) != 1 || evs[0].Summary != "alice: still fixing" || evs[0].Duration != 3600 {
		t.Fatalf("events = %+v, want a second acknowledgement from alice for 3600s", evs)
	}

	// tell me about reads the maintenance from the stored windows at the fake clock.
	// (The room acknowledgement is still queued: the first one is in force.)
	e.clk.Advance(5 * time.Second)
	alice.Say(e.bot, "chat", "tell me about app-01.example.com:HTTP")
	alice.ExpectText("chat", e.bot, strings.Join([]string{
		"Entity: app-01.example.com, check: HTTP",
		"HTTP: Critical since 2026-01-05 10:00:00 UTC",
		"  scheduled maintenance: none",
		"  unscheduled maintenance: 2026-01-05 10:00:45 UTC → 2026-01-05 12:00:45 UTC (1 hour, 59 minutes, 55 seconds remaining): alice@localhost: fixing it",
	}, "\n"))
}

// TestCommandsRejected: wrong input and strangers get clear answers or silence, never a crash
// or an event.
func TestCommandsRejected(t *testing.T) {
	t.Parallel()
	e := newEnv(t, TLSPlain)
	alice := testprosody.Connect(t, e.xmpp, "alice", alicePassword)
	// Sent while the bot is offline: prosody stores it and delivers it at the bot's login.
	alice.Say(e.bot, "chat", "ACKID 0123abcd stale comment")
	alice.Sync()
	e.start(e.config(TLSPlain))
	e.waitConnected()
	alice.Expect("the offline-command notice", func(m testprosody.Message) bool {
		return m.Type == "chat" && strings.HasPrefix(m.Text, "I was offline when you sent 'ACKID 0123abcd stale comment'")
	})

	hash := schema.AckHash("app-01.example.com:HTTP")
	e.db.Do(t, "HSET", e.keys.ChecksByHash(), hash, "app-01.example.com:HTTP")
	mallory := testprosody.Connect(t, e.xmpp, "mallory", "mallory-pw")
	mallory.Say(e.bot, "chat", fmt.Sprintf("ACKID %s pwned", hash))
	mallory.Say(e.bot, "chat", "help")
	mallory.Sync()

	for _, tc := range []struct{ say, reply string }{
		{"ACKID deadbeef fixing it", "ERROR - couldn't ACK deadbeef - not found"},
		{"flapjack: ACKID " + hash, fmt.Sprintf(`ERROR - couldn't ACK %s - please provide a comment, eg "flapjack: ACKID %s AL looking"`, hash, hash)},
		{"<p>status entities /(/</p>", "that doesn't seem to be a valid pattern - error parsing regexp: missing closing ): `(`"},
		{"make me a sandwich", "what do you mean, 'make me a sandwich'? Type 'help' for a list of acceptable commands."},
	} {
		alice.Say(e.bot, "chat", tc.say)
		alice.ExpectText("chat", e.bot, tc.reply)
	}
	// Mallory's messages reached the bot before alice's last one was answered.
	mallory.Quiet(200 * time.Millisecond)
	if evs := e.events(); len(evs) != 0 {
		t.Errorf("events = %+v, want none", evs)
	}
	if len(e.logs.FilterMessage("ignoring a command from a JID that is neither in gateways.jabber.allowed_jids nor in a room").All()) != 2 {
		t.Errorf("stranger's commands not logged:\n%s", e.logText())
	}

	// Once in a configured room, mallory is trusted in direct chat too.
	mallory.Join(e.room, "mallory")
	mallory.Say(e.bot, "chat", "find entities matching /app/")
	mallory.ExpectText("chat", e.bot, "No entities match /app/")
	if !e.gw.Connected() {
		t.Error("gateway disconnected")
	}
}

// TestReconnect restarts prosody under the running gateway: it reconnects, rejoins the room,
// and an alert queued during the outage waits in the queue and is delivered afterwards.
func TestReconnect(t *testing.T) {
	t.Parallel()
	e := startEnv(t, TLSStartTLS)
	alice := testprosody.Connect(t, e.xmpp, "alice", alicePassword)
	alice.Join(e.room, "alice")
	e.queueAlert(problemAlert(e.room, "app-01.example.com", "HTTP", "before"))
	alice.Expect("the first room alert", func(m testprosody.Message) bool { return strings.HasSuffix(m.Text, "before") })

	e.xmpp.Stop(t)
	waitUntil(t, "the gateway to notice the outage", func() bool { return !e.gw.Connected() })
	if got := testutil.ToFloat64(e.metrics.Connected.WithLabelValues(Medium)); got != 0 {
		t.Errorf("connected gauge = %v during the outage", got)
	}
	e.queueAlert(problemAlert(e.alice, "app-01.example.com", "HTTP", "during the outage"))
	// Retries with this runner's backoff (6 attempts, 20-50ms apart) would dead-letter the alert
	// within 300ms. It waits in the queue, or claimed in the gateway's processing list when the
	// runner was already waiting for the queue as the connection dropped (Send then waits for
	// the reconnect). The outage lasts three more failed reconnects (100+200+400ms of backoff).
	failedDials := func() int { return e.logs.FilterMessage("cannot connect to the XMPP server").Len() }
	dialed := failedDials()
	waitUntil(t, "three reconnects failing during the outage", func() bool { return failedDials() >= dialed+3 })
	processing := e.keys.Processing(gateways.Stage(Medium), queue.LocalIdentity().ID())
	if n := e.llen(e.keys.Queue("jabber_notifications")) + e.llen(processing); n != 1 {
		t.Errorf("queue and processing list hold %d alerts during the outage, want 1", n)
	}
	if n := e.llen(e.keys.FailedQueue("jabber_notifications")); n != 0 {
		t.Fatalf("%d alerts dead-lettered during the outage", n)
	}

	e.xmpp.Restart(t)
	e.waitConnected()
	alice = testprosody.Connect(t, e.xmpp, "alice", alicePassword)
	alice.Expect("the alert queued during the outage", func(m testprosody.Message) bool {
		return m.Type == "chat" && strings.HasSuffix(m.Text, "during the outage")
	})
	alice.Join(e.room, "alice")
	e.queueAlert(problemAlert(e.room, "app-01.example.com", "HTTP", "after"))
	alice.Expect("a room alert after the reconnect", func(m testprosody.Message) bool {
		return m.Type == "groupchat" && m.From == e.room+"/flapjack" && strings.HasSuffix(m.Text, "after")
	})
	if got := len(e.logs.FilterMessage("connected to the XMPP server").All()); got != 2 {
		t.Errorf("%d connections logged, want 2", got)
	}
}

// TestPasswordNeverLogged captures every log entry while the bot fails to log in, logs in, and
// loses its connection, and looks for the password in messages and fields.
func TestPasswordNeverLogged(t *testing.T) {
	t.Parallel()
	e := newEnv(t, TLSStartTLS)
	wrong := e.config(TLSStartTLS)
	wrong.Password = "wr0ng-" + botPassword
	e.start(wrong)
	waitUntil(t, "two failed logins", func() bool { return len(e.logs.FilterMessage("cannot connect to the XMPP server").All()) >= 2 })
	e.stop()
	failures := e.logText()
	if !strings.Contains(failures, "auth failure") {
		t.Errorf("the login failure is not explained:\n%s", failures)
	}

	e.start(e.config(TLSStartTLS))
	e.waitConnected()
	e.xmpp.Stop(t)
	waitUntil(t, "the connection loss", func() bool { return len(e.logs.FilterMessage("XMPP connection lost").All()) > 0 })
	waitUntil(t, "a failed reconnect", func() bool { return len(e.logs.FilterMessage("cannot connect to the XMPP server").All()) > 0 })
	e.stop()
	all := failures + e.logText()
	for _, secret := range []string{botPassword, "b0t-Pa55"} {
		if strings.Contains(all, secret) {
			t.Fatalf("the password appears in the logs:\n%s", all)
		}
	}
}

// TestSendWhileDisconnectedIsRetryable: Send waits for a connection and gives up only when its
// context ends, with a retryable error.
func TestSendWhileDisconnectedIsRetryable(t *testing.T) {
	t.Parallel()
	g, err := NewClient(ClientOptions{Config: Config{JabberID: "flapjack@localhost", Password: "pw"}, Store: failingStore{}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err = g.Send(ctx, problemAlert("ada@localhost", "a", "b", "c"))
	var de *gateways.DeliveryError
	if !errors.As(err, &de) || de.Permanent || !strings.Contains(err.Error(), "not connected") {
		t.Fatalf("Send = %v, want a retryable 'not connected' error", err)
	}
	err = g.Send(context.Background(), problemAlert("not a jid", "a", "b", "c"))
	if !errors.As(err, &de) || !de.Permanent || !strings.Contains(err.Error(), "is not a JID") {
		t.Fatalf("Send to a bad address = %v, want a permanent error", err)
	}
}
