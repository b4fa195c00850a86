package checkstate

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/schema"
)

var (
	//go:embed scripts/check_facts.lua
	checkFactsSource string
	// checkFactsScript has the positions of facts_layout.go substituted for their names.
	checkFactsScript = model.NewScript(mustExpandFacts(checkFactsSource))
)

// Notification kinds whose last timestamps are tracked (docs/flapjack-1x.md 2.5).
const (
	KindProblem = iota
	KindWarning
	KindCritical
	KindUnknown
	KindRecovery
	KindAcknowledgement
	KindTest
	numKinds
)

// KindNames are the key names of the kinds, indexed by Kind*.
var KindNames = [numKinds]string{"problem", "warning", "critical", "unknown", "recovery", "acknowledgement", "test"}

// KindIndex maps a kind name to its index.
func KindIndex(name string) (int, bool) {
	for i, n := range KindNames {
		if n == name {
			return i, true
		}
	}
	return 0, false
}

// FactsMode says how much a facts read fetches.
type FactsMode string

const (
	// ModeEventOK is for an ok event: notification history is skipped when the check is ok.
	ModeEventOK FactsMode = "event-ok"
	// ModeEvent fetches notification history and the last two state changes.
	ModeEvent FactsMode = "event"
	// ModeRollup adds the summary and whether the check is enabled.
	ModeRollup FactsMode = "rollup"
	// ModeMaintenance reads only the check hash and the maintenance windows.
	ModeMaintenance FactsMode = "maintenance"
	// ModeAlerting reads what cleaning a contact's alerting set and describing a rollup need:
	// the state, last change and summary of the check hash, the maintenance windows, whether
	// the check is enabled and its entity's id (for the contacts interested in it), without
	// ModeRollup's notification timestamps and history (a fifth of the Redis calls per check).
	// The notifier reads it for every member of an alerting set, so the check hash's other
	// fields are left out as well.
	ModeAlerting FactsMode = "alerting"
)

// Window is a maintenance window [Start, End).
type Window struct {
	Start, End int64
}

// Covers reports whether the window is set and contains now.
func (w Window) Covers(now int64) bool { return w.End > 0 && w.Start <= now && now < w.End }

// HistoryEntry is one recorded state change.
type HistoryEntry struct {
	Time    int64
	State   string
	Summary string
}

// CheckFacts is what is known about a check at one instant.
type CheckFacts struct {
	ID, Entity, Check string

	State         string // "" = never seen
	LastChange    int64
	Revision      int64
	LastEventTime int64
	LastSequence  int64

	InitialFailureDelay, RepeatFailureDelay       int64
	HasInitialFailureDelay, HasRepeatFailureDelay bool

	// ScheduledMaintenance is the active window ending last, if any covers now.
	ScheduledMaintenance Window
	// ScheduledCurrent is the value of ID:scheduled_maintenance ("" = absent).
	ScheduledCurrent string
	// UnscheduledMaintenance is the latest window started by now (it may have ended).
	UnscheduledMaintenance Window
	UnscheduledCurrent     string

	// NotificationsRead tells whether LastNotified and History were fetched.
	NotificationsRead bool
	LastNotified      [numKinds]int64
	History           []HistoryEntry // newest first, at most two

	EntityID string // only read for checks without a state, and in ModeAlerting
	Summary  string
	Details  string
	Enabled  bool // ModeRollup and ModeAlerting only

	// LastNotificationKind is the kind of the latest warning, critical, unknown, recovery or
	// acknowledgement notification, and NotifiedSeverity the highest failing severity notified
	// since the last recovery ("none" after one). They order notifications of the same second,
	// which the documented timestamps cannot; "" when written by Flapjack 1.x (then the
	// timestamps decide).
	LastNotificationKind string
	NotifiedSeverity     string

	// CheckTags are the tags given to the check through the API (check_tag:TAG); set by
	// ReadFactsWithCheckTags, not by ReadFacts.
	CheckTags []string

	// NoWindows tells that the check had no maintenance windows at all, past or future, when
	// read.
	NoWindows bool
}

// NoNotifiedSeverity is notified_severity's value right after a recovery.
const NoNotifiedSeverity = "none"

