package oncall

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"
)

// Shift is a stretch [Start, End) with one answer to "who is on call". A gap (Source Nobody)
// is a shift too, so a list of shifts covers its whole range.
type Shift struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	OnCall
}

// Gap tells whether nobody is on call during the shift.
func (sh Shift) Gap() bool { return sh.Source == Nobody }

// MaxRange is the longest range Shifts covers in one call.
const MaxRange = 400 * 24 * time.Hour

// Shifts is who is on call over [from, until): contiguous shifts, each as long as the answer
// stays the same, the first starting at from and the last ending at until.
func (s *Schedule) Shifts(from, until time.Time) ([]Shift, error) {
	if err := checkRange(from, until); err != nil {
		return nil, err
	}
	var out []Shift
	start := from
	for _, end := range append(s.changes(from, until), until) {
		oc := s.At(start)
		if n := len(out); n > 0 && out[n-1].Same(oc) {
			out[n-1].End = end
		} else {
			out = append(out, Shift{Start: start, End: end, OnCall: oc})
		}
		start = end
	}
	return out, nil
}

func checkRange(from, until time.Time) error {
	switch {
	case !from.Before(until):
		return fmt.Errorf("shifts from %s until %s: the end must be after the start", from.Format(time.RFC3339), until.Format(time.RFC3339))
	case until.Sub(from) > MaxRange:
		return errors.New("shifts: the range is longer than 400 days")
	}
	return nil
}

// changes are the instants in (from, until) where the answer may change, sorted, each once:
// override edges, turn hand-offs, restriction edges and the zone's offset changes (when the
// clock goes back, a restriction that had closed may open again). At is constant between them.
func (s *Schedule) changes(from, until time.Time) []time.Time {
	loc := s.Location()
	var points []time.Time
	for _, o := range s.Overrides {
		points = append(points, o.Start, o.End)
	}
	for t := from; ; {
		_, next := t.In(loc).ZoneBounds()
		if next.IsZero() || !next.Before(until) {
			break
		}
		points = append(points, next)
		t = next
	}
	wFrom, wUntil := wallOf(from, loc), wallOf(until, loc)
	for i := range s.layers {
		points = s.layers[i].changes(points, wFrom, until, loc)
		points = s.layers[i].windowEdges(points, wFrom, wUntil, loc)
	}
	sort.Slice(points, func(a, b int) bool { return points[a].Before(points[b]) })
	kept := points[:0]
	for _, p := range points {
		if p.After(from) && p.Before(until) && (len(kept) == 0 || !kept[len(kept)-1].Equal(p)) {
			kept = append(kept, p)
		}
	}
	return slices.Clip(kept)
}

// changes appends the layer's hand-offs before until, from the turn under way when the clock
// read wFrom (no earlier turn starts after it: instant never runs ahead of the clock).
func (l *layer) changes(points []time.Time, wFrom int64, until time.Time, loc *time.Location) []time.Time {
	for k := max(floorDiv(wFrom-l.start, l.turn), 0); ; k++ {
		t := l.turnStart(k, loc)
		if !t.Before(until) {
			return points
		}
		points = append(points, t)
	}
}

// windowEdges appends where the layer's restriction windows open and close on each day between
// the clock readings wFrom and wUntil (from the day before, for windows running past midnight).
// Windows follow the clock, so in the hour repeated in autumn an edge comes twice.
func (l *layer) windowEdges(points []time.Time, wFrom, wUntil int64, loc *time.Location) []time.Time {
	for day := floorDiv(wFrom, daySeconds) - 1; day <= floorDiv(wUntil, daySeconds); day++ {
		for _, win := range l.windows {
			if win.days[weekday(day)] {
				for _, edge := range [2]int64{day*daySeconds + win.from, day*daySeconds + win.from + win.length} {
					first, last := readings(edge, loc)
					points = append(points, first, last)
				}
			}
		}
	}
	return points
}

// ScheduleShift is a shift of a named schedule, as a contact's own calendar lists them.
type ScheduleShift struct {
	ScheduleID string `json:"schedule"`
	Title      string `json:"schedule_name"`
	Shift
}

// ContactShifts are contact's shifts on each of schedules over [from, until), by start (then
// schedule id).
func ContactShifts(contact string, schedules []*Schedule, from, until time.Time) ([]ScheduleShift, error) {
	if err := checkRange(from, until); err != nil {
		return nil, err
	}
	var out []ScheduleShift
	for _, s := range schedules {
		shifts, err := s.Shifts(from, until)
		if err != nil {
			return nil, fmt.Errorf("schedule %s: %w", s.ID, err)
		}
		for _, sh := range shifts {
			if slices.Contains(sh.Contacts, contact) {
				out = append(out, ScheduleShift{ScheduleID: s.ID, Title: s.Title(), Shift: sh})
			}
		}
	}
	sort.SliceStable(out, func(a, b int) bool {
		if !out[a].Start.Equal(out[b].Start) {
			return out[a].Start.Before(out[b].Start)
		}
		return out[a].ScheduleID < out[b].ScheduleID
	})
	return out, nil
}
