package gateways

import (
	"fmt"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/internal/text"
	"github.com/flapjackgo/flapjack/schema"
)

// SMSMaxLength is the most characters an SMS medium sends (Flapjack 1.x's 159: one message of
// 160 GSM characters, with a character to spare).
const SMSMaxLength = 159

// smsRollupIDsPerState is how many check ids per state an SMS rollup lists (docs/flapjack-1x.md 4.4).
const smsRollupIDsPerState = 3

// SMSTimeLayout is how an SMS shows the event's time: "5 Jan 10:00" (Flapjack's %-d %b %H:%M).
const SMSTimeLayout = "2 Jan 15:04"

// SMSText is the built-in text of the SMS media (sms, sms_twilio, sms_nexmo; docs/flapjack-1x.md 4.4),
// at most SMSMaxLength characters:
//
//	Problem: 'HTTP' on web-01 is Critical at 5 Jan 10:00, HTTP 500 (ACKID 8f4a2b1c)
//	Recovery: 'HTTP' on web-01 is OK at 5 Jan 10:20, HTTP 200
//	Acknowledgement: 'HTTP' on web-01 at 5 Jan 10:05, ada: on it
//	Problem summary: Critical: 4 (Critical: a:x, b:y, c:z, ...)
//
// " is <State>" is left out for acknowledgements and tests, " at <time>" when the alert has no
// time. A text that is too long loses the end of its summary (ending "...") but keeps the
// ACKID hint whole, so the alert can still be acknowledged from the message. A medium that
// takes replies ends the text with ". Reply ACK 4821" instead of the ACKID.
func SMSText(m Message) string { return ShortText(m, SMSMaxLength) }

// ShortText is SMSText cut at maxRunes characters instead (0: not cut), for media that carry
// the same line without SMS's limit (sns).
func ShortText(m Message, maxRunes int) string {
	a := m.Alert
	cut := func(s string, n int) string {
		if maxRunes <= 0 {
			return s
		}
		return text.TruncateRunes(s, n)
	}
	if a.Rollup != nil && *a.Rollup != "" {
		return cut(fmt.Sprintf("%s: %s (%s)", m.TypeWords, RollupSummary(a), RollupDetail(a, smsRollupIDsPerState)), maxRunes)
	}
	var b strings.Builder
	b.WriteString(m.TypeWords + ": ")
	if m.Entity == "" {
		b.WriteString("'" + a.EventID + "'") // not ENTITY:CHECK: the id whole rather than nothing
	} else {
		b.WriteString("'" + m.Check + "' on " + m.Entity)
	}
	if a.NotificationType != schema.NotificationAcknowledgement && a.NotificationType != schema.NotificationTest {
		b.WriteString(" is " + m.StateWords)
	}
	if !m.Time.IsZero() {
		b.WriteString(" at " + m.Time.Format(SMSTimeLayout))
	}
	if s := strings.Join(strings.Fields(m.Summary), " "); s != "" {
		b.WriteString(", " + s)
	}
	hint := ""
	switch {
	case m.ReplyHint != "":
		hint = ". " + m.ReplyHint
	case m.AckHint != "":
		hint = " (" + m.AckHint + ")"
	}
	return cut(b.String(), maxRunes-len([]rune(hint))) + hint
}

// RenderSMS is the text an SMS medium sends for a: the operator's template (alert.text, or
// rollup.text for rollups) when one is set, else SMSText; either way at most SMSMaxLength
// characters, times in loc. A template that renders nothing is replaced by SMSText: an empty
// message cannot be sent. t may be nil (no templates).
func RenderSMS(t *Templates, a schema.Alert, loc *time.Location, log *zap.Logger) string {
	m := NewMessage(a, loc)
	if t == nil {
		return SMSText(m)
	}
	name := TemplateAlertText
	if a.Rollup != nil && *a.Rollup != "" {
		name = TemplateRollupText
	}
	out := strings.TrimSpace(t.Render(name, m, SMSText, log))
	if out == "" {
		return SMSText(m)
	}
	if m.ReplyHint != "" && !strings.Contains(out, m.ReplyHint) {
		// The operator's text, cut to leave room for the code the reply needs.
		tail := ". " + m.ReplyHint
		return text.TruncateRunes(out, SMSMaxLength-len([]rune(tail))) + tail
	}
	return text.TruncateRunes(out, SMSMaxLength)
}
