package oncall

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/flapjackgo/flapjack/internal/humantime"
	"github.com/flapjackgo/flapjack/internal/jsonfield"
)

// MinTurn is the shortest turn a layer may have.
const MinTurn = time.Minute

// New checks a schedule built in Go (say, a stored one with an override added) as Parse checks
// one read from a file, and returns it ready for use. The error joins every Problem found.
func New(def Schedule) (*Schedule, error) {
	s := def
	s.Layers = append([]Layer(nil), def.Layers...)
	s.Overrides = append([]Override(nil), def.Overrides...)
	s.Fallback = append([]string(nil), def.Fallback...)
	if problems := s.prepare(0); len(problems) > 0 {
		return nil, joinProblems(problems)
	}
	return &s, nil
}

// Decode reads one schedule as stored: its JSON encoding (json.Marshal of a Schedule), checked
// as Parse checks a file's. The error joins every Problem found.
func Decode(raw []byte) (*Schedule, error) {
	s, problems := ParseSchedule(0, raw)
	if len(problems) > 0 {
		return nil, joinProblems(problems)
	}
	return s, nil
}

func joinProblems(problems []Problem) error {
	errs := make([]error, len(problems))
	for i, p := range problems {
		errs[i] = p
	}
	return errors.Join(errs...)
}

// prepare checks the schedule's values and readies its layers; index is its position in the
// file, for problems.
func (s *Schedule) prepare(index int) []Problem {
	r := &reader{index: index, id: s.ID}
	switch {
	case strings.TrimSpace(s.ID) == "":
		r.fail("id", "is required")
	case strings.TrimSpace(s.ID) != s.ID:
		r.fail("id", "must not start or end with spaces")
	}
	s.loc = r.location(s.Timezone)
	if len(s.Layers) == 0 && len(s.Overrides) == 0 && len(s.Fallback) == 0 {
		r.fail("", "has no layers, overrides or fallback: nobody could ever be on call")
	}
	s.layers = make([]layer, len(s.Layers))
	for i, l := range s.Layers {
		s.layers[i] = r.readyLayer(l, jsonfield.At("layers", i), s.Layers[:i])
	}
	for i, o := range s.Overrides {
		r.checkOverride(o, jsonfield.At("overrides", i))
	}
	r.ids(s.Fallback, "fallback")
	if len(r.problems) > 0 {
		s.loc, s.layers = nil, nil
	}
	return r.problems
}

func (r *reader) location(name string) *time.Location {
	if name == "" {
		r.fail("timezone", `is required, e.g. "Europe/London" or "UTC"`)
		return nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil || name == "Local" {
		r.fail("timezone", "unknown time zone %q", name)
		return nil
	}
	return loc
}

func (r *reader) readyLayer(l Layer, field string, earlier []Layer) layer {
	out := layer{name: l.Name, members: l.Members}
	if strings.TrimSpace(l.Name) == "" {
		r.fail(field+".name", "is required (it says which layer put someone on call)")
	}
	for _, e := range earlier {
		if e.Name == l.Name && l.Name != "" {
			r.fail(field+".name", "another layer is called %q", l.Name)
			break
		}
	}
	out.start = r.localStart(l.Start, field+".start")
	out.turn = r.turn(l.Turn, field+".turn")
	if len(l.Members) == 0 {
		r.fail(field+".members", "must name at least one contact")
	}
	for i, m := range l.Members {
		r.checkID(m, jsonfield.At(field+".members", i))
	}
	for i, x := range l.Restrictions {
		out.windows = append(out.windows, r.window(x, jsonfield.At(field+".restrictions", i)))
	}
	return out
}

// startLayouts are the accepted forms of a layer's start: wall clock, no zone.
var startLayouts = []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04"}

func (r *reader) localStart(s, field string) int64 {
	if s == "" {
		r.fail(field, `is required: a wall-clock time in the schedule's timezone, e.g. "2026-03-23T09:00:00"`)
		return 0
	}
	for _, layout := range startLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.Unix()
		}
	}
	r.fail(field, `cannot read %q: want a wall-clock time without zone, e.g. "2026-03-23T09:00:00" (it is read in the schedule's timezone)`, s)
	return 0
}

func (r *reader) turn(s, field string) int64 {
	if s == "" {
		r.fail(field, `is required, e.g. "1 week" or "12 hours"`)
		return 0
	}
	d, err := humantime.Parse(s)
	switch {
	case err != nil:
		r.fail(field, "%v", err)
	case d <= 0:
		r.fail(field, "must be longer than zero")
	case d < MinTurn || d%time.Second != 0:
		r.fail(field, "must be whole seconds and at least %s", humantime.Words(MinTurn))
	default:
		return int64(d / time.Second)
	}
	return 0
}

