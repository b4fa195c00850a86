package jabber

import (
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestParseCommand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text string
		want Command
	}{
		// oncall
		{"oncall", OnCall{}},
		{"OnCall web-primary", OnCall{Schedule: "web-primary"}},
		{"on-call  web-primary ", OnCall{Schedule: "web-primary"}},
		{"oncall web primary", Unknown{Text: "oncall web primary"}},
		// ACKID
		{"ACKID 8f4a2b1c fixing it duration: 2h", AckID{Hash: "8f4a2b1c", Comment: "fixing it", Duration: 2 * time.Hour, DurationText: "2h"}},
		{"ackid 8F4A2B1C fixing it", AckID{Hash: "8f4a2b1c", Comment: "fixing it"}},
		{"AckId 8f4a2b1c on it, duration: 90 minutes", AckID{Hash: "8f4a2b1c", Comment: "on it,", Duration: 90 * time.Minute, DurationText: "90 minutes"}},
		{"ACKID 8f4a2b1c fixing it DURATION: 1 day", AckID{Hash: "8f4a2b1c", Comment: "fixing it", Duration: 24 * time.Hour, DurationText: "1 day"}},
		{"ACKID 8f4a2b1c the duration: thing duration: an hour and 30 minutes", AckID{Hash: "8f4a2b1c", Comment: "the duration: thing",
			Duration: 90 * time.Minute, DurationText: "an hour and 30 minutes"}},
		{"ACKID 8f4a2b1c", AckID{Hash: "8f4a2b1c"}},
		{"ACKID 8f4a2b1c duration: 2h", AckID{Hash: "8f4a2b1c", Duration: 2 * time.Hour, DurationText: "2h"}},
		{"ACKID 8f4a2b1c fixing duration: soon", AckID{Hash: "8f4a2b1c", Comment: "fixing", DurationText: "soon",
			DurationProblem: "couldn't understand duration 'soon'"}},
		{"ACKID 8f4a2b1c fixing duration: 0", AckID{Hash: "8f4a2b1c", Comment: "fixing", DurationText: "0",
			DurationProblem: "duration '0' is not positive"}},
		{"ACKID 8f4a2b1c fixing duration:", AckID{Hash: "8f4a2b1c", Comment: "fixing", DurationProblem: "no duration after 'duration:'"}},
		{"ACKID", Invalid{Reply: "usage: ACKID <hash> <comment> [duration: <time>], e.g. ACKID 8f4a2b1c looking into it duration: 2 hours"}},

		{"help", Help{}},
		{"HELP", Help{}},
		{"identify", Identify{}},

		{"test notifications for App-01.example.com", TestNotifications{Entity: "app-01.example.com", Check: "test"}},
		{"Test Notifications For app-01:HTTP Port 80", TestNotifications{Entity: "app-01", Check: "HTTP Port 80"}},
		{"test notifications for app-01:db:conn", TestNotifications{Entity: "app-01", Check: "db:conn"}},

		{"tell me about APP-01", TellMeAbout{Entity: "app-01"}},
		{"tell me about app-01:HTTP", TellMeAbout{Entity: "app-01", Check: "HTTP"}},

		{"find entities matching /^app-/", FindEntities{Pattern: "^app-"}},
		{"entities matching /a/b/", FindEntities{Pattern: "a/b"}},
		{"find entities matching /(/", Invalid{Reply: "that doesn't seem to be a valid pattern - error parsing regexp: missing closing ): `(`"}},

		{"find checks on App-01", FindChecks{Entity: "app-01"}},
		{"find checks matching /HTTP/ on app-01", FindChecks{CheckPattern: "HTTP", Entity: "app-01"}},
		{"checks on entities matching /^app/", FindChecks{EntityPattern: "^app"}},
		{"find checks matching /x/ on entities matching /y/", FindChecks{CheckPattern: "x", EntityPattern: "y"}},
		{"find checks matching /[/ on app-01", Invalid{Reply: "that doesn't seem to be a valid pattern - error parsing regexp: missing closing ]: `[`"}},

		{"status entities /^app/", StatusEntities{Pattern: "^app"}},
		{"status entities /a**/", Invalid{Reply: "that doesn't seem to be a valid pattern - error parsing regexp: invalid nested repetition operator: `**`"}},
		{"status checks /HTTP/", StatusChecks{CheckPattern: "HTTP", EntityPattern: ".*"}},
		{"status checks /HTTP/ on /^app/", StatusChecks{CheckPattern: "HTTP", EntityPattern: "^app"}},
		{"status checks /(?P<x/", Invalid{Reply: "that doesn't seem to be a valid pattern - error parsing regexp: invalid named capture: `(?P<x`"}},

		// ack entities
		{"ack entities /app/ fixing", AckEntities{Pattern: "app", Comment: "fixing", Duration: time.Hour}},
		{"ack entities /^app-0[12]$/", AckEntities{Pattern: "^app-0[12]$", Duration: time.Hour}},
		{"ACK Entities /app/ fixing it duration: 30 minutes", AckEntities{Pattern: "app", Comment: "fixing it", Duration: 30 * time.Minute}},
		{"ack entities /app/ DURATION: 2h", AckEntities{Pattern: "app", Duration: 2 * time.Hour}},
		{"ack entities /a/b/ see http://wiki/x duration: 1 day", AckEntities{Pattern: "a/b", Comment: "see http://wiki/x", Duration: 24 * time.Hour}},
		{"ack entities /app/ start-in: 2h", AckEntities{Pattern: "app", Comment: "start-in: 2h", Duration: time.Hour}},
		{"ack entities /(/ x", Invalid{Reply: "that doesn't seem to be a valid pattern - error parsing regexp: missing closing ): `(`"}},
		{"ack entities /app/ x duration: soon", Invalid{Reply: "ERROR - couldn't understand duration 'soon' (try '90 minutes', '2h' or '1 day') - nothing was acknowledged"}},
		{"ack entities /app/ x duration: 0", Invalid{Reply: "ERROR - duration '0' is not positive - nothing was acknowledged"}},
		{"ack entities /app/ x duration:", Invalid{Reply: "ERROR - no time after 'duration:' - nothing was acknowledged"}},
		{"ack entities /app/ x duration: 1h duration: 2h", Invalid{Reply: "ERROR - 'duration:' is given twice - nothing was acknowledged"}},
		{"ack entities", Invalid{Reply: usageAckEntities}},
		{"ack entities app fixing", Invalid{Reply: usageAckEntities}},
		{"ack entities // fixing", Invalid{Reply: usageAckEntities}},
		{"ack entities /app", Invalid{Reply: usageAckEntities}},

		// ack checks
		{"ack checks /HTTP/ on /^app/ upstream down", AckChecks{CheckPattern: "HTTP", EntityPattern: "^app", Comment: "upstream down", Duration: time.Hour}},
		{"ack checks /HTTP|Disk/ on /.*/", AckChecks{CheckPattern: "HTTP|Disk", EntityPattern: ".*", Duration: time.Hour}},
		{"Ack Checks /^(?i)http/ on /app/ on it duration: 45m", AckChecks{CheckPattern: "^(?i)http", EntityPattern: "app", Comment: "on it", Duration: 45 * time.Minute}},
		{"ack checks /[/ on /app/", Invalid{Reply: "that doesn't seem to be a valid pattern - error parsing regexp: missing closing ]: `[`"}},
		{"ack checks /HTTP/ on /a**/", Invalid{Reply: "that doesn't seem to be a valid pattern - error parsing regexp: invalid nested repetition operator: `**`"}},
		{"ack checks /HTTP/ on /app/ duration: whenever", Invalid{Reply: "ERROR - couldn't understand duration 'whenever' (try '90 minutes', '2h' or '1 day') - nothing was acknowledged"}},
		{"ack checks /HTTP/", Invalid{Reply: usageAckChecks}},
		{"ack checks /HTTP/ on app-01", Invalid{Reply: usageAckChecks}},
		{"ack checks on /app/", Invalid{Reply: usageAckChecks}},
		{"ack", Invalid{Reply: usageAckEntities + "\n" + usageAckChecks + "\n(to acknowledge one alert: ACKID <hash> <comment>)"}},
		{"ack 8f4a2b1c fixing", Invalid{Reply: usageAckEntities + "\n" + usageAckChecks + "\n(to acknowledge one alert: ACKID <hash> <comment>)"}},

		// maint entities
		{"maint entities /^db-/", MaintEntities{Pattern: "^db-", Duration: time.Hour}},
		{"maint entities /^db-/ kernel upgrade start-in: 2 hours duration: 30 minutes",
			MaintEntities{Pattern: "^db-", Comment: "kernel upgrade", StartIn: 2 * time.Hour, Duration: 30 * time.Minute}},
		{"MAINT ENTITIES /db/ duration: 2h start-at: 22:00", MaintEntities{Pattern: "db", Duration: 2 * time.Hour, StartAt: "22:00"}},
		{"maint entities /db/ patching start-at: tomorrow 06:30", MaintEntities{Pattern: "db", Comment: "patching", Duration: time.Hour, StartAt: "tomorrow 06:30"}},
		{"maint entities /db/ start-at: 2026-01-06 22:00 duration: 1 day", MaintEntities{Pattern: "db", Duration: 24 * time.Hour, StartAt: "2026-01-06 22:00"}},
		{"maint entities /db/ x start-in: 0", MaintEntities{Pattern: "db", Comment: "x", Duration: time.Hour}},
		{"maint entities /(/", Invalid{Reply: "that doesn't seem to be a valid pattern - error parsing regexp: missing closing ): `(`"}},
		{"maint entities /db/ start-in: 1h start-at: 22:00", Invalid{Reply: "ERROR - give start-in: or start-at:, not both - nothing was scheduled"}},
		{"maint entities /db/ start-in: later", Invalid{Reply: "ERROR - couldn't understand start-in 'later' (try '30 minutes', '2h' or '1 day') - nothing was scheduled"}},
		{"maint entities /db/ start-at: teatime", Invalid{Reply: "ERROR - couldn't understand start-at 'teatime' (try '22:00', '10pm', 'tomorrow 06:30', '2026-01-06 22:00' or RFC 3339) - nothing was scheduled"}},
		{"maint entities /db/ start-at: 25:00", Invalid{Reply: "ERROR - couldn't understand start-at '25:00' (try '22:00', '10pm', 'tomorrow 06:30', '2026-01-06 22:00' or RFC 3339) - nothing was scheduled"}},
		{"maint entities /db/ duration: -1h", Invalid{Reply: "ERROR - couldn't understand duration '-1h' (try '90 minutes', '2h' or '1 day') - nothing was scheduled"}},
		{"maint entities /db/ start-at:", Invalid{Reply: "ERROR - no time after 'start-at:' - nothing was scheduled"}},
		{"maint entities /db/ start-in: 1h start-in: 2h", Invalid{Reply: "ERROR - 'start-in:' is given twice - nothing was scheduled"}},
		{"maint entities", Invalid{Reply: usageMaint}},
		{"maint entities db", Invalid{Reply: usageMaint}},
		{"maint checks /x/", Invalid{Reply: usageMaint}},
		{"maint", Invalid{Reply: usageMaint}},

		// The bare `entities /re/` form acknowledged by accident upstream; here it is unknown.
		{"entities /app/", Unknown{Text: "entities /app/"}},
		{"maintenance please", Unknown{Text: "maintenance please"}},
		{"acknowledge everything", Unknown{Text: "acknowledge everything"}},
		{"what's up", Unknown{Text: "what's up"}},
		{"  help  ", Help{}},
	}
	for _, tc := range tests {
		t.Run(tc.text, func(t *testing.T) {
			t.Parallel()
			if got := ParseCommand(tc.text); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ParseCommand(%q) =\n  %#v\nwant\n  %#v", tc.text, got, tc.want)
			}
		})
	}
}

