package whatif

import (
	"container/heap"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/redisread"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/model/inventory"
	"github.com/flapjackgo/flapjack/schema"
)

// Sources of the history.
const (
	SourceAuto    = "auto"
	SourceArchive = "archive"
	SourceStates  = "state_history"
)

// Filter selects the checks replayed.
type Filter struct {
	Entity, Check *regexp.Regexp // nil = any
	Tags          []string       // a check must carry every one
}

func (f Filter) match(entity, check string) bool {
	return (f.Entity == nil || f.Entity.MatchString(entity)) && (f.Check == nil || f.Check.MatchString(check))
}

func hasTags(have, want []string) bool {
	for _, t := range want {
		if !slices.Contains(have, t) {
			return false
		}
	}
	return true
}

// History says what is read from the live Redis.
type History struct {
	From, Until time.Time
	Filter      Filter
	Source      string // SourceAuto, SourceArchive or SourceStates
	// RepeatInterval is used for checks whose repeat interval cannot be observed (no decision
	// record); 0 = synthesise no repeats for them.
	RepeatInterval time.Duration
	// KeepOKRepeats replays ok results of checks already ok too. They decide nothing (no
	// filter passes, nothing is routed), so by default they are left out: most of a healthy
	// history is such results, and replaying them only costs time.
	KeepOKRepeats bool
}

// line is one timeline line for replay, with what the analysis needs of it.
type line struct {
	at      int64
	raw     []byte
	checkID string
	state   string // service events only
	// armsStale: the event carries a ttl of its own, so even an ok repeat moves its check's
	// staleness deadline and is replayed
	armsStale bool
}

// timeline produces the lines of a history in time order.
type timeline struct {
	source string
	// notes say how the timeline was made (shown in the output).
	notes []string
	next  func(ctx context.Context) (line, bool, error)
	// skipped counts archived items that were not events of the range (bad JSON, other checks).
	skipped int
	// untimed counts archived events of the chosen checks without a "time" (not replayed).
	untimed int
	// checks is how many checks the timeline holds (the archive: how many the live Redis
	// knows that the filter chooses), for choosing the groups.
	checks int
}

// archiveBatch is how many archived events are read per round trip.
const archiveBatch = 5000

