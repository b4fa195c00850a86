package email

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"strings"
	"testing"

	"github.com/flapjackgo/flapjack/internal/testing/testsmtp"
)

func TestMain(m *testing.M) { testsmtp.Main(m) }

// parsed is a mail as a reader's mail client sees it.
type parsed struct {
	Header mail.Header
	// Subject decoded (RFC 2047).
	Subject string
	// Parts by media type ("text/plain", "text/html"), decoded to text, with the raw headers of
	// each part.
	Parts       map[string]string
	PartHeaders map[string]map[string][]string
	// RawHeader is the header block as sent.
	RawHeader string
}

// parseMail reads a mail with net/mail and mime/multipart, as a client would, failing the test
// on anything malformed.
func parseMail(t *testing.T, raw string) parsed {
	t.Helper()
	for i, line := range strings.Split(raw, "\r\n") {
		if strings.ContainsAny(line, "\r\n") {
			t.Fatalf("line %d has a bare CR or LF: %q", i+1, line)
		}
		if len(line) > 998 {
			t.Fatalf("line %d is %d characters long", i+1, len(line))
		}
	}
	head, _, _ := strings.Cut(raw, "\r\n\r\n")
	msg, err := mail.ReadMessage(strings.NewReader(raw))
	if err != nil {
		t.Fatalf("mail does not parse: %v\n%s", err, raw)
	}
	p := parsed{Header: msg.Header, Parts: map[string]string{}, PartHeaders: map[string]map[string][]string{}, RawHeader: head}
	dec := new(mime.WordDecoder)
	if p.Subject, err = dec.DecodeHeader(msg.Header.Get("Subject")); err != nil {
		t.Fatalf("subject %q: %v", msg.Header.Get("Subject"), err)
	}
	mediaType, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || mediaType != "multipart/alternative" {
		t.Fatalf("Content-Type %q (%v), want multipart/alternative", msg.Header.Get("Content-Type"), err)
	}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		part, err := mr.NextRawPart() // raw: check the transfer encoding ourselves
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("multipart: %v", err)
		}
		body, err := io.ReadAll(part)
		if err != nil {
			t.Fatal(err)
		}
		pt, pparams, err := mime.ParseMediaType(part.Header.Get("Content-Type"))
		if err != nil || pparams["charset"] != "utf-8" {
			t.Fatalf("part Content-Type %q (%v), want a utf-8 charset", part.Header.Get("Content-Type"), err)
		}
		var text []byte
		switch cte := part.Header.Get("Content-Transfer-Encoding"); cte {
		case "quoted-printable":
			text, err = io.ReadAll(quotedprintable.NewReader(bytes.NewReader(body)))
		case "base64":
			text, err = base64.StdEncoding.DecodeString(strings.ReplaceAll(string(body), "\r\n", ""))
		default:
			t.Fatalf("part %s has Content-Transfer-Encoding %q", pt, cte)
		}
		if err != nil {
			t.Fatalf("part %s: %v", pt, err)
		}
		p.Parts[pt] = strings.ReplaceAll(string(text), "\r\n", "\n")
		p.PartHeaders[pt] = part.Header
	}
	return p
}

// contains fails the test for each fragment s lacks.
func contains(t *testing.T, what, s string, fragments ...string) {
	t.Helper()
	for _, f := range fragments {
		if !strings.Contains(s, f) {
			t.Errorf("%s lacks %q:\n%s", what, f, s)
		}
	}
}

// serverAt is a Config for a testsmtp server, with its account.
func serverAt(s *testsmtp.Server) Config {
	return Config{Host: s.Host, Port: s.Port, StartTLS: true, AuthType: AuthPlain, Username: testsmtp.User,
		Password: testsmtp.Password, From: "Flapjack <flapjack@example.com>", ReplyTo: "ops@example.com",
		CAFile: s.CAFile, Hostname: "mon.example.com"}
}

func fmtAny(v any) string { return fmt.Sprint(v) }

// freePort is a loopback port nothing listens on.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}
