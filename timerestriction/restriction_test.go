package timerestriction

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// weekdays818 is Flapjack's canonical restriction (docs/flapjack-1x.md 3.5): Mon-Fri 08:00-18:00.
const weekdays818 = `{"start_time": "2013-02-01 08:00:00", "end_time": "2013-02-01 18:00:00",
	"rrules": [{"rule_type": "Weekly", "interval": 1, "week_start": 0,
		"validations": {"day": [1, 2, 3, 4, 5]}}],
	"exrules": [], "rtimes": [], "extimes": []}`

func mustLoc(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	return loc
}

// local reads "YYYY-MM-DD HH:MM:SS" as a wall-clock time in loc (time.Date's choice in a DST
// gap or overlap), or "YYYY-MM-DD HH:MM:SS -0700" as the instant it names.
func local(t testing.TB, loc *time.Location, s string) time.Time {
	t.Helper()
	layout := "2006-01-02 15:04:05"
	if len(s) > len(layout) {
		layout += " -0700"
	}
	tm, err := time.ParseInLocation(layout, s, loc)
	if err != nil {
		t.Fatalf("bad test time %q: %v", s, err)
	}
	return tm
}

func mustParse(t testing.TB, raw string, loc *time.Location) *Restriction {
	t.Helper()
	r, err := Parse([]byte(raw), loc)
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, raw)
	}
	return r
}

type check struct {
	at   string // wall-clock time in the case's zone
	want bool
}

