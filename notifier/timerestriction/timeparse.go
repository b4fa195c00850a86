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
// {"time": "...", "zone": "..."} object.
func parseTimeValue(raw json.RawMessage, loc *time.Location) (stamp, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return parseTimeString(s, loc, loc)
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
		return parseTimeString(s, loc, loc)
	}
	if z, ok := loadZone(name); ok {
		zone = z
	}
	return parseTimeString(s, zone, loc)
}

// parseTimeString reads s; a zone-less s is a wall-clock time in zone. The result is expressed
// in loc.
func parseTimeString(s string, zone, loc *time.Location) (stamp, error) {
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
		y, mo, d := f.Date()
		h, mi, sec := f.Clock()
		at := time.Date(y, mo, d, h, mi, sec, 0, zone).In(loc)
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
// gaps and overlaps.
func atWall(w int64, loc *time.Location) time.Time {
	u := time.Unix(w, 0).UTC()
	y, mo, d := u.Date()
	h, mi, s := u.Clock()
	return time.Date(y, mo, d, h, mi, s, 0, loc)
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
