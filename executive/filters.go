package executive

import (
	"strconv"

	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/schema"
)

// checkView is a check as the filters see it: the stored facts with this event's state update
// applied (docs/flapjack-1x.md 2.3 runs before the filters).
type checkView struct {
	facts         checkstate.CheckFacts
	previousState string // "" for action events and never-seen checks
	state         string
	lastChange    int64
	initialDelay  int64
	repeatDelay   int64
	scheduled     checkstate.Window // active scheduled maintenance (zero = none)
	unscheduled   checkstate.Window // latest unscheduled maintenance window (may have ended)
}

// intents are the maintenance writes filters ask for; the processor turns them into ops.
type intents struct {
	endUnscheduled   bool
	startUnscheduled bool
	ackDuration      int64
	ackSummary       string
}

// Filter is one step of the executive's fixed pipeline (docs/flapjack-1x.md 2.4). Check reports whether
// the event is blocked, with a short reason for logs; it may record maintenance intents.
type Filter interface {
	Name() string
	Check(ev *schema.Event, c *checkView, now int64, in *intents) (blocked bool, reason string)
}

// pipeline is the filter order, written once: Ok, ScheduledMaintenance, UnscheduledMaintenance,
// Delays, Acknowledgement. The first filter that blocks stops evaluation.
func pipeline(defaultAck int64) []Filter {
	return []Filter{
		okFilter{},
		scheduledMaintenanceFilter{defaultAck: defaultAck},
		unscheduledMaintenanceFilter{},
		delaysFilter{},
		acknowledgementFilter{defaultAck: defaultAck},
	}
}

// lastNotification is the most recent of the warning, critical, unknown, recovery and
// acknowledgement notifications (docs/flapjack-1x.md 2.5: not problem, not test). The recorded order wins
// over the whole-second timestamps, which cannot tell notifications of one second apart.
func lastNotification(f *checkstate.CheckFacts) (kind string, at int64) {
	if f.LastNotificationKind != "" {
		if k, ok := checkstate.KindIndex(f.LastNotificationKind); ok {
			return f.LastNotificationKind, f.LastNotified[k]
		}
	}
	for _, k := range []int{checkstate.KindWarning, checkstate.KindCritical, checkstate.KindUnknown, checkstate.KindRecovery, checkstate.KindAcknowledgement} {
		if t := f.LastNotified[k]; t > at {
			kind, at = checkstate.KindNames[k], t
		}
	}
	return kind, at
}

// okFilter lets a recovery through only when a problem was notified and not yet recovered. Every
// ok event ends unscheduled maintenance (an acknowledgement lasts until the check recovers).
type okFilter struct{}

func (okFilter) Name() string { return "ok" }

func (okFilter) Check(ev *schema.Event, c *checkView, now int64, in *intents) (bool, string) {
	if !ev.IsOK() {
		return false, ""
	}
	if c.unscheduled.Covers(now) {
		in.endUnscheduled = true
	}
	if c.previousState == schema.StateOK {
		return true, "check was already ok"
	}
	kind, _ := lastNotification(&c.facts)
	switch kind {
	case "":
		return true, "no problem was ever notified"
	case schema.NotificationRecovery:
		return true, "last notification was already a recovery"
	}
	return false, ""
}

// scheduledMaintenanceFilter blocks everything while a scheduled window covers now. An
// acknowledgement of a failing check is still recorded as unscheduled maintenance, but sends no
// notification then or later (docs/decisions.md D4).
type scheduledMaintenanceFilter struct{ defaultAck int64 }

func (scheduledMaintenanceFilter) Name() string { return "scheduled_maintenance" }

func (f scheduledMaintenanceFilter) Check(ev *schema.Event, c *checkView, now int64, in *intents) (bool, string) {
	if !c.scheduled.Covers(now) {
		return false, ""
	}
	if ev.IsAcknowledgement() && schema.IsFailure(c.state) {
		recordAcknowledgement(ev, f.defaultAck, in)
		return true, "in scheduled maintenance (acknowledgement recorded, not notified)"
	}
	return true, "in scheduled maintenance"
}

// unscheduledMaintenanceFilter blocks problems and tests while acknowledged.
type unscheduledMaintenanceFilter struct{}

func (unscheduledMaintenanceFilter) Name() string { return "unscheduled_maintenance" }

func (unscheduledMaintenanceFilter) Check(ev *schema.Event, c *checkView, now int64, in *intents) (bool, string) {
	if ev.IsAcknowledgement() || in.endUnscheduled || !c.unscheduled.Covers(now) {
		return false, ""
	}
	return true, "acknowledged (in unscheduled maintenance)"
}

// delaysFilter holds back a failure until it has lasted initial_failure_delay, and repeats of the
// same severity until repeat_failure_delay has passed since the last problem.
type delaysFilter struct{}

func (delaysFilter) Name() string { return "delays" }

func (delaysFilter) Check(ev *schema.Event, c *checkView, now int64, _ *intents) (bool, string) {
	if !ev.IsFailure() || !schema.IsFailure(c.state) {
		return false, ""
	}
	if now-c.lastChange < c.initialDelay {
		return true, "failing for " + strconv.FormatInt(now-c.lastChange, 10) + " s of the " +
			strconv.FormatInt(c.initialDelay, 10) + " s initial_failure_delay"
	}
	lastProblem := c.facts.LastNotified[checkstate.KindProblem]
	kind, _ := lastNotification(&c.facts)
	if lastProblem > 0 && now-lastProblem < c.repeatDelay && kind == ev.State {
		return true, ev.State + " was notified " + strconv.FormatInt(now-lastProblem, 10) + " s ago, within the " +
			strconv.FormatInt(c.repeatDelay, 10) + " s repeat_failure_delay"
	}
	return false, ""
}

// acknowledgementFilter turns an acknowledgement of a failing check into unscheduled maintenance
// (replacing a current one); acknowledging a check that is not failing does nothing.
type acknowledgementFilter struct{ defaultAck int64 }

func (acknowledgementFilter) Name() string { return "acknowledgement" }

func (f acknowledgementFilter) Check(ev *schema.Event, c *checkView, _ int64, in *intents) (bool, string) {
	if !ev.IsAcknowledgement() {
		return false, ""
	}
	if !schema.IsFailure(c.state) {
		return true, "check is not failing"
	}
	recordAcknowledgement(ev, f.defaultAck, in)
	return false, ""
}

func recordAcknowledgement(ev *schema.Event, defaultAck int64, in *intents) {
	in.startUnscheduled = true
	in.ackDuration = defaultAck
	if ev.HasDuration && ev.Duration > 0 {
		in.ackDuration = ev.Duration
	}
	in.ackSummary = ev.Summary
}

// severityRank orders failing states for "the highest severity".
func severityRank(state string) int {
	switch state {
	case schema.StateCritical:
		return 3
	case schema.StateWarning:
		return 2
	case schema.StateUnknown:
		return 1
	}
	return 0
}

// notificationOrder is what a notification changes in the recorded order: its kind (tests do not
// count) and the highest severity notified since the last recovery.
func notificationOrder(ev *schema.Event, previousMax string) (kind, severity string) {
	switch {
	case ev.IsFailure():
		severity = previousMax
		if severityRank(ev.State) > severityRank(previousMax) {
			severity = ev.State
		}
		return ev.State, severity
	case ev.IsOK():
		return schema.NotificationRecovery, checkstate.NoNotifiedSeverity
	case ev.IsAcknowledgement():
		return schema.NotificationAcknowledgement, ""
	}
	return "", ""
}
