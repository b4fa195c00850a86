package email

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"net/textproto"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Limits of what an alert may put in a header.
const (
	maxSubjectRunes = 250
	maxNameRunes    = 100
	foldAt          = 78 // RFC 5322's recommended line length
)

// headers are the addressing of one mail.
type headers struct {
	From, ReplyTo, To *mail.Address
	MessageID         string
	Date              time.Time
}

// compose is the whole mail (RFC 5322, MIME multipart/alternative with a text and an HTML
// part, both UTF-8), CRLF line ends, ready for DATA.
func compose(h headers, c content) []byte {
	var b bytes.Buffer
	body := multipart.NewWriter(&b)
	header := func(name, value string) { writeHeader(&b, name, value) }
	header("Date", h.Date.Format(time.RFC1123Z))
	header("From", formatAddress(h.From))
	header("Reply-To", formatAddress(h.ReplyTo))
	header("To", formatAddress(h.To))
	header("Subject", encodeText(cleanHeaderText(c.Subject, maxSubjectRunes)))
	header("Message-ID", h.MessageID)
	header("MIME-Version", "1.0")
	// RFC 3834: no vacation or out-of-office replies to alerts.
	header("Auto-Submitted", "auto-generated")
	header("Content-Type", mime.FormatMediaType("multipart/alternative", map[string]string{"boundary": body.Boundary()}))
	b.WriteString("\r\n")
	writePart(body, "text/plain", c.Text)
	writePart(body, "text/html", c.HTML)
	_ = body.Close() // writes to a bytes.Buffer cannot fail
	return b.Bytes()
}

// writePart adds one UTF-8 part, quoted-printable when mostly ASCII, else base64 (Japanese
// text is a third the size in base64).
func writePart(w *multipart.Writer, mediaType, text string) {
	text = strings.ToValidUTF8(text, "\uFFFD")
	text = strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
	h := textproto.MIMEHeader{}
	h.Set("Content-Type", mime.FormatMediaType(mediaType, map[string]string{"charset": "utf-8"}))
	if mostlyNonASCII(text) {
		h.Set("Content-Transfer-Encoding", "base64")
		p, _ := w.CreatePart(h)
		enc := base64.StdEncoding.EncodeToString([]byte(text))
		for len(enc) > 76 {
			_, _ = p.Write([]byte(enc[:76] + "\r\n"))
			enc = enc[76:]
		}
		_, _ = p.Write([]byte(enc + "\r\n"))
		return
	}
	h.Set("Content-Transfer-Encoding", "quoted-printable")
	p, _ := w.CreatePart(h)
	qp := quotedprintable.NewWriter(p) // text mode: "\n" becomes CRLF, lines stay under 76
	_, _ = qp.Write([]byte(text))
	_ = qp.Close()
}

func mostlyNonASCII(s string) bool {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			n++
		}
	}
	return n*3 > len(s)
}

// cleanHeaderText makes any text safe as one header value: invalid UTF-8 replaced, every run
// of control characters and white space (CR, LF, TAB, NEL, U+2028 ...) turned into one space,
// trimmed, and cut to max runes ("…" marks the cut). What is left cannot end the header.
func cleanHeaderText(s string, max int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
	if utf8.RuneCountInString(s) > max {
		s = string([]rune(s)[:max-1]) + "…"
	}
	return s
}

// encodeText encodes a header value as RFC 2047 words when it is not plain ASCII (B when
// mostly non-ASCII, else Q); plain ASCII is kept as it is.
func encodeText(s string) string {
	if mostlyNonASCII(s) {
		return mime.BEncoding.Encode("utf-8", s)
	}
	return mime.QEncoding.Encode("utf-8", s)
}

// formatAddress is an address header value: the display name cleaned and encoded (by
// net/mail), the address as parsed.
func formatAddress(a *mail.Address) string {
	return (&mail.Address{Name: cleanHeaderText(a.Name, maxNameRunes), Address: a.Address}).String()
}

// writeHeader writes "Name: value" folded at spaces so lines stay near 78 characters. The
// value is single-line by construction; writeHeader still refuses to let a CR or LF through.
func writeHeader(b *bytes.Buffer, name, value string) {
	value = strings.NewReplacer("\r", " ", "\n", " ").Replace(value)
	line := name + ":"
	for i, word := range strings.Split(value, " ") {
		switch {
		case i == 0:
			line += " " + word
		case len(line)+1+len(word) > foldAt && strings.TrimSpace(line) != name+":":
			b.WriteString(line + "\r\n")
			line = " " + word
		default:
			line += " " + word
		}
	}
	b.WriteString(line + "\r\n")
}

// messageID is "<alert id@host>": the same for every attempt at one alert, so a receiving
// system can drop a duplicate. Characters an id may not hold become "-".
func messageID(alertID, host string) string {
	var b strings.Builder
	for _, r := range alertID {
		if r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
			strings.ContainsRune("!#$%&'*+-/=?^_`{|}~.", r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	id := strings.Trim(b.String(), ".")
	for strings.Contains(id, "..") {
		id = strings.ReplaceAll(id, "..", ".")
	}
	if id == "" {
		buf := make([]byte, 12)
		_, _ = rand.Read(buf)
		id = hex.EncodeToString(buf)
	}
	return "<" + id + "@" + hostnameOrLocalhost(host) + ">"
}
