package oobetet

import (
	"fmt"
	"time"
)

// Outcome is what one look at the clock decides.
type Outcome int

// Outcomes of Watch.Check.
const (
	// Healthy: problems and recoveries both seen within max_latency, and no breach open.
	Healthy Outcome = iota
	// Breached: a breach starts now; the alarm is raised.
	Breached
	// StillBreached: the breach goes on; the alarm was raised already.
	StillBreached
	// Recovered: alerts flow again after a breach; the alarm is resolved.
	Recovered
)

func (o Outcome) String() string {
	switch o {
	case Breached:
		return "breached"
	case StillBreached:
		return "still breached"
	case Recovered:
		return "recovered"
	}
	return "healthy"
}

// Watch is the decision of oobetet: the last sightings of the canary's alerts and whether a
// breach is open. It is not safe for concurrent use (Watcher locks it).
type Watch struct {
	// MaxLatency is how long each of problem and recovery may go unseen.
	MaxLatency time.Duration
	// Since is when watching started: until an alert of a kind is seen, its latency counts
	// from here (Flapjack starts its timers at start-up).
	Since time.Time
	// Last sightings of each kind; zero: never.
	LastProblem, LastRecovery, LastAcknowledgement time.Time

	breached bool
}

// See records a sighting of kind at at.
func (w *Watch) See(kind Kind, at time.Time) {
	switch kind {
	case Problem:
		w.LastProblem = later(w.LastProblem, at)
	case Recovery:
		w.LastRecovery = later(w.LastRecovery, at)
	case Acknowledgement:
		w.LastAcknowledgement = later(w.LastAcknowledgement, at)
	}
}

// Check decides at now, and says why when breached: as in Flapjack, a problem or a recovery
// alert not seen for longer than MaxLatency is a breach (a missing problem is named first).
// Acknowledgements are recorded but never required.
func (w *Watch) Check(now time.Time) (Outcome, string) {
	reason := w.Reason(now)
	was := w.breached
	w.breached = reason != ""
	switch {
	case w.breached && was:
		return StillBreached, reason
	case w.breached:
		return Breached, reason
	case was:
		return Recovered, ""
	}
	return Healthy, ""
}

// Breached reports whether a breach is open (as of the last Check).
func (w *Watch) Breached() bool { return w.breached }

// Reason is why now is a breach, or "" when it is not.
func (w *Watch) Reason(now time.Time) string {
	for _, k := range []struct {
		name string
		last time.Time
	}{{"problem", w.LastProblem}, {"recovery", w.LastRecovery}} {
		ref := later(k.last, w.Since)
		if now.Sub(ref) <= w.MaxLatency {
			continue
		}
		if k.last.IsZero() {
			return fmt.Sprintf("no %s alert seen since oobetet started %s ago (max_latency %s)", k.name, round(now.Sub(ref)), w.MaxLatency)
		}
		return fmt.Sprintf("no %s alert seen for %s (max_latency %s)", k.name, round(now.Sub(ref)), w.MaxLatency)
	}
	return ""
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// round keeps durations readable: whole seconds from 10s up, tenths below.
func round(d time.Duration) time.Duration {
	if d >= 10*time.Second {
		return d.Round(time.Second)
	}
	return d.Round(100 * time.Millisecond)
}
