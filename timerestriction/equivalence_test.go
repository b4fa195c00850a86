package timerestriction

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	rrule "github.com/teambition/rrule-go"
)

// activeNaive is Active without any shortcut: every rule is iterated by rrule-go from the
// original DTSTART with the options exactly as read (no pinned defaults, COUNT counted here),
// every occurrence up to t is checked, and EXRULEs are expanded the same way.
func (r *Restriction) activeNaive(t time.Time) bool {
	if r.wall <= 0 {
		return false
	}
	covers := func(o time.Time) bool {
		return !o.After(t) && t.Before(r.occurrenceEnd(o)) && !r.excludedNaive(o)
	}
	for _, o := range r.rdates {
		if covers(o) {
			return true
		}
	}
	for _, ru := range r.rules {
		for _, o := range ru.naiveOccurrences(t) {
			if covers(o) {
				return true
			}
		}
	}
	return false
}

func (r *Restriction) excludedNaive(o time.Time) bool {
	if slices.Contains(r.exunix, o.Unix()) || slices.Contains(r.exdays, floorDiv(wallOf(o, r.loc), 86400)) {
		return true
	}
	for _, ex := range r.exrules {
		if slices.ContainsFunc(ex.naiveOccurrences(o), o.Equal) {
			return true
		}
	}
	return false
}

// naiveOccurrences returns the rule's occurrences up to t. rrule-go's output is not in time
// order inside a spring-forward gap (naive 02:52 becomes 01:52 EST, after 01:56 EST), so
// iteration goes on past t by orderSlack.
func (ru *rule) naiveOccurrences(t time.Time) []time.Time {
	if ru.never {
		return nil
	}
	if ru.rfc {
		return ru.rfcOccurrences(t)
	}
	rr, err := rrule.NewRRule(ru.raw)
	if err != nil {
		panic(err)
	}
	var out []time.Time
	seen := 0
	next := rr.Iterator()
	for {
		o, ok := next()
		if !ok || o.After(t.Add(orderSlack*time.Second)) {
			return out
		}
		if !ru.keep(o) {
			continue
		}
		if seen++; ru.rawCount > 0 && seen > ru.rawCount {
			return out
		}
		if !o.After(t) {
			out = append(out, o)
		}
	}
}

// rfcOccurrences is naiveOccurrences of an RFC 5545 rule, read as RFC 5545 reads it: rrule-go
// runs on the wall clock (from the start's wall time as written, options as read), a wall
// time that does not exist is ignored and not counted unless it is the start, which is placed
// with the offset before the gap like every other wall time (rfcAt), and nothing placed before
// the start occurs.
func (ru *rule) rfcOccurrences(t time.Time) []time.Time {
	opt := ru.raw
	opt.Dtstart = time.Unix(ru.startWall, 0).UTC()
	if !opt.Until.IsZero() {
		opt.Until = naive(opt.Until, ru.loc)
	}
	rr, err := rrule.NewRRule(opt)
	if err != nil {
		panic(err)
	}
	var out []time.Time
	seen := 0
	next := rr.Iterator()
	stop := wallOf(t, ru.loc) + orderSlack
	for {
		n, ok := next()
		if !ok || n.Unix() > stop {
			return out
		}
		if !ru.keep(n) {
			continue
		}
		o, exists := rfcAt(n.Unix(), ru.loc)
		if !exists && n.Unix() != ru.startWall || o.Before(ru.start) {
			continue
		}
		if seen++; ru.rawCount > 0 && seen > ru.rawCount {
			return out
		}
		if !o.After(t) {
			out = append(out, o)
		}
	}
}

// raceEnabled is set by race_test.go in -race builds.
var raceEnabled bool