// openTimeline picks the source and prepares reading it. Everything it does on conn is a read.
func openTimeline(ctx context.Context, pool *redis.Pool, keys schema.Keys, h History) (*timeline, error) {
	conn, err := pool.GetContext(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	hours := archiveHours(keys, h.From, h.Until)
	for _, k := range hours {
		conn.Send("EXISTS", k)
	}
	if err := conn.Flush(); err != nil {
		return nil, fmt.Errorf("look for the event archive: %w", err)
	}
	missing, firstHeld := 0, -1
	for i := range hours {
		n, err := redis.Int(conn.Receive())
		if err != nil {
			return nil, fmt.Errorf("look for the event archive: %w", err)
		}
		if n == 0 {
			missing++
		} else if firstHeld < 0 {
			firstHeld = i
		}
	}
	var notes []string
	source := h.Source
	if source == SourceAuto || source == "" {
		// The archive is used only when it reaches back to --from: with a retention shorter
		// than the range it holds only its end.
		source = SourceStates
		if firstHeld == 0 {
			source = SourceArchive
		} else if firstHeld > 0 {
			notes = append(notes, fmt.Sprintf("the event archive starts at %s, after --from (executive.events_archive_maxage): not used", h.From.UTC().Truncate(time.Hour).Add(time.Duration(firstHeld)*time.Hour).Format(time.RFC3339)))
		}
	}
	if source == SourceArchive && missing > 0 {
		notes = append(notes, fmt.Sprintf("the event archive holds no events for %d of the range's %d hours", missing, len(hours)))
	}
	maint, err := maintenanceLines(ctx, conn, keys, h)
	if err != nil {
		return nil, err
	}
	var tl *timeline
	switch source {
	case SourceArchive:
		tl = archiveTimeline(pool, keys, h, hours)
		refs, err := inventory.CheckIDs(conn, keys)
		if err != nil {
			return nil, err
		}
		for _, r := range refs {
			if h.Filter.match(r.Entity, r.Check) {
				tl.checks++
			}
		}
	case SourceStates:
		tl, err = statesTimeline(ctx, conn, keys, h)
		if err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("unknown history source %q (auto, archive or state_history)", h.Source)
	}
	tl.notes = append(tl.notes, notes...)
	tl.next = prepend(maint, tl.next)
	if len(maint) > 0 {
		tl.notes = append(tl.notes, fmt.Sprintf("%d scheduled maintenance window(s) overlapping the range created at its start", len(maint)))
	}
	return tl, nil
}

func prepend(first []line, next func(context.Context) (line, bool, error)) func(context.Context) (line, bool, error) {
	return func(ctx context.Context) (line, bool, error) {
		if len(first) > 0 {
			l := first[0]
			first = first[1:]
			return l, true, nil
		}
		return next(ctx)
	}
}

// archiveHours are the events_archive keys of every hour the range touches.
func archiveHours(keys schema.Keys, from, until time.Time) []string {
	var out []string
	for t := from.UTC().Truncate(time.Hour); !t.After(until); t = t.Add(time.Hour) {
		out = append(out, keys.EventsArchive(t))
	}
	return out
}

// archiveTimeline reads events_archive hour by hour. Within an hour events are put in order of
// their own time (stable, so same-second events keep their processing order); a late event
// whose time is before the previous hour's last is moved to that time, as replay never goes
// back in time.
func archiveTimeline(pool *redis.Pool, keys schema.Keys, h History, hours []string) *timeline {
	tl := &timeline{source: SourceArchive, notes: []string{"history: the raw event archive (events_archive:YYYYMMDDHH)"}}
	var pending []line
	hour := 0
	var last int64
	tl.next = func(ctx context.Context) (line, bool, error) {
		for len(pending) == 0 {
			if hour >= len(hours) {
				return line{}, false, nil
			}
			var err error
			pending, err = readArchiveHour(ctx, pool, hours[hour], h, tl)
			if err != nil {
				return line{}, false, err
			}
			hour++
		}
		l := pending[0]
		pending = pending[1:]
		if l.at < last {
			l.at = last
			l.raw = withTime(l.raw, last)
		}
		last = l.at
		return l, true, nil
	}
	return tl
}

func readArchiveHour(ctx context.Context, pool *redis.Pool, key string, h History, tl *timeline) ([]line, error) {
	conn, err := pool.GetContext(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	from, until := h.From.Unix(), h.Until.Unix()
	var out []line
	for start := 0; ; start += archiveBatch {
		items, err := redis.ByteSlices(conn.Do("LRANGE", key, start, start+archiveBatch-1))
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", key, err)
		}
		for _, raw := range items {
			ev, err := schema.ParseEvent(raw)
			if err == nil && !ev.HasTime && h.Filter.match(ev.Entity, ev.Check) && hasTags(ev.Tags, h.Filter.Tags) {
				// The executive decided it at its own clock, which the archive does not keep:
				// its place in the hour is not known well enough to replay it.
				tl.untimed++
				continue
			}
			if err != nil || !ev.HasTime || ev.Time < from || ev.Time > until ||
				!h.Filter.match(ev.Entity, ev.Check) || !hasTags(ev.Tags, h.Filter.Tags) {
				tl.skipped++
				continue
			}
			l := line{at: ev.Time, raw: raw, checkID: ev.ID(), armsStale: ev.HasTTL && ev.TTL > 0}
			if ev.Type == schema.TypeService {
				l.state = ev.State
			}
			if !integerTime(raw, ev.Time) {
				l.raw = withTime(raw, ev.Time)
			}
			out = append(out, l)
		}
		if len(items) < archiveBatch {
			break
		}
	}
	// The list holds the newest event at its head (Flapjack 1.x's layout): oldest first, then by
	// time, events of one second keeping the order they were processed in.
	slices.Reverse(out)
	sort.SliceStable(out, func(i, j int) bool { return out[i].at < out[j].at })
	return out, nil
}

// integerTime reports whether raw's "time" is the JSON integer t, as replay requires.
func integerTime(raw []byte, t int64) bool {
	var head struct {
		Time json.RawMessage `json:"time"`
	}
	if json.Unmarshal(raw, &head) != nil {
		return false
	}
	return string(head.Time) == strconv.FormatInt(t, 10)
}

// withTime rewrites an event's "time" as the integer t.
func withTime(raw []byte, t int64) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return raw
	}
	m["time"] = json.RawMessage(strconv.FormatInt(t, 10))
	out, err := json.Marshal(m)
	if err != nil {
		return raw
	}
	return out
}

// checkHistory is one check's recorded state changes and actions.
type checkHistory struct {
	entity, check string
	tags          []string // the check's tags, carried by every rebuilt event
	changes       []change // state changes, oldest first (the one before From first, if any)
	actions       []change // acknowledgements and other action events in the range
	interval      int64    // seconds between synthesised repeats; 0 = none
	// skipOKRepeats: no repeats of ok states (see History.KeepOKRepeats)
	skipOKRepeats bool
	lastUpdate    int64
}