func (r *reader) window(x Restriction, field string) window {
	var win window
	if x.Days == "" {
		win.days = [7]bool{true, true, true, true, true, true, true}
	} else if days, err := parseDays(x.Days); err != nil {
		r.fail(field+".days", "%v", err)
	} else {
		win.days = days
	}
	from, errFrom := parseClock(x.From, false)
	if errFrom != nil {
		r.fail(field+".from", "%v", errFrom)
	}
	to, errTo := parseClock(x.To, true)
	if errTo != nil {
		r.fail(field+".to", "%v", errTo)
	}
	win.from = from
	// a to at or before from runs into the next day; equal means the whole day from from
	win.length = (to-from+daySeconds-1)%daySeconds + 1
	return win
}

func (r *reader) checkOverride(o Override, field string) {
	r.checkID(o.Contact, field+".contact")
	if o.Start.IsZero() {
		r.fail(field+".start", `is required, e.g. "2026-04-01T12:00:00Z"`)
	}
	if o.End.IsZero() {
		r.fail(field+".end", `is required, e.g. "2026-04-01T14:00:00Z"`)
	}
	if !o.Start.IsZero() && !o.End.IsZero() && !o.End.After(o.Start) {
		r.fail(field+".end", "must be after start (%s)", o.Start.Format(time.RFC3339))
	}
}

// ids checks a list of contact ids, which must not repeat.
func (r *reader) ids(ids []string, field string) {
	for i, id := range ids {
		r.checkID(id, jsonfield.At(field, i))
		if slices.Contains(ids[:i], id) {
			r.fail(jsonfield.At(field, i), "lists %q twice", id)
		}
	}
}

func (r *reader) checkID(id, field string) {
	switch {
	case strings.TrimSpace(id) == "":
		r.fail(field, "must name a contact")
	case strings.TrimSpace(id) != id:
		r.fail(field, "must not start or end with spaces")
	}
}

// CheckContacts reports every contact the schedule names (members, overrides, fallback) that
// is not in known; index is the schedule's position in its file, for the problems.
func (s *Schedule) CheckContacts(index int, known map[string]bool) []Problem {
	r := &reader{index: index, id: s.ID}
	check := func(id, field string) {
		if !known[id] {
			r.fail(field, "unknown contact %q (import contacts first)", id)
		}
	}
	for i, l := range s.Layers {
		for j, m := range l.Members {
			check(m, jsonfield.At(jsonfield.At("layers", i)+".members", j))
		}
	}
	for i, o := range s.Overrides {
		check(o.Contact, jsonfield.At("overrides", i)+".contact")
	}
	for i, f := range s.Fallback {
		check(f, jsonfield.At("fallback", i))
	}
	return r.problems
}

var dayNames = map[string]time.Weekday{
	"sun": time.Sunday, "mon": time.Monday, "tue": time.Tuesday, "wed": time.Wednesday,
	"thu": time.Thursday, "fri": time.Friday, "sat": time.Saturday,
	"sunday": time.Sunday, "monday": time.Monday, "tuesday": time.Tuesday, "wednesday": time.Wednesday,
	"thursday": time.Thursday, "friday": time.Friday, "saturday": time.Saturday,
}

// parseDays reads "mon-fri", "sat,sun", "mon" or "fri-mon" (a range may wrap past Sunday).
func parseDays(s string) ([7]bool, error) {
	var days [7]bool
	for _, part := range strings.Split(strings.ToLower(s), ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, okA := dayNames[strings.TrimSpace(lo)]
		b, okB := a, okA
		if isRange {
			b, okB = dayNames[strings.TrimSpace(hi)]
		}
		if !okA || !okB {
			return days, fmt.Errorf(`cannot read %q: want days like "mon-fri", "sat,sun" or "mon"`, s)
		}
		for d := a; ; d = (d + 1) % 7 {
			days[d] = true
			if d == b {
				break
			}
		}
	}
	return days, nil
}

// parseClock reads "HH:MM" as seconds after midnight; "24:00" only when end is true.
func parseClock(s string, end bool) (int64, error) {
	h, m, ok := strings.Cut(s, ":")
	hh, errH := atoi2(h)
	mm, errM := atoi2(m)
	switch {
	case s == "":
		return 0, fmt.Errorf(`is required, e.g. "09:00"`)
	case !ok || errH != nil || errM != nil || mm > 59 || hh > 24 || (hh == 24 && (mm != 0 || !end)):
		return 0, fmt.Errorf(`cannot read %q: want a time of day "HH:MM" from 00:00 to 23:59 (24:00 as an end)`, s)
	}
	return int64(hh*3600 + mm*60), nil
}

// atoi2 reads exactly two decimal digits.
func atoi2(s string) (int, error) {
	if len(s) != 2 || s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9' {
		return 0, fmt.Errorf("not two digits")
	}
	return int(s[0]-'0')*10 + int(s[1]-'0'), nil
}
