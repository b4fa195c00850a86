package checkstate

import (
	"fmt"
	"os"
	"strings"
)

// The facts script's arguments and its reply are positional arrays. Every position is named
// once, here: Go indexes them through the constants below (0-based), and the script writes
// ${name} where it needs one, which factsScript replaces with the 1-based position when the
// package loads (panicking on an unknown name, or on a table below that does not match its
// constants). So the script runs with literal numbers, and Go decodes with constant indexes.
//
// Adding a value: add its constant, its row in the table beside it and its line in the script's
// head comment (TestFactsScriptComment compares them), then write it in the script by name, as a
// string, a number or false for absent (flags are 1/0: a packed reply joins the values with
// table.concat, which refuses true).

// ARGV header, shared by every check. Groups of more than one value take their width from the
// line after them (iota + width - 1).
const (
	argNow                   = iota // unix seconds, from the injected clock
	argChecks                       // N, the number of records after the header
	argScheduledMaintenances        // per-check key suffixes, from package schema
	argScheduledMaintenance
	argSortedUnscheduledMaintenanceTimestamps
	argUnscheduledMaintenances
	argUnscheduledMaintenance
	argLastNotification      // numKinds suffixes, in Kind* order
	argSortedStateTimestamps = iota + numKinds - 1
	argStateAt               // suffix of ID:TS:state
	argSummaryAt             // suffix of ID:TS:summary
	argEntityIDsByName       // key all_entity_ids_by_name
	argEntityIDPrefix        // prefix of entity_id:ENTITY
	argCurrentChecksPrefix   // prefix of current_checks:ENTITY
	argPacked                // "1": one joined string per check, "0": an array
	argKnownCheckTags        // key known_tags:check_tag, or "" not to read it
	factsHeaderLen
)

// One record per check, after the header.
const (
	recCheckHash     = iota // check:ID
	recHistoryPrefix        // "ID:"
	recMode                 // a FactsMode
	recEntity
	recCheck
	factsArgsPerCheck
)

// The reply: one array of numFactsSlots values per check.
const (
	slotState = iota
	slotLastChange
	slotRevision
	slotLastEventTime
	slotLastSequence
	slotInitialFailureDelay
	slotRepeatFailureDelay
	slotSMStart // the scheduled window covering now that ends last
	slotSMEnd
	slotSMCurrent // value of ID:scheduled_maintenance
	slotUMStart   // the latest unscheduled window started by now
	slotUMEnd
	slotUMCurrent                          // value of ID:unscheduled_maintenance
	slotLastNotified                       // numKinds timestamps, in Kind* order
	slotHistory      = iota + numKinds - 1 // factsHistoryLen entries, newest first
	slotEntityID     = iota + numKinds - 1 + factsHistoryLen*factsHistoryFields - 1
	slotSummary
	slotEnabled     // 1/0, ModeRollup only
	slotHistoryRead // 1/0: slotLastNotified and slotHistory were read
	slotDetails
	slotLastNotificationKind
	slotNotifiedSeverity
	slotNoWindows // 1/0: the check has no maintenance windows at all, past or future
	numFactsSlots
)

// shortSlots are the values of a short-form reply (a check without maintenance windows whose
// notification history was not read), in order: the check hash fields the script reads with one
// HMGET, in its order, then the enabled flag and the entity id.
var shortSlots = [...]int{
	slotState, slotLastChange, slotRevision, slotLastEventTime, slotLastSequence,
	slotInitialFailureDelay, slotRepeatFailureDelay, slotSummary, slotDetails,
	slotLastNotificationKind, slotNotifiedSeverity, slotEnabled, slotEntityID,
}

// A history entry in the reply, at slotHistory + entry*factsHistoryFields.
const (
	histTime = iota
	histState
	histSummary
	factsHistoryFields
)

// factsHistoryLen is how many state changes the script reads, newest first.
const factsHistoryLen = 2

// factsName names a position (0-based, as the constants) or, with width, a group of positions.
type factsName struct {
	name      string
	at, width int
}

// factsTable lists the names of one positional array in order; the script's head comment lists
// them under title. Names are unique across tables.
type factsTable struct {
	title string
	size  int
	names []factsName
}

