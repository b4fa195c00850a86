package testprosody

import (
	"crypto/tls"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	xmpp "github.com/xmppo/go-xmpp"
)

func TestMain(m *testing.M) {
	EnsureNoProxy()
	os.Exit(m.Run())
}

func dial(t *testing.T, s *Server, user, password string, starttls bool) *xmpp.Client {
	t.Helper()
	o := xmpp.Options{Host: s.Addr(), User: JID(user), Password: password, Resource: "test",
		NoTLS: true, InsecureAllowUnencryptedAuth: !starttls, DialTimeout: 5 * time.Second}
	if starttls {
		o.StartTLS = true
		o.TLSConfig = &tls.Config{ServerName: Domain, InsecureSkipVerify: true}
	}
	c, err := o.NewClient()
	if err != nil {
		t.Fatalf("login %s: %v\n%s", user, err, s.LogTail(10))
	}
	return c
}

// await reads stanzas from c until match accepts one.
func await(t *testing.T, c *xmpp.Client, what string, match func(any) bool) any {
	t.Helper()
	got := make(chan any, 1)
	errs := make(chan error, 1)
	go func() {
		for {
			st, err := c.Recv()
			if err != nil {
				errs <- err
				return
			}
			if match(st) {
				got <- st
				return
			}
		}
	}()
	select {
	case st := <-got:
		return st
	case err := <-errs:
		t.Fatalf("waiting for %s: %v", what, err)
	case <-time.After(10 * time.Second):
		t.Fatalf("no %s within 10s", what)
	}
	return nil
}

// receive waits for a chat message with a body.
func receive(t *testing.T, c *xmpp.Client) xmpp.Chat {
	t.Helper()
	return await(t, c, "message", func(st any) bool {
		m, ok := st.(xmpp.Chat)
		return ok && m.Text != ""
	}).(xmpp.Chat)
}

func TestServerChatStartTLSAndRestart(t *testing.T) {
	t.Parallel()
	s := Start(t)
	s.Register(t, "alice", "a-secret")
	s.Register(t, "bob", "b-secret")

	alice := dial(t, s, "alice", "a-secret", true)
	if !alice.IsEncrypted() {
		t.Fatal("STARTTLS login is not encrypted")
	}
	bob := dial(t, s, "bob", "b-secret", false)
	if _, err := alice.Send(xmpp.Chat{Remote: JID("bob"), Type: "chat", Text: "hello bob"}); err != nil {
		t.Fatal(err)
	}
	if m := receive(t, bob); m.Text != "hello bob" {
		t.Fatalf("bob got %q", m.Text)
	}

	s.Restart(t)
	// Accounts survive a restart; the ports are the same.
	dial(t, s, "alice", "a-secret", false)
}

func TestServerRoom(t *testing.T) {
	t.Parallel()
	s := Start(t)
	s.Register(t, "alice", "pw")
	s.Register(t, "bob", "pw")
	alice := dial(t, s, "alice", "pw", false)
	bob := dial(t, s, "bob", "pw", false)
	room := Room("ops")
	for _, c := range []struct {
		cl   *xmpp.Client
		nick string
	}{{alice, "alice"}, {bob, "bob"}} {
		if _, err := c.cl.JoinMUC(room, c.nick, xmpp.StanzaHistory, 0, nil); err != nil {
			t.Fatal(err)
		}
		// The room echoes the occupant's own presence once the join is done.
		await(t, c.cl, "self-presence in the room", func(st any) bool {
			p, ok := st.(xmpp.Presence)
			return ok && p.From == room+"/"+c.nick
		})
	}
	if _, err := bob.Send(xmpp.Chat{Remote: room, Type: "groupchat", Text: "hi room"}); err != nil {
		t.Fatal(err)
	}
	m := receive(t, alice)
	if m.Text != "hi room" || m.Type != "groupchat" || m.Remote != room+"/bob" {
		t.Fatalf("alice got %+v", m)
	}
}

func TestRegisterIsUsableForLogin(t *testing.T) {
	t.Parallel()
	s := Start(t)
	jid := s.Register(t, "dave", "pw")
	if jid != "dave@localhost" {
		t.Fatalf("JID %q", jid)
	}
	o := xmpp.Options{Host: s.Addr(), User: jid, Password: "wrong", NoTLS: true,
		InsecureAllowUnencryptedAuth: true, DialTimeout: 5 * time.Second}
	if _, err := o.NewClient(); err == nil {
		t.Fatal("login with a wrong password succeeded")
	}
}

// alicePlusBob connects two persons to a fresh server.
func alicePlusBob(t *testing.T) (alice, bob *Person) {
	s := Start(t)
	s.Register(t, "alice", "a-secret")
	s.Register(t, "bob", "b-secret")
	return Connect(t, s, "alice", "a-secret"), Connect(t, s, "bob", "b-secret")
}

func TestPersonsTalk(t *testing.T) {
	t.Parallel()
	alice, bob := alicePlusBob(t)

	bob.Say(alice.JID(), "chat", "noise")
	bob.Say(alice.JID(), "chat", "hello")
	got := alice.ExpectText("chat", bob.JID()+"/phone", "hello")
	if got.From != bob.JID()+"/phone" {
		t.Fatalf("message from %q, want bob's full JID", got.From)
	}
	alice.Quiet(100 * time.Millisecond) // "noise" was passed over by Expect, not left unread
	if all := alice.Messages(); len(all) != 2 || all[0].Text != "noise" || all[1].Text != "hello" {
		t.Fatalf("Messages() = %+v, want noise then hello", all)
	}

	room := Room("ops")
	alice.Join(room, "alice")
	bob.Join(room, "bob")
	bob.Say(room, "groupchat", "in the room")
	alice.ExpectText("groupchat", room+"/bob", "in the room")
	if alive, err := alice.Alive(); !alive {
		t.Fatalf("alice's connection dropped: %v", err)
	}
}

// errorsTB records Errorf calls instead of failing the test.
type errorsTB struct {
	testing.TB
	errs []string
}

func (e *errorsTB) Errorf(format string, args ...any) {
	e.errs = append(e.errs, fmt.Sprintf(format, args...))
}

func TestPersonQuietReportsAMessage(t *testing.T) {
	t.Parallel()
	alice, bob := alicePlusBob(t)

	rec := &errorsTB{TB: t}
	alice.t = rec
	bob.Say(alice.JID(), "chat", "arrives while alice waits")
	alice.Quiet(WaitFor)
	if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], "arrives while alice waits") {
		t.Fatalf("Quiet reported %q, want the message that arrived", rec.errs)
	}
	bob.Say(alice.JID(), "chat", "already waiting")
	bob.Sync()   // the server has routed it to alice's stream,
	alice.Sync() // and alice has read it: the ping's answer comes after it
	alice.Quiet(time.Millisecond)
	if len(rec.errs) != 2 || !strings.Contains(rec.errs[1], "already waiting") {
		t.Fatalf("Quiet reported %q, want the message left unread", rec.errs)
	}
}
