package executive

import (
	"encoding/json"
	"time"

	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/schema"
)

// Verdicts of one event, as logged and counted.
const (
	VerdictNotified = "notified"
	VerdictBlocked  = "blocked"
	VerdictStale    = "stale"
	VerdictNewCheck = "new_check"
	VerdictRejected = "rejected"
)

// newCheckSummary is the summary of the scheduled maintenance given to a never-seen check.
const newCheckSummary = "Automatically created for new check"

// decider turns one event and its check's facts into the writes to apply: pure, given now.
type decider struct {
	keys          schema.Keys
	cfg           Config
	filters       []Filter
	notifications string // full key of the notifier queue
}

// decision is the outcome for one event.
type decision struct {
	record       model.Record
	notification *schema.Notification
	verdict      string
	filter       string // the blocking filter, for VerdictBlocked
	reason       string
	touched      bool  // the check is current now (batch-level index writes)
	until        int64 // end of the maintenance that blocked the event, for explain
	// after is what the decision leaves in the check's facts once applied, when hasAfter: for an
	// ok result on an ok check, or a failing result on a check failing alike held back by the
	// delays, on a check without maintenance windows (never for other decisions): the facts
	// cache keeps it.
	after    factsAfter
	hasAfter bool
}

func seconds(d time.Duration) int64 { return int64(d / time.Second) }

// decide applies docs/flapjack-1x.md 2.2-2.8 with the decisions of docs/decisions.md. raw is the claimed item (removed
// from the processing list with the writes), seq its claim number (0 when unknown). view is the
// caller's scratch space, overwritten: the filters take it by pointer, which would otherwise
// cost every event a heap copy of its facts.
func (d *decider) decide(ev *schema.Event, raw string, f *checkstate.CheckFacts, now, seq int64, view *checkView) decision {
	out := decision{record: model.Record{Item: raw, Guards: []model.Guard{{Key: d.keys.Check(f.ID), Revision: f.Revision}}}}
	ops := &out.record.Ops
	w := checkstate.NewCheckWriter(d.keys, ev.Entity, ev.Check, ops)
	var written checkstate.Update // the fields a service event writes in the check hash

	if f.State == "" && f.EntityID == "" {
		w.CreateEntity(schema.NewEntityID(ev.Entity))
	}

	*view = checkView{
		facts:        *f,
		state:        f.State,
		lastChange:   f.LastChange,
		initialDelay: storedOrDefault(f.InitialFailureDelay, f.HasInitialFailureDelay, seconds(d.cfg.InitialFailureDelay)),
		repeatDelay:  storedOrDefault(f.RepeatFailureDelay, f.HasRepeatFailureDelay, seconds(d.cfg.RepeatFailureDelay)),
		scheduled:    activeOnly(f.ScheduledMaintenance, now),
		unscheduled:  f.UnscheduledMaintenance,
	}
	skipFilters := false

	switch {
	case ev.IsService():
		out.record.Counter = "ok"
		if ev.IsFailure() {
			out.record.Counter = "failure"
		}
		if d.isStale(ev, f, now, seq) {
			// Nothing is written, so nothing needs guarding: the event is only finished.
			out.record.Guards = nil
			out.verdict, out.reason = VerdictStale, "older than the check's latest event"
			d.explain(ev, f.ID, &out, now)
			return out
		}
		// A stale result is not news from the check: it leaves current_checks (freshness) alone,
		// unless the check was never seen (only an outside producer sends it one).
		out.touched = !ev.Stale || f.State == ""
		view.previousState = f.State
		if f.State == "" && d.newCheckMaintenance(ev, f.CheckTags) {
			dur := seconds(d.cfg.NewCheckScheduledMaintenanceDuration)
			replacing := view.scheduled.Start == now && view.scheduled.End > 0
			w.StoreMaintenance(schema.Scheduled, now, dur, newCheckSummary, replacing)
			// A window starting this second is replaced, not outlasted.
			if replacing || view.scheduled.End < now+dur {
				view.scheduled = checkstate.Window{Start: now, End: now + dur}
			}
			skipFilters = ev.IsOK()
		}
		written = d.recordService(ev, f, view, w, now, seq)
		d.cfg.Staleness.Arm(ops, d.keys, ev, now)
	default:
		out.record.Counter = "action"
		w.Action(now, ev.State)
		if f.State == "" {
			w.KnowCheck(now)
		}
	}

	var in intents
	out.verdict = VerdictNotified
	if skipFilters {
		out.verdict, out.reason = VerdictNewCheck, "first ok of a new check in maintenance"
	} else {
		for _, filter := range d.filters {
			if blocked, reason := filter.Check(ev, view, now, &in); blocked {
				out.verdict, out.filter, out.reason = VerdictBlocked, filter.Name(), reason
				break
			}
		}
	}

	d.applyIntents(&in, view, w, now)
	if out.verdict == VerdictNotified {
		out.notification = d.notify(ev, f, view, &in, w, now, seq)
	}
	w.SyncCurrentMaintenance(schema.Scheduled, view.scheduled, f.ScheduledMaintenance, f.ScheduledCurrent, now)
	w.SyncCurrentMaintenance(schema.Unscheduled, view.unscheduled, f.UnscheduledMaintenance, f.UnscheduledCurrent, now)
	w.Flush(f.Revision + 1)
	switch out.filter {
	case "scheduled_maintenance":
		out.until = view.scheduled.End
	case "unscheduled_maintenance":
		out.until = view.unscheduled.End
	}
	if out.verdict == VerdictNewCheck {
		out.until = view.scheduled.End
	}
	// An ok result for a check that was ok decides nothing: most events are such, and recording
	// them would cost every event a write and push the decisions worth reading off the list.
	okOnOK := ev.IsOK() && view.previousState == schema.StateOK && out.filter == "ok"
	if !okOnOK {
		d.explain(ev, f.ID, &out, now)
	}
	stillFailing := ev.IsFailure() && ev.State == f.State && out.filter == "delays"
	if (okOnOK || stillFailing) && !ev.Stale && f.NoWindows {
		out.after, out.hasAfter = factsAfter{state: f.State, revision: f.Revision + 1, lastChange: f.LastChange,
			lastEventTime: written.EventTime, lastSequence: written.Sequence,
			initialDelay: written.InitialFailureDelay, repeatDelay: written.RepeatFailureDelay,
			summary: written.Summary, details: written.Details,
			lastNotificationKind: f.LastNotificationKind, notifiedSeverity: f.NotifiedSeverity}, true
		if stillFailing {
			out.after.lastProblem = f.LastNotified[checkstate.KindProblem]
			out.after.lastNotified, out.after.lastNotifiedAt = lastNotification(f)
		}
	}
	return out
}

