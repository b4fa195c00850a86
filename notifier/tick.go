package notifier

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/internal/humantime"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/model/views"
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
// check is no longer failing and unhandled. It returns the alerts queued. One tick's decisions
// are read together and written in one apply record: a handful of round trips for the whole
// batch.
func (nt *Notifier) Escalate(ctx context.Context) (Result, error) {
	var res Result
	now := nt.clock.Now()
	conn, err := nt.pool.GetContext(ctx)
	if err != nil {
		return res, fmt.Errorf("escalate: %w", err)
	}
	defer conn.Close()
	for attempt := 0; attempt < maxConflicts; attempt++ {
		members, err := roster.EscalationsDueAt(conn, nt.keys, now.Unix(), escalationBatch)
		if err != nil || len(members) == 0 {
			return res, err
		}
		t, err := nt.planTick(conn, members, now)
		if err != nil {
			return res, fmt.Errorf("escalate: %w", err)
		}
		if t.record.Ops.Len() == 0 {
			return res, nil
		}
		statuses, err := model.Apply(conn, model.ApplyTarget{}, []model.Record{t.record})
		var refused *model.WriteError
		if errors.As(err, &refused) {
			nt.m.redisErrors.Inc()
			nt.log.Error("some escalation writes were refused by Redis", zap.Strings("errors", refused.Messages))
		} else if err != nil {
			return res, fmt.Errorf("escalate: %w", err)
		}
		if statuses[0] == model.Conflict {
			nt.m.conflicts.Inc()
			continue
		}
		for _, p := range t.plans {
			nt.observeStep(p)
			res.Finished++
			res.Alerts = append(res.Alerts, p.alerts...)
		}
		return res, nil
	}
	return res, fmt.Errorf("escalate: ladders kept changing under %d re-reads", maxConflicts)
}

// NextEscalationDue is when the earliest step is due; found is false when none is.
func (nt *Notifier) NextEscalationDue(ctx context.Context) (at time.Time, found bool, err error) {
	conn, err := nt.pool.GetContext(ctx)
	if err != nil {
		return at, false, err
	}
	defer conn.Close()
	secs, found, err := roster.NextEscalationDue(conn, nt.keys)
	return time.Unix(secs, 0), found, err
}

// maybeEscalate ticks when tickEvery has passed since the last tick: the escalation steps due,
// then the schedules' coverage.
func (nt *Notifier) maybeEscalate(ctx context.Context) error {
	now := nt.clock.Now()
	if now.Before(nt.nextTick) {
		return nil
	}
	nt.nextTick = now.Add(tickEvery)
	if _, err := nt.Escalate(ctx); err != nil {
		return err
	}
	return nt.observeCoverage(ctx, now)
}

// tick is one tick's decisions: every ladder's plan, and the one record writing them all.
type tick struct {
	record model.Record
	plans  []*plan
}

// due is a ladder taken by a tick, with what its decision reads.
type due struct {
	ladder roster.Ladder
	n      schema.Notification
	policy roster.EscalationPolicy
	found  bool
	p      *plan
	step   roster.EscalationStep
	onCall []string // contacts the step's schedules put on call now
	cands  []*candidate
}

