package testsmtp

import (
	"errors"
	"strings"
	"testing"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

func TestMain(m *testing.M) { Main(m) }

const msg = "From: a@example.com\r\nTo: b@example.com\r\nSubject: hi\r\n\r\nbody\r\n"

func send(t *testing.T, s *Server, auth sasl.Client, rcpt string) error {
	t.Helper()
	c, err := smtp.DialStartTLS(s.Addr(), s.TLSConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if auth != nil {
		if err := c.Auth(auth); err != nil {
			return err
		}
	}
	return c.SendMail("a@example.com", []string{rcpt}, strings.NewReader(msg))
}

func code(err error) int {
	var se *smtp.SMTPError
	if errors.As(err, &se) {
		return se.Code
	}
	return 0
}

// TestServerDemandsTLSAndAuth: mail is refused before STARTTLS and before AUTH; PLAIN and LOGIN
// (with the username as initial response) are accepted; a wrong password is 535.
func TestServerDemandsTLSAndAuth(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{})
	plain, err := smtp.Dial(s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := plain.Extension("AUTH"); ok {
		t.Error("AUTH offered before STARTTLS")
	}
	if err := plain.Mail("a@example.com", nil); code(err) != 530 {
		t.Errorf("MAIL in plaintext: %v, want 530", err)
	}
	plain.Close()
	if err := send(t, s, nil, "b@example.com"); code(err) != 530 {
		t.Errorf("MAIL without AUTH: %v, want 530", err)
	}
	if err := send(t, s, sasl.NewPlainClient("", User, "wrong"), "b@example.com"); code(err) != 535 {
		t.Errorf("wrong password: %v, want 535", err)
	}
	if err := send(t, s, sasl.NewPlainClient("", User, Password), "b@example.com"); err != nil {
		t.Fatalf("PLAIN: %v", err)
	}
	if err := send(t, s, sasl.NewLoginClient(User, Password), "c@example.com"); err != nil {
		t.Fatalf("LOGIN: %v", err)
	}
	msgs := s.Messages(t)
	if len(msgs) != 2 {
		t.Fatalf("%d messages stored, want 2; events:\n%s", len(msgs), s.EventsText())
	}
	for i, rcpt := range []string{"b@example.com", "c@example.com"} {
		m := msgs[i]
		if !m.TLS || m.AuthUser != User || m.From != "a@example.com" || len(m.To) != 1 || m.To[0] != rcpt || m.Data != msg {
			t.Errorf("message %d: %+v", i, m.Record)
		}
	}
}

// TestServerRepliesAndRestart: chosen recipients get 4xx (a number of times) or 5xx; a
// restart keeps the port and the stored messages and resets the counts.
func TestServerRepliesAndRestart(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{NoAuth: true, Replies: map[string]Reply{
		"later@example.com": {Code: 451, Times: 2}, "never@example.com": {Code: 550},
	}})
	for i, want := range []int{451, 451, 0} {
		if err := send(t, s, nil, "later@example.com"); code(err) != want {
			t.Fatalf("attempt %d: %v, want %d", i+1, err, want)
		}
	}
	if err := send(t, s, nil, "never@example.com"); code(err) != 550 {
		t.Fatalf("never: %v, want 550", err)
	}
	port := s.Port
	s.Stop(t)
	if _, err := smtp.Dial(s.Addr()); err == nil {
		t.Fatal("a stopped server accepts connections")
	}
	s.Restart(t)
	if s.Port != port {
		t.Fatalf("port %d after restart, was %d", s.Port, port)
	}
	if err := send(t, s, nil, "later@example.com"); code(err) != 451 {
		t.Fatalf("after restart: %v, want 451 again", err)
	}
	if n := len(s.Messages(t)); n != 1 {
		t.Fatalf("%d messages after restart, want 1", n)
	}
	if got := s.CountEvents("rcpt later@example.com 451"); got != 3 {
		t.Fatalf("%d 451 replies logged, want 3:\n%s", got, s.EventsText())
	}
}
