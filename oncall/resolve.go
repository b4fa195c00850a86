package oncall

import (
	"slices"
	"time"
)

// Source says what put someone on call (or nobody).
type Source string

// The sources, in the order they win: an override over every layer, a later layer over an
// earlier one, the fallback only where no layer or override has anyone.
const (
	FromOverride Source = "override"
	FromLayer    Source = "layer"
	FromFallback Source = "fallback"
	Nobody       Source = "nobody"
)

// OnCall is who is on call and why.
type OnCall struct {
	Contacts []string `json:"contacts"` // one for a layer or an override; the fallback list; none for Nobody
	Source   Source   `json:"source"`
	// Layer names the layer when Source is FromLayer.
	Layer string `json:"layer,omitempty"`
	// Index is the layer's or override's position in the schedule (-1 for the fallback and
	// nobody).
	Index int `json:"index"`
}

// Same tells whether two answers are the same person(s) for the same reason.
func (o OnCall) Same(p OnCall) bool {
	return o.Source == p.Source && o.Index == p.Index && slices.Equal(o.Contacts, p.Contacts)
}

// At is who is on call at t. It costs one step per layer and per override, whatever t.
func (s *Schedule) At(t time.Time) OnCall {
	for i := len(s.Overrides) - 1; i >= 0; i-- {
		// the latest-defined override wins where several overlap
		if o := s.Overrides[i]; !t.Before(o.Start) && t.Before(o.End) {
			return OnCall{Contacts: []string{o.Contact}, Source: FromOverride, Index: i}
		}
	}
	loc := s.Location()
	w := wallOf(t, loc)
	for i := len(s.layers) - 1; i >= 0; i-- {
		if m, ok := s.layers[i].member(t, w, loc); ok {
			return OnCall{Contacts: []string{m}, Source: FromLayer, Layer: s.layers[i].name, Index: i}
		}
	}
	if len(s.Fallback) > 0 {
		return OnCall{Contacts: slices.Clone(s.Fallback), Source: FromFallback, Index: -1}
	}
	return OnCall{Source: Nobody, Index: -1}
}
