package roster

import (
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/schema"
)

// The notifier decides how escalation ladders move; these write its decisions into the
// decision's record: the ladder hash (guarded by the revision read), its place in
// escalations_due and escalations_stopped, and the check's check_escalations set.

// WriteLadder writes l whole, guarded by the revision read (l.Revision), and files it in the due
// set: by its next step while in progress, not at all once stopped. The policy joins the
// check's escalations.
func WriteLadder(r *model.Record, keys schema.Keys, l Ladder, inProgress bool) {
	writeLadderFields(r, keys, l, inProgress, LadderFields)
	r.Ops.SAdd(keys.CheckEscalations(l.CheckID), l.PolicyID)
}

// MoveLadder is WriteLadder for a tick: only the fields that moved from prev, the ladder read.
func MoveLadder(r *model.Record, keys schema.Keys, prev, l Ladder, inProgress bool) {
	writeLadderFields(r, keys, l, inProgress, func(next Ladder) []any { return LadderChanges(prev, next) })
}

func writeLadderFields(r *model.Record, keys schema.Keys, l Ladder, inProgress bool, fields func(Ladder) []any) {
	key := keys.EscalationLadder(l.PolicyID, l.CheckID)
	r.Guards = append(r.Guards, model.Guard{Key: key, Revision: l.Revision})
	l.Revision++
	r.Ops.HSet(key, fields(l)...)
	member := schema.EscalationMember(l.PolicyID, l.CheckID)
	if inProgress && l.Active() {
		r.Ops.ZAdd(keys.EscalationsDue(), DueScore(l), member)
	} else {
		r.Ops.ZRem(keys.EscalationsDue(), member)
	}
}

// IndexStopped files a stopped ladder in escalations_stopped by when retention may forget it:
// its stop plus the policy's restart window (window).
func IndexStopped(r *model.Record, keys schema.Keys, l Ladder, window int64) {
	r.Ops.ZAdd(keys.EscalationsStopped(), l.StoppedAt+window, schema.EscalationMember(l.PolicyID, l.CheckID))
}

// Unstop takes a stopped ladder out of escalations_stopped (it starts again or resumes).
func Unstop(r *model.Record, keys schema.Keys, l Ladder) {
	r.Ops.ZRem(keys.EscalationsStopped(), schema.EscalationMember(l.PolicyID, l.CheckID))
}

// DropDue takes l out of escalations_due, guarded by the revision read, so a ladder started
// afresh meanwhile stays due.
func DropDue(r *model.Record, keys schema.Keys, l Ladder) {
	r.Guards = append(r.Guards, model.Guard{Key: keys.EscalationLadder(l.PolicyID, l.CheckID), Revision: l.Revision})
	r.Ops.ZRem(keys.EscalationsDue(), schema.EscalationMember(l.PolicyID, l.CheckID))
}

// DropDueMember takes an escalations_due member naming no ladder out of the set.
func DropDueMember(r *model.Record, keys schema.Keys, member string) {
	r.Ops.ZRem(keys.EscalationsDue(), member)
}
