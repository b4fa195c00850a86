package notifier

import (
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/redisread"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/schema"
)

// Routing a batch. One call reads the routing (contacts, rules, alert state) of every
// notification in the batch, each contact once. Notifications of different checks that involve
// neither rollup nor escalation ladders are then routed together, as a segment: their interval
// keys are read in one round trip and their writes go in one apply. Routing them one by one
// costs three round trips each, and five with rollup.
//
// The outcome is the one of routing them one by one, because the notifier's own writes are the
// only thing a later notification of the batch would read differently:
//   - contact_alert_state, the one part of the routing read the notifier writes: the batch's
//     notifications share one read of each contact, whose view of it decide updates as it
//     writes (so the next notification sees the interval a previous one started, or a field it
//     forgot), and each record is guarded by the contact's revision as the batch's earlier
//     records leave it, so a write by anyone else since the read is a conflict;
//   - the interval keys a notification probes and the explain record it writes are its own
//     check's, and a second notification of a check in a segment starts the next one;
//   - alerting sets of media without rollup: a notification only adds its own check, and the
//     sets are cleaned after the batch (tidyAlerting);
//   - rollup (the alerting set and throttle of a medium) is read at the notification's turn,
//     after the writes before it: such a notification is a segment alone.
//
// Escalation ladders of problems are read ahead for the whole batch in one round trip (a problem
// starts or resumes a ladder, guarded by its revision, and reads no contact of its own); a
// second problem of a check with ladders would read them after the first one's writes, so it
// ends the shared view. A recovery or acknowledgement of a check with ladders reads the contacts
// they alerted, which the shared reads do not hold: it, a record that conflicts, and everything
// after either in the batch are routed one by one from fresh reads.

// maxTogether bounds the notifications routed together: sixteen share most of what can be
// shared, while the plans of a whole batch (64 by default) held at once cost the notifier
// more memory than their round trips are worth.
const maxTogether = 16

// routeBatch routes claimed notifications in order, up to maxTogether at a time.
func (nt *Notifier) routeBatch(conn redis.Conn, items []string) (Result, error) {
	var res Result
	for len(items) > 0 {
		n := min(len(items), maxTogether)
		part, err := nt.routeTogether(conn, items[:n])
		res.Finished += part.Finished
		res.Alerts = append(res.Alerts, part.Alerts...)
		res.tidy = append(res.tidy, part.tidy...)
		if err != nil {
			return res, err
		}
		items = items[n:]
	}
	return res, nil
}

// routeTogether routes notifications on shared reads, in segments.
func (nt *Notifier) routeTogether(conn redis.Conn, items []string) (Result, error) {
	if len(items) == 1 {
		return nt.routeEach(conn, items, Result{})
	}
	now := nt.clock.Now()
	// wall time, only for flapjack_notifier_routing_seconds: decisions take now from the clock
	started := time.Now()
	plans, routings, err := nt.readBatch(conn, items, now)
	if wrongType(err) {
		// a key of the wrong type: one by one, the notifications that read it are rejected
		return nt.routeEach(conn, items, Result{})
	}
	if err != nil {
		return Result{}, err
	}
	b := &batch{nt: nt, conn: conn, now: now, started: started, chain: map[string]int64{}, fresh: -1}
	shared := len(plans) // plans from here on are routed on fresh reads
	checks := map[string]bool{}
	var segment []int
	laddered := map[string]bool{} // checks whose ladders a plan of the batch may write
	for i := 0; i < len(plans) && b.fresh < 0; i++ {
		n := plans[i].notification
		if n != nil && (involvesLadders(n, routings[i]) || laddered[n.EventID]) {
			// ladders read contacts of their own, or were read before a write of the batch:
			// the shared view ends here
			shared = i
			break
		}
		if n != nil && len(routings[i].Ladders) > 0 {
			laddered[n.EventID] = true
		}
		alone := n != nil && rollsUp(routings[i])
		if alone || (n != nil && checks[n.EventID]) {
			b.flush(segment, plans, routings)
			segment, checks = segment[:0], map[string]bool{}
		}
		segment = append(segment, i)
		if n != nil {
			checks[n.EventID] = true
		}
		if alone {
			b.flush(segment, plans, routings)
			segment, checks = segment[:0], map[string]bool{}
		}
	}
	b.flush(segment, plans, routings)
	if b.err != nil {
		return Result{}, b.err
	}
	if b.fresh < 0 {
		b.fresh = shared
	}
	rest := b.retry
	for _, p := range plans[b.fresh:] {
		rest = append(rest, p.record.Item)
	}
	res, err := nt.routeEach(conn, rest, Result{Alerts: b.alerts, tidy: b.tidy})
	if err != nil {
		return Result{}, err
	}
	res.Finished = len(items)
	return res, nil
}

