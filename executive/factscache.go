package executive

import (
	"hash/maphash"
	"slices"

	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/schema"
)

// factsCache remembers, per check, the facts an applied decision left behind when deciding the
// check's next result needs nothing else: an ok result on an ok check (nearly every event), and a
// failing result on a check failing alike that the delays held back (every failing event between
// two repeated notifications). Those are decided without reading the facts again (the read was a
// third of Redis's time per event, and a failing check's, reading its notification history, five
// times an ok one's). Nothing rests on the cache being right: the decision is applied guarded by
// the revision it was taken on, and by the absence of maintenance windows (an outside tool
// writing the documented keys leaves our revision alone), so a check anyone else wrote since is a
// conflict, read again and decided again, exactly as for a read that another executive overtook.
// The cache holds no state history, which only a notification needs: a failing result decided
// on cached facts that notifies is decided again on a read (notifiesWithoutHistory).
//
// Entries are small and hold no pointers, so they can live outside the Go heap (factsTable): the
// summary and details are kept as hashes, which is all deciding such a result compares them for.
// A failing check's notification times are kept beside, in a map as small as the failing checks
// are few. A check is keyed by a hash of its name and told apart from a colliding one by a second
// hash.
type factsCache struct {
	entries *factsTable
	// failing holds the notification times of the entries whose state is failing, by key, set
	// or dropped with every entry put; an entry without them is not used.
	failing map[uint64]failingTimes
	seeds   [2]maphash.Seed
	// The cache steps aside while its entries keep conflicting: another executive is handling
	// the same checks, so entries are mostly out of date and each use would cost an apply.
	pausedBatches int
	// uses and conflicts count the batch's decisions taken on cached facts, and those of them
	// that conflicted.
	uses, conflicts int
}

// cachedFacts is one check's facts after an applied decision that leaves no maintenance windows
// implied: 64 bytes. Delays that do not fit 16 bits (over 18 hours) are not cached.
type cachedFacts struct {
	key                         uint64 // hash of the check's name (0: empty slot)
	revision, lastChange        int64
	lastEventTime, lastSequence int64
	summary, details            uint64
	initialDelay, repeatDelay   uint16
	name                        uint16 // second hash of the check's name
	state                       uint8  // index into cachedStates
	order                       uint8  // last_notification_kind << 4 | notified_severity, indexes into orderValues
}

// failingTimes are what deciding a failing result on a failing check reads of its notification
// history besides the check hash (the delays filter): the last problem notification, and the
// kind and time of the last notification that orders repeats.
type failingTimes struct {
	lastProblem, lastNotified int64
	lastNotifiedKind          uint8 // index into orderValues
}

// cachedStates are the states an entry can hold, ok first.
var cachedStates = []string{schema.StateOK, schema.StateCritical, schema.StateWarning, schema.StateUnknown}

// factsAfter is what a decision the cache can keep leaves in the check's facts.
type factsAfter struct {
	state                                                                        string
	revision, lastChange, lastEventTime, lastSequence, initialDelay, repeatDelay int64
	summary, details, lastNotificationKind, notifiedSeverity                     string
	// a failing check's (lastNotification's kind and time)
	lastProblem, lastNotifiedAt int64
	lastNotified                string
}

// orderValues are the values of last_notification_kind and notified_severity an entry can hold;
// a check holding another (written by someone else) is not cached.
var orderValues = []string{"", checkstate.NoNotifiedSeverity, schema.StateCritical, schema.StateWarning,
	schema.StateUnknown, schema.NotificationRecovery, schema.NotificationAcknowledgement}

// conflictPause is how many batches the cache steps aside for once its entries conflicted.
const conflictPause = 1000

// defaultFactsCacheChecks covers most installations whole, in 8 MiB; maxFactsCacheChecks bounds
// the setting.
const (
	defaultFactsCacheChecks = 100_000
	maxFactsCacheChecks     = 10_000_000
)

func newFactsCache(max int) *factsCache {
	if max <= 0 {
		return nil
	}
	return &factsCache{entries: newFactsTable(max), failing: make(map[uint64]failingTimes),
		seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}}
}

// keys hashes ev's check name with each seed: the table key, and the second hash telling apart
// checks whose keys collide.
func (c *factsCache) keys(ev *schema.Event) (key uint64, name uint16) {
	var sums [2]uint64
	var h maphash.Hash
	for i, seed := range c.seeds {
		h.SetSeed(seed)
		h.WriteString(ev.Entity)
		h.WriteByte(0)
		h.WriteString(ev.Check)
		sums[i] = h.Sum64()
	}
	return tableKey(sums[0]), uint16(sums[1])
}

func (c *factsCache) hash(s string) uint64 { return maphash.String(c.seeds[0], s) }

// active reports whether the cache is used for this batch.
func (c *factsCache) active() bool {
	if c == nil {
		return false
	}
	if c.pausedBatches > 0 {
		c.pausedBatches--
		return false
	}
	return true
}

