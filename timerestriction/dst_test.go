package timerestriction

import (
	"testing"
	"time"
)

// TestActiveRFC5545DST: RRULE strings follow RFC 5545 where a wall time does not exist or
// exists twice; ice_cube hashes keep the reading Go's time.Date gives them (as rrule-go does).
// New York springs forward on 8 March 2026 (02:00 EST -> 03:00 EDT) and falls back on
// 1 November (02:00 EDT -> 01:00 EST); Berlin on 29 March (02:00 CET -> 03:00 CEST) and
// 25 October (03:00 CEST -> 02:00 CET). Times with an offset name one instant of two.
func TestActiveRFC5545DST(t *testing.T) {
	t.Parallel()
	daily := func(start, end string) string {
		return `{"start_time": "` + start + `", "end_time": "` + end + `", "rrule": "FREQ=DAILY"}`
	}
	iceDaily := func(start, end string) string {
		return `{"start_time": "` + start + `", "end_time": "` + end + `", "rrules": [{"rule_type": "Daily"}]}`
	}
	cases := []struct {
		name   string
		zone   string
		raw    string
		checks []check
	}{
		{
			// §3.3.10: a recurrence instance whose local time does not exist is ignored.
			name: "New York: the 02:30 of the spring-forward night is skipped",
			zone: "America/New_York",
			raw:  daily("2026-03-01 02:30:00", "2026-03-01 03:00:00"),
			checks: []check{
				{"2026-03-07 02:45:00", true}, {"2026-03-08 01:45:00", false}, {"2026-03-08 03:15:00", false},
				{"2026-03-09 02:45:00", true}, {"2026-03-09 03:00:00", false},
			},
		},
		{
			name: "Berlin: the 02:30 of the spring-forward night is skipped",
			zone: "Europe/Berlin",
			raw:  daily("2026-03-01 02:30:00", "2026-03-01 03:00:00"),
			checks: []check{
				{"2026-03-28 02:45:00", true}, {"2026-03-29 01:45:00", false}, {"2026-03-29 03:45:00", false},
				{"2026-03-30 02:45:00", true},
			},
		},
		{
			// ice_cube hashes are read as before: time.Date places 02:30 at 01:30 EST west of
			// UTC, and the window runs to where 03:00 would be.
			name: "New York ice_cube hash: 02:30 read as 01:30 EST, as before",
			zone: "America/New_York",
			raw:  iceDaily("2026-03-01 02:30:00", "2026-03-01 03:00:00"),
			checks: []check{
				{"2026-03-08 01:45:00", true}, {"2026-03-08 03:15:00", false}, {"2026-03-09 02:45:00", true},
			},
		},
		{
			name: "Berlin ice_cube hash: 02:30 read as 03:30 CEST, as before",
			zone: "Europe/Berlin",
			raw:  iceDaily("2026-03-01 02:30:00", "2026-03-01 03:00:00"),
			checks: []check{
				{"2026-03-29 01:45:00", false}, {"2026-03-29 03:45:00", true}, {"2026-03-30 02:45:00", true},
			},
		},
		{
			// §3.3.5: a nonexistent DTSTART (start_time) is read with the offset before the gap,
			// one gap later (03:30 EDT); the following days keep the written 02:30.
			name: "New York: a start_time in the gap lands one gap later",
			zone: "America/New_York",
			raw:  daily("2026-03-08 02:30:00", "2026-03-08 02:45:00"),
			checks: []check{
				{"2026-03-08 01:35:00", false}, {"2026-03-08 03:29:59", false}, {"2026-03-08 03:30:00", true},
				{"2026-03-08 03:44:59", true}, {"2026-03-08 03:45:00", false},
				{"2026-03-09 02:40:00", true}, {"2026-03-09 01:40:00", false}, {"2026-03-09 03:40:00", false},
			},
		},
		{
			name: "Berlin: a start_time in the gap lands one gap later, and later days keep 02:30",
			zone: "Europe/Berlin",
			raw:  daily("2026-03-29 02:30:00", "2026-03-29 02:45:00"),
			checks: []check{
				{"2026-03-29 03:35:00", true}, {"2026-03-29 01:35:00", false},
				{"2026-03-30 02:40:00", true}, {"2026-03-30 03:40:00", false},
			},
		},
		{
			// Ignored instances are not counted: COUNT=3 is 01:30, 03:30 and 04:30.
			name: "New York: COUNT does not count the skipped instance",
			zone: "America/New_York",
			raw:  `{"start_time": "2026-03-08 01:30:00", "end_time": "2026-03-08 01:40:00", "rrule": "FREQ=HOURLY;COUNT=3"}`,
			checks: []check{
				{"2026-03-08 01:35:00", true}, {"2026-03-08 03:35:00", true}, {"2026-03-08 04:35:00", true},
				{"2026-03-08 05:35:00", false},
			},
		},
		{
			// An EXDATE is a DATE-TIME like the start: 02:30 is 03:30 CEST, the start's instance.
			name: "Berlin: an EXDATE in the gap removes the start it names",
			zone: "Europe/Berlin",
			raw: `{"start_time": "2026-03-29 02:30:00", "end_time": "2026-03-29 02:45:00",
				"rrule": "RRULE:FREQ=DAILY\nEXDATE:20260329T023000"}`,
			checks: []check{{"2026-03-29 03:35:00", false}, {"2026-03-30 02:35:00", true}},
		},
		{
			// §3.3.5: a wall time that occurs twice is the first of the two instants.
			name: "Berlin: the 02:30 of the fall-back night is the first one (CEST)",
			zone: "Europe/Berlin",
			raw:  daily("2026-10-20 02:30:00", "2026-10-20 02:45:00"),
			checks: []check{
				{"2026-10-25 02:35:00 +0200", true}, {"2026-10-25 02:35:00 +0100", false},
				{"2026-10-26 02:35:00", true},
			},
		},
		{
			name: "New York: the 01:30 of the fall-back night is the first one (EDT)",
			zone: "America/New_York",
			raw:  daily("2026-10-20 01:30:00", "2026-10-20 01:45:00"),
			checks: []check{
				{"2026-11-01 01:35:00 -0400", true}, {"2026-11-01 01:35:00 -0500", false},
				{"2026-11-02 01:35:00", true},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			loc := mustLoc(t, tc.zone)
			r := mustParse(t, tc.raw, loc)
			for _, c := range tc.checks {
				at := local(t, loc, c.at)
				if got := r.Active(at); got != c.want {
					t.Errorf("Active(%s %s = %s) = %v, want %v", c.at, tc.zone, at.UTC().Format(time.RFC3339), got, c.want)
				}
			}
		})
	}
}

