package timerestriction

import "testing"

func TestDayFilterNextAllowed(t *testing.T) {
	t.Parallel()
	flagsAt := func(idx ...int64) *dayFilter {
		f := &dayFilter{cycle: &cycleFlags{}}
		for _, i := range idx {
			f.cycle[i/64] |= 1 << (i % 64)
		}
		return f
	}
	mondays := &dayFilter{weekdays: 1 << 1}
	cases := []struct {
		name string
		f    *dayFilter
		day  int64
		want int64
	}{
		{"itself", flagsAt(5), cycleEpoch + 5, cycleEpoch + 5},
		{"later in the same word", flagsAt(60), cycleEpoch + 3, cycleEpoch + 60},
		{"in a later word", flagsAt(1000), cycleEpoch + 3, cycleEpoch + 1000},
		{"wraps to the next cycle", flagsAt(5), cycleEpoch + 10, cycleEpoch + cycleDays + 5},
		{"last day of the cycle", flagsAt(cycleDays - 1), cycleEpoch + cycleDays - 40, cycleEpoch + cycleDays - 1},
		{"from the last day across the wrap", flagsAt(0), cycleEpoch + cycleDays - 1, cycleEpoch + cycleDays},
		{"before 1970", flagsAt(7), cycleEpoch - 3*cycleDays + 2, cycleEpoch - 3*cycleDays + 7},
		{"weekday: Monday from Thursday 1970-01-01", mondays, 0, 4},
		{"weekday: Monday itself", mondays, 4, 4},
		{"weekday: before 1970", mondays, -3, -3}, // 1969-12-29 was a Monday
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := tc.f.nextAllowed(tc.day)
			if got != tc.want {
				t.Errorf("nextAllowed(%d) = %d, want %d", tc.day, got, tc.want)
			}
			if !tc.f.allows(got) {
				t.Errorf("allows(%d) = false", got)
			}
			for d := tc.day; d < got && d < tc.day+200; d++ {
				if tc.f.allows(d) {
					t.Errorf("allows(%d) = true, before nextAllowed's answer", d)
				}
			}
		})
	}
}
