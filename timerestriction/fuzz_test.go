package timerestriction

import (
	"encoding/json"
	"testing"
	"time"

	rrule "github.com/teambition/rrule-go"
)

// FuzzParse checks that no input makes Parse or evaluation panic (or hang: the fuzzer reports
// slow inputs), and that what parses answers like the brute-force evaluation near its start.
func FuzzParse(f *testing.F) {
	seeds := []string{
		weekdays818,
		`{"start_time": "2013-02-01 09:00:00", "end_time": "2013-02-01 17:00:00",
			"rrule": "RRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR\nEXDATE:20131225T090000"}`,
		`{"start_time": "2013-02-01 09:00:00", "end_time": "2013-02-01 17:00:00",
			"rrule": "RRULE:FREQ=DAILY;COUNT=5\nEXRULE:FREQ=WEEKLY;BYDAY=SA,SU\nRDATE:20130310T020000"}`,
		`{"start_time": "2013-03-10 01:30:00", "end_time": "2013-03-10 02:45:00",
			"rrule": "FREQ=MINUTELY;INTERVAL=13;BYHOUR=1,2,3"}`,
		`{"start_time": "2013-01-07 09:00:00", "end_time": "2013-01-07 10:00:00",
			"rrules": [{"rule_type": "Monthly", "validations": {"day_of_week": {"1": [1, -1]}, "month_of_year": [2]}}]}`,
		`{"start_time": {"time": "2013-02-01T13:00:00Z", "zone": "Europe/London"}, "end_time": "2013-02-02 08:00:00 +0100",
			"rrules": [{"rule_type": "IceCube::YearlyRule", "interval": 2, "until": "2020-01-01 00:00:00",
				"validations": {"day_of_year": [-1, 60], "hour_of_day": [1, 23]}}], "extimes": ["2013-12-31 01:00:00"]}`,
		`{"start_time": "2013-11-03 01:30:00", "end_time": "2013-11-03 01:31:00", "rrule": "FREQ=SECONDLY;INTERVAL=7;BYSECOND=0,1,2,3,4,5,6"}`,
		`{"start_time": "2013-01-01 00:00:00", "end_time": "2013-01-01 00:00:01",
			"rrule": "RRULE:FREQ=YEARLY;BYWEEKNO=1,53,-1;BYDAY=MO;BYSETPOS=1,-1"}`,
		`{}`, `[]`, `null`, `{"start_time": 1}`, `{"start_time": "2013-01-01 00:00:00", "end_time": "2013-01-01 00:00:00"}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	ny := mustLoc(f, "America/New_York")
	fixed := []time.Time{
		time.Date(2026, 11, 23, 15, 0, 0, 0, time.UTC),
		time.Date(2013, 3, 10, 6, 30, 0, 0, time.UTC),
		time.Date(2013, 11, 3, 5, 30, 0, 0, time.UTC),
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		r, err := Parse(raw, ny)
		if err != nil {
			if r != nil {
				t.Fatalf("Parse returned both a restriction and an error: %v", err)
			}
			return
		}
		length := time.Duration(r.wall) * time.Second
		near := []time.Time{
			r.start, r.start.Add(-time.Second), r.start.Add(length / 2), r.start.Add(length),
			r.start.Add(25 * time.Hour), r.start.Add(49*time.Hour + 17*time.Minute),
		}
		for _, at := range near {
			// Calls active, not Active: Active would hide a panic.
			if got := r.active(at); cheapToCompare(r) && got != r.activeNaive(at) {
				t.Errorf("at %s: Active = %v, naive = %v", at.In(ny), got, !got)
			}
		}
		for _, at := range fixed {
			r.active(at)
		}
	})
}

// FuzzRRule aims the fuzzer at the recurrence itself (and so at rrule-go), where the risky
// inputs are: numbered weekdays, set positions, unreachable hours, empty rules, huge counts.
func FuzzRRule(f *testing.F) {
	for _, s := range []string{
		"RRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR\nEXDATE:20131225T090000",
		"FREQ=MONTHLY;BYDAY=-1FR,2MO;BYMONTHDAY=-3,10",
		"RRULE:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO",
		"RRULE:FREQ=YEARLY;BYWEEKNO=-1,1,53;BYDAY=SU;BYSETPOS=-1",
		"RRULE:FREQ=HOURLY;INTERVAL=5;BYHOUR=1,6,11\nEXRULE:FREQ=DAILY;INTERVAL=3",
		"RRULE:FREQ=MINUTELY;INTERVAL=45;BYHOUR=2;BYMINUTE=0,45\nRDATE;TZID=Europe/London:20130310T020000",
		"RRULE:FREQ=SECONDLY;INTERVAL=3600;COUNT=1000;UNTIL=20130312",
		"RRULE:FREQ=DAILY;BYYEARDAY=-366,366,60\nEXDATE;VALUE=DATE:20131225",
	} {
		f.Add(s, uint8(0))
	}
	ny, berlin := mustLoc(f, "America/New_York"), mustLoc(f, "Europe/Berlin")
	starts := []string{
		`"start_time": "2013-03-10 01:30:00", "end_time": "2013-03-10 03:30:00"`,
		`"start_time": "2013-02-01 09:00:00", "end_time": "2013-02-01 17:00:00"`,
		`"start_time": "2012-02-29 23:59:59", "end_time": "2012-03-01 00:00:09"`,
		`"start_time": "2013-11-03 01:30:00", "end_time": "2013-11-03 01:30:01"`,
		`"start_time": "2013-03-10 02:30:00", "end_time": "2013-03-10 02:45:00"`, // in the gap
	}
	// East of UTC, time.Date places wall times in a gap after it, not before (which's high bit).
	berlinStarts := []string{
		`"start_time": "2013-03-30 00:00:00", "end_time": "2013-03-30 00:10:00"`,
		`"start_time": "2013-03-31 01:30:00", "end_time": "2013-03-31 03:30:00"`,
		`"start_time": "2013-10-27 01:30:00", "end_time": "2013-10-27 02:30:01"`,
		`"start_time": "2013-03-31 02:30:00", "end_time": "2013-03-31 02:45:00"`, // in the gap
		`"start_time": "2013-10-27 02:30:00", "end_time": "2013-10-27 02:50:00"`, // twice that night
	}
	f.Add("RRULE:FREQ=MINUTELY;INTERVAL=30\nEXRULE:FREQ=DAILY;BYHOUR=2;BYMINUTE=30;BYSECOND=0", uint8(0x80))
	f.Fuzz(func(t *testing.T, rule string, which uint8) {
		quoted, err := json.Marshal(rule)
		if err != nil {
			return
		}
		loc, start := ny, starts[int(which)%len(starts)]
		if which&0x80 != 0 {
			loc, start = berlin, berlinStarts[int(which&0x7f)%len(berlinStarts)]
		}
		raw := `{` + start + `, "rrule": ` + string(quoted) + `}`
		r, err := Parse([]byte(raw), loc)
		if err != nil {
			return
		}
		length := time.Duration(r.wall) * time.Second
		for _, at := range []time.Time{
			r.start, r.start.Add(length / 2), r.start.Add(length), r.start.Add(25 * time.Hour),
			r.start.Add(49*time.Hour + 17*time.Minute), r.start.Add(8 * 24 * time.Hour),
		} {
			if got := r.active(at); cheapToCompare(r) && got != r.activeNaive(at) {
				t.Errorf("at %s: Active = %v, naive = %v", at.In(loc), got, !got)
			}
		}
		r.active(time.Date(2026, 11, 23, 15, 0, 0, 0, time.UTC))
	})
}

// cheapToCompare tells whether the brute-force evaluation of r finishes quickly: plain rrule-go
// walks to year 9999 on a rule that never occurs, and through every second of every rejected day
// on a rule finer than DAILY with day-level parts (what the shortcuts exist to avoid).
func cheapToCompare(r *Restriction) bool {
	for _, ru := range append(append([]*rule(nil), r.rules...), r.exrules...) {
		if ru.empty || ru.days != nil && ru.freq > rrule.DAILY {
			return false
		}
	}
	return true
}
