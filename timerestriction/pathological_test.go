package timerestriction

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestPathologicalRulesStayCheap covers rules for which a plain rrule-go evaluation runs for
// a long time (to year 9999 in the worst case) on every notification. The time limits are far
// above what these take (well under a millisecond per evaluation) and far below what they took
// before the safeguards (a third of a second to forever), so the test is not timing-sensitive.
// The race detector slows rrule-go down by orders of magnitude, so there only the code runs.
func TestPathologicalRulesStayCheap(t *testing.T) {
	t.Parallel()
	ny := mustLoc(t, "America/New_York")
	cases := []struct {
		name, rule string
		wantErr    string // "" when the rule is valid
	}{
		{"never occurs, daily", "FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30", ""},
		{"never occurs, secondly", "FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=30", ""},
		{"never occurs, weekly numbers", "FREQ=YEARLY;BYWEEKNO=53;BYDAY=MO;BYMONTH=1", ""},
		{"rare days, daily", "FREQ=DAILY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO", ""},
		{"rare days, secondly at 05:00", "FREQ=SECONDLY;BYHOUR=5;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO", ""},
		{"rare days with count", "FREQ=SECONDLY;BYHOUR=5;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO;COUNT=100000", ""},
		{"rare days, hourly every 7", "FREQ=HOURLY;INTERVAL=7;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO", ""},
		{"lattice never meets the allowed days", "FREQ=HOURLY;INTERVAL=168;BYDAY=TU,WE,TH,FR,SA,SU", ""},
		{"count of seconds", "FREQ=SECONDLY;COUNT=100000", ""},
		{"huge interval", "FREQ=DAILY;INTERVAL=999999", "too large"},
		{"largest daily interval", "FREQ=DAILY;INTERVAL=10000", ""},
		{"set position never matching", "FREQ=SECONDLY;BYSETPOS=366", "BYSETPOS [366] never matches"},
		{"set position partly matching", "FREQ=HOURLY;BYMINUTE=0,30;BYSETPOS=-1,5", ""},
		{"unreachable hour", "FREQ=HOURLY;INTERVAL=2;BYHOUR=10", "never reaches"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			q, _ := json.Marshal(tc.rule)
			raw := `{"start_time": "2013-02-01 09:00:00", "end_time": "2013-02-01 09:00:30", "rrule": ` + string(q) + `}`
			began := time.Now()
			r, err := Parse([]byte(raw), ny)
			if parse := time.Since(began); parse > 5*time.Second && !raceEnabled {
				t.Errorf("Parse took %v", parse)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Parse error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			began = time.Now()
			const calls = 20
			for i := range calls {
				r.Active(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC).Add(time.Duration(i) * 37 * time.Hour))
			}
			if per := time.Since(began) / calls; per > 20*time.Millisecond && !raceEnabled {
				t.Errorf("Active took %v per call", per)
			}
		})
	}
}
