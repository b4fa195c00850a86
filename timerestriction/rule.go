package timerestriction

import (
	"errors"
	"fmt"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	rrule "github.com/teambition/rrule-go"
)

const (
	maxYear = rrule.MAXYEAR
	// maxCount bounds COUNT: it is turned into UNTIL by walking the occurrences once.
	maxCount = 100000
	// maxSteps bounds each one-off walk at parse time (the emptiness check, COUNT to UNTIL),
	// counting what rrule-go yields before filters and every jump to an allowed day.
	maxSteps = 2_000_000
	// horizon is where rrule-go stops a rule without UNTIL (DTSTART plus the largest Duration).
	// It is made explicit so that a rule restarted later stops at the same instant.
	horizon = time.Duration(1<<63 - 1)
	// cycleDays is 400 Gregorian years, after which the calendar repeats (a whole number of
	// weeks too). Every frequency's pattern of occurrences repeats within 400 × interval years.
	cycleDays  = 146097
	cycleYears = 400
	// cycleEpoch is 2000-01-01, as days since 1970-01-01: the start of a 400-year cycle.
	cycleEpoch = 10957
)

// maxIntervals keeps each rule's period at about 27 years or less (1000 years for YEARLY and
// MONTHLY): rrule-go walks month by month over a long step, and nobody means anything longer.
var maxIntervals = map[rrule.Frequency]int{
	rrule.YEARLY: 1000, rrule.MONTHLY: 12000, rrule.WEEKLY: 1428, rrule.DAILY: 10000,
	rrule.HOURLY: 240_000, rrule.MINUTELY: 14_400_000, rrule.SECONDLY: 864_000_000,
}

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
//
// rrule-go only ever works on clock fields (it adds days and hours to year/month/day/hour and
// rebuilds times with time.Date), so the rule runs on "naive" times: the contact's wall clock
// written as UTC. Each occurrence is then placed in the contact's location with time.Date, as
// rrule-go itself would do. This gives the same occurrences as running rrule-go in the location,
// without two of its costs there: every occurrence reads the clock of a year-1 time, which makes
// Go scan all of the zone's transitions, and days are stepped through local midnight, which
// repeats or skips a day in zones whose DST change happens at midnight (America/Sao_Paulo 2013).
type rule struct {
	loc      *time.Location
	opt      rrule.ROption // naive; every DTSTART-derived default pinned, Until always set, no Count
	base     rrule.RRule   // opt from the original DTSTART; copied per use (iteration writes to it)
	freq     rrule.Frequency
	interval int64
	until    int64 // naive Unix seconds of the last possible occurrence start
	nth      []nthWeekday
	days     *dayFilter // DAILY and shorter: the day-level BY* parts, taken out of opt
	empty    bool       // produces no occurrence at all

	start       time.Time // the restriction's start: rrule-go yields and counts nothing before it
	startWall   int64     // its wall clock (naive), as written for an RFC 5545 rule
	rfc         bool      // an RFC 5545 rule: wall times are read by rfcAt, skipped ones ignored
	startDays   int64
	startMonths int64 // year*12 + month-1
	startYear   int64

	last atomic.Pointer[anchored]

	// raw, rawCount and never are the rule as read, in the contact's location; the tests
	// evaluate them with rrule-go directly, without any of the shortcuts.
	raw      rrule.ROption
	rawCount int
	never    bool
}

var rruleWeekdays = [7]rrule.Weekday{rrule.SU, rrule.MO, rrule.TU, rrule.WE, rrule.TH, rrule.FR, rrule.SA}

// naive writes t's wall clock in loc as a UTC time.
func naive(t time.Time, loc *time.Location) time.Time {
	return time.Unix(wallOf(t, loc), 0).UTC()
}

