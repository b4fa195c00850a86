package oncall

import (
	"sort"
	"time"
)

// layer is a Layer made ready for resolution.
type layer struct {
	name    string
	start   int64 // wall clock of the first turn's start
	turn    int64 // seconds of wall clock per turn
	members []string
	windows []window
}

// window is a Restriction made ready: it opens at from seconds after local midnight of each of
// days and stays open length seconds of wall clock (1 to 86400).
type window struct {
	days   [7]bool // by time.Weekday
	from   int64
	length int64
}

// covers tells whether the window is open when the clock reads w.
func (win window) covers(w int64) bool {
	day := floorDiv(w, daySeconds)
	tod := w - day*daySeconds
	if win.days[weekday(day)] && tod >= win.from && tod < win.from+win.length {
		return true
	}
	// opened yesterday and running past midnight
	return win.days[weekday(day-1)] && tod < win.from+win.length-daySeconds
}

// turnStart is the instant turn k begins.
func (l *layer) turnStart(k int64, loc *time.Location) time.Time {
	return instant(l.start+k*l.turn, loc)
}

// turnAt is the turn under way at t (clock reading w), or false before the first.
// turnStart(k) <= t for the k read off the wall clock (instant never runs ahead of the clock),
// so only the next turn can also have begun, which happens in the hour repeated in autumn: the
// turns whose starts the clock reads in that hour all began in its first pass.
func (l *layer) turnAt(t time.Time, w int64, loc *time.Location) (int64, bool) {
	k := max(floorDiv(w-l.start, l.turn), -1)
	if !t.Before(l.turnStart(k+1, loc)) {
		// a repeated stretch is hours long, so the turns begun in it are found within a day of turns
		n := int(daySeconds/l.turn) + 2
		k += int64(sort.Search(n, func(i int) bool { return t.Before(l.turnStart(k+int64(i)+1, loc)) }))
	}
	return k, k >= 0
}

// member is who is on call in this layer at t, if anyone.
func (l *layer) member(t time.Time, w int64, loc *time.Location) (string, bool) {
	if !l.open(w) {
		return "", false
	}
	k, ok := l.turnAt(t, w, loc)
	if !ok {
		return "", false
	}
	return l.members[k%int64(len(l.members))], true
}

// open tells whether the layer's restrictions let it apply when the clock reads w.
func (l *layer) open(w int64) bool {
	if len(l.windows) == 0 {
		return true
	}
	for _, win := range l.windows {
		if win.covers(w) {
			return true
		}
	}
	return false
}
