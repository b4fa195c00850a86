package notifier

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/config"
	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/schema"
)

// decide turns the candidates into alerts and the changes that go with them (docs/flapjack-1x.md 3.6,
// 3.7), written into the plan's record by model/roster: rollup state, interval suppressions,
// and the alert on each medium's queue.
func (nt *Notifier) decide(p *plan, contacts []roster.Contact, cands []*candidate, now time.Time) {
	changes := nt.decideAlerts(p, contacts, cands, now)
	roster.WriteAlertChanges(&p.record, nt.keys, &changes)
}

// decideAlerts decides what decide writes. What it changes of contact_alert_state it also makes
// of each contact's SuppressedUntil, so the next notification of a batch sharing the contact's
// read sees it as a read after this one's writes would (routeBatch).
func (nt *Notifier) decideAlerts(p *plan, contacts []roster.Contact, cands []*candidate, now time.Time) roster.AlertChanges {
	n := p.notification
	out := newAlertChanges()
	touched := map[string]map[string]bool{} // contact -> state fields written now
	for i := range contacts {
		c := &contacts[i]
		out.Read = append(out.Read, roster.StateRead{ContactID: c.ID, Revision: c.Revision})
		touched[c.ID] = map[string]bool{}
		if isRecoveryOrAck(n) {
			resetIntervals(&out, c, n, touched[c.ID])
			if !nt.cfg.RollupSetsOnly {
				stopAlerting(&out, c, n)
			}
		}
	}
	for _, c := range cands {
		cid := c.contact.ID
		if c.suppressed {
			p.skipped = append(p.skipped, skip{cid, c.medium, intervalReason(c, n)})
			continue
		}
		var rollup rollupDecision
		why := "alerted"
		if rolls(c) && p.escalation == nil { // an escalation step is one person's page, never rolled up
			rollup = decideRollup(c, n)
			rollupChanges(&out, c, n, rollup, now, touched[cid])
			if rollup.drop {
				p.skipped = append(p.skipped, skip{cid, c.medium, fmt.Sprintf(
					"rollup: %d checks alerting (threshold %d) and a summary was sent within the interval",
					len(rollup.remaining), c.alerting.threshold)})
				continue
			}
			switch rollup.kind {
			case schema.RollupProblem:
				why = fmt.Sprintf("alerted with a rollup summary: %d checks alerting (threshold %d)", len(rollup.remaining), c.alerting.threshold)
			case schema.RollupRecovery:
				why = fmt.Sprintf("alerted with a rollup recovery: %d checks alerting, below the threshold %d", len(rollup.remaining), c.alerting.threshold)
			default:
				why = fmt.Sprintf("alerted (rollup threshold %d not reached: %d checks alerting)", c.alerting.threshold, len(rollup.remaining))
			}
		} else if nt.keepsAlerting(p, c) {
			out.Alerting = append(out.Alerting, roster.AlertingChange{ContactID: cid, Medium: c.medium, Add: n.EventID, At: now.Unix()})
			p.tidy = append(p.tidy, alertingSet{contact: cid, medium: c.medium})
		}
		queueName, ok := nt.cfg.MediaQueues[c.medium]
		if !ok || queueName == "" {
			nt.m.unqueued.WithLabelValues(c.medium).Inc()
			nt.log.Error("no queue configured for medium; this message is skipped",
				zap.String("medium", c.medium), zap.String("contact", cid), zap.String("check", n.EventID),
				zap.String("setting", config.MediumQueueSetting(c.medium)))
			p.skipped = append(p.skipped, skip{cid, c.medium, "no queue configured for this medium (" + config.MediumQueueSetting(c.medium) + ")"})
			continue
		}
		alert := buildAlert(p, c, rollup, now)
		payload, _ := json.Marshal(alert)
		if !isRecoveryOrAck(n) {
			startInterval(&out, c, n, now, touched[cid])
		}
		out.Deliveries = append(out.Deliveries, roster.Delivery{Queue: queueName, Payload: payload, Alert: alert, At: now.Unix()})
		p.alerts = append(p.alerts, alert)
		p.sent = append(p.sent, skip{cid, c.medium, why})
	}
	forgetExpired(&out, contacts, now, touched)
	return out
}

// alertChangesRoom is room for the changes of a decision on a few candidates, in one allocation
// rather than one per kind of change and growth.
type alertChangesRoom struct {
	read       [4]roster.StateRead
	alerting   [4]roster.AlertingChange
	started    [4]roster.Suppression
	deliveries [4]roster.Delivery
}

func newAlertChanges() roster.AlertChanges {
	room := new(alertChangesRoom)
	return roster.AlertChanges{Read: room.read[:0], Alerting: room.alerting[:0], Started: room.started[:0],
		Deliveries: room.deliveries[:0]}
}

// resetIntervals ends the interval suppressions of a check on every medium of a contact when a
// recovery or acknowledgement arrives (docs/flapjack-1x.md 3.7 step 4 does it only on the media the
// recovery is sent to; we reset all, so the first problem after a recovery always goes out).
func resetIntervals(out *roster.AlertChanges, c *roster.Contact, n *schema.Notification, touched map[string]bool) {
	for _, m := range slices.Sorted(maps.Keys(c.Media)) {
		for _, s := range []string{schema.StateWarning, schema.StateCritical, schema.StateUnknown} {
			field := schema.DropField(m, n.EventID, s)
			if _, ok := c.SuppressedUntil[field]; !ok {
				continue
			}
			out.Ended = append(out.Ended, roster.Suppression{ContactID: c.ID, Field: field})
			delete(c.SuppressedUntil, field)
			touched[field] = true
		}
	}
}