func TestAddressing(t *testing.T) {
	t.Parallel()
	ids := []string{"flapjack", "fj"}
	room := []struct {
		body string
		want string
		ok   bool
	}{
		{"flapjack: help", "help", true},
		{"flapjack help", "help", true},
		{"Flapjack:help", "help", true},
		{"fj: ACKID 8f4a2b1c on it", "ACKID 8f4a2b1c on it", true},
		{"FJ   status entities /a/", "status entities /a/", true},
		{"flapjackery: help", "", false},
		{"hey flapjack: help", "", false},
		{"flapjack", "", false},
		{"flapjack:   ", "", false},
		{"help", "", false},
		{"<p>flapjack: <b>ACKID</b> 8f4a2b1c</p>\n<p>fixing it</p>", "ACKID 8f4a2b1c fixing it", true},
		{"flapjack: ACKID 8f4a2b1c fixing\nit\n duration: 2h", "ACKID 8f4a2b1c fixing it duration: 2h", true},
	}
	for _, tc := range room {
		got, ok := roomCommand(tc.body, ids)
		if got != tc.want || ok != tc.ok {
			t.Errorf("roomCommand(%q) = %q, %v; want %q, %v", tc.body, got, ok, tc.want, tc.ok)
		}
	}
	chat := []struct{ body, want string }{
		{"help", "help"},
		{"flapjack: help", "help"},
		{"FLAPJACK:ACKID 8f4a2b1c x", "ACKID 8f4a2b1c x"},
		{"fj: help", "help"},
		{"flapjack help", "flapjack help"},
		{"<html><body>status checks /a&lt;b/</body></html>", "status checks /a<b/"},
		{"find entities matching /a<b/", "find entities matching /a<b/"},
		{"  tell me\nabout  app-01 ", "tell me about app-01"},
	}
	for _, tc := range chat {
		if got := chatCommand(tc.body, ids); got != tc.want {
			t.Errorf("chatCommand(%q) = %q, want %q", tc.body, got, tc.want)
		}
	}
}

