package notifier

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/internal/humantime"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/schema"
)

// The escalation tick: ladders whose next step is due are read from the due set (cost follows
// the escalations due, not the checks), the step is routed to its contacts through their own
// rules, intervals and time restrictions like any problem, and the alerts are queued in the
// apply script together with the ladder's move to its next step, guarded by the ladder's
// revision. That single atomic write is both the claim and the send: two notifiers firing the
// same step race on the revision and the loser re-reads a ladder no longer due; a notifier dying
// before the write leaves the step due for any notifier's next tick; after it, the step is
// recorded as fired. Each step is alerted exactly once.

// escalationBatch bounds the ladders one tick takes; the rest wait for the next tick.
const escalationBatch = 500

// tickEvery is how often the run loop ticks, by the injected clock.
const tickEvery = time.Second

// Escalate fires the escalation steps due at the clock's now, and stops the ladders whose
// check is no longer failing and unhandled. It returns the alerts queued.
func (nt *Notifier) Escalate(ctx context.Context) (Result, error) {
	var res Result
	now := nt.clock.Now()
	conn, err := nt.pool.GetContext(ctx)
	if err != nil {
		return res, fmt.Errorf("escalate: %w", err)
	}
	defer conn.Close()
	members, err := model.EscalationsDueAt(conn, nt.keys, now.Unix(), escalationBatch)
	if err != nil {
		return res, err
	}
	for _, m := range members {
		alerts, err := nt.fireStep(conn, m, now)
		if err != nil {
			return res, fmt.Errorf("escalate %s: %w", m, err)
		}
		res.Finished++
		res.Alerts = append(res.Alerts, alerts...)
	}
	return res, nil
}

// NextEscalationDue is when the earliest step is due; found is false when none is.
func (nt *Notifier) NextEscalationDue(ctx context.Context) (at time.Time, found bool, err error) {
	conn, err := nt.pool.GetContext(ctx)
	if err != nil {
		return at, false, err
	}
	defer conn.Close()
	secs, found, err := model.NextEscalationDue(conn, nt.keys)
	return time.Unix(secs, 0), found, err
}

// maybeEscalate ticks when tickEvery has passed since the last tick.
func (nt *Notifier) maybeEscalate(ctx context.Context) error {
	now := nt.clock.Now()
	if now.Before(nt.nextTick) {
		return nil
	}
	nt.nextTick = now.Add(tickEvery)
	_, err := nt.Escalate(ctx)
	return err
}

func (nt *Notifier) fireStep(conn redis.Conn, member string, now time.Time) ([]schema.Alert, error) {
	policyID, checkID, ok := schema.ParseEscalationMember(member)
	if !ok {
		nt.log.Error("escalations_due member is not POLICY:ENTITY:CHECK; removed", zap.String("member", member))
		_, err := conn.Do("ZREM", nt.keys.EscalationsDue(), member)
		return nil, err
	}
	for attempt := 0; attempt < maxConflicts; attempt++ {
		p, err := nt.planStep(conn, policyID, checkID, now)
		if err != nil || p == nil {
			return nil, err
		}
		statuses, err := model.Apply(conn, model.ApplyTarget{}, []model.Record{p.record})
		var refused *model.WriteError
		if errors.As(err, &refused) {
			nt.m.redisErrors.Inc()
			nt.log.Error("some escalation writes were refused by Redis", zap.Strings("errors", refused.Messages))
		} else if err != nil {
			return nil, err
		}
		if statuses[0] == model.Conflict {
			nt.m.conflicts.Inc()
			continue
		}
		nt.observeStep(p)
		return p.alerts, nil
	}
	return nil, fmt.Errorf("ladder kept changing under %d re-reads", maxConflicts)
}

