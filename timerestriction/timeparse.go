package timerestriction

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/flapjackgo/flapjack/internal/text"
)

// stamp is a parsed time: the instant, and its wall-clock time in the contact's location.
// The wall time is kept separately because a zone-less string may name a wall time that does not
// exist (a spring-forward gap): lengths are measured from what was written, not from Go's
// normalisation of it.
type stamp struct {
	at   time.Time // in the contact's location, whole seconds
	wall int64     // wall clock in the contact's location, seconds since 1970-01-01 00:00 (zone-less)
}

// zonelessLayouts are tried in order on strings that carry no zone: Flapjack's own form first.
var zonelessLayouts = []string{
	"2006-01-02 15:04:05",
	"2006-01-02T15:04:05",
	"2006-01-02 15:04",
	"2006-01-02T15:04",
	"20060102T150405",
	"2006-01-02",
}

// zonedLayouts read strings with an explicit offset or Z (Ruby's Time#to_s, ISO 8601, RFC 5545).
var zonedLayouts = []string{
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05 Z07:00",
	"2006-01-02T15:04:05Z07:00",
	"2006-01-02 15:04:05Z0700",
	"2006-01-02 15:04:05 Z0700",
	"2006-01-02T15:04:05Z0700",
	"20060102T150405Z",
}

