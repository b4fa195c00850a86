// Package model owns flapjack's data in Redis: reading what decisions need about checks,
// contacts and rules, and writing the effects of decisions — state, history, maintenance,
// notification records — atomically, on the documented Flapjack 1.x layout (package schema names
// every key). Decisions themselves live in executive and notifier.
package model

import (
	_ "embed"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/schema"
)

var (
	//go:embed scripts/check_facts.lua
	checkFactsSource string
	checkFactsScript = redis.NewScript(0, checkFactsSource)
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

// FactsRequest names a check to read.
type FactsRequest struct {
	Entity, Check string
	Mode          FactsMode
}

const factsArgsPerCheck = 5

// factsHeader is the part of the facts script's arguments shared by every check: the suffixes
// of per-check keys and the global keys, all from package schema.
func factsHeader(keys schema.Keys, now time.Time, n int) []any {
	args := []any{now.Unix(), n,
		schema.MaintenancesSuffix(schema.Scheduled), schema.CurrentMaintenanceSuffix(schema.Scheduled),
		schema.SortedMaintenanceTimestampsSuffix(schema.Unscheduled), schema.MaintenancesSuffix(schema.Unscheduled),
		schema.CurrentMaintenanceSuffix(schema.Unscheduled)}
	for _, kind := range KindNames {
		args = append(args, schema.LastNotificationSuffix(kind))
	}
	return append(args, schema.SortedStateTimestampsSuffix, keys.EntityIDsByName(), keys.EntityID(""), keys.CurrentChecks(""))
}

// ReadFacts reads the facts of every requested check at now, in one round trip.
func ReadFacts(conn redis.Conn, keys schema.Keys, now time.Time, reqs []FactsRequest) ([]CheckFacts, error) {
	if len(reqs) == 0 {
		return nil, nil
	}
	args := factsHeader(keys, now, len(reqs))
	args = slices.Grow(args, factsArgsPerCheck*len(reqs))
	for _, r := range reqs {
		id := schema.CheckID(r.Entity, r.Check)
		args = append(args, keys.Check(id), keys.StateHistoryPrefix(id), string(r.Mode), r.Entity, r.Check)
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

func decodeFacts(r FactsRequest, v []any) (CheckFacts, error) {
	if len(v) != 33 {
		return CheckFacts{}, fmt.Errorf("%d values, want 33", len(v))
	}
	f := CheckFacts{ID: schema.CheckID(r.Entity, r.Check), Entity: r.Entity, Check: r.Check}
	f.State = str(v[0])
	f.LastChange = num(v[1])
	f.Revision = num(v[2])
	f.LastEventTime = num(v[3])
	f.LastSequence = num(v[4])
	f.InitialFailureDelay, f.HasInitialFailureDelay = optNum(v[5])
	f.RepeatFailureDelay, f.HasRepeatFailureDelay = optNum(v[6])
	f.ScheduledMaintenance = Window{Start: num(v[7]), End: num(v[8])}
	f.ScheduledCurrent = str(v[9])
	f.UnscheduledMaintenance = Window{Start: num(v[10]), End: num(v[11])}
	f.UnscheduledCurrent = str(v[12])
	for k := 0; k < numKinds; k++ {
		f.LastNotified[k] = num(v[13+k])
	}
	for j := 0; j < 2; j++ {
		o := 20 + j*3
		if v[o] == nil {
			break
		}
		f.History = append(f.History, HistoryEntry{Time: num(v[o]), State: str(v[o+1]), Summary: str(v[o+2])})
	}
	f.EntityID = str(v[26])
	f.Summary = str(v[27])
	f.Enabled = num(v[28]) == 1
	f.NotificationsRead = num(v[29]) == 1
	f.Details = str(v[30])
	f.LastNotificationKind = str(v[31])
	f.NotifiedSeverity = str(v[32])
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
