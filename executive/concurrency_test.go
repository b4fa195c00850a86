package executive

import (
	"context"
	"fmt"
	"math/rand"
	"sync"
	"testing"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/schema"
)

// stream builds perCheck events for each check in runs of `run` consecutive events per check,
// so executives claiming neighbouring batches contend for the same checks; each event has an
// increasing time and a unique summary.
func stream(checks, perCheck, run int, seed int64) []string {
	rnd := rand.New(rand.NewSource(seed))
	states := []string{"ok", "warning", "critical", "unknown"}
	var out []string
	for k := 0; k < perCheck; k += run {
		for c := 0; c < checks; c++ {
			for j := k; j < min(k+run, perCheck); j++ {
				state := states[rnd.Intn(len(states))]
				out = append(out, fmt.Sprintf(`{"entity":"host-%d.example.com","check":"check %d","type":"service","state":%q,"summary":"e%d","time":%d}`,
					c%10, c, state, j, 1_700_000_000+j))
			}
		}
	}
	return out
}

func pushAll(t *testing.T, db *testredis.DB, key string, items []string) {
	t.Helper()
	conn := db.Conn(t)
	defer conn.Close()
	for i := 0; i < len(items); i += 500 {
		end := min(i+500, len(items))
		args := []any{key}
		for _, it := range items[i:end] {
			args = append(args, it)
		}
		if _, err := conn.Do("LPUSH", args...); err != nil {
			t.Fatal(err)
		}
	}
}

// finalState is what must not depend on how many executives ran: per check, the current state,
// summary and newest event time, plus the failing set.
func finalState(t *testing.T, db *testredis.DB, keys schema.Keys, checks int) map[string]string {
	t.Helper()
	conn := db.Conn(t)
	defer conn.Close()
	out := map[string]string{}
	for c := 0; c < checks; c++ {
		id := schema.CheckID(fmt.Sprintf("host-%d.example.com", c%10), fmt.Sprintf("check %d", c))
		v, err := redis.Strings(conn.Do("HMGET", keys.Check(id), "state", "summary", "last_event_time"))
		if err != nil {
			t.Fatal(err)
		}
		failing, _ := conn.Do("ZSCORE", keys.FailedChecks(), id)
		out[id] = fmt.Sprintf("%v failing=%v", v, failing != nil)
	}
	return out
}

func TestFourExecutivesAgreeWithOne(t *testing.T) {
	t.Parallel()
	const checks, perCheck = 40, 60
	events := stream(checks, perCheck, 6, 1)
	keys := schema.NewKeys("")
	cfg := DefaultConfig()
	cfg.BatchSize = 16 // small batches: more interleaving between executives

	run := func(db *testredis.DB, n int) {
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			x := New(Options{Pool: db.Pool, Keys: keys, Config: cfg, Clock: clock.NewFake(t0),
				Identity: queue.Identity{Host: "concurrent", PID: 100 + i}, Version: "test"})
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := x.Run(context.Background(), true); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
	}

	// A real redis-server always: this is about concurrency, not commands.
	srv := testredis.StartServer(t)
	single := srv.NewDB(t)
	pushAll(t, single, keys.Events(), events)
	run(single, 1)

	many := srv.NewDB(t)
	pushAll(t, many, keys.Events(), events)
	run(many, 4)

	want := finalState(t, single, keys, checks)
	got := finalState(t, many, keys, checks)
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s: 4 executives left %s, one left %s", id, got[id], w)
		}
	}
	for _, db := range []*testredis.DB{single, many} {
		counters, _ := redis.StringMap(db.Do(t, "HGETALL", keys.EventCounters()), nil)
		if counters["all"] != fmt.Sprint(len(events)) {
			t.Errorf("event_counters all = %s, want %d (every event counted exactly once)", counters["all"], len(events))
		}
		if n, _ := redis.Int(db.Do(t, "LLEN", keys.Events()), nil); n != 0 {
			t.Errorf("%d events left", n)
		}
	}
}

// TestOlderEventNeverRegressesState: an event carrying an older time than one already applied
// is ignored, whatever order executives apply them in.
func TestOlderEventNeverRegressesState(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.send(`{"entity":"a","check":"b","type":"service","state":"critical","summary":"new","time":1767607300}`)
	h.send(`{"entity":"a","check":"b","type":"service","state":"ok","summary":"old","time":1767607200}`)
	if s, sum := h.hget(h.keys.Check("a:b"), "state"), h.hget(h.keys.Check("a:b"), "summary"); s != "critical" || sum != "new" {
		t.Fatalf("state %s/%s after an older event, want critical/new", s, sum)
	}
	h.send(`{"entity":"a","check":"b","type":"service","state":"ok","summary":"newer","time":1767607301}`)
	if s := h.hget(h.keys.Check("a:b"), "state"); s != "ok" {
		t.Fatalf("state %s after a newer event", s)
	}
	// a time far in the future does not silence the check
	h.send(`{"entity":"a","check":"b","type":"service","state":"critical","summary":"bogus","time":9999999999}`)
	h.send(`{"entity":"a","check":"b","type":"service","state":"ok","summary":"later","time":1767607400}`)
	if sum := h.hget(h.keys.Check("a:b"), "summary"); sum != "later" {
		t.Fatalf("summary %s: one bogus future timestamp silenced the check", sum)
	}
}

// TestSameCheckTwiceInOneBatchAppliesInOrder: the second event of a check in a batch sees the
// first one's effects.
func TestSameCheckTwiceInOneBatchAppliesInOrder(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	seedOK(h)
	h.at(0).send(event("critical"))
	got := h.at(100).send(event("critical"), event("critical"), event("ok"), event("ok"))
	var types []string
	for _, n := range got {
		types = append(types, n.Type)
	}
	if fmt.Sprint(types) != "[problem recovery]" {
		t.Fatalf("notifications %v, want [problem recovery]", types)
	}
	if n, _ := redis.Int(h.db.Do(t, "LLEN", h.keys.States(checkID)), nil); n != 3 {
		t.Fatalf("%d state changes, want 3 (ok, critical, ok)", n)
	}
}

// TestManyEventsOfOneCheckInOneBatch: a burst from one flapping check fills whole batches; each
// event needs its own round, and none of that is an error.
func TestManyEventsOfOneCheckInOneBatch(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var events []string
	for i := 0; i < 300; i++ {
		state := "ok"
		if i%2 == 0 {
			state = "critical"
		}
		events = append(events, fmt.Sprintf(`{"entity":"flap","check":"c","type":"service","state":%q,"time":%d}`, state, 1767607200+i))
	}
	h.send(events...)
	if n, _ := redis.Int(h.db.Do(t, "LLEN", h.keys.States("flap:c")), nil); n != 300 {
		t.Fatalf("%d state changes recorded, want 300", n)
	}
}