// MaxNotifiedSeverity is the highest failing severity notified since the last recovery
// (docs/flapjack-1x.md 2.5), in priority order rather than recency: the recorded value, else derived from
// the timestamps (a database written by Flapjack 1.x). Recoveries and acknowledgements inherit
// it as their severity. "" when nothing failing was notified (NotificationsRead must be true).
func (f *CheckFacts) MaxNotifiedSeverity() string {
	switch f.NotifiedSeverity {
	case NoNotifiedSeverity:
		return ""
	case schema.StateCritical, schema.StateWarning, schema.StateUnknown:
		return f.NotifiedSeverity
	}
	recovery := f.LastNotified[KindRecovery]
	switch {
	case f.LastNotified[KindCritical] > recovery:
		return schema.StateCritical
	case f.LastNotified[KindWarning] > recovery:
		return schema.StateWarning
	case f.LastNotified[KindUnknown] > recovery:
		return schema.StateUnknown
	}
	return ""
}

// NoWindowsGuards are the guards of a decision taken on facts that found check id without
// maintenance windows: the keys whose existence the facts script looks for must still not exist
// when the decision is applied.
func NoWindowsGuards(keys schema.Keys, id string) [2]model.Guard {
	return [2]model.Guard{
		{Key: keys.Maintenances(schema.Scheduled, id), Absent: true},
		{Key: keys.SortedMaintenanceTimestamps(schema.Unscheduled, id), Absent: true},
	}
}

// FactsRequest names a check to read.
type FactsRequest struct {
	Entity, Check string
	Mode          FactsMode
}

// factsArgs returns the facts script's arguments for n checks after ScriptHead free values, with
// the header filled in: the suffixes of per-check keys and the global keys, all from package
// schema. The caller appends a record of factsArgsPerCheck values per check.
func factsArgs(keys schema.Keys, now time.Time, n int) []any {
	head := model.NewArgs(model.ScriptHead + factsHeaderLen + factsArgsPerCheck*n)[:model.ScriptHead+factsHeaderLen]
	args := head[model.ScriptHead:]
	args[argNow] = now.Unix()
	args[argChecks] = n
	args[argScheduledMaintenances] = schema.MaintenancesSuffix(schema.Scheduled)
	args[argScheduledMaintenance] = schema.CurrentMaintenanceSuffix(schema.Scheduled)
	args[argSortedUnscheduledMaintenanceTimestamps] = schema.SortedMaintenanceTimestampsSuffix(schema.Unscheduled)
	args[argUnscheduledMaintenances] = schema.MaintenancesSuffix(schema.Unscheduled)
	args[argUnscheduledMaintenance] = schema.CurrentMaintenanceSuffix(schema.Unscheduled)
	for k, kind := range KindNames {
		args[argLastNotification+k] = schema.LastNotificationSuffix(kind)
	}
	args[argSortedStateTimestamps] = schema.SortedStateTimestampsSuffix
	args[argStateAt] = schema.StateAtSuffix
	args[argSummaryAt] = schema.SummaryAtSuffix
	args[argEntityIDsByName] = keys.EntityIDsByName()
	args[argEntityIDPrefix] = keys.EntityID("")
	args[argCurrentChecksPrefix] = keys.CurrentChecks("")
	args[argPacked] = "0"
	args[argKnownCheckTags] = ""
	return head
}

// ReadFacts reads the facts of every requested check at now, in one round trip (two in the rare
// batch where a value holds the packing separator).
func ReadFacts(conn redis.Conn, keys schema.Keys, now time.Time, reqs []FactsRequest) ([]CheckFacts, error) {
	return readAllFacts(conn, keys, now, reqs, nil)
}

// ReadFactsWithCheckTags is ReadFacts that also fills each check's CheckTags, the tags given
// to it through the API (check_tag:TAG), for the event tag set (docs/flapjack-1x.md 1.5): the tags the
// API gave any check (known_tags:check_tag) come in the facts' round trip, and which checks
// carry them takes one more only when there are some.
func ReadFactsWithCheckTags(ctx context.Context, conn redis.Conn, keys schema.Keys, now time.Time, reqs []FactsRequest) ([]CheckFacts, error) {
	var known []string
	facts, err := readAllFacts(conn, keys, now, reqs, &known)
	if err != nil || len(known) == 0 {
		return facts, err
	}
	ids := make([]string, len(facts))
	for i := range facts {
		ids[i] = facts[i].ID
	}
	tags, err := checkTagsAmong(ctx, conn, keys, known, ids)
	if err != nil {
		return nil, err
	}
	for i := range facts {
		facts[i].CheckTags = tags[facts[i].ID]
	}
	return facts, nil
}