// lookup returns the facts to decide ev with, when the cache holds its check: for an ok result,
// an ok check; for a failing one, a check failing alike. The summary and details are ev's own
// when their hashes match the stored ones, else a value that differs from ev's, so the decision
// writes them.
func (c *factsCache) lookup(ev *schema.Event, f *checkstate.CheckFacts) bool {
	if !ev.IsOK() && !ev.IsFailure() {
		return false
	}
	key, name := c.keys(ev)
	e, ok := c.entries.get(key)
	if !ok || e.name != name || cachedStates[e.state] != ev.State {
		return false
	}
	var times failingTimes
	if e.state != 0 {
		if times, ok = c.failing[key]; !ok {
			return false
		}
	}
	*f = checkstate.CheckFacts{
		ID: schema.CheckID(ev.Entity, ev.Check), Entity: ev.Entity, Check: ev.Check,
		State: ev.State, LastChange: e.lastChange, Revision: e.revision,
		LastEventTime: e.lastEventTime, LastSequence: e.lastSequence,
		InitialFailureDelay: int64(e.initialDelay), RepeatFailureDelay: int64(e.repeatDelay),
		HasInitialFailureDelay: true, HasRepeatFailureDelay: true,
		Summary: c.stored(ev.Summary, e.summary), Details: c.stored(ev.Details, e.details),
		LastNotificationKind: orderValues[e.order>>4], NotifiedSeverity: orderValues[e.order&0xf],
		NoWindows: true,
	}
	if e.state != 0 {
		// lastNotification finds the same kind and time in these: by the recorded kind, or
		// (none recorded) by the only time set
		f.NotificationsRead = true
		f.LastNotified[checkstate.KindProblem] = times.lastProblem
		if k, ok := checkstate.KindIndex(orderValues[times.lastNotifiedKind]); ok {
			f.LastNotified[k] = times.lastNotified
		}
	}
	return true
}

// notifiesWithoutHistory reports whether d, taken on cached facts f, notifies: a failing
// result's notification says the check's previous state from its history, which the cache does
// not hold, so d must be taken again on a read.
func notifiesWithoutHistory(d *decision, f *checkstate.CheckFacts) bool {
	return d.verdict == VerdictNotified && f.State != schema.StateOK
}

// stored is what to take as the stored text whose hash is h, for a decision about new text.
func (c *factsCache) stored(text string, h uint64) string {
	if c.hash(text) == h {
		return text
	}
	if text == "" {
		return "\x00"
	}
	return ""
}

// applied takes note of ev's decision d and the status its record was applied with: an
// applied one's facts are kept when it says what they are, every other outcome forgets the
// check. cached tells d was taken on cached facts.
func (c *factsCache) applied(ev *schema.Event, d *decision, st model.Status, cached bool) {
	if cached {
		c.uses++
		if st == model.Conflict {
			c.conflicts++
		}
	}
	if st == model.Applied && d.verdict == VerdictStale {
		return // nothing was written: the facts are as they were
	}
	key, name := c.keys(ev)
	if st != model.Applied || !d.hasAfter {
		c.forget(key)
		return
	}
	a := &d.after
	state, okState := indexIn(cachedStates, a.state)
	kind, okKind := indexIn(orderValues, a.lastNotificationKind)
	severity, okSeverity := indexIn(orderValues, a.notifiedSeverity)
	if !okState || !okKind || !okSeverity || a.initialDelay != int64(uint16(a.initialDelay)) || a.repeatDelay != int64(uint16(a.repeatDelay)) {
		c.forget(key)
		return
	}
	if state != 0 {
		lastKind, ok := indexIn(orderValues, a.lastNotified)
		if !ok {
			c.forget(key)
			return
		}
		if len(c.failing) >= max(c.entries.max/8, 64) {
			clear(c.failing) // entries without their times are not used
		}
		c.failing[key] = failingTimes{lastProblem: a.lastProblem, lastNotified: a.lastNotifiedAt, lastNotifiedKind: lastKind}
	} else {
		delete(c.failing, key)
	}
	c.entries.put(cachedFacts{
		key: key, name: name, revision: a.revision, lastChange: a.lastChange,
		lastEventTime: a.lastEventTime, lastSequence: a.lastSequence,
		initialDelay: uint16(a.initialDelay), repeatDelay: uint16(a.repeatDelay),
		summary: c.hash(a.summary), details: c.hash(a.details),
		state: state, order: kind<<4 | severity,
	})
}

// forget drops the check keyed key.
func (c *factsCache) forget(key uint64) {
	c.entries.delete(key)
	delete(c.failing, key)
}

// batchDone ends a batch and returns how many of its decisions were taken on cached facts. The
// cache steps aside when more than an eighth of them conflicted.
func (c *factsCache) batchDone() int {
	uses := c.uses
	if c.conflicts > 0 && c.conflicts*8 > uses {
		c.pausedBatches = conflictPause
		c.entries.clear()
		clear(c.failing)
	}
	c.uses, c.conflicts = 0, 0
	return uses
}

// indexIn is v's index in values, which an entry keeps instead of v.
func indexIn(values []string, v string) (uint8, bool) {
	i := slices.Index(values, v)
	return uint8(i), i >= 0
}
