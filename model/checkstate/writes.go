package checkstate

import (
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/schema"
)

// CheckWriter appends the documented writes for one check to an Ops list. Fields of the check
// hash are gathered and written by one HSET in Flush, together with the next revision.
type CheckWriter struct {
	Keys                  schema.Keys
	ID, Entity, CheckName string
	Ops                   *model.Ops
	checkFields           []any
}

// NewCheckWriter returns a writer for entity:check appending to ops.
func NewCheckWriter(keys schema.Keys, entity, check string, ops *model.Ops) *CheckWriter {
	// room for the check hash fields an event usually sets, in one allocation
	return &CheckWriter{Keys: keys, ID: schema.CheckID(entity, check), Entity: entity, CheckName: check, Ops: ops,
		checkFields: make([]any, 0, 12)}
}

// setCheck queues check hash fields for Flush.
func (w *CheckWriter) setCheck(fieldValues ...any) {
	w.checkFields = append(w.checkFields, fieldValues...)
}

// Flush writes the gathered check hash fields and the check's next revision (the guard of the
// record these writes belong to).
func (w *CheckWriter) Flush(nextRevision int64) {
	w.Ops.HSet(w.Keys.Check(w.ID), append(w.checkFields, "revision", nextRevision)...)
	w.checkFields = nil
}

// StateChange records a new state in the history (docs/flapjack-1x.md 2.3, "if the new state differs").
func (w *CheckWriter) StateChange(now int64, state, summary, details string, count int64) {
	k := w.Keys
	w.setCheck("state", state, "last_change", now)
	if schema.IsFailure(state) {
		w.Ops.ZAdd(k.FailedChecks(), now, w.ID)
	} else {
		w.Ops.ZRem(k.FailedChecks(), w.ID)
	}
	w.Ops.RPush(k.States(w.ID), now)
	w.Ops.Set(k.StateAt(w.ID, now), state)
	if summary != "" {
		w.Ops.Set(k.SummaryAt(w.ID, now), summary)
	}
	if details != "" {
		w.Ops.Set(k.DetailsAt(w.ID, now), details)
	}
	w.Ops.Set(k.CountAt(w.ID, now), count)
	w.Ops.ZAdd(k.SortedStateTimestamps(w.ID), now, now)
}

// Update is what every service event writes into the check hash.
type Update struct {
	Now                 int64
	Summary, Details    string
	Perfdata            string // raw Nagios perfdata; "" = leave the stored value
	InitialFailureDelay int64
	RepeatFailureDelay  int64
	EventTime           int64 // newest event `time` applied (orders events, docs/decisions.md D11); 0 = none
	Sequence            int64 // claim order; 0 when unknown
	// Stale: a result recorded because the check went silent (docs/decisions.md D19); last_update keeps the
	// time of the last real result, so freshness and the staleness claim still see the silence.
	Stale bool
}

// ServiceUpdate writes the fields every service event sets in the check hash (docs/flapjack-1x.md 2.3
// "Always"), skipping those that already hold the value (f is what was read). The indexes that
// make the check current are written for a whole batch by the caller (Indexes).
func (w *CheckWriter) ServiceUpdate(u Update, f *CheckFacts) {
	if !u.Stale {
		w.setCheck("last_update", u.Now)
	}
	isNew := f.State == ""
	if isNew || u.Summary != f.Summary {
		w.setCheck("summary", u.Summary)
	}
	if isNew || u.Details != f.Details {
		w.setCheck("details", u.Details)
	}
	if !f.HasInitialFailureDelay || u.InitialFailureDelay != f.InitialFailureDelay {
		w.setCheck("initial_failure_delay", u.InitialFailureDelay)
	}
	if !f.HasRepeatFailureDelay || u.RepeatFailureDelay != f.RepeatFailureDelay {
		w.setCheck("repeat_failure_delay", u.RepeatFailureDelay)
	}
	if u.EventTime > 0 && u.EventTime != f.LastEventTime {
		w.setCheck("last_event_time", u.EventTime)
	}
	if u.Sequence > 0 && u.Sequence != f.LastSequence {
		w.setCheck("last_sequence", u.Sequence)
	}
	if u.Perfdata != "" {
		w.setCheck("perfdata", schema.PerfdataJSON(u.Perfdata))
	}
}

// TouchIndexes marks the check current (all_checks, current_checks, current_entities).
func (w *CheckWriter) TouchIndexes(now int64) {
	k := w.Keys
	w.Ops.ZAdd(k.AllChecks(), now, w.ID)
	w.Ops.ZAdd(k.AllChecksFor(w.Entity), now, w.CheckName)
	w.Ops.ZAdd(k.CurrentChecks(w.Entity), now, w.CheckName)
	w.Ops.ZAdd(k.CurrentEntities(), now, w.Entity)
}