func TestShortcutsMatchNaiveEvaluation(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		zone     string
		raw      string
		from, to string // range of instants tried (wall clock in zone)
	}{
		{"weekdays 8-18", "America/New_York", weekdays818, "2013-01-25 00:00:00", "2027-01-01 00:00:00"},
		{"weekdays 8-18 Sydney", "Australia/Sydney", weekdays818, "2013-01-25 00:00:00", "2020-01-01 00:00:00"},
		{"nightly 22-06", "America/New_York", `{"start_time": "2013-03-01 22:00:00", "end_time": "2013-03-02 06:00:00",
			"rrules": [{"rule_type": "Daily"}]}`, "2013-02-25 00:00:00", "2019-01-01 00:00:00"},
		{"docs/decisions.md D9 example with EXDATE", "America/New_York", `{"start_time": "2013-02-01 09:00:00", "end_time": "2013-02-01 17:00:00",
			"rrule": "RRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR\nEXDATE:20131225T090000,20141225T090000"}`, "2013-01-01 00:00:00", "2016-01-01 00:00:00"},
		{"EXRULE and two RRULEs", "Europe/London", `{"start_time": "2013-02-01 09:00:00", "end_time": "2013-02-01 12:00:00",
			"rrule": "RRULE:FREQ=DAILY;INTERVAL=3\nRRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=TU;BYHOUR=9,15\nEXRULE:FREQ=MONTHLY;BYMONTHDAY=1,2,3,4,5,6,7"}`,
			"2013-01-25 00:00:00", "2017-01-01 00:00:00"},
		{"monthly nth and negative day", "Australia/Sydney", `{"start_time": "2013-01-07 23:00:00", "end_time": "2013-01-08 01:30:00",
			"rrules": [{"rule_type": "Monthly", "interval": 2, "validations": {"day_of_week": {"1": [1, -1], "5": [2]}}},
				{"rule_type": "Monthly", "validations": {"day_of_month": [-1, 15]}}]}`, "2013-01-01 00:00:00", "2019-01-01 00:00:00"},
		{"yearly last Sunday of March", "Europe/Berlin", `{"start_time": "2013-03-31 01:00:00", "end_time": "2013-03-31 04:00:00",
			"rrule": "RRULE:FREQ=YEARLY;BYMONTH=3,10;BYDAY=-1SU"}`, "2013-03-01 00:00:00", "2030-01-01 00:00:00"},
		{"yearly plain", "UTC", `{"start_time": "2012-02-29 10:00:00", "end_time": "2012-03-01 10:00:00",
			"rrules": [{"rule_type": "Yearly", "interval": 1}]}`, "2012-01-01 00:00:00", "2030-01-01 00:00:00"},
		{"weekly interval 3 week start Sunday", "UTC", `{"start_time": "2013-03-06 09:00:00", "end_time": "2013-03-06 20:00:00",
			"rrules": [{"rule_type": "Weekly", "interval": 3, "week_start": 0, "validations": {"day": [0, 3, 6]}}]}`,
			"2013-03-01 00:00:00", "2018-01-01 00:00:00"},
		{"hourly every 5 on weekdays", "America/New_York", `{"start_time": "2013-03-01 01:20:00", "end_time": "2013-03-01 02:50:00",
			"rrule": "RRULE:FREQ=HOURLY;INTERVAL=5;BYDAY=MO,TU,WE,TH,FR"}`, "2013-02-28 00:00:00", "2014-06-01 00:00:00"},
		{"minutely every 7 in two hours", "America/New_York", `{"start_time": "2013-03-01 01:03:00", "end_time": "2013-03-01 01:05:00",
			"rrule": "RRULE:FREQ=MINUTELY;INTERVAL=7;BYHOUR=1,2,3,9"}`, "2013-03-08 00:00:00", "2013-03-12 00:00:00"},
		{"secondly every 30", "America/New_York", `{"start_time": "2013-11-02 23:59:45", "end_time": "2013-11-03 00:00:05",
			"rrule": "RRULE:FREQ=SECONDLY;INTERVAL=30;BYMINUTE=0,1,59"}`, "2013-11-02 23:00:00", "2013-11-04 03:00:00"},
		{"count and until", "America/New_York", `{"start_time": "2013-03-01 09:00:00", "end_time": "2013-03-01 17:00:00",
			"rrules": [{"rule_type": "Daily", "count": 40}, {"rule_type": "Weekly", "until": "2014-06-01 00:00:00",
				"validations": {"day": [6]}}, {"rule_type": "Monthly", "count": 12, "validations": {"day_of_week": {"2": [2]}}}]}`,
			"2013-02-25 00:00:00", "2015-06-01 00:00:00"},
		{"start in the DST gap", "America/New_York", `{"start_time": "2013-03-10 02:30:00", "end_time": "2013-03-10 03:15:00",
			"rrules": [{"rule_type": "Daily"}]}`, "2013-03-09 00:00:00", "2016-01-01 00:00:00"},
		{"RFC 5545 start in the DST gap", "America/New_York", `{"start_time": "2013-03-10 02:30:00", "end_time": "2013-03-10 02:45:00",
			"rrule": "FREQ=DAILY;BYHOUR=2,5;BYMINUTE=30"}`, "2013-03-09 00:00:00", "2016-01-01 00:00:00"},
		{"RFC 5545 minutely across both changes east of UTC", "Europe/Berlin", `{"start_time": "2013-03-30 23:50:00", "end_time": "2013-03-30 23:55:00",
			"rrule": "FREQ=MINUTELY;INTERVAL=20;BYHOUR=1,2,3;COUNT=40\nRRULE:FREQ=DAILY;BYHOUR=2;BYMINUTE=10,40\nEXRULE:FREQ=DAILY;BYHOUR=3;BYMINUTE=0"}`,
			"2013-03-30 00:00:00", "2014-01-01 00:00:00"},
		{"RFC 5545 hourly with EXDATE and RDATE in the gap", "America/New_York", `{"start_time": "2013-03-09 23:30:00", "end_time": "2013-03-09 23:50:00",
			"rrule": "FREQ=HOURLY;COUNT=30\nEXDATE:20130310T033000\nRDATE:20130310T021000,20131103T011000"}`, "2013-03-09 00:00:00", "2013-11-05 00:00:00"},
		{"Lord Howe half-hour DST", "Australia/Lord_Howe", `{"start_time": "2013-01-01 01:45:00", "end_time": "2013-01-01 02:15:00",
			"rrules": [{"rule_type": "Daily"}]}`, "2013-01-01 00:00:00", "2017-01-01 00:00:00"},
		{"rtimes and extimes", "UTC", `{"start_time": "2013-03-04 09:00:00", "end_time": "2013-03-04 17:00:00",
			"rrules": [{"rule_type": "Weekly", "validations": {"day": [1]}}],
			"rtimes": ["2013-03-09 10:00:00", "2012-12-25 10:00:00"], "extimes": ["2013-03-11 09:00:00", "2013-03-09 10:00:00"]}`,
			"2012-12-20 00:00:00", "2014-01-01 00:00:00"},
		{"yearly every 3 years", "Europe/London", `{"start_time": "2013-06-15 09:00:00", "end_time": "2013-06-15 18:00:00",
			"rrules": [{"rule_type": "Yearly", "interval": 3, "validations": {"month_of_year": [6, 12], "day_of_month": [15, -1]}}]}`,
			"2013-01-01 00:00:00", "2040-01-01 00:00:00"},
		{"monthly every 5 months", "Asia/Kolkata", `{"start_time": "2013-01-31 09:00:00", "end_time": "2013-01-31 18:00:00",
			"rrules": [{"rule_type": "Monthly", "interval": 5, "validations": {"day_of_month": [1, 15, 31]}}]}`,
			"2013-01-01 00:00:00", "2025-01-01 00:00:00"},
		{"daily every 4 days", "America/New_York", `{"start_time": "2013-01-30 20:00:00", "end_time": "2013-01-31 04:00:00",
			"rrules": [{"rule_type": "Daily", "interval": 4}]}`, "2013-01-01 00:00:00", "2020-01-01 00:00:00"},
		{"hourly every 7 across DST", "Europe/London", `{"start_time": "2013-03-20 00:40:00", "end_time": "2013-03-20 03:10:00",
			"rrule": "FREQ=HOURLY;INTERVAL=7"}`, "2013-03-25 00:00:00", "2014-11-01 00:00:00"},
		{"minutely on rare days", "America/New_York", `{"start_time": "2013-02-01 09:00:00", "end_time": "2013-02-01 09:05:00",
			"rrule": "FREQ=MINUTELY;INTERVAL=13;BYHOUR=5,17;BYMONTH=2,3;BYMONTHDAY=29,1"}`, "2015-02-20 00:00:00", "2017-03-05 00:00:00"},
		{"hourly on rare days", "Europe/London", `{"start_time": "2013-02-01 09:00:00", "end_time": "2013-02-01 12:00:00",
			"rrule": "FREQ=HOURLY;INTERVAL=7;BYMONTH=2,3;BYMONTHDAY=29,-1;BYDAY=MO,TU,SU"}`, "2013-01-01 00:00:00", "2018-01-01 00:00:00"},
		{"daily with day filters and set position", "America/New_York", `{"start_time": "2013-01-02 08:00:00", "end_time": "2013-01-02 10:30:00",
			"rrule": "FREQ=DAILY;INTERVAL=2;BYDAY=MO,WE,FR;BYMONTH=1,3,5,11;BYHOUR=8,20;BYMINUTE=0,45;BYSETPOS=-1,2"}`,
			"2013-01-01 00:00:00", "2018-01-01 00:00:00"},
		{"ice_cube daily on weekdays, first Monday, with count", "Australia/Sydney", `{"start_time": "2013-01-01 22:00:00", "end_time": "2013-01-02 07:00:00",
			"rrules": [{"rule_type": "Daily", "validations": {"day": [1, 2, 3, 4, 5], "hour_of_day": [22]}},
				{"rule_type": "Daily", "count": 20, "validations": {"day": [1], "day_of_week": {"1": [1]}, "day_of_month": [1, 2, 3, 4, 5, 6, 7]}}]}`,
			"2012-12-25 00:00:00", "2016-01-01 00:00:00"},
		{"week-long window", "Europe/London", `{"start_time": "2013-01-07 00:00:00", "end_time": "2013-01-12 00:00:00",
			"rrules": [{"rule_type": "Monthly", "validations": {"day_of_week": {"1": [1]}}}]}`, "2013-01-01 00:00:00", "2020-01-01 00:00:00"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			loc := mustLoc(t, tc.zone)
			r := mustParse(t, tc.raw, loc)
			from, to := local(t, loc, tc.from), local(t, loc, tc.to)
			rng := rand.New(rand.NewPCG(1, uint64(len(tc.name))))
			span := to.Unix() - from.Unix()
			// The race detector makes the brute force ten times slower; this test is there for
			// the sampling, which the plain run does in full.
			random, boundaries, dstYears := 300, 60, 3
			if raceEnabled {
				random, boundaries, dstYears = 60, 12, 1
			}
			var instants []time.Time
			for range random {
				instants = append(instants, from.Add(time.Duration(rng.Int64N(span))*time.Second))
			}
			// Boundaries matter most: around occurrence starts and ends, and DST changes.
			for _, ru := range r.rules {
				occ := ru.naiveOccurrences(to)
				for range boundaries {
					if len(occ) == 0 {
						break
					}
					o := occ[rng.IntN(len(occ))]
					e := r.occurrenceEnd(o)
					for _, d := range []time.Duration{-time.Second, 0, time.Second} {
						instants = append(instants, o.Add(d), e.Add(d))
					}
				}
			}
			for y := from.Year(); y <= to.Year() && y < from.Year()+dstYears; y++ {
				for _, m := range []time.Month{time.March, time.April, time.October, time.November} {
					for d := 1; d <= 31; d += 6 {
						for h := 0; h < 24; h += 3 {
							if at := time.Date(y, m, d, h, 30, 0, 0, loc); !at.Before(from) && at.Before(to) {
								instants = append(instants, at)
							}
						}
					}
				}
			}
			mismatches := 0
			for _, at := range instants {
				got, want := r.active(at), r.activeNaive(at)
				if got != want {
					mismatches++
					if mismatches <= 10 {
						t.Errorf("at %s (%s): Active = %v, naive = %v", at.In(loc).Format("2006-01-02 15:04:05 MST"),
							at.UTC().Format(time.RFC3339), got, want)
					}
				}
			}
			if mismatches > 10 {
				t.Errorf("%d mismatches in %d instants", mismatches, len(instants))
			}
		})
	}
}