// explain records the decision in the check's explain list, within the event's own writes.
func (d *decider) explain(ev *schema.Event, id string, out *decision, now int64) {
	if d.cfg.ExplainEntries <= 0 {
		return
	}
	e := schema.ExplainEntry{Time: now, Stage: schema.ExplainExecutive, Type: ev.Type, State: ev.State,
		Verdict: out.verdict, Filter: out.filter, Reason: out.reason, Until: out.until}
	if out.notification != nil {
		e.Notification, e.Severity = out.notification.Type, out.notification.Severity
	}
	checkstate.PushExplain(&out.record, d.keys, id, e.AppendJSON(make([]byte, 0, 160)), d.cfg.ExplainEntries)
}

func storedOrDefault(v int64, has bool, def int64) int64 {
	if !has || v < 0 {
		return def
	}
	return v
}

func activeOnly(w checkstate.Window, now int64) checkstate.Window {
	if w.Covers(now) {
		return w
	}
	return checkstate.Window{}
}

// orderTime is the instant an event is ordered by: its own time, unless it claims to be further
// in the future than clock skew explains (one bad timestamp must not silence a check).
func (d *decider) orderTime(ev *schema.Event, now int64) int64 {
	if ev.Time > now+seconds(d.cfg.MaxFutureSkew) {
		return now
	}
	return ev.Time
}

// isStale implements docs/decisions.md D11: a service event whose `time` is older than the newest `time`
// applied to its check is ignored; same-second and time-less events are ordered by claim
// sequence, so several executives agree with one.
func (d *decider) isStale(ev *schema.Event, f *checkstate.CheckFacts, now, seq int64) bool {
	if ev.HasTime && f.LastEventTime > 0 {
		t := d.orderTime(ev, now)
		if t < f.LastEventTime {
			return true
		}
		if t > f.LastEventTime {
			return false
		}
	}
	return seq > 0 && f.LastSequence > 0 && seq < f.LastSequence
}

func (d *decider) newCheckMaintenance(ev *schema.Event, checkTags []string) bool {
	if d.cfg.NewCheckScheduledMaintenanceDuration <= 0 {
		return false
	}
	for _, t := range schema.TagSet(ev, checkTags) {
		for _, ignore := range d.cfg.NewCheckScheduledMaintenanceIgnoreTags {
			if t == ignore {
				return false
			}
		}
	}
	return true
}

// recordService writes the check's new state and the always-written fields (docs/flapjack-1x.md 2.3),
// and returns the latter.
func (d *decider) recordService(ev *schema.Event, f *checkstate.CheckFacts, view *checkView, w *checkstate.CheckWriter, now, seq int64) checkstate.Update {
	if ev.State != f.State {
		w.StateChange(now, ev.State, ev.Summary, ev.Details, seq)
		view.lastChange = now
		if ev.IsFailure() {
			w.AckHash(schema.AckHash(f.ID))
		}
	}
	view.state = ev.State
	view.initialDelay = seconds(d.cfg.InitialFailureDelay)
	if ev.HasInitialDelay {
		view.initialDelay = ev.InitialFailureDelay
	}
	view.repeatDelay = seconds(d.cfg.RepeatFailureDelay)
	if ev.HasRepeatDelay {
		view.repeatDelay = ev.RepeatFailureDelay
	}
	eventTime := f.LastEventTime
	if ev.HasTime {
		if t := d.orderTime(ev, now); t > eventTime {
			eventTime = t
		}
	}
	u := checkstate.Update{
		Now: now, Summary: ev.Summary, Details: ev.Details, Perfdata: ev.Perfdata,
		InitialFailureDelay: view.initialDelay, RepeatFailureDelay: view.repeatDelay,
		EventTime: eventTime, Sequence: max(seq, f.LastSequence), Stale: ev.Stale,
	}
	w.ServiceUpdate(u, f)
	return u
}

