package notifier

import (
	"slices"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/schema"
)

// Escalation, on the routing side: a problem notification of a check matched by a policy starts
// (or resumes) that policy's ladder; a recovery or acknowledgement stops the check's ladders and
// is routed to the contacts they alerted as well as to the check's own contacts. The steps
// themselves fire from the due set (tick.go). Every ladder write joins the routing record of the
// notification, guarded by the ladder's revision, so it is applied exactly once with it.

// escalations is what routing one notification needs to know about the check's ladders.
type escalations struct {
	matched []roster.EscalationPolicy // policies whose criteria match the check
	ladders map[string]roster.Ladder  // by policy id: the check's ladders, and one per matched policy
	windows map[string]int64          // restart window by policy id, of every policy
}

// needsEscalations: problems may start a ladder, recoveries and acknowledgements stop one.
func needsEscalations(n *schema.Notification) bool {
	return n.Type == schema.NotificationProblem || isRecoveryOrAck(n)
}

// readEscalations reads the check's ladders (a round trip, when there are policies or ladders)
// given what routing read: the policies and the check's ladder policies. nil for notifications
// that neither start nor stop a ladder.
func (nt *Notifier) readEscalations(conn redis.Conn, n *schema.Notification, entity, check string, r roster.Routing) (*escalations, error) {
	raw, ids := r.EscalationPolicies, slices.Clone(r.CheckEscalations)
	if !needsEscalations(n) || (len(raw) == 0 && len(ids) == 0) {
		return nil, nil
	}
	policies := nt.policies.decode(raw, nt.log)
	e := &escalations{ladders: map[string]roster.Ladder{}, windows: map[string]int64{}}
	for _, p := range policies {
		e.windows[p.ID] = p.RestartWindow()
		if nt.policyMatches(p, n, entity, check) {
			e.matched = append(e.matched, p)
			ids = append(ids, p.ID)
		}
	}
	if r.Ladders != nil {
		e.ladders = r.Ladders
		return e, nil
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	refs := make([][2]string, len(ids))
	for i, id := range ids {
		refs[i] = [2]string{id, n.EventID}
	}
	ls, err := roster.ReadLadders(conn, nt.keys, refs)
	if err != nil {
		return nil, err
	}
	for _, l := range ls {
		e.ladders[l.PolicyID] = l
	}
	return e, nil
}

// ladderRefs are the ladders routing a notification reads: the check's, and one per policy
// matching it.
func (nt *Notifier) ladderRefs(n *schema.Notification, r roster.Routing) [][2]string {
	if !needsEscalations(n) || (len(r.EscalationPolicies) == 0 && len(r.CheckEscalations) == 0) {
		return nil
	}
	entity, check := n.EntityCheck()
	ids := slices.Clone(r.CheckEscalations)
	for _, p := range nt.policies.decode(r.EscalationPolicies, nt.log) {
		if nt.policyMatches(p, n, entity, check) {
			ids = append(ids, p.ID)
		}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	refs := make([][2]string, len(ids))
	for i, id := range ids {
		refs[i] = [2]string{id, n.EventID}
	}
	return refs
}

// policyMatches applies a notification rule's criteria (the router's own matching) and the
// policy's check names.
func (nt *Notifier) policyMatches(p roster.EscalationPolicy, n *schema.Notification, entity, check string) bool {
	if len(p.Checks) > 0 && !slices.Contains(p.Checks, check) {
		return false
	}
	rule := roster.Rule{ID: "escalation policy " + p.ID, Entities: p.Entities, RegexEntities: p.RegexEntities,
		Tags: p.Tags, RegexTags: p.RegexTags}
	ok, _, problem := nt.router.matches(&rule, n, entity)
	if problem != "" {
		nt.log.Error("escalation policy skipped", zap.String("policy", p.ID), zap.String("problem", problem))
	}
	return ok
}

// telling lists the ladders whose alerted contacts hear of this recovery or acknowledgement: those
// in progress, and those a tick stopped (it saw the check handled) before this notification came.
func (e *escalations) telling() []roster.Ladder {
	var out []roster.Ladder
	for _, id := range sortedKeys(e.ladders) {
		l := e.ladders[id]
		if l.Exists && !l.Told && len(l.Alerted) > 0 || l.Active() {
			out = append(out, l)
		}
	}
	return out
}

// withAlerted adds to a recovery's or acknowledgement's contacts those the check's ladders
// alerted: they are told as recoveries tell, through their own rules.
func (nt *Notifier) withAlerted(conn redis.Conn, contacts []roster.Contact, e *escalations) ([]roster.Contact, error) {
	have := map[string]bool{}
	for _, c := range contacts {
		have[c.ID] = true
	}
	var extra []string
	for _, l := range e.telling() {
		for _, id := range l.Alerted {
			if !have[id] {
				have[id] = true
				extra = append(extra, id)
			}
		}
	}
	if len(extra) == 0 {
		return contacts, nil
	}
	more, err := roster.LoadContacts(conn, nt.keys, extra)
	if err != nil {
		return nil, err
	}
	return append(contacts, more...), nil
}

// planEscalations adds the ladder writes of a routed notification to its record.
func (nt *Notifier) planEscalations(p *plan, e *escalations, now time.Time) {
	if e == nil {
		return
	}
	n := p.notification
	if isRecoveryOrAck(n) {
		reason := roster.StopRecovered
		if n.Type == schema.NotificationAcknowledgement {
			reason = roster.StopAcknowledged
		}
		for _, l := range e.telling() {
			if l.Active() {
				l.StoppedAt, l.StoppedReason, l.NextDue = now.Unix(), reason, 0
				p.escStopped = append(p.escStopped, reason)
				p.escalationNotes = append(p.escalationNotes, "escalation "+l.PolicyID+" stopped: "+reason)
			}
			l.Told = true
			roster.WriteLadder(&p.record, nt.keys, l, false)
			roster.IndexStopped(&p.record, nt.keys, l, e.windows[l.PolicyID])
		}
		return
	}
	for _, pol := range e.matched {
		if !pol.Escalates(n.Severity) {
			continue
		}
		l := e.ladders[pol.ID]
		if l.Exists && !l.Active() {
			roster.Unstop(&p.record, nt.keys, l)
		}
		switch {
		case !l.Exists || (!l.Active() && now.Unix()-l.StoppedAt > pol.RestartWindow()):
			rev := l.Revision
			l = roster.Ladder{PolicyID: pol.ID, CheckID: n.EventID, Exists: true, Revision: rev,
				StartedAt: now.Unix(), NextDue: now.Unix() + pol.Steps[0].Delay}
			p.escStarted++
			p.escalationNotes = append(p.escalationNotes, "escalation "+pol.ID+" started: step 1 due at "+
				time.Unix(l.NextDue, 0).UTC().Format(time.RFC3339))
		case !l.Active():
			l.StoppedAt, l.StoppedReason, l.Told = 0, "", false
			l.NextDue = 0
			if due := nextDue(pol, l); due > 0 {
				l.NextDue = max(due, now.Unix())
			}
			p.escalationNotes = append(p.escalationNotes, "escalation "+pol.ID+" resumed (the check failed again within "+
				"its restart window): no step fires twice")
		}
		l.Notification = p.record.Item
		roster.WriteLadder(&p.record, nt.keys, l, true)
	}
}

// nextDue is when the step after those fired is due, counted from the first problem alert
// (repeats of the last step every Repeat seconds after it); 0 when nothing more is due.
func nextDue(pol roster.EscalationPolicy, l roster.Ladder) int64 {
	if l.Fired < len(pol.Steps) {
		return l.StartedAt + pol.Steps[l.Fired].Delay
	}
	if pol.Repeat > 0 {
		return l.StartedAt + pol.Steps[len(pol.Steps)-1].Delay + int64(l.Repeats+1)*pol.Repeat
	}
	return 0
}

// policyCache keeps decoded policies by their stored JSON, so routing and ticks decode a policy
// once per change rather than once per notification.
type policyCache struct {
	mu     sync.Mutex
	byID   map[string]cachedPolicy
	sorted []roster.EscalationPolicy
	dirty  bool
}

type cachedPolicy struct {
	raw    string
	policy roster.EscalationPolicy
	ok     bool
}

// one decodes a single policy read by id (a tick reads only the policies of its ladders).
func (c *policyCache) one(id, raw string, log *zap.Logger) (roster.EscalationPolicy, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.byID[id]; ok && old.raw == raw {
		return old.policy, old.ok
	}
	ps, problems := roster.DecodeEscalationPolicies(map[string]string{id: raw})
	for _, p := range problems {
		log.Error("escalation policy skipped", zap.Error(p))
	}
	cp := cachedPolicy{raw: raw, ok: len(ps) == 1}
	if cp.ok {
		cp.policy = ps[0]
	}
	if c.byID == nil {
		c.byID = map[string]cachedPolicy{}
	}
	c.byID[id] = cp
	c.dirty = true // the sorted list decode keeps no longer follows byID
	return cp.policy, cp.ok
}

// decode returns the policies of the escalation_policies hash, sorted by id; a value that
// cannot be read is logged (once per change) and left out.
func (c *policyCache) decode(raw map[string]string, log *zap.Logger) []roster.EscalationPolicy {
	c.mu.Lock()
	defer c.mu.Unlock()
	changed := c.dirty || len(raw) != len(c.byID)
	c.dirty = false
	next := make(map[string]cachedPolicy, len(raw))
	for id, v := range raw {
		if old, ok := c.byID[id]; ok && old.raw == v {
			next[id] = old
			continue
		}
		changed = true
		ps, problems := roster.DecodeEscalationPolicies(map[string]string{id: v})
		for _, p := range problems {
			log.Error("escalation policy skipped", zap.Error(p))
		}
		cp := cachedPolicy{raw: v, ok: len(ps) == 1}
		if cp.ok {
			cp.policy = ps[0]
		}
		next[id] = cp
	}
	if changed {
		c.sorted = c.sorted[:0:0]
		for _, id := range sortedKeys(next) {
			if next[id].ok {
				c.sorted = append(c.sorted, next[id].policy)
			}
		}
	}
	c.byID = next
	return c.sorted
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
