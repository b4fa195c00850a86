package oncall

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// benchSchedules are n schedules like a team's: a weekly layer, a daily nights layer
// restricted to evenings and weekends, a 12-hour layer, five overrides and a fallback.
func benchSchedules(b *testing.B, n int) []*Schedule {
	b.Helper()
	var recs []string
	for i := range n {
		recs = append(recs, fmt.Sprintf(`{"id": "s%d", "timezone": "Europe/London",
  "layers": [
    {"name": "weekly", "start": "2026-03-23T09:00:00", "turn": "1 week", "members": ["a%d", "b%d", "c%d", "d%d"]},
    {"name": "nights", "start": "2026-03-23T18:00:00", "turn": "1 day", "members": ["e%d", "f%d"],
     "restrictions": [{"days": "mon-fri", "from": "18:00", "to": "09:00"}, {"days": "sat,sun", "from": "00:00", "to": "24:00"}]},
    {"name": "halves", "start": "2026-03-23T09:00:00", "turn": "12 hours", "members": ["g%d", "h%d"],
     "restrictions": [{"days": "wed", "from": "12:00", "to": "13:00"}]}],
  "overrides": [
    {"contact": "o1", "start": "2026-04-01T12:00:00Z", "end": "2026-04-01T14:00:00Z"},
    {"contact": "o2", "start": "2026-04-03T12:00:00Z", "end": "2026-04-03T14:00:00Z"},
    {"contact": "o3", "start": "2026-04-05T12:00:00Z", "end": "2026-04-06T14:00:00Z"},
    {"contact": "o4", "start": "2026-04-08T12:00:00Z", "end": "2026-04-08T14:00:00Z"},
    {"contact": "o5", "start": "2026-04-10T12:00:00Z", "end": "2026-04-10T14:00:00Z"}],
  "fallback": ["lead"]}`, i, i, i, i, i, i, i, i, i))
	}
	got, problems, err := Parse([]byte("["+strings.Join(recs, ",")+"]"), nil)
	if err != nil || len(problems) > 0 {
		b.Fatal(err, problems)
	}
	return got
}

// BenchmarkAt20Schedules resolves 20 schedules at one instant, as routing one notification
// whose contacts name 20 schedules does. Years after the layers' start costs the same as days.
func BenchmarkAt20Schedules(b *testing.B) {
	schedules := benchSchedules(b, 20)
	for _, at := range []string{"2026-04-02T13:00:00Z", "2031-10-26T01:30:00Z"} {
		b.Run(at, func(b *testing.B) {
			t := utc(at)
			for b.Loop() {
				for _, s := range schedules {
					if s.At(t).Source == Nobody {
						b.Fatal("nobody")
					}
				}
			}
		})
	}
}

// BenchmarkShifts14Days computes a schedule's next 14 days, as its web page and feed do.
func BenchmarkShifts14Days(b *testing.B) {
	s := benchSchedules(b, 1)[0]
	from := utc("2026-03-28T10:00:00Z")
	until := from.Add(14 * 24 * time.Hour)
	for b.Loop() {
		if _, err := s.Shifts(from, until); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCalendar14Days writes those 14 days as a calendar feed.
func BenchmarkCalendar14Days(b *testing.B) {
	s := benchSchedules(b, 1)[0]
	from := utc("2026-03-28T10:00:00Z")
	shifts, err := s.Shifts(from, from.Add(14*24*time.Hour))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		s.Calendar(shifts, from)
	}
}
