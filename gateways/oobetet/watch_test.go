package oobetet

import (
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func at(seconds int) time.Time { return t0.Add(time.Duration(seconds) * time.Second) }

// TestWatchCheck tables sightings and looks at the clock (max_latency 10s, watching since t0)
// against the outcomes and reasons.
func TestWatchCheck(t *testing.T) {
	t.Parallel()
	type sight struct {
		kind Kind
		at   int
	}
	type look struct {
		at     int
		want   Outcome
		reason string // a substring of the reason; "" = none
	}
	tests := []struct {
		name   string
		sights []sight
		looks  []look
	}{
		{"nothing seen yet, within max_latency of the start", nil,
			[]look{{0, Healthy, ""}, {10, Healthy, ""}}},
		{"nothing seen since the start", nil,
			[]look{{11, Breached, "no problem alert seen since oobetet started 11s ago (max_latency 10s)"}, {12, StillBreached, "problem"}}},
		{"both flowing", []sight{{Problem, 5}, {Recovery, 8}, {Problem, 14}, {Recovery, 17}},
			[]look{{15, Healthy, ""}, {24, Healthy, ""}}},
		{"problems stop", []sight{{Problem, 5}, {Recovery, 8}, {Recovery, 14}},
			[]look{{15, Healthy, ""}, {16, Breached, "no problem alert seen for 11s (max_latency 10s)"}}},
		{"recoveries stop", []sight{{Problem, 5}, {Recovery, 5}, {Problem, 14}},
			[]look{{15, Healthy, ""}, {16, Breached, "no recovery alert seen for 11s"}}},
		{"exactly max_latency is not yet a breach", []sight{{Problem, 5}, {Recovery, 5}},
			[]look{{15, Healthy, ""}, {16, Breached, "problem"}}},
		{"acknowledgements do not count", []sight{{Acknowledgement, 9}},
			[]look{{11, Breached, "problem"}}},
		{"a sighting in the past does not move the last one back", []sight{{Problem, 9}, {Problem, 2}, {Recovery, 9}},
			[]look{{19, Healthy, ""}, {20, Breached, "problem"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := Watch{MaxLatency: 10 * time.Second, Since: t0}
			for _, s := range tt.sights {
				w.See(s.kind, at(s.at))
			}
			for _, l := range tt.looks {
				got, reason := w.Check(at(l.at))
				if got != l.want {
					t.Errorf("at +%ds: %s, want %s (reason %q)", l.at, got, l.want, reason)
				}
				if (l.reason == "") != (reason == "") || !strings.Contains(reason, l.reason) {
					t.Errorf("at +%ds: reason %q, want one containing %q", l.at, reason, l.reason)
				}
			}
		})
	}
}

// TestWatchRecovers follows one breach from start to end.
func TestWatchRecovers(t *testing.T) {
	t.Parallel()
	w := Watch{MaxLatency: 10 * time.Second, Since: t0}
	w.See(Problem, at(1))
	w.See(Recovery, at(2))
	steps := []struct {
		see  Kind
		at   int
		want Outcome
	}{
		{None, 5, Healthy},
		{None, 12, Breached},
		{None, 30, StillBreached},
		{Problem, 31, StillBreached}, // recoveries still missing
		{Recovery, 32, Recovered},
		{None, 33, Healthy},
		{None, 43, Breached}, // a new breach
	}
	for _, s := range steps {
		w.See(s.see, at(s.at))
		if got, reason := w.Check(at(s.at)); got != s.want {
			t.Fatalf("at +%ds after seeing %s: %s (%q), want %s", s.at, s.see, got, reason, s.want)
		}
	}
}