type change struct {
	at              int64
	state, summary  string
	duration        int64 // acknowledgements: the unscheduled maintenance they started
	isAction        bool
	observedRepeats bool
}

// statesTimeline reconstructs a timeline from each check's state history (ENTITY:CHECK:states
// mirrored by sorted_state_timestamps), its actions (ENTITY:CHECK:actions) and the
// unscheduled maintenance acknowledgements started. Repeats between changes are synthesised at
// the interval observed in the check's decision record (explain:ENTITY:CHECK), else at
// h.RepeatInterval.
func statesTimeline(ctx context.Context, conn redis.Conn, keys schema.Keys, h History) (*timeline, error) {
	refs, err := inventory.CheckIDs(conn, keys)
	if err != nil {
		return nil, err
	}
	var chosen []model.CheckRef
	for _, r := range refs {
		if h.Filter.match(r.Entity, r.Check) {
			chosen = append(chosen, r)
		}
	}
	// The executive records no event's own tags outside the archive: the rebuilt events carry
	// the check's tags (check_tag:TAG, Flapjack's check tags, part of every event's tag set),
	// so rules matching those tags match as they did live.
	tags := map[model.CheckRef][]string{}
	if len(chosen) > 0 {
		checks, _, err := inventory.ReadChecks(ctx, conn, keys, chosen)
		if err != nil {
			return nil, err
		}
		for _, c := range checks {
			tags[c.CheckRef] = c.Tags
		}
		if len(h.Filter.Tags) > 0 {
			chosen = slices.DeleteFunc(chosen, func(r model.CheckRef) bool { return !hasTags(tags[r], h.Filter.Tags) })
		}
	}
	from, until := h.From.Unix(), h.Until.Unix()
	histories := make([]*checkHistory, 0, len(chosen))
	observed, fallback, tagged := 0, 0, 0
	for _, r := range chosen {
		ch, err := readCheckHistory(ctx, conn, keys, r, from, until, h.RepeatInterval)
		if err != nil {
			return nil, err
		}
		if ch == nil {
			continue
		}
		if ch.tags = tags[r]; len(ch.tags) > 0 {
			tagged++
		}
		ch.skipOKRepeats = !h.KeepOKRepeats
		if ch.interval > 0 {
			if ch.changes[0].observedRepeats {
				observed++
			} else {
				fallback++
			}
		}
		histories = append(histories, ch)
	}
	tl := &timeline{source: SourceStates, notes: []string{
		"history: reconstructed from state changes, acknowledgements and maintenance records (no event archive for the range)",
		fmt.Sprintf("repeats between changes are synthesised at the check's observed interval (%d checks observed, %d at the default %s, %d without repeats)",
			observed, fallback, h.RepeatInterval, len(histories)-observed-fallback),
	}}
	tl.notes = append(tl.notes, fmt.Sprintf("rebuilt events carry their check's tags (check_tag:TAG; %d of %d checks tagged): event tags the executive did not record are not known", tagged, len(histories)))
	if !h.KeepOKRepeats {
		tl.notes = append(tl.notes, "ok states are not repeated: an ok result of a check already ok decides nothing (--all-events repeats them)")
	}
	tl.checks = len(histories)
	m := newMerger(histories, from, until)
	tl.next = func(ctx context.Context) (line, bool, error) { l, ok := m.next(); return l, ok, nil }
	return tl, nil
}