// applyIntents writes the unscheduled maintenance the filters asked for (docs/flapjack-1x.md 2.6). A new
// acknowledgement ends the current one; in the second the current one started, it replaces it.
func (d *decider) applyIntents(in *intents, view *checkView, w *checkstate.CheckWriter, now int64) {
	current := view.unscheduled
	if (in.endUnscheduled || in.startUnscheduled) && current.Covers(now) {
		w.SetMaintenanceDuration(schema.Unscheduled, current.Start, now-current.Start)
		view.unscheduled = checkstate.Window{Start: current.Start, End: now}
	}
	if in.startUnscheduled {
		replacing := current.Start == now && current.End > 0
		w.StoreMaintenance(schema.Unscheduled, now, in.ackDuration, in.ackSummary, replacing)
		view.unscheduled = checkstate.Window{Start: now, End: now + in.ackDuration}
	}
}

// notify records and queues the notification (docs/flapjack-1x.md 2.8).
func (d *decider) notify(ev *schema.Event, f *checkstate.CheckFacts, view *checkView, in *intents, w *checkstate.CheckWriter, now, seq int64) *schema.Notification {
	maxSeverity := f.MaxNotifiedSeverity()
	n := &schema.Notification{
		EventID:  f.ID,
		State:    ev.State,
		Summary:  schema.StringPtr(ev.Summary),
		Details:  schema.StringPtr(ev.Details),
		Perfdata: schema.StringPtr(ev.Perfdata),
		Count:    seq,
		Type:     notificationType(ev),
		Severity: severity(ev, maxSeverity),
		Tags:     schema.TagSet(ev, f.CheckTags),
	}
	if ev.HasTime {
		n.Time = schema.Int64Ptr(ev.Time)
	}
	switch {
	case in.startUnscheduled:
		n.Duration = schema.Int64Ptr(in.ackDuration)
	case ev.HasDuration:
		n.Duration = schema.Int64Ptr(ev.Duration)
	}
	if ev.IsFailure() {
		n.EventHash = schema.StringPtr(schema.AckHash(f.ID))
	}
	if view.lastChange > 0 {
		n.StateDuration = schema.Int64Ptr(now - view.lastChange)
	}
	if prev, ok := previousEntry(ev, f, now); ok {
		n.LastState = schema.StringPtr(prev.State)
		n.LastSummary = schema.StringPtr(prev.Summary)
	}
	failing := ""
	if ev.IsFailure() {
		failing = ev.State
	}
	w.Notified(now, n.Type, failing)
	w.NotificationOrder(notificationOrder(ev, maxSeverity))
	payload, _ := json.Marshal(n)
	w.PushNotification(d.notifications, payload)
	return n
}

// previousEntry is the state change before the current one once this event is recorded: the
// second-newest history entry (docs/flapjack-1x.md 2.8 step 6).
func previousEntry(ev *schema.Event, f *checkstate.CheckFacts, now int64) (checkstate.HistoryEntry, bool) {
	h := f.History
	changed := ev.IsService() && ev.State != f.State
	if changed && (len(h) == 0 || h[0].Time != now) {
		if len(h) > 0 {
			return h[0], true
		}
		return checkstate.HistoryEntry{}, false
	}
	if len(h) > 1 {
		return h[1], true
	}
	return checkstate.HistoryEntry{}, false
}

func notificationType(ev *schema.Event) string {
	switch {
	case ev.IsOK():
		return schema.NotificationRecovery
	case ev.IsAcknowledgement():
		return schema.NotificationAcknowledgement
	case ev.IsTest():
		return schema.NotificationTest
	}
	return schema.NotificationProblem
}

// severity: critical if the event or the highest severity notified since the last recovery is
// critical (or it is a test), else warning, else unknown, else ok (docs/flapjack-1x.md 2.8 step 4).
func severity(ev *schema.Event, maxNotified string) string {
	is := func(s string) bool { return ev.State == s || maxNotified == s }
	switch {
	case ev.IsTest() || is(schema.StateCritical):
		return schema.SeverityCritical
	case is(schema.StateWarning):
		return schema.SeverityWarning
	case is(schema.StateUnknown):
		return schema.SeverityUnknown
	}
	return schema.SeverityOK
}
