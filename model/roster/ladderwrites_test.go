package roster_test

import (
	"reflect"
	"testing"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/schema"
)

// TestLadderWrites applies the notifier's ladder decisions and reads the ladder back, with its
// places in escalations_due, escalations_stopped and check_escalations.
func TestLadderWrites(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	conn := db.Conn(t)
	k := schema.NewKeys("pfx:")
	const check = "web-01:HTTP"
	member := schema.EscalationMember("oncall", check)
	apply := func(write func(r *model.Record)) model.Status {
		t.Helper()
		var r model.Record
		write(&r)
		st, err := model.Apply(conn, model.ApplyTarget{}, []model.Record{r})
		if err != nil {
			t.Fatalf("apply: %v", err)
		}
		return st[0]
	}
	read := func() roster.Ladder {
		t.Helper()
		ls, err := roster.ReadLadders(conn, k, [][2]string{{"oncall", check}})
		if err != nil {
			t.Fatal(err)
		}
		return ls[0]
	}
	score := func(set string) string {
		s, _ := redis.String(conn.Do("ZSCORE", set, member))
		return s
	}

	started := roster.Ladder{PolicyID: "oncall", CheckID: check, Exists: true, StartedAt: 100, NextDue: 160, Notification: "{}"}
	if st := apply(func(r *model.Record) { roster.WriteLadder(r, k, started, true) }); st != model.Applied {
		t.Fatalf("start: %v", st)
	}
	l := read()
	want := started
	want.Revision, want.Alerted = 1, []string{}
	if !reflect.DeepEqual(l, want) {
		t.Errorf("ladder %+v, want %+v", l, want)
	}
	if s := score(k.EscalationsDue()); s != "160" {
		t.Errorf("due at %q, want 160", s)
	}
	if in, _ := redis.Bool(conn.Do("SISMEMBER", k.CheckEscalations(check), "oncall")); !in {
		t.Error("the policy is not among the check's escalations")
	}

	// a step fired: only what moved is written; a write on the revision read before conflicts
	fired := l
	fired.Fired, fired.NextDue, fired.Alerted = 1, 220, []string{"ada"}
	stale := fired
	stale.Revision = 0
	if st := apply(func(r *model.Record) { roster.MoveLadder(r, k, started, stale, true) }); st != model.Conflict {
		t.Errorf("a move on a stale read: %v, want a conflict", st)
	}
	if st := apply(func(r *model.Record) { roster.MoveLadder(r, k, l, fired, true) }); st != model.Applied {
		t.Fatalf("move: %v", st)
	}
	if l = read(); l.Fired != 1 || l.NextDue != 220 || !reflect.DeepEqual(l.Alerted, []string{"ada"}) || l.Revision != 2 {
		t.Errorf("moved ladder %+v", l)
	}
	if s := score(k.EscalationsDue()); s != "220" {
		t.Errorf("due at %q, want 220", s)
	}

	// stopped: out of the due set, in the stopped set until its restart window ends
	stopped := l
	stopped.StoppedAt, stopped.StoppedReason = 300, "recovered"
	apply(func(r *model.Record) {
		roster.MoveLadder(r, k, l, stopped, false)
		roster.IndexStopped(r, k, stopped, 1800)
	})
	if s := score(k.EscalationsDue()); s != "" {
		t.Errorf("a stopped ladder is still due at %q", s)
	}
	if s := score(k.EscalationsStopped()); s != "2100" {
		t.Errorf("stopped set score %q, want 2100", s)
	}
	apply(func(r *model.Record) { roster.Unstop(r, k, stopped) })
	if s := score(k.EscalationsStopped()); s != "" {
		t.Errorf("an unstopped ladder is still in the stopped set at %q", s)
	}

	// dropping from the due set is guarded; a member naming no ladder goes unguarded
	db.Do(t, "ZADD", k.EscalationsDue(), 400, member, 400, "nonsense")
	if st := apply(func(r *model.Record) { roster.DropDue(r, k, started) }); st != model.Conflict {
		t.Errorf("a drop on a stale read: %v, want a conflict", st)
	}
	apply(func(r *model.Record) {
		roster.DropDue(r, k, read())
		roster.DropDueMember(r, k, "nonsense")
	})
	if n, _ := redis.Int(conn.Do("ZCARD", k.EscalationsDue())); n != 0 {
		t.Errorf("%d members left in escalations_due, want none", n)
	}

	// written as not in progress, even an active ladder is not due
	db.Do(t, "ZADD", k.EscalationsDue(), 400, member)
	active := read()
	active.StoppedAt, active.StoppedReason = 0, ""
	apply(func(r *model.Record) { roster.WriteLadder(r, k, active, false) })
	if s := score(k.EscalationsDue()); s != "" {
		t.Errorf("a ladder written as not in progress is due at %q", s)
	}
}