func TestActive(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		zone   string
		raw    string
		checks []check
	}{
		{
			name: "weekdays 8-18 canonical",
			zone: "UTC",
			raw:  weekdays818,
			checks: []check{
				{"2013-02-01 08:00:00", true}, // the first occurrence, a Friday
				{"2013-01-31 12:00:00", false},
				{"2026-11-23 08:00:00", true}, // Monday
				{"2026-11-23 17:59:59", true},
				{"2026-11-23 18:00:00", false},
				{"2026-11-23 07:59:59", false},
				{"2026-11-27 12:00:00", true},  // Friday
				{"2026-11-21 12:00:00", false}, // Saturday
				{"2026-11-22 12:00:00", false}, // Sunday
			},
		},
		{
			name: "weekdays 8-18 in New York across both DST changes",
			zone: "America/New_York",
			raw:  weekdays818,
			checks: []check{
				{"2013-03-08 08:00:00", true}, {"2013-03-11 08:00:00", true}, {"2013-03-11 07:59:59", false},
				{"2013-03-11 17:59:59", true}, {"2013-03-11 18:00:00", false},
				{"2013-11-04 08:00:00", true}, {"2013-11-04 07:59:59", false}, {"2013-11-04 18:00:00", false},
			},
		},
		{
			name: "rule_type spelled as ice_cube class and lowercase",
			zone: "UTC",
			raw: `{"start_time": "2013-02-01 08:00:00", "end_time": "2013-02-01 18:00:00", "rrules": [
				{"rule_type": "IceCube::WeeklyRule", "validations": {"day": ["monday"]}},
				{"rule_type": "weekly", "validations": {"day": ["Wednesday"]}}]}`,
			checks: []check{{"2026-11-23 09:00:00", true}, {"2026-11-24 09:00:00", false}, {"2026-11-25 09:00:00", true}},
		},
		{
			name: "daily 09:00-17:00 keeps local time after both DST changes",
			zone: "America/New_York",
			raw: `{"start_time": "2013-03-01 09:00:00", "end_time": "2013-03-01 17:00:00",
				"rrules": [{"rule_type": "Daily", "interval": 1}]}`,
			checks: []check{
				{"2013-03-10 09:00:00", true}, {"2013-03-10 08:59:59", false},
				{"2013-03-11 09:00:00", true}, {"2013-03-11 08:59:00", false},
				{"2013-03-11 16:59:59", true}, {"2013-03-11 17:00:00", false},
				{"2013-11-03 09:00:00", true}, {"2013-11-03 08:59:59", false},
				{"2013-11-04 09:00:00", true}, {"2013-11-04 08:59:00", false},
				{"2013-11-04 17:00:00", false},
			},
		},
		{
			name: "nightly 22:00-06:00 across the DST nights",
			zone: "America/New_York",
			raw: `{"start_time": "2013-03-01 22:00:00", "end_time": "2013-03-02 06:00:00",
				"rrules": [{"rule_type": "Daily"}]}`,
			checks: []check{
				{"2013-03-09 22:00:00", true}, {"2013-03-09 21:59:59", false},
				{"2013-03-10 01:30:00", true}, {"2013-03-10 03:30:00", true},
				{"2013-03-10 05:30:00", true}, {"2013-03-10 05:59:59", true},
				{"2013-03-10 06:00:00", false}, {"2013-03-10 06:30:00", false},
				{"2013-11-03 01:30:00", true}, {"2013-11-03 05:30:00", true},
				{"2013-11-03 06:00:00", false}, {"2013-11-03 06:30:00", false},
				{"2013-11-03 12:00:00", false},
			},
		},
		{
			// Naive 02:20 and 02:45 do not exist that night: RFC 5545 ignores them and does not
			// count them, so the four occurrences are 01:30, 01:55, 03:10 and 03:35 EDT.
			name: "COUNT across the spring-forward gap counts only existing times",
			zone: "America/New_York",
			raw: `{"start_time": "2013-03-10 01:30:00", "end_time": "2013-03-10 01:40:00",
				"rrule": "FREQ=MINUTELY;INTERVAL=25;COUNT=4"}`,
			checks: []check{
				{"2013-03-10 01:25:00", false}, {"2013-03-10 01:35:00", true}, {"2013-03-10 01:50:00", false},
				{"2013-03-10 03:15:00", true}, {"2013-03-10 03:40:00", true}, {"2013-03-10 04:05:00", false},
			},
		},
		{
			// The EXRULE's 02:30 does not exist that night, so RFC 5545 ignores that instance
			// like the RRULE's own 02:00 and 02:30: 03:30 CEST (naive 03:30) stays.
			name: "EXRULE time inside the spring-forward gap east of UTC removes nothing",
			zone: "Europe/Berlin",
			raw: `{"start_time": "2013-03-30 00:00:00", "end_time": "2013-03-30 00:10:00",
				"rrule": "RRULE:FREQ=MINUTELY;INTERVAL=30\nEXRULE:FREQ=DAILY;BYHOUR=2;BYMINUTE=30;BYSECOND=0"}`,
			checks: []check{
				{"2013-03-31 03:05:00", true}, {"2013-03-31 03:31:00", true}, {"2013-03-31 01:31:00", true},
				{"2013-03-31 04:01:00", true}, {"2013-03-30 02:31:00", false}, {"2013-03-30 03:01:00", true},
			},
		},
		{
			// The EXRULE's naive 02:20 is placed at 01:20 EST, before the start, where rrule-go
			// yields nothing: the RDATE at 01:20 stands.
			name: "EXRULE does not remove an extra date before the start",
			zone: "America/New_York",
			raw: `{"start_time": "2013-03-10 01:30:00", "end_time": "2013-03-10 01:32:00",
				"rrule": "RRULE:FREQ=DAILY;COUNT=2\nEXRULE:FREQ=MINUTELY;INTERVAL=25\nRDATE:20130310T012000"}`,
			checks: []check{{"2013-03-10 01:21:00", true}, {"2013-03-10 01:31:00", false}, {"2013-03-11 01:31:00", true}},
		},
		{
			// DST began at midnight: rrule-go stepping days in the location itself repeats
			// October 19 and skips October 20.
			name: "daily rule over a midnight DST change",
			zone: "America/Sao_Paulo",
			raw: `{"start_time": "2013-10-17 09:00:00", "end_time": "2013-10-17 10:00:00",
				"rrules": [{"rule_type": "Daily"}]}`,
			checks: []check{
				{"2013-10-19 09:30:00", true}, {"2013-10-20 09:30:00", true}, {"2013-10-21 09:30:00", true},
				{"2013-10-20 10:30:00", false}, {"2014-02-16 09:30:00", true}, {"2014-02-16 08:30:00", false},
			},
		},
		{
			name: "secondly rule on rare days: Monday 29 February, 05:00-06:00",
			zone: "America/New_York",
			raw: `{"start_time": "2013-02-01 09:00:00", "end_time": "2013-02-01 09:00:01",
				"rrule": "FREQ=SECONDLY;BYHOUR=5;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO"}`,
			checks: []check{
				{"2016-02-29 05:00:00", true}, {"2016-02-29 05:59:59", true}, {"2016-02-29 06:00:00", false},
				{"2016-02-29 04:59:59", false}, {"2044-02-29 05:30:00", true}, {"2040-02-29 05:30:00", false},
				{"2026-11-23 05:30:00", false},
			},
		},
		{
			name: "day_of_month negative counts from the month end",
			zone: "Europe/London",
			raw: `{"start_time": "2013-01-31 10:00:00", "end_time": "2013-01-31 11:00:00",
				"rrules": [{"rule_type": "Monthly", "validations": {"day_of_month": [-1]}}]}`,
			checks: []check{
				{"2013-02-28 10:30:00", true}, {"2013-02-27 10:30:00", false},
				{"2013-04-30 10:30:00", true}, {"2013-04-29 10:30:00", false},
				{"2016-02-29 10:30:00", true}, {"2016-02-28 10:30:00", false},
			},
		},
		{
			name: "day_of_week first and last Monday of the month",
			zone: "Australia/Sydney",
			raw: `{"start_time": "2013-01-07 09:00:00", "end_time": "2013-01-07 10:00:00",
				"rrules": [{"rule_type": "Monthly", "validations": {"day_of_week": {"1": [1, -1]}}}]}`,
			checks: []check{
				{"2013-02-04 09:30:00", true}, {"2013-02-25 09:30:00", true},
				{"2013-02-11 09:30:00", false}, {"2013-02-18 09:30:00", false},
				{"2013-09-02 09:30:00", true}, {"2013-09-30 09:30:00", true}, {"2013-09-23 09:30:00", false},
			},
		},
		{
			name: "day_of_week nth counts within the month for a weekly rule too",
			zone: "UTC",
			raw: `{"start_time": "2013-01-04 09:00:00", "end_time": "2013-01-04 10:00:00",
				"rrules": [{"rule_type": "Weekly", "validations": {"day_of_week": {"friday": [-1]}}}]}`,
			checks: []check{
				{"2013-02-22 09:30:00", true}, {"2013-02-15 09:30:00", false},
				{"2013-03-29 09:30:00", true}, {"2013-03-22 09:30:00", false},
			},
		},
		{
			name: "day and day_of_week must both hold",
			zone: "UTC",
			raw: `{"start_time": "2013-01-01 09:00:00", "end_time": "2013-01-01 10:00:00",
				"rrules": [{"rule_type": "Daily", "validations": {"day": [1], "day_of_week": {"1": [1], "2": [1]}}}]}`,
			checks: []check{
				{"2013-02-04 09:30:00", true},  // first Monday
				{"2013-02-05 09:30:00", false}, // first Tuesday, but day says Monday only
				{"2013-02-11 09:30:00", false},
			},
		},
		{
			name: "hour_of_day gives several windows a day",
			zone: "America/New_York",
			raw: `{"start_time": "2013-01-01 09:15:00", "end_time": "2013-01-01 09:45:00",
				"rrules": [{"rule_type": "Daily", "validations": {"hour_of_day": [9, 13, 17]}}]}`,
			checks: []check{
				{"2026-06-01 09:15:00", true}, {"2026-06-01 09:44:59", true}, {"2026-06-01 09:45:00", false},
				{"2026-06-01 13:20:00", true}, {"2026-06-01 13:50:00", false},
				{"2026-06-01 17:44:59", true}, {"2026-06-01 10:00:00", false}, {"2026-06-01 09:14:59", false},
			},
		},
		{
			name: "hourly with interval and minute_of_hour",
			zone: "UTC",
			raw: `{"start_time": "2013-01-01 09:00:00", "end_time": "2013-01-01 09:10:00",
				"rrules": [{"rule_type": "Hourly", "interval": 2, "validations": {"minute_of_hour": [0, 30]}}]}`,
			checks: []check{
				{"2026-06-01 11:05:00", true}, {"2026-06-01 11:35:00", true}, {"2026-06-01 11:15:00", false},
				{"2026-06-01 10:05:00", false}, {"2026-06-01 10:35:00", false},
			},
		},
		{
			name: "extimes removes one occurrence",
			zone: "America/New_York",
			raw: `{"start_time": "2013-03-01 09:00:00", "end_time": "2013-03-01 17:00:00",
				"rrules": [{"rule_type": "Daily"}], "extimes": ["2013-03-05 09:00:00"]}`,
			checks: []check{{"2013-03-04 12:00:00", true}, {"2013-03-05 12:00:00", false}, {"2013-03-06 12:00:00", true}},
		},
		{
			name: "rtimes adds one occurrence",
			zone: "America/New_York",
			raw: `{"start_time": "2013-03-04 09:00:00", "end_time": "2013-03-04 17:00:00",
				"rrules": [{"rule_type": "Weekly", "validations": {"day": [1]}}], "rtimes": ["2013-03-09 10:00:00"]}`,
			checks: []check{
				{"2013-03-09 10:00:00", true}, {"2013-03-09 17:59:59", true}, {"2013-03-09 18:00:00", false},
				{"2013-03-09 09:59:59", false}, {"2013-03-16 10:00:00", false}, {"2013-03-11 12:00:00", true},
			},
		},
		{
			name: "until and count",
			zone: "UTC",
			raw: `{"start_time": "2013-03-01 09:00:00", "end_time": "2013-03-01 17:00:00", "rrules": [
				{"rule_type": "Daily", "until": "2013-03-03 09:00:00"},
				{"rule_type": "Weekly", "count": 2, "validations": {"day": [3]}}]}`,
			checks: []check{
				{"2013-03-03 12:00:00", true}, {"2013-03-04 12:00:00", false},
				{"2013-03-06 12:00:00", true}, {"2013-03-13 12:00:00", true}, {"2013-03-20 12:00:00", false},
			},
		},
		{
			name: "weekly interval 2 with Sunday week start",
			zone: "UTC",
			raw: `{"start_time": "2013-03-03 09:00:00", "end_time": "2013-03-03 10:00:00",
				"rrules": [{"rule_type": "Weekly", "interval": 2, "week_start": 0, "validations": {"day": [0, 6]}}]}`,
			checks: []check{
				{"2013-03-03 09:30:00", true}, {"2013-03-09 09:30:00", true}, // Sun, and Sat of the same week
				{"2013-03-10 09:30:00", false}, {"2013-03-16 09:30:00", false},
				{"2013-03-17 09:30:00", true},
			},
		},
		{
			name: "no rules: the single occurrence",
			zone: "Europe/London",
			raw:  `{"start_time": "2013-03-01 09:00:00", "end_time": "2013-03-03 17:00:00", "rrules": []}`,
			checks: []check{
				{"2013-03-01 08:59:59", false}, {"2013-03-02 03:00:00", true},
				{"2013-03-03 16:59:59", true}, {"2013-03-03 17:00:00", false}, {"2026-03-02 03:00:00", false},
			},
		},
		{
			name:   "start_date and end_date aliases",
			zone:   "UTC",
			raw:    `{"start_date": "2013-03-01 09:00:00", "end_date": "2013-03-01 10:00:00", "rrules": [{"rule_type": "Daily"}]}`,
			checks: []check{{"2020-01-01 09:30:00", true}, {"2020-01-01 10:30:00", false}},
		},
		{
			name: "explicit offset names an instant; recurrence follows the contact's wall clock",
			zone: "Australia/Sydney",
			// 08:00Z is 19:00 in Sydney (AEDT) on the start date.
			raw: `{"start_time": "2013-02-01 08:00:00 +0000", "end_time": "2013-02-01T10:00:00Z",
				"rrules": [{"rule_type": "Daily"}]}`,
			checks: []check{
				{"2013-02-01 19:00:00", true}, {"2013-02-01 20:59:59", true}, {"2013-02-01 21:00:00", false},
				{"2013-06-03 19:30:00", true}, {"2013-06-03 18:30:00", false}, // AEST: still 19:00 local
			},
		},
		{
			name: "ice_cube time/zone objects",
			zone: "America/New_York",
			// 13:00 in London on the start date is 08:00 in New York.
			raw: `{"start_time": {"time": "2013-02-01 13:00:00", "zone": "Europe/London"},
				"end_time": {"time": "2013-02-01T15:00:00Z", "zone": "Europe/London"},
				"rrules": [{"rule_type": "Daily"}]}`,
			checks: []check{{"2013-02-04 08:30:00", true}, {"2013-02-04 10:00:00", false}, {"2013-07-04 09:59:59", true}},
		},
		{
			name: "unknown zone in the object form falls back to the contact's zone",
			zone: "America/New_York",
			raw: `{"start_time": {"time": "2013-02-01 08:00:00", "zone": "Mars/Olympus_Mons"},
				"end_time": {"time": "2013-02-01 09:00:00", "zone": null}, "rrules": [{"rule_type": "Daily"}]}`,
			checks: []check{{"2013-02-04 08:30:00", true}, {"2013-02-04 09:30:00", false}},
		},
		{
			name: "RFC 5545 with EXDATE (docs/decisions.md D9 example)",
			zone: "America/New_York",
			raw: `{"start_time": "2013-02-01 09:00:00", "end_time": "2013-02-01 17:00:00",
				"rrule": "RRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR\nEXDATE:20131225T090000"}`,
			checks: []check{
				{"2013-12-24 12:00:00", true}, {"2013-12-25 12:00:00", false}, {"2013-12-26 12:00:00", true},
				{"2014-12-25 12:00:00", true}, {"2013-12-28 12:00:00", false},
			},
		},
		{
			name: "RFC 5545 EXDATE with TZID and in UTC",
			zone: "America/New_York",
			raw: `{"start_time": "2013-02-01 09:00:00", "end_time": "2013-02-01 17:00:00",
				"rrule": "RRULE:FREQ=DAILY\nEXDATE;TZID=Europe/London:20131225T140000\nEXDATE:20131226T140000Z,20131227T140000Z"}`,
			checks: []check{
				{"2013-12-25 12:00:00", false}, {"2013-12-26 12:00:00", false}, {"2013-12-27 12:00:00", false},
				{"2013-12-28 12:00:00", true},
			},
		},
		{
			name: "RFC 5545 date-only EXDATE removes that day",
			zone: "UTC",
			raw: `{"start_time": "2013-02-01 09:00:00", "end_time": "2013-02-01 17:00:00",
				"rrule": "RRULE:FREQ=DAILY\nEXDATE;VALUE=DATE:20131225\nRDATE:20131229"}`,
			checks: []check{{"2013-12-25 12:00:00", false}, {"2013-12-24 12:00:00", true}},
		},
		{
			name: "RFC 5545 EXRULE removes its occurrences",
			zone: "Europe/London",
			raw: `{"start_time": "2013-02-01 09:00:00", "end_time": "2013-02-01 17:00:00",
				"rrule": "RRULE:FREQ=DAILY\nEXRULE:FREQ=WEEKLY;BYDAY=SA,SU"}`,
			checks: []check{
				{"2026-11-20 12:00:00", true}, {"2026-11-21 12:00:00", false}, {"2026-11-22 12:00:00", false},
				{"2026-11-23 12:00:00", true},
			},
		},
		{
			name: "RFC 5545 two RRULE lines are a union",
			zone: "UTC",
			raw: `{"start_time": "2013-02-04 09:00:00", "end_time": "2013-02-04 17:00:00",
				"rrule": "RRULE:FREQ=WEEKLY;BYDAY=MO\r\nRRULE:FREQ=WEEKLY;BYDAY=WE"}`,
			checks: []check{{"2026-11-23 12:00:00", true}, {"2026-11-24 12:00:00", false}, {"2026-11-25 12:00:00", true}},
		},
		{
			name: "empty ice_cube validations add nothing",
			zone: "UTC",
			raw: `{"start_time": "2013-03-01 09:00:00", "end_time": "2013-03-01 10:00:00",
				"rrules": [{"rule_type": "Daily", "validations": {"day": [], "day_of_week": {}, "hour_of_day": null}}]}`,
			checks: []check{{"2026-11-22 09:30:00", true}, {"2026-11-23 09:30:00", true}},
		},
		{
			name:   "RFC 5545 bare FREQ line, lowercase, trailing semicolon",
			zone:   "UTC",
			raw:    `{"start_time": "2013-03-01 09:00:00", "end_time": "2013-03-01 17:00:00", "rrule": "freq=daily;interval=2;"}`,
			checks: []check{{"2013-03-03 12:00:00", true}, {"2013-03-02 12:00:00", false}, {"2013-03-04 12:00:00", false}},
		},
		{
			name: "RFC 5545 UNTIL is local time",
			zone: "America/New_York",
			// Read as UTC, 09:00Z would be before the 09:00 EST (14:00Z) occurrence of March 5.
			raw: `{"start_time": "2013-03-01 09:00:00", "end_time": "2013-03-01 17:00:00",
				"rrule": "RRULE:FREQ=DAILY;UNTIL=20130305T090000"}`,
			checks: []check{{"2013-03-05 12:00:00", true}, {"2013-03-06 12:00:00", false}},
		},
		{
			name: "RFC 5545 COUNT and RDATE",
			zone: "UTC",
			raw: `{"start_time": "2013-03-01 09:00:00", "end_time": "2013-03-01 17:00:00",
				"rrule": "RRULE:FREQ=DAILY;COUNT=3\nRDATE:20130310T100000"}`,
			checks: []check{
				{"2013-03-03 12:00:00", true}, {"2013-03-04 12:00:00", false},
				{"2013-03-10 17:59:59", true}, {"2013-03-10 18:00:00", false},
			},
		},
		{
			name: "RFC 5545 numbered BYDAY and empty rrules list beside it",
			zone: "UTC",
			raw: `{"start_time": "2013-01-01 09:00:00", "end_time": "2013-01-01 17:00:00", "rrules": [],
				"rrule": "RRULE:FREQ=MONTHLY;BYDAY=-1FR"}`,
			checks: []check{{"2013-02-22 12:00:00", true}, {"2013-02-15 12:00:00", false}},
		},
		{
			name:   "end equal to start is never active",
			zone:   "UTC",
			raw:    `{"start_time": "2013-03-01 09:00:00", "end_time": "2013-03-01 09:00:00", "rrules": [{"rule_type": "Daily"}]}`,
			checks: []check{{"2013-03-02 09:00:00", false}},
		},
		{
			name: "contradicting validations never occur",
			zone: "UTC",
			raw: `{"start_time": "2013-01-01 09:00:00", "end_time": "2013-01-01 17:00:00",
				"rrules": [{"rule_type": "Daily", "validations": {"month_of_year": ["february"], "day_of_month": [30]}}]}`,
			checks: []check{{"2013-02-28 12:00:00", false}, {"2026-03-01 12:00:00", false}},
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

func TestActiveDependsOnTimezone(t *testing.T) {
	t.Parallel()
	// Monday 2026-11-23 14:00Z is 09:00 Monday in New York and 01:00 Tuesday in Sydney.
	at := time.Date(2026, 11, 23, 14, 0, 0, 0, time.UTC)
	// Friday 2026-11-27 22:00Z is 17:00 Friday in New York and 09:00 Saturday in Sydney.
	friday := time.Date(2026, 11, 27, 22, 0, 0, 0, time.UTC)
	cases := []struct {
		zone               string
		wantAt, wantFriday bool
	}{
		{"America/New_York", true, true},
		{"Australia/Sydney", false, false},
		{"UTC", true, false},
	}
	for _, tc := range cases {
		t.Run(tc.zone, func(t *testing.T) {
			t.Parallel()
			r := mustParse(t, weekdays818, mustLoc(t, tc.zone))
			if got := r.Active(at); got != tc.wantAt {
				t.Errorf("Active(%v) = %v, want %v", at, got, tc.wantAt)
			}
			if got := r.Active(friday); got != tc.wantFriday {
				t.Errorf("Active(%v) = %v, want %v", friday, got, tc.wantFriday)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	const s, e = `"start_time": "2013-02-01 08:00:00"`, `"end_time": "2013-02-01 18:00:00"`
	rule := func(r string) string { return `{` + s + `, ` + e + `, "rrules": [` + r + `]}` }
	rfc := func(r string) string { return `{` + s + `, ` + e + `, "rrule": "` + r + `"}` }
	cases := []struct {
		name, raw, want string
	}{
		{"not an object", `[1, 2]`, "not a JSON object"},
		{"invalid JSON", `{"start_time": `, "not valid JSON"},
		{"missing start", `{` + e + `}`, "missing start_time"},
		{"missing end", `{` + s + `}`, "missing end_time"},
		{"end before start", `{` + s + `, "end_time": "2013-02-01 07:00:00"}`, "end_time 2013-02-01T07:00:00Z is before start_time"},
		{"unparseable start", `{"start_time": "yesterday", ` + e + `}`, `start_time: cannot read time "yesterday"`},
		{"start of the wrong type", `{"start_time": 42, ` + e + `}`, "start_time: want a time string"},
		{"unparseable rtime", `{` + s + `, ` + e + `, "rtimes": ["soon"]}`, `rtimes: [0]: cannot read time "soon"`},
		{"rrules not a list", `{` + s + `, ` + e + `, "rrules": {"rule_type": "Daily"}}`, "rrules is not a list"},
		{"rule not an object", rule(`"Daily"`), "rrules[0]: not a JSON object"},
		{"missing rule_type", rule(`{"interval": 1}`), "rrules[0]: missing rule_type"},
		{"unknown rule_type", rule(`{"rule_type": "Fortnightly"}`), `rrules[0]: unknown rule_type "Fortnightly"`},
		{"interval zero", rule(`{"rule_type": "Daily", "interval": 0}`), "interval 0 must be at least 1"},
		{"interval negative", rule(`{"rule_type": "Daily", "interval": -2}`), "interval -2 must be at least 1"},
		{"interval not whole", rule(`{"rule_type": "Daily", "interval": 1.5}`), "interval: not a whole number"},
		{"count zero", rule(`{"rule_type": "Daily", "count": 0}`), "count 0 must be at least 1"},
		{"count too large", rule(`{"rule_type": "Daily", "count": 100001}`), "count 100001 out of range"},
		{"weekday 7", rule(`{"rule_type": "Weekly", "validations": {"day": [1, 7]}}`), "validation day: weekday 7 out of range"},
		{"weekday name unknown", rule(`{"rule_type": "Weekly", "validations": {"day": ["funday"]}}`), "validation day: weekday \"funday\""},
		{"hour 24", rule(`{"rule_type": "Daily", "validations": {"hour_of_day": [24]}}`), "validation hour_of_day: 24 out of range 0..23"},
		{"minute 60", rule(`{"rule_type": "Daily", "validations": {"minute_of_hour": [60]}}`), "validation minute_of_hour: 60 out of range"},
		{"day_of_month 32", rule(`{"rule_type": "Monthly", "validations": {"day_of_month": [32]}}`), "validation day_of_month: 32 out of range"},
		{"day_of_month 0", rule(`{"rule_type": "Monthly", "validations": {"day_of_month": [0]}}`), "validation day_of_month: 0 out of range"},
		{"month 13", rule(`{"rule_type": "Yearly", "validations": {"month_of_year": [13]}}`), "validation month_of_year: month 13 out of range"},
		{"day_of_week nth 6", rule(`{"rule_type": "Monthly", "validations": {"day_of_week": {"1": [6]}}}`), "validation day_of_week: weekday 1: 6 out of range"},
		{"day_of_week weekday 8", rule(`{"rule_type": "Monthly", "validations": {"day_of_week": {"8": [1]}}}`), "validation day_of_week: weekday 8 out of range"},
		{"unknown validation", rule(`{"rule_type": "Daily", "validations": {"phase_of_moon": [1]}}`), `unknown validation "phase_of_moon"`},
		{"week_start 9", rule(`{"rule_type": "Weekly", "week_start": 9}`), "week_start: weekday 9 out of range"},
		{"rrule and rrules", `{` + s + `, ` + e + `, "rrules": [{"rule_type": "Daily"}], "rrule": "FREQ=DAILY"}`, "both rrule and rrules"},
		{"rrule not a string", `{` + s + `, ` + e + `, "rrule": ["FREQ=DAILY"]}`, "rrule is not a string"},
		{"RFC unknown frequency", rfc(`RRULE:FREQ=FORTNIGHTLY`), "rrule: line 1 \\\"RRULE:FREQ=FORTNIGHTLY\\\": cannot read rule"},
		{"RFC INTERVAL=0", rfc(`RRULE:FREQ=DAILY;INTERVAL=0`), "INTERVAL=0 must be a whole number of at least 1"},
		{"RFC COUNT=0", rfc(`RRULE:FREQ=DAILY;COUNT=0`), "COUNT=0 must be"},
		{"RFC BYHOUR 24", rfc(`RRULE:FREQ=DAILY;BYHOUR=24`), "byhour must be between 0 and 23"},
		{"RFC duplicate key", rfc(`RRULE:FREQ=DAILY;FREQ=WEEKLY`), "FREQ given twice"},
		{"RFC numbered BYDAY in a weekly rule", rfc(`RRULE:FREQ=WEEKLY;BYDAY=1MO`), "numbered weekday needs FREQ=MONTHLY or YEARLY"},
		{"RFC numbered BYDAY out of month", rfc(`RRULE:FREQ=MONTHLY;BYDAY=-6MO`), "occurrence number out of range ±5"},
		{"RFC numbered and plain BYDAY mixed", rfc(`RRULE:FREQ=MONTHLY;BYDAY=1FR,MO`), "BYDAY mixes numbered (+1FR) and plain (MO) weekdays"},
		{"RFC BYEASTER", rfc(`RRULE:FREQ=YEARLY;BYEASTER=1000`), "BYEASTER is not supported"},
		{"RFC DTSTART line", rfc(`DTSTART:20130201T080000\nRRULE:FREQ=DAILY`), "DTSTART is not allowed"},
		{"RFC unknown property", rfc(`RRULE:FREQ=DAILY\nXRULE:FREQ=DAILY`), `line 2 \"XRULE:FREQ=DAILY\": unknown property \"XRULE\"`},
		{"RFC line without a name", rfc(`every day`), "want NAME:VALUE"},
		{"RFC bad EXDATE", rfc(`RRULE:FREQ=DAILY\nEXDATE:2013-12-25`), `cannot read time \"2013-12-25\"`},
		{"RFC unknown TZID", rfc(`RRULE:FREQ=DAILY\nEXDATE;TZID=Mars/Base:20131225T090000`), "unknown TZID"},
		{"RFC PERIOD RDATE", rfc(`RRULE:FREQ=DAILY\nRDATE;VALUE=PERIOD:20131225T090000/PT1H`), "VALUE=PERIOD is not supported"},
		{"RFC unreachable BYHOUR", rfc(`RRULE:FREQ=HOURLY;INTERVAL=2;BYHOUR=9`), "HOURLY every 2 never reaches"},
		{"RFC unreachable BYMINUTE", rfc(`RRULE:FREQ=MINUTELY;INTERVAL=30;BYMINUTE=15`), "MINUTELY every 30 never reaches"},
		{"RFC unreachable BYSECOND", rfc(`RRULE:FREQ=SECONDLY;INTERVAL=2;BYSECOND=1`), "SECONDLY every 2 never reaches"},
		{"RFC year out of range", rfc(`RRULE:FREQ=DAILY;UNTIL=00001231T000000`), "UNTIL: year 0 out of range"},
		{"end 300 years after start", `{` + s + `, "end_time": "2313-02-01 18:00:00"}`, "more than 200 years"},
	}
	loc := mustLoc(t, "UTC")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, err := Parse([]byte(tc.raw), loc)
			if err == nil {
				t.Fatalf("Parse succeeded (%+v), want an error containing %q", r, tc.want)
			}
			want := strings.ReplaceAll(tc.want, `\"`, `"`)
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not contain %q", err, want)
			}
		})
	}
}

func TestParseList(t *testing.T) {
	t.Parallel()
	const bad = `{"start_time": "2013-02-01 08:00:00"}`
	loc := mustLoc(t, "Europe/London")
	monday := local(t, loc, "2026-11-23 09:00:00")
	cases := []struct {
		name       string
		raw        string
		restrs     int
		errIndexes []int
		active     bool // ListActive on Monday 09:00
	}{
		{"empty string", "", 0, nil, true},
		{"null", " null ", 0, nil, true},
		{"empty list", "[]", 0, nil, true},
		{"one good", "[" + weekdays818 + "]", 1, nil, true},
		{"bad then good", "[" + bad + ", " + weekdays818 + "]", 1, []int{0}, true},
		{"good then bad", "[" + weekdays818 + ", " + bad + "]", 1, []int{1}, true},
		{"only bad: inactive, not unrestricted", "[" + bad + "]", 0, []int{0}, false},
		{"not a list", weekdays818, 0, []int{-1}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rs, errs := ParseList(tc.raw, loc)
			if len(rs) != tc.restrs {
				t.Errorf("got %d restrictions, want %d", len(rs), tc.restrs)
			}
			if len(errs) != len(tc.errIndexes) {
				t.Fatalf("got errors %v, want indexes %v", errs, tc.errIndexes)
			}
			for i, err := range errs {
				var pe *ParseError
				if !errors.As(err, &pe) || pe.Index != tc.errIndexes[i] {
					t.Errorf("error %v: want a *ParseError with index %d", err, tc.errIndexes[i])
				}
				if pe != nil && pe.Index >= 0 && !strings.Contains(err.Error(), "time restriction "+string(rune('0'+pe.Index))) {
					t.Errorf("error %q does not name its index", err)
				}
			}
			if got := ListActive(rs, errs, monday); got != tc.active {
				t.Errorf("ListActive = %v, want %v", got, tc.active)
			}
		})
	}
}

func TestAnyActive(t *testing.T) {
	t.Parallel()
	loc := mustLoc(t, "UTC")
	weekdays := mustParse(t, weekdays818, loc)
	weekends := mustParse(t, `{"start_time": "2013-02-02 00:00:00", "end_time": "2013-02-03 00:00:00",
		"rrules": [{"rule_type": "Weekly", "validations": {"day": [0, 6]}}]}`, loc)
	saturday := local(t, loc, "2026-11-21 12:00:00")
	mondayNight := local(t, loc, "2026-11-23 22:00:00")
	cases := []struct {
		name string
		rs   []*Restriction
		at   time.Time
		want bool
	}{
		{"no restrictions", nil, saturday, true},
		{"one inactive", []*Restriction{weekdays}, saturday, false},
		{"one of two active", []*Restriction{weekdays, weekends}, saturday, true},
		{"none of two active", []*Restriction{weekdays, weekends}, mondayNight, false},
		{"nil restriction counts as inactive", []*Restriction{nil}, saturday, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := AnyActive(tc.rs, tc.at); got != tc.want {
				t.Errorf("AnyActive = %v, want %v", got, tc.want)
			}
		})
	}
}
