package roster_test

import (
	"reflect"
	"testing"

	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/roster"
)

// TestCoalesceWritesTheSameAsEachWrite: a batch of interleaved writes, applied as built and
// applied coalesced, leaves the same Redis state, in fewer writes.
func TestCoalesceWritesTheSameAsEachWrite(t *testing.T) {
	t.Parallel()
	build := func() model.Ops {
		var o model.Ops
		o.HSet("h", "a", 1)
		o.RPush("l", "x")
		o.HSet("h", "b", 2)
		o.Del("h2", "l")
		o.HSet("h2", "c", 3)
		o.ZAdd("z", 1, "m")
		o.HDel("h", "a")
		o.HSet("h", "a", 5, "b", 6)
		o.RPush("l", "y")
		o.RPush("l", "z")
		o.LPush("l2", "p")
		o.LPush("l2", "q")
		o.LTrim("l2", 0, 0)
		o.LPush("l2", "r")
		o.SAdd("s", 1)
		o.SRem("s", 1)
		o.SAdd("s", 2)
		o.SAdd("s", 3)
		o.ZAdd("z", 2, "m2")
		o.ZAdd("z", 3, "m")
		o.ZRem("z", "m2")
		o.SetEx("k", "v", 60)
		o.SetEx("k", "w", 60)
		return o
	}
	plain, merged := testredis.New(t), testredis.New(t)
	o := build()
	apply := func(db *testredis.DB, o model.Ops) {
		conn := db.Conn(t)
		defer conn.Close()
		if _, err := model.Apply(conn, model.ApplyTarget{}, []model.Record{{Ops: o}}); err != nil {
			t.Fatal(err)
		}
	}
	apply(plain, o)
	c := build()
	c.Coalesce()
	if c.Len() >= o.Len() || c.Len() != 17 {
		t.Errorf("coalesced %d writes into %d, want 17", o.Len(), c.Len())
	}
	apply(merged, c)
	want, got := plain.Dump(t), merged.Dump(t)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("coalesced writes left\n%v\nwant\n%v", got, want)
	}
	if want["l"] != "list[y, z]" || want["z"] != "zset[m=3]" || want["h"] != "hash{a=5, b=6}" {
		t.Errorf("the batch itself is not what it says: %v", want)
	}
}

// TestLadderChangesOnlyWhatMoved: a tick rewrites the revision and the fields that changed.
func TestLadderChangesOnlyWhatMoved(t *testing.T) {
	t.Parallel()
	prev := roster.Ladder{PolicyID: "p", CheckID: "web:HTTP", Exists: true, Revision: 3, StartedAt: 100, Fired: 1,
		NextDue: 1000, Alerted: []string{"ada"}, Notification: "{}"}
	next := prev
	next.Revision, next.Fired, next.NextDue, next.Alerted = 4, 2, 0, []string{"ada", "bob"}
	got := roster.LadderChanges(prev, next)
	want := []any{"revision", int64(4), "fired", 2, "next_due", int64(0), "alerted", `["ada","bob"]`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("changes %v, want %v", got, want)
	}
	stopped := prev
	stopped.Revision, stopped.StoppedAt, stopped.StoppedReason, stopped.NextDue = 4, 2000, roster.StopAcknowledged, 0
	got = roster.LadderChanges(prev, stopped)
	want = []any{"revision", int64(4), "next_due", int64(0), "stopped_at", int64(2000), "stopped_reason", "acknowledged"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("stop changes %v, want %v", got, want)
	}
}