// routeEach routes items one by one on fresh reads, adding to what the batch routed before them.
func (nt *Notifier) routeEach(conn redis.Conn, items []string, before Result) (Result, error) {
	res := before
	for _, raw := range items {
		alerts, tidy, err := nt.routeOne(conn, raw)
		if err != nil {
			return Result{}, err
		}
		res.Alerts = append(res.Alerts, alerts...)
		res.tidy = append(res.tidy, tidy...)
	}
	res.Finished = len(items)
	return res, nil
}

// readBatch parses every item and reads the routing of every notification in one call, in
// which a contact interested in several of them is read once and shared (with one view of its
// alert state). It returns the plans and each notification's routing at its index.
func (nt *Notifier) readBatch(conn redis.Conn, items []string, now time.Time) ([]*plan, []roster.Routing, error) {
	plans := make([]*plan, len(items))
	var reqs []roster.RoutingRequest
	for i, raw := range items {
		plans[i] = nt.parse(raw, now)
		if n := plans[i].notification; n != nil {
			entity, check := n.EntityCheck()
			reqs = append(reqs, roster.RoutingRequest{Entity: entity, Check: check, Escalations: needsEscalations(n)})
		}
	}
	routings := make([]roster.Routing, len(items))
	if len(reqs) == 0 {
		return plans, routings, nil
	}
	read, err := roster.LoadRoutings(conn, nt.keys, reqs)
	if err != nil {
		return nil, nil, err
	}
	next := 0
	for i, p := range plans {
		if p.notification != nil {
			routings[i] = read[next]
			next++
		}
	}
	if err := nt.readLaddersAhead(conn, plans, routings); err != nil {
		return nil, nil, err
	}
	return plans, routings, nil
}

// readLaddersAhead reads, in one round trip, the escalation ladders of every problem of the batch
// (Routing.Ladders), so that routing them stays in the batch.
func (nt *Notifier) readLaddersAhead(conn redis.Conn, plans []*plan, routings []roster.Routing) error {
	var refs [][2]string
	at := make([]int, len(plans)+1)
	for i, p := range plans {
		at[i] = len(refs)
		if n := p.notification; n != nil && n.Type == schema.NotificationProblem {
			refs = append(refs, nt.ladderRefs(n, routings[i])...)
		}
	}
	at[len(plans)] = len(refs)
	if len(refs) == 0 {
		return nil
	}
	ls, err := roster.ReadLadders(conn, nt.keys, refs)
	if err != nil {
		return err
	}
	for i := range plans {
		if at[i] == at[i+1] {
			continue
		}
		routings[i].Ladders = make(map[string]roster.Ladder, at[i+1]-at[i])
		for _, l := range ls[at[i]:at[i+1]] {
			routings[i].Ladders[l.PolicyID] = l
		}
	}
	return nil
}

// involvesLadders reports whether a recovery or acknowledgement concerns escalation ladders:
// routing it reads the contacts they alerted, which the batch's shared reads do not hold.
func involvesLadders(n *schema.Notification, r roster.Routing) bool {
	return isRecoveryOrAck(n) && len(r.CheckEscalations) > 0
}

