package oncall

import (
	"strings"
	"testing"
	"time"
)

// FuzzParse feeds arbitrary files to Parse, and every schedule it accepts to At, Shifts and
// Calendar: nothing may panic, and the shifts of two days from the chosen instant must pass
// checkShifts.
func FuzzParse(f *testing.F) {
	for _, file := range []string{weeklyLondon, officeHours, officeFallback, nightsOnly, subDay, smallTurns, lordHowe, "[" + issueExample + "]"} {
		f.Add([]byte(file), int64(0))
		f.Add([]byte(file), int64(5000))
	}
	f.Fuzz(func(t *testing.T, file []byte, hours int64) {
		schedules, _, err := Parse(file, nil)
		if err != nil {
			return
		}
		at := utc("2026-03-28T00:00:00Z").Add(time.Duration(hours%100000) * time.Hour)
		for _, s := range schedules {
			s.At(at)
			shifts, err := s.Shifts(at, at.Add(48*time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			checkShifts(t, s, shifts, at, at.Add(48*time.Hour))
			s.Calendar(shifts, at)
		}
	})
}

// zones the structured fuzzing picks from: clock changes of an hour, half an hour and two
// hours, at 00:00 and 02:00, twice a month around Ramadan, and a whole day skipped (Apia,
// 2011-12-30).
var fuzzZones = []string{"UTC", "Europe/London", "America/New_York", "Australia/Lord_Howe", "America/Sao_Paulo",
	"Africa/Casablanca", "Antarctica/Troll", "Pacific/Apia", "America/Havana", "Asia/Kolkata"}

// FuzzShifts builds schedules from numbers — zone, start, turn, a restriction, an override —
// and checks Shifts against At minute by minute over a day, as TestShiftsAgreeWithAt does.
func FuzzShifts(f *testing.F) {
	f.Add(uint8(1), int64(0), uint32(7*24*60), uint16(540), uint16(1080), uint8(0x3e), int64(100), uint16(120), int64(24*85))
	f.Add(uint8(3), int64(1000), uint32(60), uint16(110), uint16(130), uint8(0x7f), int64(-50), uint16(30), int64(24*3))
	f.Add(uint8(7), int64(-200000), uint32(20), uint16(0), uint16(0), uint8(0x10), int64(0), uint16(0), int64(-24*5205))
	f.Fuzz(func(t *testing.T, zone uint8, startMin int64, turnMin uint32, fromMin, toMin uint16, days uint8,
		overrideMin int64, overrideLen uint16, atHours int64) {
		turn := time.Duration(turnMin%(30*24*60)+1) * time.Minute
		start := utc("2026-03-01T00:00:00Z").Add(time.Duration(startMin%(366*24*60)) * time.Minute)
		at := utc("2026-03-28T00:00:00Z").Add(time.Duration(atHours%(24*366*15)) * time.Hour)
		var dayList []string
		for d, name := range []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"} {
			if days&(1<<d) != 0 {
				dayList = append(dayList, name)
			}
		}
		clock := func(m uint16) string {
			m %= 24 * 60
			return time.Date(0, 1, 1, 0, int(m), 0, 0, time.UTC).Format("15:04")
		}
		overrideStart := at.Add(time.Duration(overrideMin%(48*60)) * time.Minute)
		def := Schedule{ID: "f", Timezone: fuzzZones[int(zone)%len(fuzzZones)],
			Layers: []Layer{
				{Name: "base", Start: start.Format("2006-01-02T15:04:05"), Turn: turn.String(), Members: []string{"a", "b", "c"}},
				{Name: "top", Start: start.Format("2006-01-02T15:04:05"), Turn: (turn * 3).String(), Members: []string{"x", "y"},
					Restrictions: []Restriction{{Days: strings.Join(dayList, ","), From: clock(fromMin), To: clock(toMin)}}},
			},
			Overrides: []Override{{Contact: "o", Start: overrideStart, End: overrideStart.Add(time.Duration(overrideLen%(24*60)+1) * time.Minute)}},
		}
		s, err := New(def)
		if err != nil {
			t.Fatal(err)
		}
		shifts, err := s.Shifts(at, at.Add(24*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		checkShifts(t, s, shifts, at, at.Add(24*time.Hour))
	})
}
