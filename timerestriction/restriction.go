package timerestriction

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

const (
	// dstSlack bounds how much longer in real time than on the wall clock an occurrence can be:
	// a DST change adds an hour (two in a few zones); the rest is margin.
	dstSlack = 3 * time.Hour
	// maxWall bounds end - start so occurrence lengths fit in a time.Duration with room to spare.
	maxWall = 200 * 366 * 86400
)

// Restriction is one parsed time restriction of a notification rule. It is immutable and safe
// for concurrent use.
type Restriction struct {
	loc     *time.Location
	start   time.Time
	wall    int64 // wall-clock length of every occurrence, in seconds
	rules   []*rule
	exrules []*rule
	rdates  []time.Time // sorted extra occurrence starts (the start itself when there is no rule)
	exunix  []int64     // sorted exception instants, Unix seconds
	exdays  []int64     // sorted local dates (days since 1970-01-01) whose occurrences are removed

	earliest time.Time // no occurrence starts before this
	latest   time.Time // no occurrence covers this instant or any later one
}

// rawRestriction is the JSON shape shared by both formats.
type rawRestriction struct {
	StartTime json.RawMessage `json:"start_time"`
	EndTime   json.RawMessage `json:"end_time"`
	StartDate json.RawMessage `json:"start_date"`
	EndDate   json.RawMessage `json:"end_date"`
	RRules    json.RawMessage `json:"rrules"`
	RRule     json.RawMessage `json:"rrule"`
	RTimes    json.RawMessage `json:"rtimes"`
	ExTimes   json.RawMessage `json:"extimes"`
	// exrules is deliberately not read: Flapjack 1.x discards it (#715).
}

// Parse reads one restriction (a JSON object) whose zone-less times are wall-clock times in loc
// (UTC when loc is nil).
func Parse(raw []byte, loc *time.Location) (*Restriction, error) {
	if loc == nil {
		loc = time.UTC
	}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, fmt.Errorf("time restriction is not a JSON object: %s", abbreviate(raw))
	}
	var in rawRestriction
	if err := json.Unmarshal(trimmed, &in); err != nil {
		return nil, fmt.Errorf("time restriction is not valid JSON: %w", err)
	}

	startRaw, startName := pick(in.StartTime, "start_time", in.StartDate, "start_date")
	if startRaw == nil {
		return nil, errors.New("missing start_time")
	}
	endRaw, endName := pick(in.EndTime, "end_time", in.EndDate, "end_date")
	if endRaw == nil {
		return nil, errors.New("missing end_time")
	}
	var text string
	if !isNull(in.RRule) {
		if err := json.Unmarshal(in.RRule, &text); err != nil {
			return nil, fmt.Errorf("rrule is not a string: %s", abbreviate(in.RRule))
		}
	}
	// An RFC 5545 restriction reads its wall times as RFC 5545 does (rfcAt); an ice_cube one as
	// before (time.Date, like rrule-go).
	rfc := strings.TrimSpace(text) != ""
	start, err := parseTimeValue(startRaw, loc, rfc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", startName, err)
	}
	end, err := parseTimeValue(endRaw, loc, rfc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", endName, err)
	}
	if end.at.Before(start.at) {
		return nil, fmt.Errorf("%s %s is before %s %s", endName, end.at.Format(time.RFC3339),
			startName, start.at.Format(time.RFC3339))
	}
	r := &Restriction{loc: loc, start: start.at, wall: end.wall - start.wall}
	if r.wall < 0 {
		// Only an explicit offset or a DST overlap can make the wall clock run backwards over a
		// non-negative real length; the real length is the only sensible reading then.
		r.wall = end.at.Unix() - start.at.Unix()
	}
	if r.wall > maxWall {
		return nil, fmt.Errorf("%s is more than 200 years after %s", endName, startName)
	}

	var rrules []json.RawMessage
	if !isNull(in.RRules) {
		if err := json.Unmarshal(in.RRules, &rrules); err != nil {
			return nil, fmt.Errorf("rrules is not a list: %s", abbreviate(in.RRules))
		}
	}
	if len(rrules) > 0 && rfc {
		return nil, errors.New("both rrule and rrules are given; use one of them")
	}

	var specs, exspecs []ruleSpec
	var rdates []stamp
	var exdates []stamp
	for i, raw := range rrules {
		spec, err := parseIceCubeRule(raw, loc)
		if err != nil {
			return nil, fmt.Errorf("rrules[%d]: %w", i, err)
		}
		specs = append(specs, spec)
	}
	if rfc {
		set, err := parseRFC5545(text, start, loc)
		if err != nil {
			return nil, fmt.Errorf("rrule: %w", err)
		}
		specs, exspecs = set.rules, set.exrules
		rdates = append(rdates, set.rdates...)
		exdates = append(exdates, set.exdates...)
		r.exdays = set.exdays
	}
	rt, err := parseTimeList(in.RTimes, loc, rfc)
	if err != nil {
		return nil, fmt.Errorf("rtimes: %w", err)
	}
	rdates = append(rdates, rt...)
	ex, err := parseTimeList(in.ExTimes, loc, rfc)
	if err != nil {
		return nil, fmt.Errorf("extimes: %w", err)
	}
	exdates = append(exdates, ex...)

	for i, spec := range specs {
		ru, err := newRule(spec, start, loc, rfc)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ruleName(rfc, "RRULE", "rrules", i), err)
		}
		r.rules = append(r.rules, ru)
	}
	for i, spec := range exspecs {
		ru, err := newRule(spec, start, loc, rfc)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ruleName(true, "EXRULE", "", i), err)
		}
		r.exrules = append(r.exrules, ru)
	}
	if len(specs) == 0 {
		rdates = append(rdates, start) // no rule: the start is the occurrence
	}
	for _, d := range rdates {
		r.rdates = append(r.rdates, d.at)
	}
	slices.SortFunc(r.rdates, func(a, b time.Time) int { return a.Compare(b) })
	for _, d := range exdates {
		r.exunix = append(r.exunix, d.at.Unix())
	}
	slices.Sort(r.exunix)
	slices.Sort(r.exdays)
	r.bounds()
	return r, nil
}