var factsTables = []factsTable{
	{"ARGV header", factsHeaderLen, []factsName{
		{"now", argNow, 1},
		{"checks", argChecks, 1},
		{"scheduled_maintenances", argScheduledMaintenances, 1},
		{"scheduled_maintenance", argScheduledMaintenance, 1},
		{"sorted_unscheduled_maintenance_timestamps", argSortedUnscheduledMaintenanceTimestamps, 1},
		{"unscheduled_maintenances", argUnscheduledMaintenances, 1},
		{"unscheduled_maintenance", argUnscheduledMaintenance, 1},
		{"last_notification", argLastNotification, numKinds},
		{"sorted_state_timestamps", argSortedStateTimestamps, 1},
		{"state_at", argStateAt, 1},
		{"summary_at", argSummaryAt, 1},
		{"entity_ids_by_name", argEntityIDsByName, 1},
		{"entity_id_prefix", argEntityIDPrefix, 1},
		{"current_checks_prefix", argCurrentChecksPrefix, 1},
		{"packed", argPacked, 1},
		{"known_check_tags", argKnownCheckTags, 1},
	}},
	{"ARGV record", factsArgsPerCheck, []factsName{
		{"check_hash", recCheckHash, 1},
		{"history_prefix", recHistoryPrefix, 1},
		{"mode", recMode, 1},
		{"entity", recEntity, 1},
		{"check", recCheck, 1},
	}},
	{"Returns", numFactsSlots, []factsName{
		{"state", slotState, 1},
		{"last_change", slotLastChange, 1},
		{"revision", slotRevision, 1},
		{"last_event_time", slotLastEventTime, 1},
		{"last_sequence", slotLastSequence, 1},
		{"initial_failure_delay", slotInitialFailureDelay, 1},
		{"repeat_failure_delay", slotRepeatFailureDelay, 1},
		{"sm_start", slotSMStart, 1},
		{"sm_end", slotSMEnd, 1},
		{"sm_current", slotSMCurrent, 1},
		{"um_start", slotUMStart, 1},
		{"um_end", slotUMEnd, 1},
		{"um_current", slotUMCurrent, 1},
		{"last_notified", slotLastNotified, numKinds},
		{"history", slotHistory, factsHistoryLen * factsHistoryFields},
		{"entity_id", slotEntityID, 1},
		{"summary", slotSummary, 1},
		{"enabled", slotEnabled, 1},
		{"history_read", slotHistoryRead, 1},
		{"details", slotDetails, 1},
		{"last_notification_kind", slotLastNotificationKind, 1},
		{"notified_severity", slotNotifiedSeverity, 1},
		{"no_windows", slotNoWindows, 1},
	}},
	{"History entry", factsHistoryFields, []factsName{
		{"hist_time", histTime, 1},
		{"hist_state", histState, 1},
		{"hist_summary", histSummary, 1},
	}},
}

// factsCounts are the sizes the script needs, substituted as they are.
var factsCounts = map[string]int{
	"header_len":     factsHeaderLen,
	"slots":          numFactsSlots,
	"args_per_check": factsArgsPerCheck,
	"kinds":          numKinds,
	"history_len":    factsHistoryLen,
	"history_fields": factsHistoryFields,
}

// factsPositions checks the tables against their constants (each table covers 0..size-1 in
// order, without gaps or overlaps; no name twice) and returns every name's 1-based position,
// with the counts.
func factsPositions() (map[string]int, error) {
	pos := make(map[string]int, len(factsCounts))
	for name, n := range factsCounts {
		pos[name] = n
	}
	for _, t := range factsTables {
		next := 0
		for _, n := range t.names {
			if n.at != next || n.width < 1 {
				return nil, fmt.Errorf("%s: %s is at %d (width %d), want %d", t.title, n.name, n.at, n.width, next)
			}
			if _, dup := pos[n.name]; dup {
				return nil, fmt.Errorf("%s: %s named twice", t.title, n.name)
			}
			pos[n.name] = n.at + 1
			next += n.width
		}
		if next != t.size {
			return nil, fmt.Errorf("%s: names cover %d positions of %d", t.title, next, t.size)
		}
	}
	return pos, nil
}

// expandFacts replaces each ${name} in the script source with its position or count.
func expandFacts(src string) (string, error) {
	pos, err := factsPositions()
	if err != nil {
		return "", err
	}
	var unknown []string
	out := os.Expand(src, func(name string) string {
		n, ok := pos[name]
		if !ok {
			unknown = append(unknown, name)
			return ""
		}
		return fmt.Sprint(n)
	})
	if len(unknown) > 0 {
		return "", fmt.Errorf("unknown names %q", unknown)
	}
	if strings.Contains(out, "$") {
		return "", fmt.Errorf("a $ is left after expansion")
	}
	return out, nil
}

func mustExpandFacts(src string) string {
	out, err := expandFacts(src)
	if err != nil {
		panic("model: check_facts.lua: " + err.Error())
	}
	return out
}
