// Package model owns flapjack's data in Redis: reading what decisions need about checks,
// contacts and rules, and writing the effects of decisions — state, history, maintenance,
// notification records — atomically, on the documented Flapjack 1.x layout (package schema names
// every key). Decisions themselves live in executive and notifier.
package model

import (
	_ "embed"
	"fmt"
	"strconv"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/schema"
)

var (
	//go:embed scripts/check_facts.lua
	checkFactsSource string
	// checkFactsScript has the positions of facts_layout.go substituted for their names.
	checkFactsScript = redis.NewScript(0, mustExpandFacts(checkFactsSource))
)

// Notification kinds whose last timestamps are tracked (reference §2.5).
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

	EntityID string // only read for checks without a state
	Summary  string
	Details  string
	Enabled  bool // ModeRollup only

	// LastNotificationKind is the kind of the latest warning, critical, unknown, recovery or
	// acknowledgement notification, and NotifiedSeverity the highest failing severity notified
	// since the last recovery ("none" after one). They order notifications of the same second,
	// which the documented timestamps cannot; "" when written by Flapjack 1.x (then the
	// timestamps decide).
	LastNotificationKind string
	NotifiedSeverity     string
}

// NoNotifiedSeverity is notified_severity's value right after a recovery.
const NoNotifiedSeverity = "none"

// MaxNotifiedSeverity is the highest failing severity notified since the last recovery
// (reference §2.5), in priority order rather than recency: the recorded value, else derived from
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

// FactsRequest names a check to read.
type FactsRequest struct {
	Entity, Check string
	Mode          FactsMode
}

// factsArgs returns the facts script's arguments for n checks, with the header filled in: the
// suffixes of per-check keys and the global keys, all from package schema. The caller appends a
// record of factsArgsPerCheck values per check.
func factsArgs(keys schema.Keys, now time.Time, n int) []any {
	args := make([]any, factsHeaderLen, factsHeaderLen+factsArgsPerCheck*n)
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
	return args
}

// ReadFacts reads the facts of every requested check at now, in one round trip.
func ReadFacts(conn redis.Conn, keys schema.Keys, now time.Time, reqs []FactsRequest) ([]CheckFacts, error) {
	if len(reqs) == 0 {
		return nil, nil
	}
	args := factsArgs(keys, now, len(reqs))
	for _, r := range reqs {
		id := schema.CheckID(r.Entity, r.Check)
		var rec [factsArgsPerCheck]any
		rec[recCheckHash] = keys.Check(id)
		rec[recHistoryPrefix] = keys.StateHistoryPrefix(id)
		rec[recMode] = string(r.Mode)
		rec[recEntity] = r.Entity
		rec[recCheck] = r.Check
		args = append(args, rec[:]...)
	}
	reply, err := redis.Values(checkFactsScript.Do(conn, args...))
	if err != nil {
		return nil, fmt.Errorf("read check facts: %w", err)
	}
	if len(reply) != len(reqs) {
		return nil, fmt.Errorf("read check facts: %d results for %d checks", len(reply), len(reqs))
	}
	out := make([]CheckFacts, len(reqs))
	for i, r := range reqs {
		vals, err := redis.Values(reply[i], nil)
		if err != nil {
			return nil, fmt.Errorf("read check facts of %s: %w", schema.CheckID(r.Entity, r.Check), err)
		}
		out[i], err = decodeFacts(r, vals)
		if err != nil {
			return nil, fmt.Errorf("read check facts of %s: %w", schema.CheckID(r.Entity, r.Check), err)
		}
	}
	return out, nil
}

// decodeFacts reads one check's reply by the names of facts_layout.go.
func decodeFacts(r FactsRequest, v []any) (CheckFacts, error) {
	if len(v) != numFactsSlots {
		return CheckFacts{}, fmt.Errorf("%d values, want %d", len(v), numFactsSlots)
	}
	f := CheckFacts{ID: schema.CheckID(r.Entity, r.Check), Entity: r.Entity, Check: r.Check}
	f.State = str(v[slotState])
	f.LastChange = num(v[slotLastChange])
	f.Revision = num(v[slotRevision])
	f.LastEventTime = num(v[slotLastEventTime])
	f.LastSequence = num(v[slotLastSequence])
	f.InitialFailureDelay, f.HasInitialFailureDelay = optNum(v[slotInitialFailureDelay])
	f.RepeatFailureDelay, f.HasRepeatFailureDelay = optNum(v[slotRepeatFailureDelay])
	f.ScheduledMaintenance = Window{Start: num(v[slotSMStart]), End: num(v[slotSMEnd])}
	f.ScheduledCurrent = str(v[slotSMCurrent])
	f.UnscheduledMaintenance = Window{Start: num(v[slotUMStart]), End: num(v[slotUMEnd])}
	f.UnscheduledCurrent = str(v[slotUMCurrent])
	for k := range numKinds {
		f.LastNotified[k] = num(v[slotLastNotified+k])
	}
	for j := range factsHistoryLen {
		e := v[slotHistory+j*factsHistoryFields:][:factsHistoryFields]
		if e[histTime] == nil {
			break
		}
		f.History = append(f.History, HistoryEntry{Time: num(e[histTime]), State: str(e[histState]), Summary: str(e[histSummary])})
	}
	f.EntityID = str(v[slotEntityID])
	f.Summary = str(v[slotSummary])
	f.Enabled = num(v[slotEnabled]) == 1
	f.NotificationsRead = num(v[slotHistoryRead]) == 1
	f.Details = str(v[slotDetails])
	f.LastNotificationKind = str(v[slotLastNotificationKind])
	f.NotifiedSeverity = str(v[slotNotifiedSeverity])
	return f, nil
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

func num(v any) int64 {
	n, _ := optNum(v)
	return n
}

func optNum(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case []byte:
		n, err := strconv.ParseInt(string(x), 10, 64)
		if err != nil {
			f, ferr := strconv.ParseFloat(string(x), 64)
			if ferr != nil {
				return 0, false
			}
			return int64(f), true
		}
		return n, true
	}
	return 0, false
}

func formatInt(n int64) string { return strconv.FormatInt(n, 10) }