// newRule binds spec to the restriction's start. An RFC 5545 rule (rfc) recurs from the start's
// wall time as written, and its occurrences follow RFC 5545 where the wall clock skips or
// repeats (see rule.place); an ice_cube rule recurs from time.Date's reading of it, as rrule-go
// in the location would.
func newRule(spec ruleSpec, startStamp stamp, loc *time.Location, rfc bool) (*rule, error) {
	start := startStamp.at
	opt := spec.opt
	if opt.Interval < 1 {
		return nil, fmt.Errorf("interval %d must be at least 1", opt.Interval)
	}
	if limit := maxIntervals[opt.Freq]; opt.Interval > limit {
		return nil, fmt.Errorf("interval %d is too large for %v (at most %d)", opt.Interval, opt.Freq, limit)
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

	n0 := naive(start, loc)
	if rfc {
		n0 = time.Unix(startStamp.wall, 0).UTC()
	}
	opt.Dtstart = n0
	if _, err := rrule.NewRRule(opt); err != nil {
		return nil, err
	}
	if err := checkReachable(opt, n0); err != nil {
		return nil, err
	}
	pinDefaults(&opt, n0)
	if err := checkSetPos(opt); err != nil {
		return nil, err
	}
	if opt.Until.IsZero() {
		opt.Until = n0.Add(horizon)
	} else {
		opt.Until = naive(opt.Until, loc)
	}
	ru := &rule{
		loc: loc, freq: opt.Freq, interval: int64(opt.Interval), nth: spec.nth, start: start,
		startWall: n0.Unix(), startDays: floorDiv(n0.Unix(), 86400),
		startMonths: int64(n0.Year())*12 + int64(n0.Month()) - 1, startYear: int64(n0.Year()),
		raw: raw, rawCount: spec.count, never: spec.never, rfc: rfc,
	}
	if opt.Freq >= rrule.DAILY && hasDayFilters(opt) {
		days, err := newDayFilter(opt)
		if err != nil {
			return nil, err
		}
		ru.days = days
		opt.Bymonth, opt.Bymonthday, opt.Byyearday, opt.Byweekno, opt.Byweekday = nil, nil, nil, nil, nil
	}
	base, err := rrule.NewRRule(opt)
	if err != nil {
		return nil, err
	}
	ru.opt, ru.base, ru.until = opt, *base, base.GetUntil().Unix()

	if spec.never || (ru.days != nil && ru.days.none()) {
		ru.empty = true
		return ru, nil
	}
	if ru.empty, err = ru.neverOccurs(); err != nil {
		return nil, err
	}
	if spec.count > 0 && !ru.empty {
		if err := ru.countToUntil(spec.count); err != nil {
			return nil, err
		}
	}
	return ru, nil
}

// checkNth refuses numbered weekdays (BYDAY=-1FR) that rrule-go would ignore (WEEKLY and
// shorter) or that index outside its masks and panic (|n| > 5 within a month), and numbered
// weekdays mixed with plain ones: rrule-go requires a day to match both kinds, where RFC 5545
// means either, so BYDAY=1FR,MO would silently never occur.
func checkNth(opt rrule.ROption) error {
	var plain, numbered *rrule.Weekday
	for i, wd := range opt.Byweekday {
		n := wd.N()
		if n == 0 {
			plain = &opt.Byweekday[i]
			continue
		}
		numbered = &opt.Byweekday[i]
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
	if plain != nil && numbered != nil {
		return fmt.Errorf("BYDAY mixes numbered (%v) and plain (%v) weekdays; put them in separate RRULE lines",
			*numbered, *plain)
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

// checkSetPos refuses a DAILY or shorter BYSETPOS that no period can satisfy: each period
// holds the same number of times, and rrule-go would search to year 9999 for a match.
func checkSetPos(opt rrule.ROption) error {
	if opt.Freq < rrule.DAILY || len(opt.Bysetpos) == 0 {
		return nil
	}
	size := 1
	switch opt.Freq {
	case rrule.DAILY:
		size = len(opt.Byhour) * len(opt.Byminute) * len(opt.Bysecond)
	case rrule.HOURLY:
		size = len(opt.Byminute) * len(opt.Bysecond)
	case rrule.MINUTELY:
		size = len(opt.Bysecond)
	}
	for _, p := range opt.Bysetpos {
		if p >= -size && p <= size {
			return nil
		}
	}
	return fmt.Errorf("BYSETPOS %v never matches: each %v period holds %d times", opt.Bysetpos, opt.Freq, size)
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

func hasDayFilters(opt rrule.ROption) bool {
	return len(opt.Bymonth) > 0 || len(opt.Bymonthday) > 0 || len(opt.Byyearday) > 0 ||
		len(opt.Byweekno) > 0 || len(opt.Byweekday) > 0
}

// dayFilter tells which days pass a DAILY or shorter rule's day-level parts (BYMONTH,
// BYMONTHDAY, BYYEARDAY, BYWEEKNO, BYDAY). Left to rrule-go, every rejected day costs a step
// (for SECONDLY, a search through the next day's seconds for the next allowed time), and a rule
// allowing only Monday February 29 at 05:00 spent a third of a second per evaluation. These
// parts depend on the calendar alone, which repeats every 400 years, so the allowed days of one
// cycle are worked out once; and in these frequencies BYSETPOS picks among one day's times, so
// taking the day-level parts out of the rule changes nothing else.
type dayFilter struct {
	weekdays uint8       // when plain BYDAY is the only part: bit w allows Go weekday w
	cycle    *cycleFlags // otherwise
}

// cycleFlags marks the allowed days of the 400-year cycle starting 2000-01-01.
type cycleFlags [(cycleDays + 63) / 64]uint64

// cycleMemo shares cycleFlags (18 KB each) between rules with the same day-level parts. It is
// bounded because the parts come from user input.
var cycleMemo = struct {
	sync.Mutex
	m map[string]*cycleFlags
}{m: map[string]*cycleFlags{}}

const cycleMemoSize = 256

func newDayFilter(opt rrule.ROption) (*dayFilter, error) {
	if len(opt.Bymonth)+len(opt.Bymonthday)+len(opt.Byyearday)+len(opt.Byweekno) == 0 {
		f := &dayFilter{}
		for _, wd := range opt.Byweekday {
			f.weekdays |= 1 << ((wd.Day() + 1) % 7) // rrule-go counts Monday as 0, Go Sunday
		}
		return f, nil
	}
	key := fmt.Sprint(opt.Wkst, opt.Bymonth, opt.Bymonthday, opt.Byyearday, opt.Byweekno, opt.Byweekday)
	cycleMemo.Lock()
	flags, ok := cycleMemo.m[key]
	cycleMemo.Unlock()
	if ok {
		return &dayFilter{cycle: flags}, nil
	}
	flags, err := newCycleFlags(opt)
	if err != nil {
		return nil, err
	}
	cycleMemo.Lock()
	if len(cycleMemo.m) >= cycleMemoSize {
		for k := range cycleMemo.m { // an arbitrary entry
			delete(cycleMemo.m, k)
			break
		}
	}
	cycleMemo.m[key] = flags
	cycleMemo.Unlock()
	return &dayFilter{cycle: flags}, nil
}

// newCycleFlags finds the allowed days with a YEARLY rule holding the same day-level parts: its
// day masks are the ones the original rule would apply. An all-days BYYEARDAY keeps rrule-go
// from adding its own defaults (the start's month and day) to that rule.
func newCycleFlags(opt rrule.ROption) (*cycleFlags, error) {
	yearly := rrule.ROption{
		Freq: rrule.YEARLY, Wkst: opt.Wkst,
		Dtstart: time.Date(2000, time.January, 1, 0, 0, 0, 0, time.UTC),
		Until:   time.Date(2000+cycleYears, time.January, 1, 0, 0, 0, 0, time.UTC).Add(-time.Second),
		Bymonth: opt.Bymonth, Bymonthday: opt.Bymonthday, Byyearday: opt.Byyearday,
		Byweekno: opt.Byweekno, Byweekday: opt.Byweekday,
		Byhour: []int{0}, Byminute: []int{0}, Bysecond: []int{0},
	}
	if len(yearly.Byyearday) == 0 {
		for d := 1; d <= 366; d++ {
			yearly.Byyearday = append(yearly.Byyearday, d)
		}
	}
	r, err := rrule.NewRRule(yearly)
	if err != nil {
		return nil, err
	}
	flags := &cycleFlags{}
	next := r.Iterator()
	for {
		o, ok := next()
		if !ok {
			return flags, nil
		}
		i := floorDiv(o.Unix(), 86400) - cycleEpoch
		flags[i/64] |= 1 << (i % 64)
	}
}

func (f *dayFilter) none() bool {
	if f.cycle == nil {
		return f.weekdays == 0
	}
	for _, b := range f.cycle {
		if b != 0 {
			return false
		}
	}
	return true
}

func weekdayOf(day int64) uint { return uint(((day+4)%7 + 7) % 7) } // 1970-01-01 was a Thursday

func cycleIndex(day int64) int64 {
	i := (day - cycleEpoch) % cycleDays
	if i < 0 {
		i += cycleDays
	}
	return i
}

func (f *dayFilter) allows(day int64) bool {
	if f.cycle == nil {
		return f.weekdays&(1<<weekdayOf(day)) != 0
	}
	i := cycleIndex(day)
	return f.cycle[i/64]&(1<<(i%64)) != 0
}

// nextAllowed returns the first allowed day at or after day; the filter must not be empty.
func (f *dayFilter) nextAllowed(day int64) int64 {
	if f.cycle == nil {
		for n := int64(0); n < 7; n++ {
			if f.allows(day + n) {
				return day + n
			}
		}
		return day // unreachable for a non-empty filter
	}
	last := int64(len(f.cycle)) - 1
	i := cycleIndex(day)
	for n := int64(0); n <= cycleDays+64; {
		w := f.cycle[i/64] >> (i % 64) // bits past the cycle's end in the last word are never set
		if w != 0 {
			return day + n + int64(bits.TrailingZeros64(w))
		}
		skip := 64 - i%64
		if i/64 == last {
			skip = cycleDays - i // wrap to the cycle's start
		}
		n += skip
		i = (i + skip) % cycleDays
	}
	return day // unreachable for a non-empty filter
}

// keep applies the day_of_week filter; only the clock fields of o are read.
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

// occIter iterates over a rule's naive occurrences, filters applied. A positive budget bounds
// the work (what rrule-go yields, and jumps to allowed days); running out ends the iteration
// with exhausted set.
type occIter struct {
	ru        *rule
	opt       rrule.ROption // r's options, for restarting it (they may differ from ru.opt's UNTIL)
	next      rrule.Next
	budget    int
	exhausted bool
}

func (ru *rule) occurrences(r *rrule.RRule, budget int) *occIter {
	return &occIter{ru: ru, opt: r.OrigOptions, next: r.Iterator(), budget: budget}
}

func (it *occIter) Next() (time.Time, bool) {
	for {
		if it.budget > 0 {
			if it.budget--; it.budget == 0 {
				it.exhausted = true
				return time.Time{}, false
			}
		}
		n, ok := it.next()
		if !ok {
			return time.Time{}, false
		}
		if days := it.ru.days; days != nil {
			if d := floorDiv(n.Unix(), 86400); !days.allows(d) {
				// Jump to the next allowed day instead of walking rrule-go through the others.
				if a, ok := it.ru.anchor(days.nextAllowed(d+1) * 86400); ok && a.After(n) {
					opt := it.opt
					opt.Dtstart = a
					if r, err := rrule.NewRRule(opt); err == nil {
						it.next = r.Iterator()
					}
				}
				continue
			}
		}
		if it.ru.keep(n) && !it.ru.beforeStart(n) && it.ru.exists(n) {
			return n, true
		}
	}
}

// beforeStart tells whether naive occurrence n is placed before the restriction's start, where
// rrule-go neither yields nor counts an occurrence: a wall time inside a DST gap or overlap just
// after the start can land there (time.Date moves a gap time west of UTC back by the gap; RFC
// 5545 moves a start in a gap forward by it).
func (ru *rule) beforeStart(n time.Time) bool {
	w := n.Unix()
	return w < ru.startWall+orderSlack && ru.place(w).Before(ru.start)
}

// exists tells whether naive occurrence n is one: an RFC 5545 rule ignores (and does not count)
// a recurrence instance whose wall time a spring-forward gap skips (RFC 5545 §3.3.10), except
// the start itself, which is placed one gap later (§3.3.5). An ice_cube rule keeps them all.
func (ru *rule) exists(n time.Time) bool {
	if !ru.rfc {
		return true
	}
	w := n.Unix()
	return w == ru.startWall || wallExists(w, ru.loc)
}

// place returns the instant of naive time w: RFC 5545's reading (rfcAt) for an RFC 5545 rule,
// time.Date's (atWall) for an ice_cube rule.
func (ru *rule) place(w int64) time.Time {
	if ru.rfc {
		t, _ := rfcAt(w, ru.loc)
		return t
	}
	return atWall(w, ru.loc)
}

// anchored is a rule restarted from a later DTSTART, kept for the next evaluation.
type anchored struct {
	at time.Time
	r  rrule.RRule
}

// from returns the rule ready to iterate from a lattice point shortly before naive time w (or
// from DTSTART when that is no further back). Each call gets its own copy because rrule-go's
// iterator writes to the rule it iterates; the last restarted rule is kept because consecutive
// notifications usually need the same one.
func (ru *rule) from(w int64) *rrule.RRule {
	a, ok := ru.anchor(w)
	if !ok {
		c := ru.base
		return &c
	}
	if last := ru.last.Load(); last != nil && last.at.Equal(a) {
		c := last.r
		return &c
	}
	opt := ru.opt
	opt.Dtstart = a
	r, err := rrule.NewRRule(opt)
	if err != nil { // cannot happen: the same options were accepted with the original DTSTART
		c := ru.base
		return &c
	}
	ru.last.Store(&anchored{at: a, r: *r})
	return r
}

// anchor returns a naive DTSTART on the rule's lattice (a whole number of intervals after the
// original one: seconds, minutes and hours of wall-clock time, days, weeks, calendar months or
// years) before naive time w, such that restarting the rule there yields every original
// occurrence from w on. ok is false when there is no such point after the original DTSTART.
//
// A restarted rule yields its period's occurrences only from DTSTART on, and goes on from the
// next lattice period: so a DAILY or longer rule restarts on the day before w (or, when that day
// is not in a lattice week/month/year, on the last day of the latest one), and a shorter one a
// period before w. The time of day of a DAILY or longer anchor does not matter, as the options
// pin it; noon keeps it clear of the day's ends.
func (ru *rule) anchor(w int64) (time.Time, bool) {
	if ru.freq >= rrule.HOURLY {
		unit := int64(1)
		switch ru.freq {
		case rrule.HOURLY:
			unit = 3600
		case rrule.MINUTELY:
			unit = 60
		}
		p := ru.interval * unit
		k := floorDiv(w-ru.startWall, p) - 1
		if k <= 0 {
			return time.Time{}, false
		}
		return time.Unix(ru.startWall+k*p, 0).UTC(), true
	}
	d := floorDiv(w, 86400) - 1
	var day int64
	switch ru.freq {
	case rrule.DAILY:
		day = ru.startDays + floorDiv(d-ru.startDays, ru.interval)*ru.interval
	case rrule.WEEKLY:
		wkst := int64(ru.opt.Wkst.Day()+1) % 7                             // rrule-go counts Monday as 0, Go Sunday
		weekStart := func(x int64) int64 { return x - ((x+4-wkst)%7+7)%7 } // 1970-01-01 was a Thursday
		s0 := weekStart(ru.startDays)
		j := (weekStart(d) - s0) / 7
		if k := floorDiv(j, ru.interval) * ru.interval; k == j {
			day = d
		} else {
			day = s0 + k*7 + 6
		}
	case rrule.MONTHLY:
		y, m, _ := time.Unix(d*86400, 0).UTC().Date()
		j := int64(y)*12 + int64(m) - 1 - ru.startMonths
		if k := floorDiv(j, ru.interval) * ru.interval; k == j {
			day = d
		} else {
			mm := ru.startMonths + k + 1 // the day before the next month starts
			day = floorDiv(time.Date(int(mm/12), time.Month(mm%12+1), 1, 0, 0, 0, 0, time.UTC).Unix(), 86400) - 1
		}
	default: // YEARLY
		j := int64(time.Unix(d*86400, 0).UTC().Year()) - ru.startYear
		if k := floorDiv(j, ru.interval) * ru.interval; k == j {
			day = d
		} else {
			day = floorDiv(time.Date(int(ru.startYear+k+1), time.January, 1, 0, 0, 0, 0, time.UTC).Unix(), 86400) - 1
		}
	}
	if day <= ru.startDays {
		return time.Time{}, false
	}
	return time.Unix(day*86400+12*3600, 0).UTC(), true
}

// neverOccurs tells whether the rule has no occurrence at all (BYMONTH=2;BYMONTHDAY=30). Such a
// rule would make every evaluation iterate to year 9999, so it is found once here. The pattern
// repeats within cycleYears × interval years, so one cycle near the end of rrule-go's range is
// searched (or everything from DTSTART when that is shorter); the range's end stops the search.
func (ru *rule) neverOccurs() (bool, error) {
	opt := ru.opt
	opt.Until = time.Date(maxYear+1, time.January, 1, 0, 0, 0, 0, time.UTC)
	if y := int64(maxYear) - cycleYears*ru.interval - 2; y > ru.startYear {
		if a, ok := ru.anchor(time.Date(int(y), time.January, 1, 0, 0, 0, 0, time.UTC).Unix()); ok {
			opt.Dtstart = a
		}
	}
	r, err := rrule.NewRRule(opt)
	if err != nil {
		return true, nil
	}
	it := ru.occurrences(r, maxSteps)
	if _, ok := it.Next(); ok {
		return false, nil
	}
	if it.exhausted {
		return false, errors.New("rule too sparse to evaluate: no occurrence found within the work limit")
	}
	return true, nil
}

// countToUntil replaces COUNT by the UNTIL it amounts to, so that evaluation can restart the
// rule anywhere instead of counting from DTSTART every time.
func (ru *rule) countToUntil(count int) error {
	c := ru.base
	it := ru.occurrences(&c, maxSteps)
	for seen := 0; ; {
		o, ok := it.Next()
		if !ok {
			if it.exhausted {
				return fmt.Errorf("count %d: too many candidate occurrences to evaluate", count)
			}
			return nil // UNTIL (or the end of time) came first
		}
		if seen++; seen == count {
			ru.opt.Until = o
			r, err := rrule.NewRRule(ru.opt)
			if err != nil {
				return err
			}
			ru.base = *r
			ru.until = o.Unix()
			return nil
		}
	}
}

// orderSlack bounds how much later in naive order than in real order an occurrence can come:
// time.Date moves a wall time inside a spring-forward gap back by the gap, the largest of which
// was a whole day (Pacific/Apia, 2011); the margin is generous.
const orderSlack = 26 * 3600

// eachIn calls fn with every occurrence o of the rule with lo <= o <= t (in the contact's
// location), until fn returns true. Iteration works on naive times and only places an
// occurrence in the location when it is near the window. quiet says no UTC offset change is
// near t, so naive order is real order there and iteration can stop as soon as it passes t.
//
// Iteration starts at lo's wall time. West of UTC that misses nothing: time.Date places a wall
// time inside a spring-forward gap before the gap, and takes the first of two ambiguous
// instants, so an occurrence at or after lo has a naive time at or after lo's wall time. East
// of UTC it places a gap time after the gap (and takes the second instant), and so does RFC
// 5545 for an RFC 5545 rule's start in a gap, so an occurrence up to one gap after lo can be
// missed: callers that need those look back further (active by dstSlack, occursAt likewise).
func (ru *rule) eachIn(lo, t time.Time, quiet bool, fn func(o time.Time) bool) bool {
	if ru.empty {
		return false
	}
	wlo, wt := wallOf(lo, ru.loc), wallOf(t, ru.loc)
	if ru.until < wlo {
		return false
	}
	stop := wt + orderSlack
	if quiet {
		stop = wt
	}
	from := wlo
	if ru.days != nil {
		if d := floorDiv(wlo, 86400); !ru.days.allows(d) {
			next := ru.days.nextAllowed(d)
			if next*86400 > stop {
				return false
			}
			from = next * 86400
		}
	}
	it := ru.occurrences(ru.from(from), 0)
	for {
		n, ok := it.Next()
		if !ok {
			return false
		}
		w := n.Unix()
		if w > stop {
			return false
		}
		if w < wlo {
			continue
		}
		o := ru.place(w)
		if o.Before(lo) || o.After(t) {
			continue
		}
		if fn(o) {
			return true
		}
	}
}

// occursAt tells whether an occurrence of the rule starts at o. Near an offset change the
// search starts dstSlack earlier, for a wall time in a gap that time.Date placed at o from
// before it (see eachIn).
func (ru *rule) occursAt(o time.Time, quiet bool) bool {
	lo := o
	if !quiet {
		lo = o.Add(-dstSlack)
	}
	return ru.eachIn(lo, o, quiet, o.Equal)
}
