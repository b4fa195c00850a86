package retention

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/schema"
)

// TestSweepForgetsStoppedLaddersPastTheirRestartWindow: stopped ladders go once their policy's
// restart window has passed (with their check_escalations entry); those within it, in progress,
// or stopped before those paged were told while the check still fails stay; ladders whose time
// has not come are not touched.
func TestSweepForgetsStoppedLaddersPastTheirRestartWindow(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	k := schema.NewKeys("")
	now := int64(1_800_000_000)
	db.Do(t, "HSET", k.EscalationPolicies(), "short", `{"id":"short","steps":[{"delay":0,"contacts":["ada"]}],"restart_after":600}`,
		"default", `{"id":"default","steps":[{"delay":0,"contacts":["ada"]}]}`)
	type ladder struct {
		policy, check, state string
		stoppedAgo           int64 // 0: in progress
		told                 bool
		forget               bool
	}
	ladders := []ladder{
		{"short", "a:HTTP", "ok", 700, true, true},               // past its 10 minutes
		{"short", "b:HTTP", "ok", 500, true, false},              // within them
		{"default", "c:HTTP", "ok", 1900, true, true},            // past the default 30 minutes
		{"default", "d:HTTP", "ok", 1700, true, false},           // within them
		{"gone", "e:HTTP", "critical", 60, true, true},           // its policy was removed
		{"short", "f:HTTP", "critical", 700, false, false},       // those paged not yet told
		{"short", "g:HTTP", "ok", 700, false, true},              // not told, but the check is ok
		{"short", "h:HTTP", "critical", 0, false, false},         // in progress again
		{"default", "i:HTTP", "critical", 1900, true, true},      // told: goes though failing
		{"short", "shared:HTTP", "critical", 700, true, true},    // one of two policies' ladders
		{"default", "shared:HTTP", "critical", 100, true, false}, // the other stays
	}
	for _, l := range ladders {
		lad := roster.Ladder{PolicyID: l.policy, CheckID: l.check, Exists: true, Revision: 3, StartedAt: now - 4000,
			Fired: 1, Alerted: []string{"ada"}, Notification: "{}", Told: l.told}
		member := schema.EscalationMember(l.policy, l.check)
		if l.stoppedAgo > 0 {
			lad.StoppedAt, lad.StoppedReason = now-l.stoppedAgo, roster.StopRecovered
			// indexed as the notifier does it: stop plus the window when stopped
			window := map[string]int64{"short": 600, "default": roster.DefaultRestartAfter, "gone": 0}[l.policy]
			db.Do(t, "ZADD", k.EscalationsStopped(), lad.StoppedAt+window, member)
		} else {
			// a stale entry: the ladder was resumed by a write that raced the index
			db.Do(t, "ZADD", k.EscalationsStopped(), now-1, member)
			db.Do(t, "ZADD", k.EscalationsDue(), now+60, member)
		}
		db.Do(t, "HSET", append([]any{k.EscalationLadder(l.policy, l.check)}, roster.LadderFields(lad)...)...)
		db.Do(t, "SADD", k.CheckEscalations(l.check), l.policy)
		db.Do(t, "HSET", k.Check(l.check), "state", l.state)
	}
	// many ladders stopped recently: their time has not come, the sweep must not read them
	for i := range 500 {
		db.Do(t, "ZADD", k.EscalationsStopped(), now+10_000+int64(i), fmt.Sprintf("default:later-%d:HTTP", i))
	}
	s := &Sweeper{Pool: db.Pool, Keys: k, Clock: clock.NewFake(time.Unix(now, 0)), Log: zap.NewNop()}
	st, err := s.Sweep(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, l := range ladders {
		key := k.EscalationLadder(l.policy, l.check)
		exists, _ := redis.Bool(db.Do(t, "EXISTS", key), nil)
		member, _ := redis.Bool(db.Do(t, "SISMEMBER", k.CheckEscalations(l.check), l.policy), nil)
		if l.forget {
			want++
		}
		if exists == l.forget || member == l.forget {
			t.Errorf("%s: ladder kept %v, in check_escalations %v; want forgotten %v", key, exists, member, l.forget)
		}
		score, err := redis.Int64(db.Do(t, "ZSCORE", k.EscalationsStopped(), schema.EscalationMember(l.policy, l.check)), nil)
		switch {
		case l.forget || l.stoppedAgo == 0:
			if err != redis.ErrNil {
				t.Errorf("%s: still indexed at %d", key, score)
			}
		case score <= now:
			t.Errorf("%s: kept, but indexed at %d, not after now", key, score)
		}
	}
	if st.Ladders != int64(want) {
		t.Errorf("sweep says %d ladders forgotten, want %d", st.Ladders, want)
	}
	if n, _ := redis.Int(db.Do(t, "ZSCORE", k.EscalationsDue(), "short:h:HTTP"), nil); n != int(now+60) {
		t.Errorf("the ladder in progress left the due set (%d)", n)
	}
	later, _ := redis.Int(db.Do(t, "ZCOUNT", k.EscalationsStopped(), now+10_000, now+10_499), nil)
	if later != 500 {
		t.Errorf("%d of the 500 recently stopped ladders are still indexed at their time", later)
	}
	if st, _ := s.Sweep(context.Background()); st.Ladders != 0 {
		t.Errorf("a second sweep forgot %d more", st.Ladders)
	}
}
