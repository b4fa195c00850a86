package notifier

import (
	"context"
	"fmt"
	"time"

	"github.com/flapjackgo/flapjack/model/roster"
)

// Schedule coverage, kept current by the tick rather than by routing: a rota that hands off into
// a gap at night shows as uncovered then, not when the next alert happens to be routed. Each
// tick reads the schedules (one read; the decoded schedules are cached by their stored JSON),
// resolves each at the tick's time and sets flapjack_schedules_uncovered and
// flapjack_schedule_on_call{schedule}.

// observeCoverage evaluates every stored schedule at now and sets the coverage gauges; the
// series of a schedule no longer stored is removed.
func (nt *Notifier) observeCoverage(ctx context.Context, now time.Time) error {
	conn, err := nt.pool.GetContext(ctx)
	if err != nil {
		return fmt.Errorf("schedule coverage: %w", err)
	}
	defs, err := roster.AllScheduleDefs(conn, nt.keys)
	conn.Close()
	if err != nil {
		nt.m.redisErrors.Inc()
		return fmt.Errorf("schedule coverage: %w", err)
	}
	uncovered := 0
	for id, raw := range defs {
		s, ok := nt.rotas.decode(id, raw, nt.log)
		if !ok {
			continue
		}
		r := resolution{schedule: id, onCall: s.At(now)}
		if r.uncovered() {
			uncovered++
		}
		nt.m.onCall.WithLabelValues(id).Set(float64(len(r.onCall.Contacts)))
	}
	for id := range nt.onCallSeries {
		if _, ok := defs[id]; !ok {
			nt.m.onCall.DeleteLabelValues(id)
		}
	}
	nt.onCallSeries = defs
	nt.m.uncovered.Set(float64(uncovered))
	return nil
}