// pick returns the first of two alias keys that has a value.
func pick(a json.RawMessage, aName string, b json.RawMessage, bName string) (json.RawMessage, string) {
	if !isNull(a) {
		return a, aName
	}
	if !isNull(b) {
		return b, bName
	}
	return nil, aName
}

func ruleName(rfc bool, rfcName, listName string, i int) string {
	if rfc {
		return fmt.Sprintf("%s #%d", rfcName, i+1)
	}
	return fmt.Sprintf("%s[%d]", listName, i)
}

func parseTimeList(raw json.RawMessage, loc *time.Location, rfc bool) ([]stamp, error) {
	if isNull(raw) {
		return nil, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("not a list: %s", abbreviate(raw))
	}
	out := make([]stamp, 0, len(items))
	for i, item := range items {
		st, err := parseTimeValue(item, loc, rfc)
		if err != nil {
			return nil, fmt.Errorf("[%d]: %w", i, err)
		}
		out = append(out, st)
	}
	return out, nil
}

// bounds works out the span outside which the restriction is certainly inactive, so most calls
// far from any occurrence return without iterating.
func (r *Restriction) bounds() {
	r.earliest = r.start
	if len(r.rdates) > 0 && r.rdates[0].Before(r.earliest) {
		r.earliest = r.rdates[0]
	}
	var last time.Time
	if len(r.rdates) > 0 {
		last = r.rdates[len(r.rdates)-1]
	}
	for _, ru := range r.rules {
		if ru.empty {
			continue
		}
		// until is naive: placed in the location it may move by an offset change.
		if u := atWall(ru.until, r.loc).Add(orderSlack * time.Second); u.After(last) {
			last = u
		}
	}
	if last.IsZero() {
		r.latest = r.earliest // nothing ever occurs
		return
	}
	r.latest = last.Add(r.maxLength() + time.Second)
}

// maxLength bounds the real length of any occurrence (see occurrenceEnd).
func (r *Restriction) maxLength() time.Duration {
	return time.Duration(r.wall)*time.Second + dstSlack
}

// Active reports whether instant t falls inside an occurrence: some occurrence start o with
// o <= t < end(o), o not excluded. See the package documentation for end(o) across DST changes.
func (r *Restriction) Active(t time.Time) (active bool) {
	if r == nil {
		return false
	}
	defer func() {
		// Input is validated so that rrule-go cannot panic, but it is third-party code run on
		// user data inside the notifier: a panic must cost one restriction, not the process.
		if recover() != nil {
			active = false
		}
	}()
	return r.active(t)
}

func (r *Restriction) active(t time.Time) bool {
	if r.wall <= 0 || t.Before(r.earliest) || !t.Before(r.latest) {
		return false
	}
	quiet := r.quiet(t)
	lo := t.Add(-r.maxLength())
	if quiet && r.wall <= 24*3600 {
		// No offset change within a day of t: occurrences last exactly their wall-clock length.
		lo = t.Add(-time.Duration(r.wall) * time.Second)
	}
	i, _ := slices.BinarySearchFunc(r.rdates, lo, func(a, b time.Time) int { return a.Compare(b) })
	for ; i < len(r.rdates) && !r.rdates[i].After(t); i++ {
		if r.covers(r.rdates[i], t) {
			return true
		}
	}
	for _, ru := range r.rules {
		if ru.eachIn(lo, t, quiet, func(o time.Time) bool { return r.covers(o, t) }) {
			return true
		}
	}
	return false
}

