package notifier

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/config"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/schema"
)

// decide turns the candidates into alerts and the writes that go with them (docs/flapjack-1x.md 3.6,
// 3.7): rollup state, interval suppressions, and the alert on each medium's queue. What it
// writes into contact_alert_state it also makes of each contact's SuppressedUntil, so the next
// notification of a batch sharing the contact's read sees it as a read after this one's writes
// would (routeBatch).
func (nt *Notifier) decide(p *plan, contacts []roster.Contact, cands []*candidate, now time.Time) {
	n := p.notification
	ops := &p.record.Ops
	touched := map[string]map[string]bool{} // contact -> state fields written now
	for i := range contacts {
		c := &contacts[i]
		p.record.Guards = append(p.record.Guards, model.Guard{Key: nt.keys.ContactAlertState(c.ID), Revision: c.Revision})
		touched[c.ID] = map[string]bool{}
		if isRecoveryOrAck(n) {
			nt.resetIntervals(ops, c, n, touched[c.ID])
			if !nt.cfg.RollupSetsOnly {
				nt.stopAlerting(ops, c, n)
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
			nt.writeRollup(ops, c, n, rollup, now, touched[cid])
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
			ops.ZAdd(nt.keys.AlertingChecks(cid, c.medium), now.Unix(), n.EventID)
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
			nt.writeInterval(ops, c, n, now, touched[cid])
		}
		ops.RPush(nt.keys.Queue(queueName), payload)
		model.QueueDelivery(ops, nt.keys, alert, now.Unix())
		p.alerts = append(p.alerts, alert)
		p.sent = append(p.sent, skip{cid, c.medium, why})
	}
	nt.forgetExpired(ops, contacts, now, touched)
}

// resetIntervals ends the interval suppressions of a check on every medium of a contact when a
// recovery or acknowledgement arrives (docs/flapjack-1x.md 3.7 step 4 does it only on the media the
// recovery is sent to; we reset all, so the first problem after a recovery always goes out).
func (nt *Notifier) resetIntervals(ops *model.Ops, c *roster.Contact, n *schema.Notification, touched map[string]bool) {
	state := nt.keys.ContactAlertState(c.ID)
	for _, m := range slices.Sorted(maps.Keys(c.Media)) {
		for _, s := range []string{schema.StateWarning, schema.StateCritical, schema.StateUnknown} {
			field := schema.DropField(m, n.EventID, s)
			if _, ok := c.SuppressedUntil[field]; !ok {
				continue
			}
			ops.Del(nt.keys.DropAlerts(c.ID, m, n.EventID, s))
			ops.HDel(state, field)
			delete(c.SuppressedUntil, field)
			touched[field] = true
		}
	}
}

// writeInterval starts the interval of a sent problem or test (docs/flapjack-1x.md 3.7 step 4).
func (nt *Notifier) writeInterval(ops *model.Ops, c *candidate, n *schema.Notification, now time.Time, touched map[string]bool) {
	cid, state := c.contact.ID, nt.keys.ContactAlertState(c.contact.ID)
	field := schema.DropField(c.medium, n.EventID, n.State)
	ops.SetEx(nt.keys.DropAlerts(cid, c.medium, n.EventID, n.State), c.interval, c.interval)
	ops.HSet(state, field, now.Unix()+c.interval)
	suppressUntil(c.contact, field, now.Unix()+c.interval)
	touched[field] = true
}

// suppressUntil notes in the contact's view a suppression this plan writes.
func suppressUntil(c *roster.Contact, field string, until int64) {
	if c.SuppressedUntil == nil {
		c.SuppressedUntil = map[string]int64{}
	}
	c.SuppressedUntil[field] = until
}

// writeRollup records the alerting set and throttle changes of a rolled-up medium.
func (nt *Notifier) writeRollup(ops *model.Ops, c *candidate, n *schema.Notification, d rollupDecision, now time.Time, touched map[string]bool) {
	set := nt.keys.AlertingChecks(c.contact.ID, c.medium)
	if d.add {
		ops.ZAdd(set, now.Unix(), n.EventID)
	}
	if len(d.removed) > 0 {
		members := make([]any, len(d.removed))
		for i, id := range d.removed {
			members[i] = id
		}
		ops.ZRem(set, members...)
	}
	field := schema.RollupDropField(c.medium)
	state := nt.keys.ContactAlertState(c.contact.ID)
	switch {
	case d.setThrottle:
		ops.SetEx(nt.keys.DropRollupAlerts(c.contact.ID, c.medium), c.interval, c.interval)
		ops.HSet(state, field, now.Unix()+c.interval)
		suppressUntil(c.contact, field, now.Unix()+c.interval)
		touched[field] = true
	case d.clearThrottle:
		ops.Del(nt.keys.DropRollupAlerts(c.contact.ID, c.medium))
		ops.HDel(state, field)
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
func (nt *Notifier) stopAlerting(ops *model.Ops, c *roster.Contact, n *schema.Notification) {
	for _, m := range slices.Sorted(maps.Keys(c.Media)) {
		if !rollsOn(c, m) {
			ops.ZRem(nt.keys.AlertingChecks(c.ID, m), n.EventID)
		}
	}
}

// forgetExpired drops suppression end times that have passed, so contact_alert_state stays
// bounded by what is currently suppressed, together with the documented key written alongside:
// by the wall clock its TTL may not have run out (always so in replay), and a documented key
// without our end time would read as an operator's manual suppression.
func (nt *Notifier) forgetExpired(ops *model.Ops, contacts []roster.Contact, now time.Time, touched map[string]map[string]bool) {
	for i := range contacts {
		c := &contacts[i]
		var expired []any
		for _, field := range slices.Sorted(maps.Keys(c.SuppressedUntil)) {
			if c.SuppressedUntil[field] > now.Unix() || touched[c.ID][field] {
				continue
			}
			expired = append(expired, field)
			if key := nt.suppressionKey(c.ID, field); key != "" {
				ops.Del(key)
			}
		}
		for _, field := range expired {
			delete(c.SuppressedUntil, field.(string))
		}
		if len(expired) > 0 {
			ops.HDel(nt.keys.ContactAlertState(c.ID), expired...)
		}
	}
}

// suppressionKey is the documented key matching a contact_alert_state field.
func (nt *Notifier) suppressionKey(contactID, field string) string {
	medium, checkID, state, ok := schema.ParseDropField(field)
	if ok {
		return nt.keys.DropAlerts(contactID, medium, checkID, state)
	}
	if medium, ok := schema.ParseRollupDropField(field); ok {
		return nt.keys.DropRollupAlerts(contactID, medium)
	}
	return ""
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