// readAllFacts reads reqs' facts and, when knownTags is not nil, the known check tags into it.
func readAllFacts(conn redis.Conn, keys schema.Keys, now time.Time, reqs []FactsRequest, knownTags *[]string) ([]CheckFacts, error) {
	if len(reqs) == 0 {
		return nil, nil
	}
	out := make([]CheckFacts, len(reqs))
	var again []int
	err := readFacts(conn, keys, now, reqs, nil, true, knownTags, func(i int, v *factsValues, ok bool) {
		if !ok {
			again = append(again, i)
			return
		}
		out[i] = decodeFacts(reqs[i], v)
	})
	if err == nil && len(again) > 0 {
		err = readFacts(conn, keys, now, reqs, again, false, nil, func(i int, v *factsValues, _ bool) {
			out[i] = decodeFacts(reqs[i], v)
		})
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// readFacts runs the script for reqs (only those at the indexes given, when some are) and hands
// each check's values to use, with ok false for a packed reply that cannot be split for certain;
// with knownTags, it reads the known check tags into it as well.
func readFacts(conn redis.Conn, keys schema.Keys, now time.Time, reqs []FactsRequest, only []int, packed bool,
	knownTags *[]string, use func(i int, v *factsValues, ok bool)) error {
	n := len(reqs)
	if only != nil {
		n = len(only)
	}
	at := func(j int) int {
		if only != nil {
			return only[j]
		}
		return j
	}
	args := factsArgs(keys, now, n)
	if packed {
		args[model.ScriptHead+argPacked] = "1"
	}
	if knownTags != nil {
		args[model.ScriptHead+argKnownCheckTags] = keys.KnownCheckTags()
	}
	for j := range n {
		r := &reqs[at(j)]
		id := schema.CheckID(r.Entity, r.Check)
		var rec [factsArgsPerCheck]any
		rec[recCheckHash] = keys.Check(id)
		rec[recHistoryPrefix] = keys.StateHistoryPrefix(id)
		rec[recMode] = string(r.Mode)
		rec[recEntity] = r.Entity
		rec[recCheck] = r.Check
		args = append(args, rec[:]...)
	}
	reply, err := redis.Values(checkFactsScript.Run(conn, args))
	model.Recycle(args)
	if err != nil {
		return fmt.Errorf("read check facts: %w", err)
	}
	if knownTags != nil && len(reply) == n+1 {
		if *knownTags, err = redis.Strings(reply[n], nil); err != nil {
			return fmt.Errorf("read known check tags: %w", err)
		}
		reply = reply[:n]
	}
	if len(reply) != n {
		return fmt.Errorf("read check facts: %d results for %d checks", len(reply), n)
	}
	var v factsValues
	for j, one := range reply {
		i := at(j)
		ok, err := v.set(one)
		if err != nil {
			return fmt.Errorf("read check facts of %s: %w", schema.CheckID(reqs[i].Entity, reqs[i].Check), err)
		}
		use(i, &v, ok)
	}
	return nil
}

// factsValue is one value of the facts reply ("" when absent: for every fact, an empty value
// means the same as none).
type factsValue = string

// factsValues is one check's reply, by slot.
type factsValues [numFactsSlots]factsValue

// factsSeparator joins a check's values in a packed reply.
const factsSeparator = "\x1f"

// factsShortMark starts a packed reply in the short form (shortSlots only).
const factsShortMark = '\x1e'

// set reads one check's reply: a packed string (ok is false when its separators do not add up,
// because a value holds the byte) or an array. Packed values share one string: one copy per check.
func (v *factsValues) set(reply any) (ok bool, err error) {
	switch x := reply.(type) {
	case []byte:
		if len(x) > 0 && x[0] == factsShortMark {
			return v.setShort(string(x[1:])), nil
		}
		s := string(x)
		if strings.Count(s, factsSeparator) != numFactsSlots-1 {
			return false, nil
		}
		for j := range numFactsSlots - 1 {
			k := strings.IndexByte(s, factsSeparator[0])
			v[j], s = s[:k], s[k+1:]
		}
		v[numFactsSlots-1] = s
		return true, nil
	case []any:
		if len(x) != numFactsSlots {
			return false, fmt.Errorf("%d values, want %d", len(x), numFactsSlots)
		}
		for j, e := range x {
			v[j] = str(e)
		}
		return true, nil
	}
	return false, fmt.Errorf("unexpected reply %T", reply)
}

// setShort reads a short-form reply (the mark taken off): shortSlots' values in order, every
// other value absent.
func (v *factsValues) setShort(s string) bool {
	if strings.Count(s, factsSeparator) != len(shortSlots)-1 {
		return false
	}
	*v = factsValues{}
	for _, slot := range shortSlots[:len(shortSlots)-1] {
		k := strings.IndexByte(s, factsSeparator[0])
		v[slot], s = s[:k], s[k+1:]
	}
	v[shortSlots[len(shortSlots)-1]] = s
	return true
}

// decodeFacts reads one check's values by the names of facts_layout.go.
func decodeFacts(r FactsRequest, v *factsValues) CheckFacts {
	f := CheckFacts{ID: schema.CheckID(r.Entity, r.Check), Entity: r.Entity, Check: r.Check}
	f.State = v[slotState]
	f.LastChange = valueNum(v[slotLastChange])
	f.Revision = valueNum(v[slotRevision])
	f.LastEventTime = valueNum(v[slotLastEventTime])
	f.LastSequence = valueNum(v[slotLastSequence])
	f.InitialFailureDelay, f.HasInitialFailureDelay = valueOptNum(v[slotInitialFailureDelay])
	f.RepeatFailureDelay, f.HasRepeatFailureDelay = valueOptNum(v[slotRepeatFailureDelay])
	f.ScheduledMaintenance = Window{Start: valueNum(v[slotSMStart]), End: valueNum(v[slotSMEnd])}
	f.ScheduledCurrent = v[slotSMCurrent]
	f.UnscheduledMaintenance = Window{Start: valueNum(v[slotUMStart]), End: valueNum(v[slotUMEnd])}
	f.UnscheduledCurrent = v[slotUMCurrent]
	for k := range numKinds {
		f.LastNotified[k] = valueNum(v[slotLastNotified+k])
	}
	for j := range factsHistoryLen {
		e := v[slotHistory+j*factsHistoryFields:][:factsHistoryFields]
		if e[histTime] == "" {
			break
		}
		if f.History == nil {
			f.History = make([]HistoryEntry, 0, factsHistoryLen)
		}
		f.History = append(f.History, HistoryEntry{Time: valueNum(e[histTime]), State: e[histState], Summary: e[histSummary]})
	}
	f.EntityID = v[slotEntityID]
	f.Summary = v[slotSummary]
	f.Enabled = valueNum(v[slotEnabled]) == 1
	f.NotificationsRead = valueNum(v[slotHistoryRead]) == 1
	f.Details = v[slotDetails]
	f.LastNotificationKind = v[slotLastNotificationKind]
	f.NotifiedSeverity = v[slotNotifiedSeverity]
	// The short reply, given only to checks without windows, leaves the long one's flags out.
	f.NoWindows = v[slotHistoryRead] == "" || valueNum(v[slotNoWindows]) == 1
	return f
}

func valueNum(v factsValue) int64 {
	n, _ := valueOptNum(v)
	return n
}

// valueOptNum parses a number the script read (Redis stores integers; Lua renders a computed
// one with a fraction if it has one, which is truncated as Redis's integer reply would be).
func valueOptNum(v factsValue) (int64, bool) {
	if v == "" {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(v, 64)
		if ferr != nil {
			return 0, false
		}
		return int64(f), true
	}
	return n, true
}

func str(v any) string {
	switch x := v.(type) {
	case []byte:
		return string(x)
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	}
	return ""
}

func formatInt(n int64) string { return strconv.FormatInt(n, 10) }
