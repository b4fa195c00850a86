package timerestriction

import (
	"testing"
	"time"
)

var benchSink bool

func BenchmarkActive(b *testing.B) {
	ny := mustLoc(b, "America/New_York")
	cases := []struct {
		name string
		raw  string
		at   string // wall clock in New York
	}{
		{"weekdays 8-18 from 2013, active in 2026", weekdays818, "2026-11-23 10:00:00"},
		{"weekdays 8-18 from 2013, inactive in 2026", weekdays818, "2026-11-22 10:00:00"},
		{"RFC5545 with EXDATE", `{"start_time": "2013-02-01 09:00:00", "end_time": "2013-02-01 17:00:00",
			"rrule": "RRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR\nEXDATE:20131225T090000,20261225T090000"}`, "2026-11-24 16:00:00"},
		{"RFC5545 with EXRULE", `{"start_time": "2013-02-01 09:00:00", "end_time": "2013-02-01 17:00:00",
			"rrule": "RRULE:FREQ=DAILY\nEXRULE:FREQ=WEEKLY;BYDAY=SA,SU"}`, "2026-11-24 16:00:00"},
		{"COUNT, still running", `{"start_time": "2013-02-01 09:00:00", "end_time": "2013-02-01 17:00:00",
			"rrule": "RRULE:FREQ=DAILY;COUNT=10000"}`, "2026-11-24 16:00:00"},
		{"COUNT, finished", `{"start_time": "2013-02-01 09:00:00", "end_time": "2013-02-01 17:00:00",
			"rrules": [{"rule_type": "Daily", "count": 30}]}`, "2026-11-24 16:00:00"},
		{"monthly first and last Monday", `{"start_time": "2013-01-07 09:00:00", "end_time": "2013-01-07 17:00:00",
			"rrules": [{"rule_type": "Monthly", "validations": {"day_of_week": {"1": [1, -1]}}}]}`, "2026-11-30 10:00:00"},
		{"hourly every 3", `{"start_time": "2013-01-01 00:15:00", "end_time": "2013-01-01 00:45:00",
			"rrules": [{"rule_type": "Hourly", "interval": 3}]}`, "2026-11-24 16:20:00"},
	}
	for _, tc := range cases {
		r := mustParse(b, tc.raw, ny)
		at := local(b, ny, tc.at)
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				benchSink = r.Active(at)
			}
		})
	}
	// For comparison: the same question answered by iterating from DTSTART.
	r := mustParse(b, weekdays818, ny)
	at := local(b, ny, "2026-11-23 10:00:00")
	b.Run("weekdays 8-18, naive iteration from 2013 (reference)", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			benchSink = r.activeNaive(at)
		}
	})
}

func BenchmarkCacheActive(b *testing.B) {
	ny := mustLoc(b, "America/New_York")
	c := NewCache(DefaultCacheSize)
	raw := "[" + weekdays818 + "]"
	at := local(b, ny, "2026-11-23 10:00:00")
	b.ReportAllocs()
	for b.Loop() {
		benchSink, _ = c.Active(raw, ny, at)
	}
}

func BenchmarkParse(b *testing.B) {
	ny := mustLoc(b, "America/New_York")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse([]byte(weekdays818), ny); err != nil {
			b.Fatal(err)
		}
	}
}

func TestBenchmarkAnswers(t *testing.T) {
	t.Parallel()
	// The benchmarks measure real work only if their cases answer as intended.
	ny := mustLoc(t, "America/New_York")
	r := mustParse(t, weekdays818, ny)
	if !r.Active(local(t, ny, "2026-11-23 10:00:00")) || r.Active(local(t, ny, "2026-11-22 10:00:00")) {
		t.Error("weekdays 8-18 benchmark cases answer wrongly")
	}
	_ = time.UTC
}