func TestStripHTMLKeepsPlainText(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"a < b and c > d", "x&amp;y", "/^app-[0-9]+$/"} {
		if got := stripHTML(s); got != s {
			t.Errorf("stripHTML(%q) = %q", s, got)
		}
	}
	if got := stripHTML("<i>x&amp;y</i>"); got != "x&y" {
		t.Errorf("stripHTML decodes entities in markup: got %q", got)
	}
	if got := stripHTML("<br/>" + strings.Repeat(" ", 3) + "help<br>"); got != "help" {
		t.Errorf("got %q", got)
	}
}

// FuzzParseCommand: no chat message crashes the parser, and what it extracts is consistent.
func FuzzParseCommand(f *testing.F) {
	for _, seed := range []string{
		"ACKID 8f4a2b1c fixing it duration: 2h", "ackid DEADBEEF", "help", "identify",
		"test notifications for web-01:HTTP", "tell me about web-01", "find entities matching /we(b/",
		"find checks matching /HT/ on web-01", "status entities /.*/", "status checks /disk/ on /db/",
		"<b>ACKID</b> 12345678 <i>html</i>", "ACKID 12345678 x duration: 99999999999 years", "\x00\xff",
		"ack entities /^web/ deploying duration: 30 minutes", "ack entities /(/ x", "ack entities /a/b/ c duration: 1h duration: 2h",
		"ack checks /HTTP/ on /^web/ upstream down duration: 2h", "ack checks /x/ on web-01", "ack",
		"maint entities /^db-/ kernel start-in: 2 hours duration: 30 minutes", "maint entities /db/ start-at: tomorrow 06:30",
		"maint entities /db/ start-at: 2026-01-06T22:00:00+01:00 duration: 1 day", "maint entities /db/ start-in: 1h start-at: 10pm",
		"maint entities /[/ start-at: 25:61",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		cmd := ParseCommand(text)
		if cmd == nil {
			t.Fatalf("nil command for %q", text)
		}
		switch c := cmd.(type) {
		case AckEntities:
			bulkInvariants(t, text, c.Duration, c.Pattern)
		case AckChecks:
			bulkInvariants(t, text, c.Duration, c.CheckPattern, c.EntityPattern)
		case MaintEntities:
			bulkInvariants(t, text, c.Duration, c.Pattern)
			if c.StartIn < 0 || (c.StartIn > 0 && c.StartAt != "") {
				t.Fatalf("start-in %v with start-at %q from %q", c.StartIn, c.StartAt, text)
			}
			if c.StartAt != "" {
				if _, err := startTime(c.StartAt, time.Now()); err != nil {
					t.Fatalf("accepted start-at %q does not resolve: %v", c.StartAt, err)
				}
			}
		}
		if ack, ok := cmd.(AckID); ok {
			if ack.Duration < 0 {
				t.Fatalf("negative duration from %q", text)
			}
			if ack.Hash != strings.ToLower(ack.Hash) {
				t.Fatalf("hash not lower-cased: %q", ack.Hash)
			}
		}
	})
}