// planTick decides what each due ladder does now: nothing (another notifier moved it on), stop
// (the check recovered, was acknowledged, went into maintenance, was disabled, no longer has an
// escalating severity, or the policy is gone), or fire its next step, routed to the step's
// contacts through their rules, time restrictions and intervals like any problem.
func (nt *Notifier) planTick(conn redis.Conn, members []string, now time.Time) (*tick, error) {
	t := &tick{}
	refs := make([][2]string, 0, len(members))
	for _, m := range members {
		policyID, checkID, ok := schema.ParseEscalationMember(m)
		if !ok {
			nt.log.Error("escalations_due member is not POLICY:ENTITY:CHECK; removed", zap.String("member", m))
			roster.DropDueMember(&t.record, nt.keys, m)
			continue
		}
		refs = append(refs, [2]string{policyID, checkID})
	}
	read, err := roster.ReadTick(conn, nt.keys, refs)
	if err != nil {
		return nil, err
	}
	var dues []*due
	var statuses []views.CheckStatus
	var maintained []int // indexes in dues of checks with maintenance windows
	var checks []checkstate.FactsRequest
	drop := func(l roster.Ladder) { roster.DropDue(&t.record, nt.keys, l) } // guarded, so a fresh start survives
	for i, l := range read.Ladders {
		if !l.Active() {
			drop(l) // stale member: a stop raced the due set
			continue
		}
		if l.NextDue == 0 || l.NextDue > now.Unix() {
			continue
		}
		d := &due{ladder: l, p: &plan{verdict: "escalation"}}
		if d.n, err = schema.ParseNotification([]byte(l.Notification)); err != nil {
			// written by someone else: never let one bad ladder wedge every tick
			nt.log.Error("escalation ladder's notification cannot be read; it leaves the due set (the ladder is kept)",
				zap.String("policy", l.PolicyID), zap.String("check", l.CheckID), zap.Error(err))
			drop(l)
			continue
		}
		if raw, ok := read.Policies[l.PolicyID]; ok {
			d.policy, d.found = nt.policies.one(l.PolicyID, raw, nt.log)
		}
		d.p.notification = &d.n
		if read.Windows[i] {
			entity, check := d.n.EntityCheck()
			maintained = append(maintained, len(dues))
			checks = append(checks, checkstate.FactsRequest{Entity: entity, Check: check, Mode: checkstate.ModeMaintenance})
		}
		statuses = append(statuses, views.CheckStatus{State: read.State[i], Enabled: read.Enabled[i]})
		dues = append(dues, d)
	}
	// the facts script decides which window covers now, for the few checks that have any
	facts, err := checkstate.ReadFacts(conn, nt.keys, now, checks)
	if err != nil {
		return nil, err
	}
	for j, f := range facts {
		s := &statuses[maintained[j]]
		s.State = f.State
		if f.ScheduledMaintenance.Covers(now.Unix()) {
			s.Scheduled = f.ScheduledMaintenance
		}
		if f.UnscheduledMaintenance.Covers(now.Unix()) {
			s.Unscheduled = f.UnscheduledMaintenance
		}
	}
	var firing []*due
	var contactIDs []string
	for i, d := range dues {
		if reason := stopReason(d.found, d.policy, &d.n, statuses[i]); reason != "" {
			nt.planStop(d, reason, now)
			continue
		}
		d.step = d.policy.Steps[min(d.ladder.Fired, len(d.policy.Steps)-1)]
		contactIDs = append(contactIDs, d.step.Contacts...)
		firing = append(firing, d)
	}
	onCall, err := nt.stepsOnCall(conn, firing, now)
	if err != nil {
		return nil, err
	}
	contactIDs = append(contactIDs, onCall...)
	slices.Sort(contactIDs)
	contacts, err := roster.LoadContacts(conn, nt.keys, slices.Compact(contactIDs))
	if err != nil {
		return nil, err
	}
	byContact := make(map[string]roster.Contact, len(contacts))
	for _, c := range contacts {
		byContact[c.ID] = c
	}
	var probes []probe
	for _, d := range firing {
		nt.candidatesForStep(d, byContact, now)
		probes = append(probes, nt.suppressionProbes(&d.n, d.cands, now)...)
	}
	if err := probeSuppression(conn, probes); err != nil {
		return nil, err
	}
	onePagePerTick(firing)
	for _, d := range firing {
		nt.planFire(d, now)
	}
	parts := make([]*model.Record, 0, len(dues))
	for _, d := range dues {
		parts = append(parts, &d.p.record)
		t.plans = append(t.plans, d.p)
	}
	t.record.Merge(parts)
	return t, nil
}

// stepNumber is the step a firing ladder alerts (from 1; a repeat names the last step).
func (d *due) stepNumber() int { return min(d.ladder.Fired, len(d.policy.Steps)-1) + 1 }