// KnowCheck adds a check first seen through an action to all_checks and all_checks:ENTITY,
// without marking it current.
func (w *CheckWriter) KnowCheck(now int64) {
	w.Ops.ZAdd(w.Keys.AllChecks(), now, w.ID)
	w.Ops.ZAdd(w.Keys.AllChecksFor(w.Entity), now, w.CheckName)
}

// Action records an action event (ID:actions TS -> state).
func (w *CheckWriter) Action(now int64, state string) {
	w.Ops.HSet(w.Keys.Actions(w.ID), now, state)
}

// CreateEntity records a new entity under both Flapjack layouts (docs/decisions.md D15).
func (w *CheckWriter) CreateEntity(entityID string) {
	k := w.Keys
	w.Ops.HSet(k.EntityIDsByName(), w.Entity, entityID)
	w.Ops.HSet(k.EntityNamesByID(), entityID, w.Entity)
	w.Ops.Set(k.EntityID(w.Entity), entityID)
	w.Ops.HSet(k.Entity(entityID), "name", w.Entity)
}

// AckHash records the check's acknowledgement hash both ways (docs/flapjack-1x.md 2.7).
func (w *CheckWriter) AckHash(hash string) {
	w.Ops.HSet(w.Keys.CheckHashesByID(), w.ID, hash)
	w.Ops.HSet(w.Keys.ChecksByHash(), hash, w.ID)
}

// Notified records a generated notification (docs/flapjack-1x.md 2.8 step 3): the type's last and list
// keys, and for failures also the state's.
func (w *CheckWriter) Notified(now int64, notificationType, failingState string) {
	k := w.Keys
	w.Ops.Set(k.LastNotification(w.ID, notificationType), now)
	w.Ops.RPush(k.NotificationHistory(w.ID, notificationType), now)
	if failingState != "" {
		w.Ops.Set(k.LastNotification(w.ID, failingState), now)
		w.Ops.RPush(k.NotificationHistory(w.ID, failingState), now)
	}
}

// NotificationOrder records the kind of the latest notification and the highest failing
// severity notified since the last recovery ("none" right after one) in the check hash, so
// notifications of the same second keep their order (docs/decisions.md D1). An empty value is left alone.
func (w *CheckWriter) NotificationOrder(kind, severity string) {
	if kind != "" {
		w.setCheck("last_notification_kind", kind)
	}
	if severity != "" {
		w.setCheck("notified_severity", severity)
	}
}

// StoreMaintenance records a maintenance window of kind (scheduled/unscheduled) with its summary.
// Windows are keyed by their start second: replacing says a window starting at the same second is
// stored already, and this one takes its place, so an empty summary removes the old one's.
func (w *CheckWriter) StoreMaintenance(kind string, start, duration int64, summary string, replacing bool) {
	k := w.Keys
	w.Ops.ZAdd(k.Maintenances(kind, w.ID), duration, start)
	w.Ops.ZAdd(k.SortedMaintenanceTimestamps(kind, w.ID), start, start)
	switch {
	case summary != "":
		w.Ops.Set(k.MaintenanceSummary(kind, w.ID, start), summary)
	case replacing:
		w.Ops.Del(k.MaintenanceSummary(kind, w.ID, start))
	}
}

// SetMaintenanceDuration rewrites a stored window's duration (ending or extending it).
func (w *CheckWriter) SetMaintenanceDuration(kind string, start, duration int64) {
	w.Ops.ZAdd(w.Keys.Maintenances(kind, w.ID), duration, start)
}

// DeleteMaintenance removes a stored window (a scheduled window that had not started).
func (w *CheckWriter) DeleteMaintenance(kind string, start int64) {
	k := w.Keys
	w.Ops.ZRem(k.Maintenances(kind, w.ID), start)
	w.Ops.ZRem(k.SortedMaintenanceTimestamps(kind, w.ID), start)
	w.Ops.Del(k.MaintenanceSummary(kind, w.ID, start))
}

// SyncCurrentMaintenance makes the ID:<kind>_maintenance key agree with the window that is
// active at now, as tools reading the Flapjack layout expect: present while it covers now,
// holding its start, expiring at its end. read is the window the key was last written for, as
// the caller read it before its writes (zero when unknown: the key is then rewritten). The key
// holds only a start second, so a window replaced within its start second (two acknowledgements
// in one second, a scheduled window created again at the same start) is told apart by its end.
// Decisions use the windows and the clock, never the key (docs/decisions.md D1).
func (w *CheckWriter) SyncCurrentMaintenance(kind string, active, read Window, current string, now int64) {
	if active.Covers(now) {
		start := formatInt(active.Start)
		if current != start || active != read {
			w.Ops.SetEx(w.Keys.CurrentMaintenance(kind, w.ID), start, active.End-now)
		}
		return
	}
	if current != "" {
		w.Ops.Del(w.Keys.CurrentMaintenance(kind, w.ID))
	}
}

// PushNotification queues a notification for the notifier.
func (w *CheckWriter) PushNotification(queue string, payload []byte) {
	w.Ops.RPush(queue, payload)
}