// quiet tells whether the UTC offset in the contact's location is the same from 27 hours
// before t to 26 hours after it. DST changes are months apart, so equal offsets at the three
// instants mean no change in between.
func (r *Restriction) quiet(t time.Time) bool {
	_, off := t.In(r.loc).Zone()
	_, before := t.Add(-27 * time.Hour).In(r.loc).Zone()
	_, after := t.Add(orderSlack * time.Second).In(r.loc).Zone()
	return off == before && off == after
}

// covers tells whether the occurrence starting at o covers t (o <= t is given).
func (r *Restriction) covers(o, t time.Time) bool {
	return t.Before(r.occurrenceEnd(o)) && !r.excluded(o)
}

// occurrenceEnd is o plus the restriction's wall-clock length, on the wall clock of the
// contact's location (see the package documentation).
func (r *Restriction) occurrenceEnd(o time.Time) time.Time {
	length := time.Duration(r.wall) * time.Second
	e := o.Add(length)
	target := wallOf(o, r.loc) + r.wall
	if wallOf(e, r.loc) == target {
		return e // no offset change during the occurrence: the common case
	}
	e = atWall(target, r.loc)
	if w := wallOf(e, r.loc); w < target {
		// The target wall time does not exist (spring forward) and time.Date chose the earlier
		// reading: move through the gap to where the wall clock would have been.
		e = e.Add(time.Duration(target-w) * time.Second)
	}
	if e.Before(o) { // an overlap read before o; keep the same offset instead
		e = o.Add(length)
	}
	if limit := o.Add(r.maxLength()); e.After(limit) {
		e = limit // keeps lookback's promise in zones with larger jumps than DST
	}
	return e
}

// excluded tells whether the occurrence starting at o is removed by an extime, EXDATE or EXRULE.
func (r *Restriction) excluded(o time.Time) bool {
	if _, found := slices.BinarySearch(r.exunix, o.Unix()); found {
		return true
	}
	if len(r.exdays) > 0 {
		if _, found := slices.BinarySearch(r.exdays, floorDiv(wallOf(o, r.loc), 86400)); found {
			return true
		}
	}
	if len(r.exrules) == 0 {
		return false
	}
	quiet := r.quiet(o)
	for _, ex := range r.exrules {
		if ex.occursAt(o, quiet) {
			return true
		}
	}
	return false
}

// AnyActive reports whether a rule with these restrictions is active at t: a rule with no
// restrictions is always active; otherwise it is active iff any restriction is. For a ParseList
// result use ListActive, which also accounts for the restrictions that failed to parse.
func AnyActive(rs []*Restriction, t time.Time) bool {
	if len(rs) == 0 {
		return true
	}
	for _, r := range rs {
		if r.Active(t) {
			return true
		}
	}
	return false
}

// ListActive is AnyActive for a ParseList result. A restriction that failed to parse counts as
// inactive (docs/decisions.md D9), so a rule whose restrictions all failed is inactive, not unrestricted.
func ListActive(rs []*Restriction, errs []error, t time.Time) bool {
	if len(rs) == 0 {
		return len(errs) == 0
	}
	return AnyActive(rs, t)
}

// ParseError is a restriction of a list that could not be read. Index is its position in the
// list, or -1 when the list itself could not be read.
type ParseError struct {
	Index int
	Err   error
}

func (e *ParseError) Error() string {
	if e.Index < 0 {
		return "time_restrictions: " + e.Err.Error()
	}
	return fmt.Sprintf("time restriction %d: %v", e.Index, e.Err)
}

func (e *ParseError) Unwrap() error { return e.Err }

// ParseList reads a rule's time_restrictions value (a JSON array, as stored in
// notification_rule:ID's "time_restrictions" field; "", "null" and "[]" mean none). It returns
// the restrictions that parsed and one *ParseError per restriction that did not (with its
// index), so the caller can log them and still use the rest.
func ParseList(raw string, loc *time.Location) ([]*Restriction, []error) {
	trimmed := strings.TrimSpace(raw)
	if trimmed == "" || trimmed == "null" {
		return nil, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal([]byte(trimmed), &items); err != nil {
		return nil, []error{&ParseError{Index: -1, Err: fmt.Errorf("not a JSON array: %s", abbreviate([]byte(trimmed)))}}
	}
	var rs []*Restriction
	var errs []error
	for i, item := range items {
		r, err := Parse(item, loc)
		if err != nil {
			errs = append(errs, &ParseError{Index: i, Err: err})
			continue
		}
		rs = append(rs, r)
	}
	return rs, errs
}
