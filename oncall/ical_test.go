package oncall

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A name that needs escaping (',', ';', '\') and folding (over 75 octets, with characters of two
// bytes that a fold must not split).
const awkwardName = `Web primary; nights, weekends \ holidays — équipe d'astreinte très très longue, vraiment`

type parsedCalendar struct {
	Name   string `json:"name"`
	Events []struct {
		UID         string `json:"uid"`
		DTStamp     string `json:"dtstamp"`
		Start       string `json:"start"`
		End         string `json:"end"`
		Summary     string `json:"summary"`
		Description string `json:"description"`
	} `json:"events"`
}

// parseICS reads a calendar with Debian's python3-icalendar (installed by scripts/test-deps.sh),
// run by Debian's own interpreter, which is the one the package installs the module for.
func parseICS(t *testing.T, ics []byte) parsedCalendar {
	t.Helper()
	file := filepath.Join(t.TempDir(), "feed.ics")
	if err := os.WriteFile(file, ics, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("/usr/bin/python3", "testdata/ics_events.py", file).Output()
	if err != nil {
		var stderr []byte
		if e, ok := err.(*exec.ExitError); ok {
			stderr = e.Stderr
		}
		t.Fatalf("python3-icalendar could not read the calendar (scripts/test-deps.sh installs it): %v\n%s", err, stderr)
	}
	var cal parsedCalendar
	if err := json.Unmarshal(out, &cal); err != nil {
		t.Fatalf("read the parser's output %s: %v", out, err)
	}
	return cal
}

// checkLines checks the content lines themselves: CRLF only, none over 75 octets.
func checkLines(t *testing.T, ics []byte) {
	t.Helper()
	if !bytes.HasSuffix(ics, []byte("\r\n")) || bytes.Count(ics, []byte("\n")) != bytes.Count(ics, []byte("\r\n")) {
		t.Errorf("lines do not all end in CRLF")
	}
	for _, line := range strings.Split(strings.TrimSuffix(string(ics), "\r\n"), "\r\n") {
		if len(line) > 75 {
			t.Errorf("line of %d octets: %q", len(line), line)
		}
	}
}

func TestCalendarParsesToTheShifts(t *testing.T) {
	s := mustParse(t, officeFallback)
	s.Name = awkwardName
	stamp := utc("2026-03-31T10:11:12Z")
	shifts, err := s.Shifts(utc("2026-03-30T00:00:00Z"), utc("2026-04-06T00:00:00Z"))
	if err != nil {
		t.Fatal(err)
	}
	ics := s.Calendar(shifts, stamp)
	checkLines(t, ics)
	if !bytes.Contains(ics, []byte("\r\n ")) {
		t.Fatalf("nothing was folded, so the test proves nothing about folding:\n%s", ics)
	}
	cal := parseICS(t, ics)
	if cal.Name != awkwardName {
		t.Errorf("calendar name %q, want %q", cal.Name, awkwardName)
	}
	if len(cal.Events) != len(shifts) {
		t.Fatalf("%d events for %d shifts", len(cal.Events), len(shifts))
	}
	gaps, people := 0, 0
	for i, ev := range cal.Events {
		sh := shifts[i]
		who := strings.Join(sh.Contacts, ", ")
		if sh.Gap() {
			who, gaps = "Nobody", gaps+1
		} else {
			people++
		}
		want := []string{uid(s.ID, "", sh), stamp.Format("2006-01-02T15:04:05+00:00"), iso(sh.Start), iso(sh.End),
			who + " on call: " + awkwardName, Provenance(sh.OnCall)}
		got := []string{ev.UID, ev.DTStamp, ev.Start, ev.End, ev.Summary, ev.Description}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("event %d\n%q\nwant\n%q", i, got, want)
		}
	}
	if people == 0 || shifts[0].Source != FromFallback {
		t.Errorf("the week has %d shifts with people, starting with %s", people, shifts[0].Source)
	}
}

func TestCalendarMarksGaps(t *testing.T) {
	s := mustParse(t, nightsOnly)
	shifts, err := s.Shifts(utc("2026-03-06T12:00:00Z"), utc("2026-03-08T12:00:00Z"))
	if err != nil {
		t.Fatal(err)
	}
	cal := parseICS(t, s.Calendar(shifts, utc("2026-03-06T12:00:00Z")))
	var summaries []string
	for _, ev := range cal.Events {
		summaries = append(summaries, ev.Summary+" ("+ev.Description+")")
	}
	want := []string{
		"nora on call: nights (layer \"night\")",
		"Nobody on call: nights (nobody on call and no fallback)",
		"nora on call: nights (layer \"night\")",
		"Nobody on call: nights (nobody on call and no fallback)",
		"nora on call: nights (layer \"night\")",
	}
	if strings.Join(summaries, "\n") != strings.Join(want, "\n") {
		t.Errorf("events\n%s\nwant\n%s", strings.Join(summaries, "\n"), strings.Join(want, "\n"))
	}
}

func TestContactCalendar(t *testing.T) {
	office := mustParse(t, officeFallback)
	weekly := mustParse(t, weeklyLondon)
	from, until := utc("2026-03-30T00:00:00Z"), utc("2026-04-02T00:00:00Z")
	shifts, err := ContactShifts("bob", []*Schedule{weekly, office}, from, until)
	if err != nil {
		t.Fatal(err)
	}
	// bob holds Web primary from 08:00 UTC Monday on, and the office layer 08:00-17:00 each day
	// but for erin's two hours on Wednesday
	if len(shifts) != 5 || shifts[0].ScheduleID != "web" || shifts[1].ScheduleID != "web-primary" {
		t.Fatalf("bob's shifts: %+v", shifts)
	}
	for _, sh := range shifts {
		if sh.Contacts[0] != "bob" {
			t.Errorf("a shift of someone else: %+v", sh)
		}
	}
	ics := ContactCalendar("bob", shifts, until)
	checkLines(t, ics)
	cal := parseICS(t, ics)
	if cal.Name != "bob on call" || len(cal.Events) != len(shifts) {
		t.Fatalf("calendar %q with %d events for %d shifts", cal.Name, len(cal.Events), len(shifts))
	}
	for i, ev := range cal.Events {
		sh := shifts[i]
		want := []string{uid(sh.ScheduleID, "bob", sh.Shift), iso(sh.Start), iso(sh.End), "bob on call: " + sh.Title}
		got := []string{ev.UID, ev.Start, ev.End, ev.Summary}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("event %d\n%q\nwant\n%q", i, got, want)
		}
	}
}

