package oncall

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// render writes shifts one a line: "start end source layer contacts".
func render(shifts []Shift) string {
	var b strings.Builder
	for _, sh := range shifts {
		fmt.Fprintf(&b, "%s %s %s %s %s\n", sh.Start.UTC().Format(time.RFC3339), sh.End.UTC().Format(time.RFC3339),
			sh.Source, sh.Layer, strings.Join(sh.Contacts, ","))
	}
	return b.String()
}

func TestShifts(t *testing.T) {
	cases := []struct {
		name        string
		schedule    string
		from, until string
		want        string
	}{
		{"the weekly hand-off moves to 08:00 UTC with summer time", weeklyLondon, "2026-03-23T00:00:00Z", "2026-04-07T00:00:00Z", `
2026-03-23T00:00:00Z 2026-03-23T09:00:00Z nobody  
2026-03-23T09:00:00Z 2026-03-30T08:00:00Z layer weekly ada
2026-03-30T08:00:00Z 2026-04-06T08:00:00Z layer weekly bob
2026-04-06T08:00:00Z 2026-04-07T00:00:00Z layer weekly ada
`},
		{"an override takes two hours and gives them back; the fallback outside office hours", officeFallback, "2026-04-01T07:00:00Z", "2026-04-02T07:00:00Z", `
2026-04-01T07:00:00Z 2026-04-01T08:00:00Z fallback  ops-lead,boss
2026-04-01T08:00:00Z 2026-04-01T12:00:00Z layer office bob
2026-04-01T12:00:00Z 2026-04-01T14:00:00Z override  erin
2026-04-01T14:00:00Z 2026-04-01T17:00:00Z layer office bob
2026-04-01T17:00:00Z 2026-04-02T07:00:00Z fallback  ops-lead,boss
`},
		{"nights only: the days are gaps; the Monday 00:00 EDT hand-off falls inside a night", nightsOnly, "2026-03-06T12:00:00Z", "2026-03-10T05:00:00Z", `
2026-03-06T12:00:00Z 2026-03-06T13:00:00Z layer night nora
2026-03-06T13:00:00Z 2026-03-07T01:00:00Z nobody  
2026-03-07T01:00:00Z 2026-03-07T13:00:00Z layer night nora
2026-03-07T13:00:00Z 2026-03-08T01:00:00Z nobody  
2026-03-08T01:00:00Z 2026-03-08T12:00:00Z layer night nora
2026-03-08T12:00:00Z 2026-03-09T00:00:00Z nobody  
2026-03-09T00:00:00Z 2026-03-09T04:00:00Z layer night nora
2026-03-09T04:00:00Z 2026-03-09T12:00:00Z layer night ned
2026-03-09T12:00:00Z 2026-03-10T00:00:00Z nobody  
2026-03-10T00:00:00Z 2026-03-10T01:00:00Z layer night ned
2026-03-10T01:00:00Z 2026-03-10T02:00:00Z override  erin
2026-03-10T02:00:00Z 2026-03-10T04:00:00Z override  fred
2026-03-10T04:00:00Z 2026-03-10T05:00:00Z layer night ned
`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := mustParse(t, c.schedule).Shifts(utc(c.from), utc(c.until))
			if err != nil {
				t.Fatal(err)
			}
			if g := render(got); g != strings.TrimPrefix(c.want, "\n") {
				t.Errorf("shifts\n%s\nwant\n%s", g, c.want)
			}
		})
	}
}

// Twenty-minute turns and a restriction inside the hour London repeats in autumn and skips in
// spring: the hardest case for finding every change.
const smallTurns = `[{"id": "small", "timezone": "Europe/London",
  "layers": [
    {"name": "base", "start": "2026-03-20T00:10:00", "turn": "20 minutes", "members": ["a", "b", "c"]},
    {"name": "window", "start": "2026-03-20T00:00:00", "turn": "1 day", "members": ["w", "x"],
     "restrictions": [{"from": "01:15", "to": "01:45"}, {"days": "sat", "from": "23:00", "to": "00:30"}]}],
  "overrides": [{"contact": "o", "start": "2026-10-25T01:05:00Z", "end": "2026-10-25T01:25:00Z"}]}]`

