package timerestriction

import (
	"errors"
	"fmt"
	"time"

	rrule "github.com/teambition/rrule-go"
)

const (
	maxYear = rrule.MAXYEAR
	// maxCount bounds COUNT: it is turned into UNTIL by walking the occurrences once.
	maxCount = 100000
	// maxCountSteps bounds that walk when a day_of_week filter rejects most of what rrule-go yields.
	maxCountSteps = 2_000_000
	// maxInterval keeps rrule-go's day-by-day month arithmetic (a loop per month crossed) cheap.
	maxInterval = 1_000_000
	// horizon is where rrule-go stops a rule without UNTIL (DTSTART plus the largest Duration).
	// It is made explicit so that a rule restarted later stops at the same instant.
	horizon = time.Duration(1<<63 - 1)
	// cycleYears: every frequency's pattern of occurrences repeats within 400 × interval years
	// (400 Gregorian years are 146097 days, a whole number of weeks).
	cycleYears = 400
	// anchorBack is how many whole periods before the instant of interest a restarted rule
	// begins, so the first (possibly truncated) period never matters.
	anchorBack = 2
)

// nthWeekday is one entry of ice_cube's day_of_week validation: the nth such weekday of the
// month, counted from its end when n is negative.
type nthWeekday struct {
	weekday time.Weekday
	n       int
}

// ruleSpec is a recurrence rule as read from either format, not yet validated.
type ruleSpec struct {
	opt   rrule.ROption // Dtstart and Count unset
	count int
	nth   []nthWeekday // filter on rrule-go's occurrences (ice_cube counts nth within the month)
	never bool         // validations that contradict each other, so the rule has no occurrence
}

// rule is a validated recurrence rule bound to a restriction's start.
type rule struct {
	loc      *time.Location
	opt      rrule.ROption // every DTSTART-derived default pinned, Until always set, no Count
	base     rrule.RRule   // opt from the original DTSTART; copied per use (iteration writes to it)
	freq     rrule.Frequency
	interval int64
	until    time.Time
	nth      []nthWeekday
	empty    bool // produces no occurrence at all

	startWall   int64
	startDays   int64
	startMonths int64 // year*12 + month-1
	startYear   int64

	// raw, rawCount and never are the rule as read; the tests evaluate them without shortcuts.
	raw      rrule.ROption
	rawCount int
	never    bool
}

var rruleWeekdays = [7]rrule.Weekday{rrule.SU, rrule.MO, rrule.TU, rrule.WE, rrule.TH, rrule.FR, rrule.SA}

func newRule(spec ruleSpec, start time.Time, loc *time.Location) (*rule, error) {
	opt := spec.opt
	if opt.Interval < 1 {
		return nil, fmt.Errorf("interval %d must be at least 1", opt.Interval)
	}
	if opt.Interval > maxInterval {
		return nil, fmt.Errorf("interval %d is larger than %d", opt.Interval, maxInterval)
	}
	if spec.count < 0 || spec.count > maxCount {
		return nil, fmt.Errorf("count %d out of range 1-%d", spec.count, maxCount)
	}
	if len(opt.Byeaster) > 0 {
		// rrule-go indexes a year-long mask with the offset unchecked, so a large one panics.
		return nil, errors.New("BYEASTER is not supported")
	}
	if err := checkNth(opt); err != nil {
		return nil, err
	}
	opt.Dtstart = start
	opt.Count = 0
	raw := opt
	if _, err := rrule.NewRRule(opt); err != nil {
		return nil, err
	}
	if err := checkReachable(opt, start); err != nil {
		return nil, err
	}
	pinDefaults(&opt, start)
	if opt.Until.IsZero() {
		opt.Until = start.Add(horizon)
	}
	base, err := rrule.NewRRule(opt)
	if err != nil {
		return nil, err
	}
	w := wallOf(start, loc)
	ru := &rule{
		loc: loc, opt: opt, base: *base, freq: opt.Freq, interval: int64(opt.Interval),
		until: base.GetUntil(), nth: spec.nth,
		startWall: w, startDays: floorDiv(w, 86400),
		startMonths: int64(start.Year())*12 + int64(start.Month()) - 1, startYear: int64(start.Year()),
		raw: raw, rawCount: spec.count, never: spec.never,
	}
	ru.empty = spec.never || ru.neverOccurs()
	if spec.count > 0 && !ru.empty {
		if err := ru.countToUntil(spec.count); err != nil {
			return nil, err
		}
	}
	return ru, nil
}

// checkNth refuses numbered weekdays (BYDAY=-1FR) that rrule-go would ignore (WEEKLY and
// shorter) or that index outside its masks and panic (|n| > 5 within a month).
func checkNth(opt rrule.ROption) error {
	for _, wd := range opt.Byweekday {
		n := wd.N()
		if n == 0 {
			continue
		}
		limit := 5
		switch {
		case opt.Freq == rrule.YEARLY && len(opt.Bymonth) == 0:
			limit = 53
		case opt.Freq == rrule.YEARLY, opt.Freq == rrule.MONTHLY:
		default:
			return fmt.Errorf("BYDAY %v: a numbered weekday needs FREQ=MONTHLY or YEARLY", wd)
		}
		if n < -limit || n > limit {
			return fmt.Errorf("BYDAY %v: occurrence number out of range ±%d", wd, limit)
		}
	}
	return nil
}