func readCheckHistory(ctx context.Context, conn redis.Conn, keys schema.Keys, r model.CheckRef, from, until int64, fallback time.Duration) (*checkHistory, error) {
	id := r.ID()
	var b redisread.Batch
	before := b.Add("ZREVRANGEBYSCORE", keys.SortedStateTimestamps(id), from, "-inf", "LIMIT", 0, 1)
	in := b.Add("ZRANGEBYSCORE", keys.SortedStateTimestamps(id), "("+strconv.FormatInt(from, 10), until)
	acts := b.Add("HGETALL", keys.Actions(id))
	unsched := b.Add("ZRANGEBYSCORE", keys.Maintenances(schema.Unscheduled, id), "-inf", "+inf", "WITHSCORES")
	explain := b.Add("LRANGE", keys.Explain(id), 0, -1)
	lastUpdate := b.Add("HGET", keys.Check(id), "last_update")
	if err := b.Run(ctx, conn); err != nil {
		return nil, fmt.Errorf("read the history of %s: %w", id, err)
	}
	stamps := append(b.Strs(before), b.Strs(in)...)
	ch := &checkHistory{entity: r.Entity, check: r.Check}
	ch.lastUpdate, _ = strconv.ParseInt(b.Str(lastUpdate), 10, 64)
	var d redisread.Batch
	for _, s := range stamps {
		t, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			continue
		}
		ch.changes = append(ch.changes, change{at: t})
		d.Add("GET", keys.StateAt(id, t))
		d.Add("GET", keys.SummaryAt(id, t))
	}
	if err := d.Run(ctx, conn); err != nil {
		return nil, fmt.Errorf("read the states of %s: %w", id, err)
	}
	for i := range ch.changes {
		ch.changes[i].state, ch.changes[i].summary = d.Str(2*i), d.Str(2*i+1)
	}
	ch.changes = slices.DeleteFunc(ch.changes, func(c change) bool { return c.state == "" })
	durations := map[int64]int64{}
	if pairs := b.Strs(unsched); len(pairs) > 0 {
		for i := 0; i+1 < len(pairs); i += 2 {
			start, _ := strconv.ParseInt(pairs[i], 10, 64)
			dur, _ := strconv.ParseFloat(pairs[i+1], 64)
			durations[start] = int64(dur)
		}
	}
	actions := b.Strs(acts)
	for i := 0; i+1 < len(actions); i += 2 {
		t, err := strconv.ParseInt(actions[i], 10, 64)
		if err != nil || t < from || t > until {
			continue
		}
		ch.actions = append(ch.actions, change{at: t, state: actions[i+1], duration: durations[t], isAction: true})
	}
	sort.Slice(ch.actions, func(i, j int) bool { return ch.actions[i].at < ch.actions[j].at })
	if len(ch.changes) == 0 && len(ch.actions) == 0 {
		return nil, nil
	}
	if ch.lastUpdate > 0 && ch.lastUpdate < from && len(ch.actions) == 0 {
		// the check had stopped reporting before the range
		return nil, nil
	}
	if iv, ok := observedInterval(b.Strs(explain)); ok {
		ch.interval = iv
		if len(ch.changes) > 0 {
			ch.changes[0].observedRepeats = true
		}
	} else if !explainSeen(b.Strs(explain)) {
		ch.interval = int64(fallback / time.Second)
	}
	if len(ch.changes) == 0 {
		ch.interval = 0
	}
	return ch, nil
}

// observedInterval is the median gap between consecutive service events of the same state in a
// check's decision record (newest first), if it shows any repeat.
func observedInterval(entries []string) (int64, bool) {
	var gaps []int64
	var prev *schema.ExplainEntry
	for _, raw := range entries {
		var e schema.ExplainEntry
		if json.Unmarshal([]byte(raw), &e) != nil || e.Stage != schema.ExplainExecutive || e.Type != schema.TypeService {
			continue
		}
		if prev != nil && prev.State == e.State && prev.Time > e.Time {
			gaps = append(gaps, prev.Time-e.Time)
		}
		p := e
		prev = &p
	}
	if len(gaps) == 0 {
		return 0, false
	}
	slices.Sort(gaps)
	return gaps[len(gaps)/2], true
}

// explainSeen reports whether the record holds service events at all (then a record without
// repeats means the check did not repeat, and none are synthesised).
func explainSeen(entries []string) bool {
	n := 0
	for _, raw := range entries {
		var e schema.ExplainEntry
		if json.Unmarshal([]byte(raw), &e) == nil && e.Stage == schema.ExplainExecutive && e.Type == schema.TypeService {
			n++
		}
	}
	return n >= 2
}

// maintenanceLines are replay actions creating the scheduled maintenance windows of the
// chosen checks that overlap the range, at its start (the archive does not hold them: they are
// created through the API, not as events).
func maintenanceLines(ctx context.Context, conn redis.Conn, keys schema.Keys, h History) ([]line, error) {
	refs, err := inventory.CheckIDs(conn, keys)
	if err != nil {
		return nil, err
	}
	from, until := h.From.Unix(), h.Until.Unix()
	var out []line
	for _, r := range refs {
		if !h.Filter.match(r.Entity, r.Check) {
			continue
		}
		windows, err := checkstate.ListMaintenance(conn, keys, schema.Scheduled, r.ID())
		if err != nil {
			return nil, err
		}
		for _, w := range windows {
			if w.Start > until || w.Start+w.Duration < from {
				continue
			}
			raw, _ := json.Marshal(map[string]any{"action": "scheduled_maintenance", "time": from, "entity": r.Entity,
				"check": r.Check, "start": w.Start, "duration": w.Duration, "summary": w.Summary})
			out = append(out, line{at: from, raw: raw, checkID: r.ID()})
		}
	}
	return out, ctx.Err()
}

