package oncall

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Calendar is the schedule's shifts as an RFC 5545 calendar for people to subscribe to: one
// VEVENT per shift, gaps included (as "Nobody on call"), stamped with stamp (the injected now).
// A shift's UID depends only on the schedule and the shift, so a feed served again keeps the
// UIDs of the shifts it lists again whole.
func (s *Schedule) Calendar(shifts []Shift, stamp time.Time) []byte {
	c := newCalendar(s.Title())
	for _, sh := range shifts {
		who := "Nobody"
		if !sh.Gap() {
			who = strings.Join(sh.Contacts, ", ")
		}
		c.event(uid(s.ID, "", sh), stamp, sh, who+" on call: "+s.Title(), Provenance(sh.OnCall))
	}
	return c.end()
}

// ContactCalendar is one contact's shifts across schedules (from ContactShifts) as an RFC 5545
// calendar, stamped with stamp.
func ContactCalendar(contact string, shifts []ScheduleShift, stamp time.Time) []byte {
	c := newCalendar(contact + " on call")
	for _, sh := range shifts {
		c.event(uid(sh.ScheduleID, contact, sh.Shift), stamp, sh.Shift, contact+" on call: "+sh.Title, Provenance(sh.OnCall))
	}
	return c.end()
}

// Provenance says in words what put someone on call: `layer "weekly"`, "override",
// "fallback: nobody else is on call", "nobody on call and no fallback".
func Provenance(o OnCall) string {
	switch o.Source {
	case FromLayer:
		return fmt.Sprintf("layer %q", o.Layer)
	case FromOverride:
		return "override"
	case FromFallback:
		return "fallback: nobody else is on call"
	}
	return "nobody on call and no fallback"
}

// uid names a shift of a schedule (in a contact's calendar when contact is not "") by what it is:
// the same shift always gets the same UID.
func uid(scheduleID, contact string, sh Shift) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%d\x00%d\x00%s\x00%d\x00%s", scheduleID, contact, sh.Start.Unix(), sh.End.Unix(),
		sh.Source, sh.Index, strings.Join(sh.Contacts, "\x00"))
	return hex.EncodeToString(h.Sum(nil)[:16]) + "@flapjack"
}

// calendar writes content lines: CRLF-terminated, folded at 75 octets.
type calendar struct{ b bytes.Buffer }

func newCalendar(name string) *calendar {
	c := &calendar{}
	c.line("BEGIN:VCALENDAR")
	c.line("VERSION:2.0")
	c.line("PRODID:-//flapjack//on-call schedules//EN")
	c.line("CALSCALE:GREGORIAN")
	c.line("METHOD:PUBLISH")
	c.line("X-WR-CALNAME:" + escapeText(name))
	return c
}

func (c *calendar) event(uid string, stamp time.Time, sh Shift, summary, description string) {
	c.line("BEGIN:VEVENT")
	c.line("UID:" + uid)
	c.line("DTSTAMP:" + utcStamp(stamp))
	c.line("DTSTART:" + utcStamp(sh.Start))
	c.line("DTEND:" + utcStamp(sh.End))
	c.line("SUMMARY:" + escapeText(summary))
	c.line("DESCRIPTION:" + escapeText(description))
	c.line("TRANSP:TRANSPARENT")
	c.line("END:VEVENT")
}

func (c *calendar) end() []byte {
	c.line("END:VCALENDAR")
	return c.b.Bytes()
}

// line writes one content line folded as RFC 5545 3.1 says: no line longer than 75 octets, a
// continuation starting with one space, never splitting a UTF-8 character.
func (c *calendar) line(s string) {
	limit := 75
	for len(s) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		c.b.WriteString(s[:cut])
		c.b.WriteString("\r\n ")
		s = s[cut:]
		limit = 74 // the leading space counts
	}
	c.b.WriteString(s)
	c.b.WriteString("\r\n")
}

func utcStamp(t time.Time) string { return t.UTC().Format("20060102T150405Z") }

// escapeText escapes a TEXT value (RFC 5545 3.3.11); other control characters, which TEXT may
// not hold, become spaces.
func escapeText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\\' || r == ';' || r == ',':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r < 0x20 || r == 0x7f:
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
