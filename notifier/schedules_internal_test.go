package notifier

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/flapjackgo/flapjack/oncall"
)

// TestScheduleMetrics: a resolution that found nobody in the layers and overrides counts as a
// fallback of its schedule.
func TestScheduleMetrics(t *testing.T) {
	m := NewMetrics(prometheus.NewRegistry())
	nt := New(Options{Metrics: m})
	fallback := resolution{schedule: "web", onCall: oncall.OnCall{Contacts: []string{"lead"}, Source: oncall.FromFallback}}
	nobody := resolution{schedule: "db", onCall: oncall.OnCall{Source: oncall.Nobody}}
	layer := resolution{schedule: "web", onCall: oncall.OnCall{Contacts: []string{"ada"}, Source: oncall.FromLayer, Layer: "weekly"}}
	missing := resolution{schedule: "ghost", missing: true}
	steps := []struct {
		resolutions []resolution
		web, db     float64
	}{
		{[]resolution{fallback, nobody, missing}, 1, 1},
		{[]resolution{layer}, 1, 1},
		{[]resolution{fallback}, 2, 1},
	}
	for i, s := range steps {
		nt.observeSchedules(&plan{resolutions: s.resolutions})
		web := testutil.ToFloat64(m.scheduleFallbacks.WithLabelValues("web"))
		db := testutil.ToFloat64(m.scheduleFallbacks.WithLabelValues("db"))
		if web != s.web || db != s.db {
			t.Errorf("step %d: fallbacks web %v db %v; want %v %v", i, web, db, s.web, s.db)
		}
	}
}