// Lord Howe Island moves its clocks by half an hour, at 02:00: back on 2026-04-05, forward on
// 2026-10-04. When they go back, the window open at 01:59 closes at the change itself (01:30
// again, between the two windows), an instant that is no window edge.
const lordHowe = `[{"id": "lhi", "timezone": "Australia/Lord_Howe",
  "layers": [
    {"name": "hourly", "start": "2026-04-01T01:45:00", "turn": "1 hour", "members": ["a", "b"]},
    {"name": "window", "start": "2026-04-01T00:00:00", "turn": "2 days", "members": ["w", "x"],
     "restrictions": [{"days": "sun", "from": "01:40", "to": "02:10"}, {"days": "sat", "from": "23:45", "to": "01:20"}]}]}]`

// TestShiftsAgreeWithAt checks Shifts against At minute by minute (every change here falls on
// a whole minute), so a change Shifts missed or invented shows: shifts cover the range end to
// end, each agrees with At throughout, and neighbours differ.
func TestShiftsAgreeWithAt(t *testing.T) {
	spring, autumn := [2]string{"2026-03-27T12:00:00Z", "2026-03-31T12:00:00Z"}, [2]string{"2026-10-23T12:00:00Z", "2026-10-27T12:00:00Z"}
	cases := []struct {
		file   string
		ranges [][2]string
	}{
		{weeklyLondon, [][2]string{spring, autumn}},
		{officeHours, [][2]string{spring, autumn}},
		{officeFallback, [][2]string{spring, autumn}},
		{nightsOnly, [][2]string{{"2026-03-06T12:00:00Z", "2026-03-10T12:00:00Z"}, {"2026-10-30T12:00:00Z", "2026-11-03T12:00:00Z"}}},
		{smallTurns, [][2]string{spring, autumn}},
		{lordHowe, [][2]string{{"2026-04-03T12:00:00Z", "2026-04-06T12:00:00Z"}, {"2026-10-02T12:00:00Z", "2026-10-05T12:00:00Z"}}},
	}
	for _, c := range cases {
		s := mustParse(t, c.file)
		for _, r := range c.ranges {
			from, until := utc(r[0]), utc(r[1])
			shifts, err := s.Shifts(from, until)
			if err != nil {
				t.Fatal(err)
			}
			checkShifts(t, s, shifts, from, until)
		}
	}
}

// checkShifts checks s's shifts over [from, until): they cover it end to end, neighbours
// differ, and each agrees with At at every whole minute within it.
func checkShifts(t testing.TB, s *Schedule, shifts []Shift, from, until time.Time) {
	t.Helper()
	end := from
	for i, sh := range shifts {
		if !sh.Start.Equal(end) || !sh.End.After(sh.Start) || (i > 0 && shifts[i-1].Same(sh.OnCall)) {
			t.Fatalf("%s: shift %+v after one ending %s", s.ID, sh, end)
		}
		for at := sh.Start; at.Before(sh.End); at = at.Add(time.Minute) {
			if got := s.At(at); !got.Same(sh.OnCall) {
				t.Fatalf("%s: At(%s) = %+v inside shift %+v", s.ID, at.Format(time.RFC3339), got, sh)
			}
		}
		end = sh.End
	}
	if !end.Equal(until) {
		t.Fatalf("%s: shifts end at %s, not %s", s.ID, end, until)
	}
}

func TestShiftsRange(t *testing.T) {
	s := mustParse(t, weeklyLondon)
	for _, r := range [][2]string{{"2026-04-01T00:00:00Z", "2026-04-01T00:00:00Z"}, {"2026-04-02T00:00:00Z", "2026-04-01T00:00:00Z"}, {"2026-01-01T00:00:00Z", "2027-02-10T00:00:00Z"}} {
		if _, err := s.Shifts(utc(r[0]), utc(r[1])); err == nil {
			t.Errorf("Shifts%v: no error", r)
		}
	}
}