// onePagePerTick keeps one page per contact, medium and check in a tick: when several policies'
// ladders of a check page the same contact on the same medium at once, the highest step sends
// it (on a tie, the policy whose id sorts first) and the others record why they did not. Every
// ladder still moves on: its step counts as fired.
func onePagePerTick(firing []*due) {
	type page struct{ check, contact, medium string }
	winner := map[page]*due{}
	beats := func(a, b *due) bool {
		if a.stepNumber() != b.stepNumber() {
			return a.stepNumber() > b.stepNumber()
		}
		return a.ladder.PolicyID < b.ladder.PolicyID
	}
	for _, d := range firing {
		for _, c := range d.cands {
			k := page{d.n.EventID, c.contact.ID, c.medium}
			if w, ok := winner[k]; !ok || beats(d, w) {
				winner[k] = d
			}
		}
	}
	for _, d := range firing {
		d.cands = slices.DeleteFunc(d.cands, func(c *candidate) bool {
			w := winner[page{d.n.EventID, c.contact.ID, c.medium}]
			if w == d {
				return false
			}
			d.p.skipped = append(d.p.skipped, skip{c.contact.ID, c.medium, fmt.Sprintf(
				"paged once in this tick, by escalation %s step %d", w.ladder.PolicyID, w.stepNumber())})
			return true
		})
	}
}

// probeSuppression marks the candidates of the probes whose interval keys exist
// (roster.ExistingKeys: one round trip, a second only when some do).
func probeSuppression(conn redis.Conn, probes []probe) error {
	if len(probes) == 0 {
		return nil
	}
	seen := make(map[string]bool, len(probes))
	var keys []string
	for _, pr := range probes {
		if !seen[pr.key] {
			seen[pr.key] = true
			keys = append(keys, pr.key)
		}
	}
	exists, err := roster.ExistingKeys(conn, keys)
	if err != nil {
		return err
	}
	for _, pr := range probes {
		if exists[pr.key] {
			pr.found()
		}
	}
	return nil
}

// planStop stops a ladder whose check no longer escalates.
func (nt *Notifier) planStop(d *due, reason string, now time.Time) {
	l, p := d.ladder, d.p
	l.StoppedAt, l.StoppedReason, l.NextDue = now.Unix(), reason, 0
	roster.MoveLadder(&p.record, nt.keys, d.ladder, l, false)
	window := int64(0) // the policy is gone
	if d.found {
		window = d.policy.RestartWindow()
	}
	roster.IndexStopped(&p.record, nt.keys, l, window)
	p.escStopped = append(p.escStopped, reason)
	p.verdict = "escalation_stopped"
	step := l.Fired + 1
	if d.found {
		step = min(step, len(d.policy.Steps))
	}
	p.reason = "escalation " + l.PolicyID + " stopped before step " + strconv.Itoa(step) + ": " + stopWords[reason]
	nt.recordExplain(p, nil, now)
}

// candidatesForStep applies the rules of the step's contacts (and the step's media).
func (nt *Notifier) candidatesForStep(d *due, byContact map[string]roster.Contact, now time.Time) {
	var contacts []roster.Contact
	for _, id := range slices.Concat(d.step.Contacts, d.onCall) {
		if slices.ContainsFunc(contacts, func(c roster.Contact) bool { return c.ID == id }) {
			continue // named by the step and on call in one of its schedules: alerted once
		}
		if c, ok := byContact[id]; ok {
			contacts = append(contacts, c)
		} else {
			nt.log.Warn("escalation step names a contact that does not exist", zap.String("policy", d.ladder.PolicyID),
				zap.String("contact", id))
		}
	}
	entity, _ := d.n.EntityCheck()
	d.p.rulesContacts = contacts
	d.cands = nt.candidates(d.p, contacts, entity, now)
	if len(d.step.Media) > 0 {
		d.cands = slices.DeleteFunc(d.cands, func(c *candidate) bool {
			if slices.Contains(d.step.Media, c.medium) {
				return false
			}
			d.p.skipped = append(d.p.skipped, skip{c.contact.ID, c.medium, "not one of this step's media"})
			return true
		})
	}
}