// parseTimeValue reads a start/end/until/rtime/extime value: a string, or ice_cube's
// {"time": "...", "zone": "..."} object. rfc reads a zone-less wall time as RFC 5545 does
// (rfcAt), else as time.Date does.
func parseTimeValue(raw json.RawMessage, loc *time.Location, rfc bool) (stamp, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return parseTimeString(s, loc, loc, rfc)
	}
	var obj struct {
		Time json.RawMessage `json:"time"`
		Zone json.RawMessage `json:"zone"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return stamp{}, fmt.Errorf("want a time string or a {\"time\", \"zone\"} object, got %s", abbreviate(raw))
	}
	if err := json.Unmarshal(obj.Time, &s); err != nil {
		return stamp{}, fmt.Errorf("\"time\" is not a string: %s", abbreviate(obj.Time))
	}
	zone := loc
	var name string
	if isNull(obj.Zone) || json.Unmarshal(obj.Zone, &name) != nil || name == "" {
		// A missing or malformed zone leaves the contact's location, as an unknown name does.
		return parseTimeString(s, loc, loc, rfc)
	}
	if z, ok := loadZone(name); ok {
		zone = z
	}
	return parseTimeString(s, zone, loc, rfc)
}

// parseTimeString reads s; a zone-less s is a wall-clock time in zone, placed by rfcAt when rfc
// is set and by time.Date otherwise. The result is expressed in loc.
func parseTimeString(s string, zone, loc *time.Location, rfc bool) (stamp, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return stamp{}, errors.New("empty time string")
	}
	for _, suffix := range []string{" UTC", " GMT"} {
		// Ruby writes UTC times as "2013-02-01 08:00:00 UTC".
		if strings.HasSuffix(s, suffix) {
			s = strings.TrimSuffix(s, suffix)
			zone = time.UTC
			break
		}
	}
	for _, layout := range zonelessLayouts {
		f, err := time.Parse(layout, s)
		if err != nil {
			continue
		}
		if err := checkYear(f); err != nil {
			return stamp{}, fmt.Errorf("time %q: %w", s, err)
		}
		var at time.Time
		if rfc {
			at, _ = rfcAt(f.Unix(), zone)
		} else {
			at = atWall(f.Unix(), zone)
		}
		at = at.In(loc)
		st := stamp{at: at, wall: wallOf(at, loc)}
		if zone == loc {
			st.wall = f.Unix() // as written, even if the clocks skipped it that day
		}
		return st, nil
	}
	for _, layout := range zonedLayouts {
		f, err := time.Parse(layout, s)
		if err != nil {
			continue
		}
		if err := checkYear(f); err != nil {
			return stamp{}, fmt.Errorf("time %q: %w", s, err)
		}
		at := f.Truncate(time.Second).In(loc)
		return stamp{at: at, wall: wallOf(at, loc)}, nil
	}
	return stamp{}, fmt.Errorf("cannot read time %q: want \"YYYY-MM-DD HH:MM:SS\", optionally with an offset or Z", s)
}

func checkYear(t time.Time) error {
	if y := t.Year(); y < 1 || y > maxYear {
		return fmt.Errorf("year %d out of range 1-%d", y, maxYear)
	}
	return nil
}

// zones memoises time.LoadLocation, which reads tzdata from disk. Only successful loads are kept,
// so the map cannot grow beyond the set of real zone names.
var zones sync.Map // string -> *time.Location

func loadZone(name string) (*time.Location, bool) {
	if z, ok := zones.Load(name); ok {
		return z.(*time.Location), true
	}
	z, err := time.LoadLocation(name)
	if err != nil {
		return nil, false
	}
	zones.Store(name, z)
	return z, true
}

// wallOf returns t's wall-clock time in loc as seconds since 1970-01-01 00:00 of a zone-less
// calendar. Recurrences step in these units (rrule-go adds hours and days to clock fields).
func wallOf(t time.Time, loc *time.Location) int64 {
	_, off := t.In(loc).Zone()
	return t.Unix() + int64(off)
}

// atWall returns the instant whose wall clock in loc reads w, with time.Date's choice inside
// gaps and overlaps: a wall time a spring-forward gap skips is read with the offset after the
// gap west of UTC (an hour early: 02:30 is 01:30 EST in New York) and with the one before it
// east of UTC (03:30 CEST in Berlin); a wall time that occurs twice is the first instant west
// of UTC and the second east of it.
func atWall(w int64, loc *time.Location) time.Time {
	u := time.Unix(w, 0).UTC()
	y, mo, d := u.Date()
	h, mi, s := u.Clock()
	return time.Date(y, mo, d, h, mi, s, 0, loc)
}

// wallExists tells whether wall time w occurs in loc (a spring-forward gap skips it).
func wallExists(w int64, loc *time.Location) bool {
	return wallOf(atWall(w, loc), loc) == w
}

// rfcAt returns the instant whose wall clock in loc reads w as RFC 5545 §3.3.5 reads a local
// DATE-TIME, in every zone: a wall time that occurs twice (a fall-back overlap) is the first of
// its instants, and one that a spring-forward gap skips is read with the UTC offset before the
// gap, so it lands one gap later (02:30 is 03:30 EDT in New York, 03:30 CEST in Berlin). exists
// is false for such a skipped wall time.
func rfcAt(w int64, loc *time.Location) (t time.Time, exists bool) {
	t = atWall(w, loc)
	got := wallOf(t, loc)
	switch {
	case got < w:
		// In a gap, read with the offset after it: t is before the gap and has the offset
		// before it.
		_, before := t.Zone()
		return time.Unix(w-int64(before), 0).In(loc), false
	case got > w:
		return t, false // in a gap, already read with the offset before it
	}
	// An earlier instant with the same wall clock is in the previous offset period, which ended
	// less than a day before t (the largest change ever made was a day, Pacific/Apia 2011).
	start, _ := t.ZoneBounds()
	if start.IsZero() || t.Sub(start) > 25*time.Hour {
		return t, true
	}
	_, prev := start.Add(-time.Second).In(loc).Zone()
	if _, cur := t.Zone(); prev > cur {
		if u := time.Unix(w-int64(prev), 0).In(loc); u.Before(t) && wallOf(u, loc) == w {
			return u, true
		}
	}
	return t, true
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func isNull(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s == "" || s == "null"
}

// abbreviate keeps error messages (which end up in logs) short when the input is large.
func abbreviate(raw []byte) string {
	return text.Truncate(strings.TrimSpace(string(raw)), 60)
}
