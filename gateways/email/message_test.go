package email

import (
	"bytes"
	"net/textproto"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestCleanHeaderText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"HTTP on web-01", "HTTP on web-01"},
		{"HTTP\r\nBcc: evil@example.com", "HTTP Bcc: evil@example.com"},
		{"a\rb\nc\td\x00e\x7ff\u0085g\u2028h\u2029i", "a b c d e f g h i"},
		{"  lots   of\n\n space  ", "lots of space"},
		{"bad \xff utf-8", "bad \uFFFD utf-8"},
		{"応答なし 🔥", "応答なし 🔥"},
	}
	for _, tt := range tests {
		if got := cleanHeaderText(tt.in, 250); got != tt.want {
			t.Errorf("cleanHeaderText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	long := cleanHeaderText(strings.Repeat("応", 300), 250)
	if n := utf8.RuneCountInString(long); n != 250 || !strings.HasSuffix(long, "…") {
		t.Errorf("long text: %d runes, ends %q", n, long[len(long)-6:])
	}
}

func TestWriteHeaderFolds(t *testing.T) {
	var b bytes.Buffer
	value := strings.TrimSpace(strings.Repeat("word ", 40))
	writeHeader(&b, "Subject", value)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\r\n"), "\r\n")
	if len(lines) < 3 {
		t.Fatalf("not folded: %q", b.String())
	}
	for i, l := range lines {
		if len(l) > foldAt {
			t.Errorf("line %d is %d long: %q", i, len(l), l)
		}
		if i > 0 && !strings.HasPrefix(l, " ") {
			t.Errorf("continuation line %d does not start with a space: %q", i, l)
		}
	}
	if unfolded := strings.ReplaceAll(b.String(), "\r\n ", " "); unfolded != "Subject: "+value+"\r\n" {
		t.Errorf("unfolded %q", unfolded)
	}
	b.Reset()
	writeHeader(&b, "Subject", "a\r\nBcc: x@example.com")
	if b.String() != "Subject: a  Bcc: x@example.com\r\n" {
		t.Errorf("line break kept: %q", b.String())
	}
}

func TestMessageID(t *testing.T) {
	tests := []struct{ id, host, want string }{
		{"8f4a2b1c0d9e-1767607200.000000", "mon.example.com", "<8f4a2b1c0d9e-1767607200.000000@mon.example.com>"},
		{"a b<c>@d\r\ne", "mon", "<a-b-c--d--e@mon>"},
		{"..a..b..", "bad host!", "<a.b@localhost>"},
	}
	for _, tt := range tests {
		if got := messageID(tt.id, tt.host); got != tt.want {
			t.Errorf("messageID(%q, %q) = %q, want %q", tt.id, tt.host, got, tt.want)
		}
	}
	if got := messageID("", "mon"); !strings.HasSuffix(got, "@mon>") || len(got) < 20 {
		t.Errorf("an alert without id gets %q", got)
	}
}

// TestComposeIsWellFormed: what compose writes parses as a multipart/alternative mail whose
// text survives (UTF-8 in the subject and both parts, base64 for mostly-Japanese text) and
// whose headers no alert text can add to.
func TestComposeIsWellFormed(t *testing.T) {
	from, _ := parseAddress("Flapjack Monitoring <flapjack@example.com>")
	to, _ := parseAddress("ada@example.com")
	to.Name = "Ada\r\nBcc: evil@example.com"
	raw := compose(headers{From: from, ReplyTo: from, To: to, MessageID: "<1@mon>", Date: time.Unix(1767607200, 0).UTC()},
		content{Subject: "Problem: '応答時間 ⏱' on web-01\r\nBcc: evil@example.com", Text: "日本語のテキスト 🔥\n二行目", HTML: "<p>plain ASCII é</p>"})
	p := parseMail(t, string(raw))
	if got := p.Subject; got != "Problem: '応答時間 ⏱' on web-01 Bcc: evil@example.com" {
		t.Errorf("subject %q", got)
	}
	if p.Header.Get("Bcc") != "" || strings.Contains(p.RawHeader, "\r\nBcc:") {
		t.Errorf("a Bcc header was injected:\n%s", p.RawHeader)
	}
	list, err := p.Header.AddressList("To")
	if err != nil || len(list) != 1 || list[0].Address != "ada@example.com" || list[0].Name != "Ada Bcc: evil@example.com" {
		t.Errorf("To %q: %v %v", p.Header.Get("To"), list, err)
	}
	if p.Parts["text/plain"] != "日本語のテキスト 🔥\n二行目" || p.PartHeaders["text/plain"]["Content-Transfer-Encoding"][0] != "base64" {
		t.Errorf("text part %q (%v)", p.Parts["text/plain"], p.PartHeaders["text/plain"])
	}
	if p.Parts["text/html"] != "<p>plain ASCII é</p>" || p.PartHeaders["text/html"]["Content-Transfer-Encoding"][0] != "quoted-printable" {
		t.Errorf("html part %q (%v)", p.Parts["text/html"], p.PartHeaders["text/html"])
	}
	for _, h := range []string{"Date", "From", "Reply-To", "To", "Subject", "Message-ID", "MIME-Version", "Auto-Submitted", "Content-Type"} {
		if len(p.Header[textproto.CanonicalMIMEHeaderKey(h)]) != 1 {
			t.Errorf("header %s appears %d times", h, len(p.Header[h]))
		}
	}
	if len(p.Header) != 9 {
		t.Errorf("%d headers, want 9:\n%s", len(p.Header), p.RawHeader)
	}
}