// planFire fires the ladder's next step: its alerts, and the ladder moved on to the step after.
// No alerting-set reads: an escalation page is never rolled up, and the check's own
// notifications keep the contacts' alerting sets.
func (nt *Notifier) planFire(d *due, now time.Time) {
	l, p, pol := d.ladder, d.p, d.policy
	idx := min(l.Fired, len(pol.Steps)-1)
	if l.Fired < len(pol.Steps) {
		l.Fired++
	} else {
		l.Repeats++
	}
	p.escalation = &schema.AlertEscalation{PolicyID: l.PolicyID, Step: idx + 1, Steps: len(pol.Steps),
		UnacknowledgedFor: now.Unix() - l.StartedAt, Repeat: l.Repeats}
	p.idSeed = member(l.PolicyID, l.CheckID, idx, l.Repeats)
	nt.decide(p, p.rulesContacts, d.cands, now)
	for _, c := range d.cands {
		if !slices.Contains(l.Alerted, c.contact.ID) {
			l.Alerted = append(l.Alerted, c.contact.ID)
		}
	}
	l.NextDue = nextDue(pol, l)
	roster.MoveLadder(&p.record, nt.keys, d.ladder, l, true)
	p.escFired = idx + 1
	p.reason = fmt.Sprintf("escalation %s step %d of %d fired: nobody acknowledged for %s", l.PolicyID, idx+1,
		len(pol.Steps), humantime.Words(time.Duration(now.Unix()-l.StartedAt)*time.Second))
	if l.NextDue > 0 {
		p.reason += "; next step due at " + time.Unix(l.NextDue, 0).UTC().Format(time.RFC3339)
	}
	if len(p.scheduleNotes) > 0 {
		p.reason += "; " + strings.Join(p.scheduleNotes, "; ")
	}
	nt.recordExplain(p, p.rulesContacts, now)
}

func member(policyID, checkID string, step, repeat int) string {
	return schema.EscalationMember(policyID, checkID) + "#" + strconv.Itoa(step) + "." + strconv.Itoa(repeat)
}

var stopWords = map[string]string{
	roster.StopRecovered:     "the check is no longer failing",
	roster.StopAcknowledged:  "the problem was acknowledged",
	roster.StopMaintenance:   "the check is in scheduled maintenance",
	roster.StopDisabled:      "the check is disabled",
	roster.StopSeverity:      "its severity no longer escalates under the policy",
	roster.StopPolicyRemoved: "the policy was removed",
}

// stopReason is why a due step must not fire ("" when it fires).
func stopReason(found bool, pol roster.EscalationPolicy, n *schema.Notification, s views.CheckStatus) string {
	switch {
	case !found || len(pol.Steps) == 0:
		return roster.StopPolicyRemoved
	case !schema.IsFailure(s.State):
		return roster.StopRecovered
	case s.InUnscheduledMaintenance():
		return roster.StopAcknowledged
	case s.InScheduledMaintenance():
		return roster.StopMaintenance
	case !s.Enabled:
		return roster.StopDisabled
	case !pol.Escalates(n.Severity):
		return roster.StopSeverity
	}
	return ""
}

// observeStep counts and logs a tick's decision about one ladder.
func (nt *Notifier) observeStep(p *plan) {
	nt.observeEscalation(p)
	nt.observeSchedules(p)
	if p.escalation != nil {
		nt.log.Info("escalation step fired", zap.String("policy", p.escalation.PolicyID),
			zap.String("check", p.notification.EventID), zap.Int("step", p.escalation.Step),
			zap.Int("repeat", p.escalation.Repeat), zap.Int("alerts", len(p.alerts)))
	}
	nt.observeAlerts(p)
}