func TestUIDIsStablePerShift(t *testing.T) {
	s := mustParse(t, weeklyLondon)
	a, _ := s.Shifts(utc("2026-03-29T00:00:00Z"), utc("2026-04-14T00:00:00Z"))
	b, _ := s.Shifts(utc("2026-03-30T00:00:00Z"), utc("2026-04-14T00:00:00Z"))
	// bob's week, whole in both ranges, keeps its UID; the clipped first shifts differ
	if uid(s.ID, "", a[1]) != uid(s.ID, "", b[1]) || !a[1].Start.Equal(b[1].Start) {
		t.Errorf("one shift, two UIDs: %+v %+v", a[1], b[1])
	}
	if uid(s.ID, "", a[0]) == uid(s.ID, "", b[0]) {
		t.Errorf("different shifts share a UID")
	}
}

func TestFoldAndEscape(t *testing.T) {
	c := &calendar{}
	// 238 octets: the first fold falls inside an "é", the next ones among plain letters
	long := "SUMMARY:" + strings.Repeat("é", 40) + strings.Repeat("a", 150)
	c.line(long)
	lines := strings.Split(strings.TrimSuffix(c.b.String(), "\r\n"), "\r\n")
	unfolded := lines[0]
	for i, l := range lines {
		if len(l) > 75 || len(l) < 73 && i < len(lines)-1 {
			t.Errorf("line %d of %d octets: %q", i, len(l), l)
		}
		if i > 0 {
			if l[0] != ' ' {
				t.Errorf("continuation %q does not start with a space", l)
			}
			unfolded += l[1:]
		}
	}
	if len(lines) != 4 || unfolded != long {
		t.Errorf("folded into %d lines, unfolding to %q", len(lines), unfolded)
	}
	if got := escapeText("a;b,c\\d\ne\rf"); got != `a\;b\,c\\d\ne f` {
		t.Errorf("escapeText = %q", got)
	}
}

// iso is how the parser prints a UTC time.
func iso(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05+00:00") }