// checkReachable refuses HOURLY/MINUTELY/SECONDLY rules whose BYHOUR/BYMINUTE/BYSECOND the
// interval never lands on: rrule-go steps through the day looking for a match and never stops.
func checkReachable(opt rrule.ROption, start time.Time) error {
	var size, unit int
	switch opt.Freq {
	case rrule.HOURLY:
		size, unit = 24, 3600
	case rrule.MINUTELY:
		size, unit = 1440, 60
	case rrule.SECONDLY:
		size, unit = 86400, 1
	default:
		return nil
	}
	h0, m0, s0 := start.Clock()
	x0 := (h0*3600 + m0*60 + s0) / unit
	g := gcd(opt.Interval%size, size)
	for x := x0 % g; x < size; x += g {
		sec := x * unit
		if inOrEmpty(opt.Byhour, sec/3600) &&
			(opt.Freq == rrule.HOURLY || inOrEmpty(opt.Byminute, sec/60%60)) &&
			(opt.Freq != rrule.SECONDLY || inOrEmpty(opt.Bysecond, sec%60)) {
			return nil
		}
	}
	return fmt.Errorf("%v every %d never reaches the given hours/minutes/seconds from start %s",
		opt.Freq, opt.Interval, start.Format("15:04:05"))
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func inOrEmpty(list []int, v int) bool {
	if len(list) == 0 {
		return true
	}
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// pinDefaults writes out the values rrule-go would otherwise derive from DTSTART (time of day,
// weekday, day of month, month), so that the rule restarted from a later DTSTART on its lattice
// still yields exactly the original occurrences. The conditions mirror rrule-go's buildRRule.
func pinDefaults(opt *rrule.ROption, start time.Time) {
	if len(opt.Byweekno) == 0 && len(opt.Byyearday) == 0 && len(opt.Bymonthday) == 0 &&
		len(opt.Byweekday) == 0 && len(opt.Byeaster) == 0 {
		switch opt.Freq {
		case rrule.YEARLY:
			if len(opt.Bymonth) == 0 {
				opt.Bymonth = []int{int(start.Month())}
			}
			opt.Bymonthday = []int{start.Day()}
		case rrule.MONTHLY:
			opt.Bymonthday = []int{start.Day()}
		case rrule.WEEKLY:
			opt.Byweekday = []rrule.Weekday{rruleWeekdays[start.Weekday()]}
		}
	}
	h, m, s := start.Clock()
	if len(opt.Byhour) == 0 && opt.Freq < rrule.HOURLY {
		opt.Byhour = []int{h}
	}
	if len(opt.Byminute) == 0 && opt.Freq < rrule.MINUTELY {
		opt.Byminute = []int{m}
	}
	if len(opt.Bysecond) == 0 && opt.Freq < rrule.SECONDLY {
		opt.Bysecond = []int{s}
	}
}

// keep applies the day_of_week filter.
func (ru *rule) keep(o time.Time) bool {
	if len(ru.nth) == 0 {
		return true
	}
	y, m, d := o.Date()
	wd := o.Weekday()
	for _, x := range ru.nth {
		if x.weekday != wd {
			continue
		}
		if x.n > 0 && (d-1)/7+1 == x.n {
			return true
		}
		if x.n < 0 && -((daysIn(y, m)-d)/7+1) == x.n {
			return true
		}
	}
	return false
}

func daysIn(y int, m time.Month) int {
	return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// from returns the rule ready to iterate from a lattice point a couple of periods before lo
// (or from DTSTART when that is no further back). Each call gets its own RRule because
// rrule-go's iterator writes to the rule it iterates.
func (ru *rule) from(lo time.Time) *rrule.RRule {
	if a, ok := ru.anchor(lo); ok {
		opt := ru.opt
		opt.Dtstart = a
		if r, err := rrule.NewRRule(opt); err == nil {
			return r
		}
	}
	c := ru.base
	return &c
}

// anchor returns a DTSTART on the rule's lattice (a whole number of intervals after the
// original one, in wall-clock units) at least anchorBack periods before lo. ok is false when
// there is no such point after the original DTSTART.
func (ru *rule) anchor(lo time.Time) (time.Time, bool) {
	w := wallOf(lo, ru.loc)
	back := int64(anchorBack)
	for try := 0; try < 4; try++ {
		a, retry, ok := ru.latticePoint(w, back)
		if ok {
			return a, true
		}
		if retry == 0 {
			return time.Time{}, false
		}
		back += retry
	}
	return time.Time{}, false
}

// latticePoint computes the lattice point `back` periods before the one containing wall time w.
// When that point cannot be represented (its wall time falls in a DST gap, so rrule-go would
// read different clock fields), it returns how many more periods to step back.
func (ru *rule) latticePoint(w, back int64) (a time.Time, retry int64, ok bool) {
	switch ru.freq {
	case rrule.HOURLY, rrule.MINUTELY, rrule.SECONDLY:
		unit := int64(1)
		switch ru.freq {
		case rrule.HOURLY:
			unit = 3600
		case rrule.MINUTELY:
			unit = 60
		}
		p := ru.interval * unit
		k := floorDiv(w-ru.startWall, p) - back
		if k <= 0 {
			return time.Time{}, 0, false
		}
		pw := ru.startWall + k*p
		a = atWall(pw, ru.loc)
		if wallOf(a, ru.loc) == pw {
			return a, 0, true
		}
		return time.Time{}, (int64(dstSlack/time.Second)+p-1)/p + 1, false
	case rrule.DAILY, rrule.WEEKLY:
		p := ru.interval
		if ru.freq == rrule.WEEKLY {
			p *= 7
		}
		k := floorDiv(floorDiv(w, 86400)-ru.startDays, p) - back
		if k <= 0 {
			return time.Time{}, 0, false
		}
		day := ru.startDays + k*p
		// Noon: the time of day is pinned in the options, DTSTART only has to be on the right
		// day, and noon exists on every day a DST change touches.
		a = atWall(day*86400+12*3600, ru.loc)
		if floorDiv(wallOf(a, ru.loc), 86400) == day {
			return a, 0, true
		}
		return time.Time{}, 1, false
	case rrule.MONTHLY:
		y, m, _ := time.Unix(w, 0).UTC().Date()
		k := floorDiv(int64(y)*12+int64(m)-1-ru.startMonths, ru.interval) - back
		if k <= 0 {
			return time.Time{}, 0, false
		}
		mm := ru.startMonths + k*ru.interval
		a = time.Date(int(mm/12), time.Month(mm%12+1), 1, 12, 0, 0, 0, ru.loc)
		if int64(a.Year())*12+int64(a.Month())-1 == mm {
			return a, 0, true
		}
		return time.Time{}, 1, false
	default: // YEARLY
		y := time.Unix(w, 0).UTC().Year()
		k := floorDiv(int64(y)-ru.startYear, ru.interval) - back
		if k <= 0 {
			return time.Time{}, 0, false
		}
		yy := ru.startYear + k*ru.interval
		a = time.Date(int(yy), time.January, 1, 12, 0, 0, 0, ru.loc)
		if int64(a.Year()) == yy {
			return a, 0, true
		}
		return time.Time{}, 1, false
	}
}

// neverOccurs tells whether the rule has no occurrence at all (BYMONTH=2;BYMONTHDAY=30). Such a
// rule would make every evaluation iterate to year 9999, so it is found once here. The pattern
// repeats within cycleYears × interval years, so one cycle near the end of rrule-go's range is
// searched (or everything from DTSTART when that is shorter); the range's end stops the search.
func (ru *rule) neverOccurs() bool {
	from := ru.opt.Dtstart
	if y := int64(maxYear) - cycleYears*ru.interval - 2; y > ru.startYear {
		if a, ok := ru.anchor(time.Date(int(y), time.January, 1, 0, 0, 0, 0, ru.loc)); ok {
			from = a
		}
	}
	opt := ru.opt
	opt.Dtstart = from
	opt.Until = time.Date(maxYear+1, time.January, 1, 0, 0, 0, 0, time.UTC)
	r, err := rrule.NewRRule(opt)
	if err != nil {
		return true
	}
	next := r.Iterator()
	for {
		o, ok := next()
		if !ok {
			return true
		}
		if ru.keep(o) {
			return false
		}
	}
}

// countToUntil replaces COUNT by the UNTIL it amounts to, so that evaluation can restart the
// rule anywhere instead of counting from DTSTART every time.
func (ru *rule) countToUntil(count int) error {
	c := ru.base
	next := c.Iterator()
	seen := 0
	for steps := 0; steps < maxCountSteps; steps++ {
		o, ok := next()
		if !ok {
			return nil // UNTIL (or the end of time) came first
		}
		if !ru.keep(o) {
			continue
		}
		seen++
		if seen == count {
			ru.opt.Until = o
			r, err := rrule.NewRRule(ru.opt)
			if err != nil {
				return err
			}
			ru.base = *r
			ru.until = r.GetUntil()
			return nil
		}
	}
	return fmt.Errorf("count %d: too many candidate occurrences to evaluate", count)
}

// eachIn calls fn with every occurrence o of the rule with lo <= o <= t, in order, until fn
// returns true.
func (ru *rule) eachIn(lo, t time.Time, fn func(o time.Time) bool) bool {
	if ru.empty || ru.until.Before(lo) {
		return false
	}
	next := ru.from(lo).Iterator()
	for {
		o, ok := next()
		if !ok || o.After(t) {
			return false
		}
		if o.Before(lo) || !ru.keep(o) {
			continue
		}
		if fn(o) {
			return true
		}
	}
}

// occursAt tells whether an occurrence of the rule starts at o.
func (ru *rule) occursAt(o time.Time) bool {
	return ru.eachIn(o, o, func(time.Time) bool { return true })
}