// rollsUp reports whether one of the contacts (or of those the schedules may put on call) rolls
// up a medium: the notification reads the medium's alerting set and throttle, which the
// notifications before it change.
func rollsUp(r roster.Routing) bool {
	for i := range r.Contacts {
		if contactRollsUp(&r.Contacts[i]) {
			return true
		}
	}
	for _, c := range r.Scheduled {
		if contactRollsUp(&c) {
			return true
		}
	}
	return false
}

func contactRollsUp(c *roster.Contact) bool {
	for m := range c.RollupThresholds {
		if rollsOn(c, m) {
			return true
		}
	}
	return false
}

// batch is the state of routing one batch on shared reads.
type batch struct {
	nt      *Notifier
	conn    redis.Conn
	now     time.Time
	started time.Time
	chain   map[string]int64 // guarded key -> the revision the batch's applied records left it at
	alerts  []schema.Alert
	tidy    []alertingSet
	retry   []string // items whose record conflicted, to route again
	fresh   int      // from this plan on the shared reads no longer hold; -1 while they do
	err     error
}

// flush routes a segment (plan indexes, in order) and applies it. After an error or a conflict
// it does nothing more: the rest is left to fresh reads.
func (b *batch) flush(segment []int, plans []*plan, routings []roster.Routing) {
	if len(segment) == 0 || b.err != nil || b.fresh >= 0 {
		return
	}
	nt := b.nt
	ns := make([]*schema.Notification, len(segment))
	cands := make([][]*candidate, len(segment))
	routed := make([]bool, len(segment))
	for k, i := range segment {
		if ns[k] = plans[i].notification; ns[k] == nil {
			continue
		}
		if cands[k], routed[k], b.err = nt.route(b.conn, plans[i], routings[i], b.now); b.err != nil {
			b.oneByOne(segment)
			return
		}
	}
	if b.err = nt.readCandidates(b.conn, ns, cands, b.now); b.err != nil {
		b.oneByOne(segment)
		return
	}
	for k, i := range segment {
		if routed[k] {
			nt.settle(plans[i], cands[k], b.now)
		}
	}
	b.apply(segment, plans)
}

// oneByOne leaves a segment whose reads met a key of the wrong type, and what follows it, to
// routeOne, which rejects the notifications that read such a key; other errors stand.
func (b *batch) oneByOne(segment []int) {
	if wrongType(b.err) {
		redisread.Drain(b.conn)
		b.err, b.fresh = nil, segment[0]
	}
}

// apply writes a segment's records in one apply, each guarded by the revisions its contacts had
// plus the bumps of the batch's records before it.
func (b *batch) apply(segment []int, plans []*plan) {
	nt := b.nt
	records := make([]model.Record, len(segment))
	for k, i := range segment {
		p := plans[i]
		for g := range p.record.Guards {
			guard := &p.record.Guards[g]
			if guard.Absent {
				continue
			}
			if rev, ok := b.chain[guard.Key]; ok {
				guard.Revision = rev
			}
			b.chain[guard.Key] = guard.Revision + 1
		}
		records[k] = p.record
	}
	statuses, err := nt.apply(b.conn, records)
	if err != nil {
		b.err = err
		return
	}
	took := time.Since(b.started)
	for k, i := range segment {
		p := plans[i]
		switch statuses[k] {
		case model.Conflict:
			nt.m.conflicts.Inc()
			b.retry = append(b.retry, p.record.Item)
			// the chain no longer tells what the contacts' revisions are: the rest reads afresh
			b.fresh = segment[len(segment)-1] + 1
		case model.Lost:
			nt.log.Warn("notification was requeued by a peer that judged this instance dead; leaving it to the peer")
			// its writes are not there, yet the shared view and the chain count on them
			b.fresh = segment[len(segment)-1] + 1
		default:
			nt.observe(p, took)
			b.alerts = append(b.alerts, p.alerts...)
			b.tidy = append(b.tidy, p.tidy...)
		}
	}
}
