// Package testical reads RFC 5545 calendars in tests with a real calendar library, Debian's
// python3-icalendar (through oncall/testdata/ics_events.py), so a feed is checked by a parser
// that is not ours.
package testical

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// Event is one VEVENT as the library decoded it.
type Event struct {
	UID, Summary, Description string
	Start, End                time.Time
}

// Events parses ics and returns its events in order; the test fails when the library cannot
// read it or reports a problem with any component.
func Events(t testing.TB, ics []byte) []Event {
	t.Helper()
	_, self, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(self), "..", "..", "..", "oncall", "testdata", "ics_events.py")
	file := filepath.Join(t.TempDir(), "feed.ics")
	if err := os.WriteFile(file, ics, 0o600); err != nil {
		t.Fatal(err)
	}
	// Debian's python3, which sees python3-icalendar (scripts/test-deps.sh installs it)
	out, err := exec.Command("/usr/bin/python3", script, file).Output()
	if err != nil {
		var stderr []byte
		if e, ok := err.(*exec.ExitError); ok {
			stderr = e.Stderr
		}
		t.Fatalf("python3-icalendar could not read the calendar: %v\n%s", err, stderr)
	}
	var cal struct {
		Events []struct{ UID, Start, End, Summary, Description string }
	}
	if err := json.Unmarshal(out, &cal); err != nil {
		t.Fatalf("read the parser's output %s: %v", out, err)
	}
	evs := make([]Event, len(cal.Events))
	for i, e := range cal.Events {
		start, err1 := time.Parse(time.RFC3339, e.Start)
		end, err2 := time.Parse(time.RFC3339, e.End)
		if err1 != nil || err2 != nil {
			t.Fatalf("event times %q %q", e.Start, e.End)
		}
		evs[i] = Event{UID: e.UID, Summary: e.Summary, Description: e.Description, Start: start, End: end}
	}
	return evs
}