// planStep decides what a due ladder does now: nothing (another notifier moved it on), stop
// (the check recovered, was acknowledged, went into maintenance, was disabled, no longer has an
// escalating severity, or the policy is gone), or fire its next step.
func (nt *Notifier) planStep(conn redis.Conn, policyID, checkID string, now time.Time) (*plan, error) {
	ls, err := model.ReadLadders(conn, nt.keys, [][2]string{{policyID, checkID}})
	if err != nil {
		return nil, err
	}
	l := ls[0]
	p := &plan{verdict: "escalation"}
	if !l.Active() {
		// stale member (a stop raced the due set): drop it, guarded so a fresh start survives
		p.record.Guards = append(p.record.Guards, model.Guard{Key: nt.keys.EscalationLadder(policyID, checkID), Revision: l.Revision})
		p.record.Ops.ZRem(nt.keys.EscalationsDue(), schema.EscalationMember(policyID, checkID))
		return p, nil
	}
	if l.NextDue == 0 || l.NextDue > now.Unix() {
		return nil, nil
	}
	pol, found, err := model.ReadEscalationPolicy(conn, nt.keys, policyID)
	if err != nil {
		return nil, err
	}
	n, err := schema.ParseNotification([]byte(l.Notification))
	if err != nil {
		return nil, fmt.Errorf("ladder's notification: %w", err)
	}
	p.notification = &n
	entity, check := n.EntityCheck()
	status, err := model.CheckStatusAt(conn, nt.keys, entity, check, now)
	if err != nil {
		return nil, err
	}
	if reason := stopReason(found, pol, &n, status); reason != "" {
		l.StoppedAt, l.StoppedReason, l.NextDue = now.Unix(), reason, 0
		nt.writeLadder(p, l, false)
		p.escStopped = append(p.escStopped, reason)
		p.verdict = "escalation_stopped"
		p.reason = "escalation " + policyID + " stopped before step " + strconv.Itoa(min(l.Fired+1, len(pol.Steps))) + ": " + stopWords[reason]
		nt.recordExplain(p, nil, now)
		return p, nil
	}
	idx := min(l.Fired, len(pol.Steps)-1)
	if l.Fired < len(pol.Steps) {
		l.Fired++
	} else {
		l.Repeats++
	}
	step := pol.Steps[idx]
	p.escalation = &schema.AlertEscalation{PolicyID: policyID, Step: idx + 1, Steps: len(pol.Steps),
		UnacknowledgedFor: now.Unix() - l.StartedAt}
	if l.Fired == len(pol.Steps) && idx == len(pol.Steps)-1 {
		p.escalation.Repeat = l.Repeats
	}
	p.idSeed = member(policyID, checkID, idx, l.Repeats)
	contacts, err := model.LoadContacts(conn, nt.keys, step.Contacts)
	if err != nil {
		return nil, err
	}
	if len(contacts) < len(step.Contacts) {
		nt.log.Warn("escalation step names contacts that do not exist", zap.String("policy", policyID),
			zap.Int("step", idx+1), zap.Strings("contacts", step.Contacts))
	}
	cands := nt.candidates(p, contacts, entity, now)
	if len(step.Media) > 0 {
		cands = slices.DeleteFunc(cands, func(c *candidate) bool {
			if slices.Contains(step.Media, c.medium) {
				return false
			}
			p.skipped = append(p.skipped, skip{c.contact.ID, c.medium, "not one of this step's media"})
			return true
		})
	}
	if err := nt.readSuppression(conn, &n, cands, now); err != nil {
		return nil, err
	}
	if err := nt.readAlerting(conn, &n, cands, now); err != nil {
		return nil, err
	}
	nt.decide(p, contacts, cands, now)
	for _, c := range cands {
		if !slices.Contains(l.Alerted, c.contact.ID) {
			l.Alerted = append(l.Alerted, c.contact.ID)
		}
	}
	l.NextDue = nextDue(pol, l)
	nt.writeLadder(p, l, true)
	p.escFired = idx + 1
	p.reason = fmt.Sprintf("escalation %s step %d of %d fired: nobody acknowledged for %s", policyID, idx+1,
		len(pol.Steps), humantime.Words(time.Duration(now.Unix()-l.StartedAt)*time.Second))
	if l.NextDue > 0 {
		p.reason += "; next step due at " + time.Unix(l.NextDue, 0).UTC().Format(time.RFC3339)
	}
	nt.recordExplain(p, contacts, now)
	return p, nil
}

func member(policyID, checkID string, step, repeat int) string {
	return schema.EscalationMember(policyID, checkID) + "#" + strconv.Itoa(step) + "." + strconv.Itoa(repeat)
}

var stopWords = map[string]string{
	model.StopRecovered:     "the check is no longer failing",
	model.StopAcknowledged:  "the problem was acknowledged",
	model.StopMaintenance:   "the check is in scheduled maintenance",
	model.StopDisabled:      "the check is disabled",
	model.StopSeverity:      "its severity no longer escalates under the policy",
	model.StopPolicyRemoved: "the policy was removed",
}

// stopReason is why a due step must not fire ("" when it fires).
func stopReason(found bool, pol model.EscalationPolicy, n *schema.Notification, s model.CheckStatus) string {
	switch {
	case !found || len(pol.Steps) == 0:
		return model.StopPolicyRemoved
	case !schema.IsFailure(s.State):
		return model.StopRecovered
	case s.InUnscheduledMaintenance():
		return model.StopAcknowledged
	case s.InScheduledMaintenance():
		return model.StopMaintenance
	case !s.Enabled:
		return model.StopDisabled
	case !pol.Escalates(n.Severity):
		return model.StopSeverity
	}
	return ""
}

// observeStep counts and logs a tick's decision about one ladder.
func (nt *Notifier) observeStep(p *plan) {
	nt.observeEscalation(p)
	if p.escalation != nil {
		nt.log.Info("escalation step fired", zap.String("policy", p.escalation.PolicyID),
			zap.String("check", p.notification.EventID), zap.Int("step", p.escalation.Step),
			zap.Int("repeat", p.escalation.Repeat), zap.Int("alerts", len(p.alerts)))
	}
	nt.observeAlerts(p)
}
