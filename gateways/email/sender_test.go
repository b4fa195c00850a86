package email

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/internal/testing/testsmtp"
	"github.com/flapjackgo/flapjack/schema"
)

var t0 = time.Date(2026, 1, 5, 10, 0, 30, 0, time.UTC)

func newSender(t *testing.T, cfg Config, o SenderOptions) *Sender {
	t.Helper()
	o.Config = cfg
	if o.Clock == nil {
		o.Clock = clock.NewFake(t0)
	}
	s, err := NewSender(o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// kind says how the shared runner treats err: "ok", "retry" or "permanent".
func kind(err error) string {
	var de *gateways.DeliveryError
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &de) && de.Permanent:
		return "permanent"
	}
	return "retry"
}

// TestDeliveredMail is one problem alert through STARTTLS and AUTH PLAIN to a real SMTP server:
// envelope, headers, both parts, the ACK hint, and the Time row in the contact's timezone, read
// from Redis.
func TestDeliveredMail(t *testing.T) {
	t.Parallel()
	srv := testsmtp.Start(t, testsmtp.Options{})
	db := testredis.New(t)
	keys := schema.NewKeys("")
	db.Do(t, "HSET", keys.Contact("ada"), "first_name", "Ada", "last_name", "Lovelace", "email", "ada@example.com")
	db.Do(t, "SET", keys.ContactTimezone("ada"), "Asia/Tokyo")
	s := newSender(t, serverAt(srv), SenderOptions{Pool: db.Pool, Keys: keys, DefaultZone: berlin})

	a := problem()
	a.Summary = str("HTTP 500 — 応答なし 🔥")
	if err := s.Send(context.Background(), a); err != nil {
		t.Fatalf("send: %v\n%s", err, srv.EventsText())
	}
	msgs := srv.Messages(t)
	if len(msgs) != 1 {
		t.Fatalf("%d messages", len(msgs))
	}
	m := msgs[0]
	if !m.TLS || m.AuthUser != testsmtp.User || m.From != "flapjack@example.com" || strings.Join(m.To, ",") != "ada@example.com" {
		t.Errorf("envelope: tls %v user %q from %q to %q", m.TLS, m.AuthUser, m.From, m.To)
	}
	if m.Helo != "mon.example.com" {
		t.Errorf("EHLO %q", m.Helo)
	}
	p := parseMail(t, m.Data)
	wantHeaders := map[string]string{
		"From":           `"Flapjack" <flapjack@example.com>`,
		"Reply-To":       "<ops@example.com>",
		"To":             `"Ada Lovelace" <ada@example.com>`,
		"Message-Id":     "<8f4a2b1c0d9e-1767607200.000000@mon.example.com>",
		"Mime-Version":   "1.0",
		"Auto-Submitted": "auto-generated",
		"Date":           "Mon, 05 Jan 2026 19:00:30 +0900", // the clock's now, in the contact's zone
	}
	for h, want := range wantHeaders {
		if got := p.Header.Get(h); got != want {
			t.Errorf("%s: %q, want %q", h, got, want)
		}
	}
	if p.Subject != "Problem: 'HTTP' on web-01 is Critical" {
		t.Errorf("Subject %q", p.Subject)
	}
	if len(p.Parts) != 2 {
		t.Fatalf("parts %v", p.Parts)
	}
	contains(t, "text part", p.Parts["text/plain"], "Hi Ada,", "Summary:          HTTP 500 — 応答なし 🔥",
		"Time:             2026-01-05 19:00:00 JST", "ACKID 8f4a2b1c <your comment>", "Cheers,\nFlapjack")
	contains(t, "HTML part", p.Parts["text/html"], "<td>HTTP 500 — 応答なし 🔥</td>", "<td>2026-01-05 19:00:00 JST</td>",
		"<code>ACKID 8f4a2b1c &lt;your comment&gt;</code>")

	// A contact without a timezone gets the default.
	a.ContactID, a.ID = "bob", "second"
	if err := s.Send(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	p = parseMail(t, srv.WaitMessages(t, 2, 5*time.Second)[1].Data)
	contains(t, "text part", p.Parts["text/plain"], "Time:             2026-01-05 11:00:00 CET")
}

// TestHeaderInjectionIsDefeated: CR/LF in the summary, the check name, the contact's name and
// the address never add a header or a recipient.
func TestHeaderInjectionIsDefeated(t *testing.T) {
	t.Parallel()
	srv := testsmtp.Start(t, testsmtp.Options{})
	s := newSender(t, serverAt(srv), SenderOptions{})
	a := problem()
	a.EventID = "web-01:HTTP\r\nBcc: evil@example.com\r\n\r\nfake body"
	a.Summary = str("HTTP 500\r\nBcc: evil@example.com")
	a.ContactFirstName = str("Ada\r\nBcc: evil@example.com")
	if err := s.Send(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	m := srv.Messages(t)[0]
	if strings.Join(m.To, ",") != "ada@example.com" {
		t.Errorf("envelope recipients %q", m.To)
	}
	p := parseMail(t, m.Data)
	if p.Header.Get("Bcc") != "" || strings.Contains(strings.ToLower(p.RawHeader), "\r\nbcc:") {
		t.Errorf("a Bcc header got in:\n%s", p.RawHeader)
	}
	if p.Subject != "Problem: 'HTTP Bcc: evil@example.com fake body' on web-01 is Critical" {
		t.Errorf("Subject %q", p.Subject)
	}
	if len(p.Header) != 9 {
		t.Errorf("%d headers:\n%s", len(p.Header), p.RawHeader)
	}

	for _, addr := range []string{"ada@example.com\r\nBcc: evil@example.com", "ada@example.com, evil@example.com", "not an address", ""} {
		a := problem()
		a.Address = addr
		if err := s.Send(context.Background(), a); kind(err) != "permanent" {
			t.Errorf("address %q: %v, want a permanent error", addr, err)
		}
	}
	if n := len(srv.Messages(t)); n != 1 {
		t.Errorf("%d messages, want only the first", n)
	}
}

// TestRepliesAreClassified: 4xx is retried, 5xx dead-lettered, 250/251 delivered; broken
// connections and certificates too.
func TestRepliesAreClassified(t *testing.T) {
	t.Parallel()
	srv := testsmtp.Start(t, testsmtp.Options{Replies: map[string]testsmtp.Reply{
		"busy@example.com": {Code: 451}, "gone@example.com": {Code: 550}, "full@example.com": {Code: 452},
	}})
	s := newSender(t, serverAt(srv), SenderOptions{})
	for addr, want := range map[string]string{"busy@example.com": "retry", "full@example.com": "retry",
		"gone@example.com": "permanent", "ada@example.com": "ok"} {
		a := problem()
		a.Address = addr
		err := s.Send(context.Background(), a)
		if kind(err) != want {
			t.Errorf("%s: %v (%s), want %s", addr, err, kind(err), want)
		}
		if err != nil && !strings.Contains(err.Error(), "RCPT TO:<"+addr+">") {
			t.Errorf("error does not say which step failed: %v", err)
		}
	}

	wrong := serverAt(srv)
	wrong.Password = "not the password"
	err := newSender(t, wrong, SenderOptions{}).Send(context.Background(), problem())
	if kind(err) != "permanent" || !strings.Contains(err.Error(), "535") {
		t.Errorf("wrong password: %v, want a permanent 535", err)
	}
	if strings.Contains(err.Error(), "not the password") || strings.Contains(err.Error(), testsmtp.Password) {
		t.Errorf("the password is in the error: %v", err)
	}

	untrusted := serverAt(srv)
	untrusted.CAFile = ""
	if err := newSender(t, untrusted, SenderOptions{}).Send(context.Background(), problem()); kind(err) != "permanent" ||
		!strings.Contains(err.Error(), "certificate") {
		t.Errorf("untrusted certificate: %v, want a permanent certificate error", err)
	}
	skip := untrusted
	skip.InsecureSkipVerify = true
	if err := newSender(t, skip, SenderOptions{}).Send(context.Background(), problem()); err != nil {
		t.Errorf("insecure_skip_verify: %v", err)
	}

	refused := serverAt(srv)
	refused.Port = freePort(t)
	if err := newSender(t, refused, SenderOptions{}).Send(context.Background(), problem()); kind(err) != "retry" {
		t.Errorf("connection refused: %v, want retry", err)
	}
}

// TestAuthLogin: AUTH LOGIN answers the server's Username:/Password: challenges.
func TestAuthLogin(t *testing.T) {
	t.Parallel()
	srv := testsmtp.Start(t, testsmtp.Options{})
	cfg := serverAt(srv)
	cfg.AuthType = AuthLogin
	if err := newSender(t, cfg, SenderOptions{}).Send(context.Background(), problem()); err != nil {
		t.Fatalf("%v\n%s", err, srv.EventsText())
	}
	if srv.CountEvents("auth LOGIN "+testsmtp.User+" tls=true") != 1 {
		t.Errorf("no LOGIN:\n%s", srv.EventsText())
	}
}

// TestStartTLS: with starttls (the default) a server that does not offer STARTTLS is refused
// before MAIL; with starttls false the mail goes in plaintext, and a server offering STARTTLS
// is still spoken to over TLS.
func TestStartTLS(t *testing.T) {
	t.Parallel()
	plain := testsmtp.Start(t, testsmtp.Options{NoSTARTTLS: true, NoAuth: true})
	cfg := serverAt(plain)
	cfg.Username, cfg.Password = "", ""
	err := newSender(t, cfg, SenderOptions{}).Send(context.Background(), problem())
	if kind(err) != "permanent" || !strings.Contains(err.Error(), "does not offer STARTTLS") {
		t.Errorf("STARTTLS required and missing: %v, want a permanent refusal", err)
	}
	if plain.CountEvents("mail") != 0 || len(plain.Messages(t)) != 0 {
		t.Errorf("the client went on without TLS:\n%s", plain.EventsText())
	}

	cfg.StartTLS = false
	if err := newSender(t, cfg, SenderOptions{}).Send(context.Background(), problem()); err != nil {
		t.Fatalf("starttls false, plaintext server: %v", err)
	}
	if m := plain.Messages(t); len(m) != 1 || m[0].TLS {
		t.Errorf("want one plaintext message, got %+v", m)
	}

	tlsSrv := testsmtp.Start(t, testsmtp.Options{})
	opportunistic := serverAt(tlsSrv)
	opportunistic.StartTLS = false
	if err := newSender(t, opportunistic, SenderOptions{}).Send(context.Background(), problem()); err != nil {
		t.Fatal(err)
	}
	if m := tlsSrv.Messages(t); len(m) != 1 || !m[0].TLS {
		t.Errorf("starttls false with a server offering it: %+v", m)
	}
}

// TestAuthNeedsTheServerToOfferIt: a server without AUTH, or without the configured mechanism,
// is a configuration error (permanent), not something to retry.
func TestAuthNeedsTheServerToOfferIt(t *testing.T) {
	t.Parallel()
	srv := testsmtp.Start(t, testsmtp.Options{NoAuth: true})
	err := newSender(t, serverAt(srv), SenderOptions{}).Send(context.Background(), problem())
	if kind(err) != "permanent" || !strings.Contains(err.Error(), "offers no AUTH") {
		t.Errorf("%v", err)
	}
}

// TestSecretsAreNotLogged: nothing the sender logs or returns holds the password.
func TestSecretsAreNotLogged(t *testing.T) {
	t.Parallel()
	srv := testsmtp.Start(t, testsmtp.Options{Replies: map[string]testsmtp.Reply{"gone@example.com": {Code: 550}}})
	core, logs := observer.New(zapcore.DebugLevel)
	db := testredis.New(t)
	keys := schema.NewKeys("")
	db.Do(t, "HSET", keys.Contact("ada"), "first_name", "Ada")
	db.Do(t, "SET", keys.ContactTimezone("ada"), "Mars/Olympus_Mons")
	s := newSender(t, serverAt(srv), SenderOptions{Log: zap.New(core), Pool: db.Pool, Keys: keys})
	var errs []string
	for _, addr := range []string{"ada@example.com", "gone@example.com"} {
		a := problem()
		a.Address = addr
		if err := s.Send(context.Background(), a); err != nil {
			errs = append(errs, err.Error())
		}
	}
	text := strings.Join(errs, "\n")
	for _, e := range logs.All() {
		text += "\n" + e.Message
		for k, v := range e.ContextMap() {
			text += " " + k + "=" + strings.TrimSpace(fmtAny(v))
		}
	}
	if logs.FilterMessage("unknown contact timezone; using the default").Len() != 1 {
		t.Errorf("unknown timezone not logged once:\n%s", text)
	}
	if strings.Contains(text, testsmtp.Password) {
		t.Errorf("password in logs or errors:\n%s", text)
	}
}