// cursor walks one check's reconstructed events.
type cursor struct {
	h       *checkHistory
	ci, ai  int   // next change, next action
	repeat  int64 // next synthesised repeat time; 0 = none pending
	current change
	end     int64
}

func (c *cursor) peek() (int64, bool) {
	best, ok := int64(0), false
	if c.ci < len(c.h.changes) {
		best, ok = c.h.changes[c.ci].at, true
	}
	if c.ai < len(c.h.actions) && (!ok || c.h.actions[c.ai].at < best) {
		best, ok = c.h.actions[c.ai].at, true
	}
	if c.repeat > 0 && (!ok || c.repeat < best) {
		best, ok = c.repeat, true
	}
	return best, ok
}

func (c *cursor) pop(from int64) line {
	at, _ := c.peek()
	var ev change
	switch {
	case c.ci < len(c.h.changes) && c.h.changes[c.ci].at == at:
		ev = c.h.changes[c.ci]
		c.ci++
		if ev.at < from {
			// the state the check was in when the range starts
			ev.at = from
		}
		c.current = ev
		c.repeat = 0
		if c.h.interval > 0 && !(c.h.skipOKRepeats && ev.state == schema.StateOK) {
			c.repeat = ev.at + c.h.interval
		}
	case c.ai < len(c.h.actions) && c.h.actions[c.ai].at == at:
		ev = c.h.actions[c.ai]
		c.ai++
	default:
		ev = c.current
		ev.at = c.repeat
		c.repeat += c.h.interval
	}
	if c.repeat > 0 && (c.repeat > c.end || (c.ci < len(c.h.changes) && c.repeat >= c.h.changes[c.ci].at)) {
		c.repeat = 0
	}
	ev.at = max(ev.at, from)
	return eventLine(c.h, ev)
}

// synthetic is a reconstructed event as replay reads it.
type synthetic struct {
	Entity   string   `json:"entity"`
	Check    string   `json:"check"`
	Type     string   `json:"type"`
	State    string   `json:"state"`
	Time     int64    `json:"time"`
	Summary  string   `json:"summary,omitempty"`
	Duration int64    `json:"duration,omitempty"`
	Tags     []string `json:"tags,omitempty"`
}

func eventLine(h *checkHistory, ev change) line {
	e := synthetic{Entity: h.entity, Check: h.check, Type: schema.TypeService, State: ev.state, Time: ev.at, Summary: ev.summary, Tags: h.tags}
	l := line{at: ev.at, checkID: schema.CheckID(h.entity, h.check)}
	if ev.isAction {
		e.Type, e.Duration = schema.TypeAction, ev.duration
	} else {
		l.state = ev.state
	}
	l.raw, _ = json.Marshal(e)
	return l
}

// merger interleaves the checks' cursors in time order (ties: check order).
type merger struct {
	from int64
	q    cursorHeap
}

func newMerger(hs []*checkHistory, from, until int64) *merger {
	m := &merger{from: from}
	for i, h := range hs {
		end := until
		if h.lastUpdate > 0 && h.lastUpdate < end {
			end = h.lastUpdate
		}
		c := &cursor{h: h, end: end}
		if _, ok := c.peek(); ok {
			m.q = append(m.q, heapItem{c: c, order: i})
		}
	}
	heap.Init(&m.q)
	return m
}

func (m *merger) next() (line, bool) {
	if len(m.q) == 0 {
		return line{}, false
	}
	top := &m.q[0]
	l := top.c.pop(m.from)
	if _, ok := top.c.peek(); ok {
		heap.Fix(&m.q, 0)
	} else {
		heap.Pop(&m.q)
	}
	return l, true
}

type heapItem struct {
	c     *cursor
	order int
}

type cursorHeap []heapItem

func (h cursorHeap) Len() int { return len(h) }
func (h cursorHeap) Less(i, j int) bool {
	a, _ := h[i].c.peek()
	b, _ := h[j].c.peek()
	if a != b {
		return a < b
	}
	return h[i].order < h[j].order
}
func (h cursorHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *cursorHeap) Push(x any)   { *h = append(*h, x.(heapItem)) }
func (h *cursorHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}
