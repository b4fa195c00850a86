package oncall

import "time"

// Turns and restrictions are counted on the wall clock of the schedule's zone, so a 09:00
// hand-off stays at 09:00 local whatever the offset. A wall-clock reading is held as seconds
// since 1970-01-01 00:00 of a zone-less calendar: adding a day to it moves the clock to the same
// time the next day, however long that day is.

const daySeconds = 86400

// wallOf is what the clock in loc reads at t.
func wallOf(t time.Time, loc *time.Location) int64 {
	return t.Unix() + int64(offsetAt(t.Unix(), loc))
}

func offsetAt(unix int64, loc *time.Location) int {
	_, off := time.Unix(unix, 0).In(loc).Zone()
	return off
}

// instant is the moment the clock in loc reads w. When it reads w twice (the hour repeated in
// autumn) it is the first time; when it never does (the hour skipped in spring) it is the moment
// the clock jumps, the end of the gap. So instant is non-decreasing in w, and
// instant(wallOf(t)) <= t.
func instant(w int64, loc *time.Location) time.Time {
	first, _ := readings(w, loc)
	return first
}

// readings are the first and the last moment the clock in loc reads w (the same but in the
// hour repeated in autumn; both the end of the gap for a time the clock skips).
func readings(w int64, loc *time.Location) (first, last time.Time) {
	before, after := offsetAt(w-daySeconds, loc), offsetAt(w+daySeconds, loc)
	found := false
	var lo, hi int64
	for _, off := range [2]int{before, after} {
		x := w - int64(off)
		if offsetAt(x, loc) != off {
			continue
		}
		if !found {
			lo, hi, found = x, x, true
		}
		lo, hi = min(lo, x), max(hi, x)
	}
	if found {
		return time.Unix(lo, 0).UTC(), time.Unix(hi, 0).UTC()
	}
	// In a gap: reading w with the earlier offset lands just after the jump.
	start, _ := time.Unix(w-int64(before), 0).In(loc).ZoneBounds()
	return start.UTC(), start.UTC()
}

// floorDiv divides rounding towards minus infinity (b > 0).
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// weekday of the zone-less day number (days since 1970-01-01, a Thursday).
func weekday(day int64) time.Weekday {
	return time.Weekday((day%7 + 7 + 4) % 7)
}
