// Package clock owns the notion of "now" for every time-based decision. Live processes use the
// wall clock; tests and `flapjack replay` use a Fake they move themselves, so that delays,
// intervals, maintenance windows and time restrictions can be exercised in milliseconds.
package clock

import (
	"sync"
	"time"
)

// Clock tells the current instant. Decision code reads it once per unit of work and passes that
// instant on, so one event is judged against one "now".
type Clock interface {
	Now() time.Time
}

// Real is the wall clock.
type Real struct{}

// Now returns the wall-clock time.
func (Real) Now() time.Time { return time.Now() }

// Fake is a clock that only moves when told to. It is safe for concurrent use.
type Fake struct {
	mu  sync.Mutex
	now time.Time
}

// NewFake returns a Fake clock set to t.
func NewFake(t time.Time) *Fake { return &Fake{now: t} }

// Now returns the instant the clock was last set to.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Set moves the clock to t (backwards too; callers that must not go back check themselves).
func (f *Fake) Set(t time.Time) {
	f.mu.Lock()
	f.now = t
	f.mu.Unlock()
}

// Advance moves the clock forward by d.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	f.now = f.now.Add(d)
	f.mu.Unlock()
}