// startInterval starts the interval of a sent problem or test (docs/flapjack-1x.md 3.7 step 4).
func startInterval(out *roster.AlertChanges, c *candidate, n *schema.Notification, now time.Time, touched map[string]bool) {
	field := schema.DropField(c.medium, n.EventID, n.State)
	start(out, c, field, now)
	touched[field] = true
}

// start starts a suppression of c's contact for c's interval, and notes it in the contact's view.
func start(out *roster.AlertChanges, c *candidate, field string, now time.Time) {
	until := now.Unix() + c.interval
	out.Started = append(out.Started, roster.Suppression{ContactID: c.contact.ID, Field: field, Until: until, TTL: c.interval})
	if c.contact.SuppressedUntil == nil {
		c.contact.SuppressedUntil = map[string]int64{}
	}
	c.contact.SuppressedUntil[field] = until
}

// rollupChanges are the alerting set and throttle changes of a rolled-up medium.
func rollupChanges(out *roster.AlertChanges, c *candidate, n *schema.Notification, d rollupDecision, now time.Time, touched map[string]bool) {
	if d.add || len(d.removed) > 0 {
		change := roster.AlertingChange{ContactID: c.contact.ID, Medium: c.medium, Remove: d.removed}
		if d.add {
			change.Add, change.At = n.EventID, now.Unix()
		}
		out.Alerting = append(out.Alerting, change)
	}
	field := schema.RollupDropField(c.medium)
	switch {
	case d.setThrottle:
		start(out, c, field, now)
		touched[field] = true
	case d.clearThrottle:
		out.Ended = append(out.Ended, roster.Suppression{ContactID: c.contact.ID, Field: field})
		delete(c.contact.SuppressedUntil, field)
		touched[field] = true
	}
}

// keepsAlerting reports whether a problem sent on a medium without rollup enters the medium's
// alerting set (docs/flapjack-1x.md 3.6 step 1), which is then cleaned after the apply (tidyAlerting).
// An escalation step's page never does: the check's own notifications keep the sets. Scratch
// replays keep only the sets rollup needs.
func (nt *Notifier) keepsAlerting(p *plan, c *candidate) bool {
	return addsToAlerting(p.notification) && p.escalation == nil && !nt.cfg.RollupSetsOnly && !rolls(c)
}

// stopAlerting takes a recovered or acknowledged check out of the alerting sets of every medium
// without rollup of a contact, whether or not the notification is sent there (rules may route
// it elsewhere, blackhole it or be out of their time restrictions). A rollup medium's set is
// left to rollup, whose next alert reports the check leaving it.
func stopAlerting(out *roster.AlertChanges, c *roster.Contact, n *schema.Notification) {
	for _, m := range slices.Sorted(maps.Keys(c.Media)) {
		if !rollsOn(c, m) {
			out.Alerting = append(out.Alerting, roster.AlertingChange{ContactID: c.ID, Medium: m, Remove: []string{n.EventID}})
		}
	}
}

// forgetExpired drops suppression end times that have passed, so contact_alert_state stays
// bounded by what is currently suppressed, together with the documented key written alongside:
// by the wall clock its TTL may not have run out (always so in replay), and a documented key
// without our end time would read as an operator's manual suppression.
func forgetExpired(out *roster.AlertChanges, contacts []roster.Contact, now time.Time, touched map[string]map[string]bool) {
	for i := range contacts {
		c := &contacts[i]
		for _, field := range slices.Sorted(maps.Keys(c.SuppressedUntil)) {
			if c.SuppressedUntil[field] > now.Unix() || touched[c.ID][field] {
				continue
			}
			out.Ended = append(out.Ended, roster.Suppression{ContactID: c.ID, Field: field})
			delete(c.SuppressedUntil, field)
		}
	}
}

// buildAlert is the alert JSON of docs/flapjack-1x.md 3.8.
func buildAlert(p *plan, c *candidate, r rollupDecision, now time.Time) schema.Alert {
	n := p.notification
	a := schema.Alert{
		Media: c.medium, Address: c.address,
		ID:               alertID(p.idSource(), c.contact.ID, c.medium, now),
		ContactID:        c.contact.ID,
		ContactFirstName: schema.StringPtr(c.contact.FirstName),
		ContactLastName:  schema.StringPtr(c.contact.LastName),
		EventID:          n.EventID, EventHash: n.EventHash, State: n.State,
		Summary: n.Summary, Details: n.Details, Perfdata: n.Perfdata,
		Time: n.Time, Duration: n.Duration,
		LastState: n.LastState, LastSummary: n.LastSummary, StateDuration: n.StateDuration,
		Tags: n.Tags, NotificationType: n.Type, EventCount: n.Count, Escalation: p.escalation,
		Schedule: p.reachedBy[c.contact.ID],
	}
	if a.Tags == nil {
		a.Tags = []string{}
	}
	if r.kind != "" {
		kind := r.kind
		a.Rollup = &kind
		threshold := int(c.alerting.threshold)
		a.RollupThreshold = &threshold
		a.RollupAlerts = rollupAlerts(r.remaining, c.alerting.facts, now.Unix())
	}
	return a
}