// TestRFCAt pins rfcAt, the RFC 5545 reading of a local time, against time.Date's (atWall) in
// zones west and east of UTC, with a half-hour change and with a whole skipped day.
func TestRFCAt(t *testing.T) {
	t.Parallel()
	cases := []struct {
		zone, wall string
		want       string // RFC 3339 in UTC
		exists     bool
		goDate     string // what time.Date gives, for contrast
	}{
		{"America/New_York", "2026-03-08 02:30:00", "2026-03-08T07:30:00Z", false, "2026-03-08T06:30:00Z"}, // 03:30 EDT, not 01:30 EST
		{"America/New_York", "2026-03-08 03:00:00", "2026-03-08T07:00:00Z", true, "2026-03-08T07:00:00Z"},
		{"America/New_York", "2026-11-01 01:30:00", "2026-11-01T05:30:00Z", true, "2026-11-01T05:30:00Z"}, // EDT, the first
		{"Europe/Berlin", "2026-03-29 02:30:00", "2026-03-29T01:30:00Z", false, "2026-03-29T01:30:00Z"},   // 03:30 CEST
		{"Europe/Berlin", "2026-10-25 02:30:00", "2026-10-25T00:30:00Z", true, "2026-10-25T01:30:00Z"},    // CEST, the first; Go: CET
		{"Europe/Berlin", "2026-10-25 03:00:00", "2026-10-25T02:00:00Z", true, "2026-10-25T02:00:00Z"},
		{"Australia/Lord_Howe", "2026-10-04 02:15:00", "2026-10-03T15:45:00Z", false, "2026-10-03T15:45:00Z"}, // +10:30 before the gap
		{"Australia/Lord_Howe", "2026-04-05 01:45:00", "2026-04-04T14:45:00Z", true, "2026-04-04T15:15:00Z"},
		{"Pacific/Apia", "2011-12-30 12:00:00", "2011-12-30T22:00:00Z", false, "2011-12-30T22:00:00Z"}, // the skipped day
		{"UTC", "2026-03-08 02:30:00", "2026-03-08T02:30:00Z", true, "2026-03-08T02:30:00Z"},
	}
	for _, c := range cases {
		loc := mustLoc(t, c.zone)
		w := local(t, time.UTC, c.wall).Unix()
		got, exists := rfcAt(w, loc)
		if got.UTC().Format(time.RFC3339) != c.want || exists != c.exists {
			t.Errorf("rfcAt(%s %s) = %s, %v; want %s, %v", c.wall, c.zone, got.UTC().Format(time.RFC3339), exists, c.want, c.exists)
		}
		if got := atWall(w, loc).UTC().Format(time.RFC3339); got != c.goDate {
			t.Errorf("atWall(%s %s) = %s, want %s", c.wall, c.zone, got, c.goDate)
		}
	}
}