// bulkInvariants: a parsed bulk command has a positive duration and compilable, non-empty
// patterns.
func bulkInvariants(t *testing.T, text string, d time.Duration, patterns ...string) {
	t.Helper()
	if d < time.Second {
		t.Fatalf("duration %v from %q", d, text)
	}
	for _, p := range patterns {
		if _, err := regexp.Compile(p); err != nil || p == "" {
			t.Fatalf("pattern %q from %q: %v", p, text, err)
		}
	}
}

func TestStartTime(t *testing.T) {
	t.Parallel()
	// now: Monday 2026-01-05 10:00:00 in a zone 1 hour east of UTC.
	zone := time.FixedZone("CET", 3600)
	now := time.Date(2026, 1, 5, 10, 0, 0, 0, zone)
	at := func(day, h, m, s int) time.Time { return time.Date(2026, 1, day, h, m, s, 0, zone) }
	for _, tc := range []struct {
		text string
		want time.Time
	}{
		{"now", now},
		{"NOW", now},
		{"22:00", at(5, 22, 0, 0)},
		{"22:00:30", at(5, 22, 0, 30)},
		{"09:00", at(6, 9, 0, 0)},  // passed today: tomorrow
		{"10:00", at(5, 10, 0, 0)}, // now is not past
		{"10pm", at(5, 22, 0, 0)},
		{"10:30 PM", at(5, 22, 30, 0)},
		{"9am", at(6, 9, 0, 0)},
		{"today 09:00", at(5, 9, 0, 0)},
		{"tomorrow 06:30", at(6, 6, 30, 0)},
		{"Tomorrow  10pm", at(6, 22, 0, 0)},
		{"2026-01-06", at(6, 0, 0, 0)},
		{"2026-01-06 22:00", at(6, 22, 0, 0)},
		{"2026-01-06T22:00:15", at(6, 22, 0, 15)},
		{"2026-01-06T21:00:00Z", at(6, 22, 0, 0)},
		{"2026-01-06t21:00:00z", at(6, 22, 0, 0)},
	} {
		got, err := startTime(tc.text, now)
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("startTime(%q) = %v, %v; want %v", tc.text, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "soon", "tomorrow", "25:00", "13pm", "12:60", "2026-13-01", "in 2 hours", "+2h", "1767607200"} {
		if got, err := startTime(bad, now); err == nil {
			t.Errorf("startTime(%q) = %v, want an error", bad, got)
		}
	}
}
