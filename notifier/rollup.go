package notifier

import (
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/schema"
)

// alertingState is one contact's medium's alerting set (contact_alerting_checks) and what is
// needed to clean it; rollup (docs/flapjack-1x.md 3.6) decides on it.
type alertingState struct {
	threshold int64    // rollup threshold; 0 for a medium without rollup
	members   []string // alerting set before this notification
	// filled from facts:
	remove map[string]bool
	facts  map[string]*checkstate.CheckFacts
}

// rolls reports whether a candidate's medium can be rolled up.
func rolls(c *candidate) bool { return rollsOn(c.contact, c.medium) }

// rollsOn reports whether a contact's medium can be rolled up: never PagerDuty, only with a
// threshold.
func rollsOn(c *roster.Contact, medium string) bool {
	return medium != "pagerduty" && c.RollupThresholds[medium] > 0
}

// tracks reports whether this notification's routing reads and cleans the candidate's alerting
// set (docs/flapjack-1x.md 3.6 step 2): rollup decides on the cleaned set, so a medium with a rollup
// threshold is read at its notification's turn. The sets of media without rollup decide nothing;
// they are cleaned after the apply (tidyAlerting), off the alert's way.
func (nt *Notifier) tracks(c *candidate) bool { return rolls(c) }

// cleaning is one notification's candidates whose alerting sets it changes, read already.
type cleaning struct {
	n       *schema.Notification
	tracked []*candidate
}

// cleanAlerting reads the facts needed to clean the tracked candidates' alerting sets of one or
// more notifications (a batch's, in one read) and marks what each set loses.
func (nt *Notifier) cleanAlerting(conn redis.Conn, cleanings []cleaning, now time.Time) error {
	distinct := map[string]bool{}
	for _, cl := range cleanings {
		if len(cl.tracked) == 0 {
			continue
		}
		for _, c := range cl.tracked {
			for _, m := range c.alerting.members {
				distinct[m] = true
			}
		}
		distinct[cl.n.EventID] = true
	}
	members, err := nt.readMembers(conn, distinct, now)
	if err != nil {
		return err
	}
	for _, cl := range cleanings {
		for _, c := range cl.tracked {
			c.alerting.facts = members.facts
			candidates := c.alerting.members
			if addsToAlerting(cl.n) {
				candidates = append(candidates, cl.n.EventID)
			}
			c.alerting.remove = members.leaving(c.contact.ID, candidates, now)
		}
	}
	return nil
}

// memberFacts is what cleaning alerting sets needs of their members: every member's state and
// maintenance, whether it is enabled, and whether a contact still cares about it.
type memberFacts struct {
	facts      map[string]*checkstate.CheckFacts
	interested map[string][]string // check -> its contacts
}

// readMembers reads the facts of the checks in ids.
func (nt *Notifier) readMembers(conn redis.Conn, ids map[string]bool, now time.Time) (memberFacts, error) {
	if len(ids) == 0 {
		return memberFacts{}, nil
	}
	sorted := slices.Sorted(maps.Keys(ids))
	reqs := make([]checkstate.FactsRequest, 0, len(sorted))
	var valid []string
	for _, id := range sorted {
		e, ch, ok := schema.SplitCheckID(id)
		if !ok {
			continue
		}
		valid = append(valid, id)
		reqs = append(reqs, checkstate.FactsRequest{Entity: e, Check: ch, Mode: checkstate.ModeAlerting})
	}
	facts, err := checkstate.ReadFacts(conn, nt.keys, now, reqs)
	if err != nil {
		return memberFacts{}, err
	}
	m := memberFacts{facts: make(map[string]*checkstate.CheckFacts, len(facts))}
	for i := range facts {
		m.facts[valid[i]] = &facts[i]
	}
	if m.interested, err = roster.ContactIDsForFacts(conn, nt.keys, facts); err != nil {
		return memberFacts{}, err
	}
	return m, nil
}

// leaving marks which of a contact's set members leave it when cleaned.
func (m memberFacts) leaving(contactID string, members []string, now time.Time) map[string]bool {
	remove := map[string]bool{}
	for _, id := range members {
		if shouldClean(m.facts[id], now.Unix(), contains(m.interested[id], contactID)) {
			remove[id] = true
		}
	}
	return remove
}

// addsToAlerting: problems enter the alerting set; recoveries, acknowledgements and tests don't.
func addsToAlerting(n *schema.Notification) bool { return n.Type == schema.NotificationProblem }

// shouldClean: a check leaves a contact's alerting set when it is ok (or gone), in unscheduled or
// scheduled maintenance, disabled, or no longer the contact's concern.
func shouldClean(f *checkstate.CheckFacts, now int64, stillContact bool) bool {
	return f == nil || !schema.IsFailure(f.State) || f.UnscheduledMaintenance.Covers(now) ||
		f.ScheduledMaintenance.Covers(now) || !f.Enabled || !stillContact
}

// rollupDecision is the pure outcome of docs/flapjack-1x.md 3.6 steps 1-3 for one medium.
type rollupDecision struct {
	kind                       string // "", schema.RollupProblem, schema.RollupRecovery
	drop                       bool   // send nothing on this medium (throttled rollup)
	setThrottle, clearThrottle bool
	add                        bool     // ZADD this check to the alerting set
	removed                    []string // ZREM these
	remaining                  []string // the cleaned set, for rollup_alerts
}

func decideRollup(c *candidate, n *schema.Notification) rollupDecision {
	var d rollupDecision
	r := c.alerting
	set := append([]string(nil), r.members...)
	if addsToAlerting(n) && !contains(set, n.EventID) {
		set = append(set, n.EventID)
	}
	d.add = addsToAlerting(n)
	before := int64(len(set))
	for _, id := range set {
		if r.remove[id] {
			d.removed = append(d.removed, id)
		} else {
			d.remaining = append(d.remaining, id)
		}
	}
	if d.add && r.remove[n.EventID] {
		d.add = false
	}
	sort.Strings(d.removed)
	sort.Strings(d.remaining)
	count := int64(len(d.remaining))
	t := r.threshold
	recovered := before >= t && int64(len(d.removed)) > before-t
	switch {
	case count >= t:
		if c.throttled {
			d.drop = true
			return d
		}
		if n.Type == schema.NotificationRecovery {
			d.clearThrottle = true
		} else {
			d.setThrottle = true
		}
		d.kind = schema.RollupProblem
	case recovered:
		d.clearThrottle = true
		d.kind = schema.RollupRecovery
	}
	return d
}

// rollupAlerts describes the checks of a rollup alert.
func rollupAlerts(ids []string, facts map[string]*checkstate.CheckFacts, now int64) map[string]schema.RollupEntry {
	out := make(map[string]schema.RollupEntry, len(ids))
	for _, id := range ids {
		f := facts[id]
		if f == nil {
			continue
		}
		out[id] = schema.RollupEntry{Duration: max(now-f.LastChange, 0), State: f.State, Summary: f.Summary}
	}
	return out
}
