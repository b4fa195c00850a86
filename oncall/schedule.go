// Package oncall owns on-call schedules as pure values: their definition in the import format
// (decoding and strict validation), who is on call at a given instant and why (a layer's turn, an
// override, the fallback, or nobody), the shifts over a range, and their RFC 5545 calendar form.
// It reads no clock and no Redis: every instant is passed in, so replay and what-if move it.
// docs/schedules.md describes the model and its semantics.
package oncall

import (
	"fmt"
	"strings"
	"time"
)

// Schedule is one schedule of the import format. A Schedule is usable (At, Shifts, calendars)
// once it has come out of Parse, ParseSchedule or New, which validate it and prepare its layers;
// to change one, change a copy and pass it to New. Its exported fields keep the file's text, so
// encoding it as JSON gives back an importable record.
type Schedule struct {
	ID        string     `json:"id"`
	Name      string     `json:"name,omitempty"`
	Timezone  string     `json:"timezone"`
	Layers    []Layer    `json:"layers,omitempty"`
	Overrides []Override `json:"overrides,omitempty"`
	Fallback  []string   `json:"fallback,omitempty"`

	loc    *time.Location
	layers []layer
}

// Layer is a rotation: Members take turns of Turn (Flapjack duration words) from Start, a
// wall-clock time ("2026-03-23T09:00:00") in the schedule's timezone.
type Layer struct {
	Name         string        `json:"name"`
	Start        string        `json:"start"`
	Turn         string        `json:"turn"`
	Members      []string      `json:"members"`
	Restrictions []Restriction `json:"restrictions,omitempty"`
}

// Restriction limits when a layer applies: from From to To ("HH:MM", wall clock) on each of
// Days ("mon-fri", "sat,sun", "mon"; empty: every day). A To at or before From runs past
// midnight into the next day.
type Restriction struct {
	Days string `json:"days,omitempty"`
	From string `json:"from"`
	To   string `json:"to"`
}

// Override puts Contact on call over [Start, End), above every layer.
type Override struct {
	Contact string    `json:"contact"`
	Start   time.Time `json:"start"`
	End     time.Time `json:"end"`
}

// Title is the schedule's name, or its id when it has none.
func (s *Schedule) Title() string {
	if s.Name != "" {
		return s.Name
	}
	return s.ID
}

// Location is the schedule's time zone (UTC for a Schedule that did not come out of Parse or
// New, which has no layers ready either: only its overrides and fallback count).
func (s *Schedule) Location() *time.Location {
	if s.loc == nil {
		return time.UTC
	}
	return s.loc
}

// Problem is one thing wrong with one schedule of a file.
type Problem struct {
	Index  int    // position of the schedule in the file's array, from 0
	ID     string // the schedule's id, "" when it has none
	Field  string // path of the field, e.g. "layers[0].restrictions[1].days"; "" for the record
	Reason string
}

// Error renders the problem as `schedule 0 (id "web-primary"): layers[0].turn: must be longer
// than zero`.
func (p Problem) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "schedule %d", p.Index)
	if p.ID != "" {
		fmt.Fprintf(&b, " (id %q)", p.ID)
	}
	if p.Field != "" {
		b.WriteString(": " + p.Field)
	}
	b.WriteString(": " + p.Reason)
	return b.String()
}
