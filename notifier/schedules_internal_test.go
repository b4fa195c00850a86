package notifier

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/flapjackgo/flapjack/oncall"
)

// TestScheduleMetrics: a resolution that found nobody in the layers and overrides counts as a
// fallback of its schedule, and the gauge follows each schedule's latest resolution.
func TestScheduleMetrics(t *testing.T) {
	m := NewMetrics(prometheus.NewRegistry())
	nt := New(Options{Metrics: m})
	fallback := resolution{schedule: "web", onCall: oncall.OnCall{Contacts: []string{"lead"}, Source: oncall.FromFallback}}
	nobody := resolution{schedule: "db", onCall: oncall.OnCall{Source: oncall.Nobody}}
	layer := resolution{schedule: "web", onCall: oncall.OnCall{Contacts: []string{"ada"}, Source: oncall.FromLayer, Layer: "weekly"}}
	missing := resolution{schedule: "ghost", missing: true}
	steps := []struct {
		resolutions        []resolution
		web, db, uncovered float64
	}{
		{[]resolution{fallback, nobody, missing}, 1, 1, 2},
		{[]resolution{layer}, 1, 1, 1},
		{[]resolution{fallback}, 2, 1, 2},
	}
	for i, s := range steps {
		nt.observeSchedules(&plan{resolutions: s.resolutions})
		web := testutil.ToFloat64(m.scheduleFallbacks.WithLabelValues("web"))
		db := testutil.ToFloat64(m.scheduleFallbacks.WithLabelValues("db"))
		if web != s.web || db != s.db || testutil.ToFloat64(m.uncovered) != s.uncovered {
			t.Errorf("step %d: fallbacks web %v db %v, uncovered %v; want %v %v %v", i, web, db,
				testutil.ToFloat64(m.uncovered), s.web, s.db, s.uncovered)
		}
	}
}
