package executive

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/queue"
)

// TestAWholeBatchIsAppliedWithoutItsItems: a claimed batch that is the whole processing list is
// applied without sending its events back to Redis but its oldest and newest, which tell the
// list's tail (a malformed item is sent once, as the rejected list's entry), and the list is empty afterwards; a batch in which a check has two
// events is applied in rounds, with the items, as before. Either way every event is applied once
// and nothing stays claimed.
func TestAWholeBatchIsAppliedWithoutItsItems(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		items     []string
		itemsSent bool
	}{
		{"one event per check and a malformed one", []string{
			serviceEventFor("web-01", "HTTP", "ok"), serviceEventFor("web-01", "Disk", "critical"),
			malformed, serviceEventFor("db-01", "MySQL", "warning")}, false},
		{"a check with two events", []string{
			serviceEventFor("web-01", "HTTP", "ok"), serviceEventFor("web-01", "HTTP", "critical"),
			serviceEventFor("db-01", "MySQL", "warning")}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			var mu sync.Mutex
			var scriptArgs [][]any
			pool := h.db.HookedPool(t, func(cmd string, args []any) {
				if cmd == "EVALSHA" || cmd == "EVAL" {
					mu.Lock()
					scriptArgs = append(scriptArgs, append([]any(nil), args...))
					mu.Unlock()
				}
			})
			x := New(Options{Pool: pool, Keys: h.keys, Config: DefaultConfig(), Clock: clock.NewFake(t0),
				Identity: queue.Identity{Host: "test", PID: 2}, Version: "test"})
			for _, it := range c.items {
				h.db.Do(t, "LPUSH", h.keys.Events(), it)
			}
			batch, err := x.consumer.Next(context.Background(), 64, 0)
			if err != nil || len(batch.Items) != len(c.items) || !batch.Whole {
				t.Fatalf("claimed %d items (whole: %v, %v), want %d, the whole processing list", len(batch.Items), batch.Whole, err, len(c.items))
			}
			res, err := x.ProcessBatch(context.Background(), batch)
			if err != nil || res.Finished != len(c.items) {
				t.Fatalf("finished %d of %d (%v)", res.Finished, len(c.items), err)
			}
			if n, _ := redis.Int(h.db.Do(t, "LLEN", x.consumer.ProcessingKey()), nil); n != 0 {
				t.Fatalf("%d items still claimed", n)
			}
			sent := false
			for _, args := range scriptArgs {
				if len(args) > 11 && args[2] == x.consumer.ProcessingKey() {
					// an apply call: its ARGV[8] and ARGV[9] name the list's ends
					args = args[11:]
				}
				for _, a := range args {
					for _, it := range c.items {
						if s, ok := a.(string); ok && s == it && it != malformed {
							sent = true
						}
					}
				}
			}
			if sent != c.itemsSent {
				t.Fatalf("items sent back to Redis: %v, want %v", sent, c.itemsSent)
			}
			if state, _ := redis.String(h.db.Do(t, "HGET", h.keys.Check("db-01:MySQL"), "state"), nil); state != "warning" {
				t.Fatalf("db-01:MySQL state %q, want warning", state)
			}
			if slices.Contains(c.items, malformed) {
				if kept, _ := redis.Strings(h.db.Do(t, "LRANGE", h.keys.EventsRejected(t0), 0, -1), nil); !slices.Contains(kept, malformed) {
					t.Fatalf("rejected list %q, want the malformed item", kept)
				}
			}
		})
	}
}

// TestALargeBatchMarksEveryCheckCurrent: a batch of the largest size the settings allow, each
// event for a check of its own, is processed in one go and leaves every check in the four
// indexes. The index writes once went to Redis as one ZADD per index, which the apply script
// could not unpack beyond ~4,000 checks: the batch failed and was retried forever.
func TestALargeBatchMarksEveryCheckCurrent(t *testing.T) {
	t.Parallel()
	const n = 10000
	h := newHarness(t, func(c *Config) { c.BatchSize = n })
	events := make([]any, 0, n+1)
	events = append(events, h.keys.Events())
	for i := 0; i < n; i++ {
		events = append(events, serviceEventFor(fmt.Sprintf("host-%d", i/4), fmt.Sprintf("check %d", i%4), "ok"))
	}
	h.db.Do(t, "LPUSH", events...)
	batch, err := h.x.consumer.Next(context.Background(), n, 0)
	if err != nil || len(batch.Items) != n {
		t.Fatalf("claimed %d items (%v), want %d", len(batch.Items), err, n)
	}
	if res, err := h.x.ProcessBatch(context.Background(), batch); err != nil || res.Finished != n {
		t.Fatalf("finished %d of %d (%v)", res.Finished, n, err)
	}
	for key, want := range map[string]int{h.keys.AllChecks(): n, h.keys.CurrentEntities(): n / 4,
		h.keys.AllChecksFor("host-2499"): 4, h.keys.CurrentChecks("host-0"): 4} {
		if got, _ := redis.Int(h.db.Do(t, "ZCARD", key), nil); got != want {
			t.Errorf("%s holds %d members, want %d", key, got, want)
		}
	}
}

const malformed = `{"entity":"web-01"`

// serviceEventFor is a service event of entity:check in state at t0.
func serviceEventFor(entity, check, state string) string {
	return fmt.Sprintf(`{"entity":%q,"check":%q,"type":"service","state":%q,"summary":"s","time":%d}`,
		entity, check, state, t0.Unix())
}

// partsRound is a batch's worth of events sent at offset, after the outside writes.
type partsRound struct {
	offset  int64
	outside [][]any
	items   []string
}

// runBatches sends each round's items through an executive on db claiming batchSize items at a
// time (with the events archive on), calling hook (when not nil) before every apply call it
// sends, and returns its harness and how many apply calls it sent. The harness's trace has an
// "A" for each apply call, a "C" for each claim and a "|" after each call of ProcessNextResult.
func runBatches(t *testing.T, db *testredis.DB, batchSize int, rounds []partsRound, hook func(), options ...func(*harness)) (*harness, int) {
	t.Helper()
	configure := func(c *Config) { c.BatchSize, c.ArchiveEvents = batchSize, true }
	h := newHarnessOn(t, db, configure)
	for _, o := range options {
		o(h)
	}
	var applies atomic.Int64
	var mu sync.Mutex
	note := func(s string) {
		mu.Lock()
		h.trace += s
		mu.Unlock()
	}
	processing := h.x.consumer.ProcessingKey()
	pool := h.db.HookedPool(t, func(cmd string, args []any) {
		if cmd != "EVALSHA" && cmd != "EVAL" || len(args) < 4 {
			return
		}
		switch {
		case args[2] == processing:
			note("A")
			applies.Add(1)
			if hook != nil {
				hook()
			}
		case args[3] == processing && cmd == "EVALSHA": // not the EVAL that follows a NOSCRIPT
			note("C")
		}
	})
	h.afterBatch = func() { note("|") }
	cfg := DefaultConfig()
	configure(&cfg)
	h.x = New(Options{Pool: pool, Keys: h.keys, Config: cfg, Clock: h.clk,
		Identity: queue.Identity{Host: "test", PID: 1}, Version: "test"})
	// a script Redis does not know yet costs each part in flight a call more
	if err := model.LoadApplyScript(h.db.Conn(t)); err != nil {
		t.Fatal(err)
	}
	for _, r := range rounds {
		h.at(r.offset)
		for _, cmd := range r.outside {
			h.db.Do(t, cmd[0].(string), cmd[1:]...)
		}
		h.send(r.items...)
	}
	return h, int(applies.Load())
}

// partsItems is 256 items: an event for each of 250 checks, in a state chosen by pick, and six
// malformed items among them.
func partsItems(pick func(c int) string) []string {
	var items []string
	for c := 0; c < 250; c++ {
		if c%42 == 7 {
			items = append(items, fmt.Sprintf(`{"entity":"broken-%d"`, c))
		}
		items = append(items, serviceEventFor(fmt.Sprintf("host-%d", c/10), fmt.Sprintf("check %d", c), pick(c)))
	}
	return items
}

// TestABatchInPartsLeavesWhatSmallBatchesLeave: a batch of 256 items over different checks is
// applied in five parts (16, 32, 64, 128 and 16 items), each decided while Redis applies the
// one before, and leaves exactly the database that batches of 32 items, each applied whole,
// leave: states, history, notifications, counters, the rejected items and the archive. Then an
// outside tool changes a check the facts cache remembers, in the first part: that event is
// decided again in a second round, the later parts send their items (the list no longer holds
// only theirs), and the database still matches.
func TestABatchInPartsLeavesWhatSmallBatchesLeave(t *testing.T) {
	t.Parallel()
	if got, want := partBounds(256), []int{0, 16, 48, 112, 240, 256}; !slices.Equal(got, want) {
		t.Fatalf("parts of 256: %v, want %v", got, want)
	}
	rounds := []partsRound{
		{offset: 0, items: partsItems(func(c int) string { return map[bool]string{true: "critical", false: "ok"}[c%5 == 0] })},
		{offset: 40, items: partsItems(func(c int) string {
			switch {
			case c%5 == 0:
				return "critical"
			case c%7 == 0:
				return "warning"
			}
			return "ok"
		})},
		{offset: 100, items: partsItems(func(int) string { return "ok" })},
		{offset: 110, outside: [][]any{{"HSET", "check:host-0:check 3", "summary", "changed by a tool", "revision", 99}},
			items: partsItems(func(int) string { return "ok" })},
	}
	parts, partsApplies := runBatches(t, testredis.New(t), 256, rounds, nil)
	small, smallApplies := runBatches(t, testredis.New(t), 32, rounds, nil)
	// four batches in five parts, and the conflicted event's own round
	if partsApplies != 4*5+1 {
		t.Errorf("%d apply calls for 4 batches of 256 items, want 21 (five parts each and a re-read round)", partsApplies)
	}
	if smallApplies < 4*8 {
		t.Errorf("%d apply calls for 32 batches of 32 items, want at least 32", smallApplies)
	}
	if n := testutil.ToFloat64(parts.x.metrics.conflicts); n != 1 {
		t.Errorf("%v conflicts in parts, want 1 (the check the tool changed)", n)
	}
	if s := parts.hget("check:host-0:check 3", "summary"); s != "s" {
		t.Errorf("the changed check's summary %q, want the last event's", s)
	}
	got, want := parts.db.Dump(t), small.db.Dump(t)
	if len(want) < 250*5 {
		t.Fatalf("small batches left %d keys", len(want))
	}
	testredis.DiffDumps(t, got, want)
}

// TestTheNextBatchIsClaimedWhileTheLastPartsApply: under a backlog (rounds of 256 items claimed
// 128 at a time), each batch applied in parts claims the next while its last parts apply, and
// the next call processes that one without a claim of its own. In the last round an outside tool
// changes a check the facts cache remembers in the first batch's last part, so that event is
// decided again in a round of its own after the next batch was claimed. The database ends as
// when batches of 32 items, each claimed when the one before is finished, apply the same events.
func TestTheNextBatchIsClaimedWhileTheLastPartsApply(t *testing.T) {
	t.Parallel()
	if got, want := partBounds(128), []int{0, 16, 48, 112, 128}; !slices.Equal(got, want) {
		t.Fatalf("parts of 128: %v, want %v", got, want)
	}
	// check 115 is the item in slot 118 (three malformed items before it): the last part's
	rounds := []partsRound{
		{offset: 0, items: partsItems(func(c int) string { return map[bool]string{true: "critical", false: "ok"}[c%5 == 0] })},
		{offset: 40, items: partsItems(func(c int) string { return map[bool]string{true: "warning", false: "ok"}[c%7 == 0] })},
		{offset: 100, items: partsItems(func(int) string { return "ok" })},
		{offset: 110, outside: [][]any{{"HSET", "check:host-11:check 115", "summary", "changed by a tool", "revision", 99}},
			items: partsItems(func(int) string { return "ok" })},
	}
	ahead, applies := runBatches(t, testredis.New(t), 128, rounds, nil)
	small, _ := runBatches(t, testredis.New(t), 32, rounds, nil)
	// each round: the first batch's call claims it, applies four parts and claims the second;
	// the second's call applies four parts and claims ahead, finding nothing; a last call claims
	// and finds nothing. The last round's first batch has the re-read round.
	round := "CAAAAC|AAAAC|C|"
	if want := strings.Repeat(round, 3) + "CAAAACA|AAAAC|C|"; ahead.trace != want {
		t.Errorf("claims (C), apply calls (A) and ProcessNextResult's returns (|):\n%s, want\n%s", ahead.trace, want)
	}
	if applies != 4*8+1 {
		t.Errorf("%d apply calls, want 33", applies)
	}
	if n := testutil.ToFloat64(ahead.x.metrics.conflicts); n != 1 {
		t.Errorf("%v conflicts, want 1 (the check the tool changed)", n)
	}
	if s := ahead.hget("check:host-11:check 115", "summary"); s != "s" {
		t.Errorf("the changed check's summary %q, want the last event's", s)
	}
	ahead.nothingClaimed()
	testredis.DiffDumps(t, ahead.db.Dump(t), small.db.Dump(t))
}

// TestABatchClaimedAheadIsReadBackInClaimOrder: the connections drop as a batch's re-read
// round (two checks an outside tool changed) is sent, after the next batch was claimed ahead of
// it, and that next batch holds a newer event of one of the re-read checks. The executive drops
// the batch claimed ahead and reads both back from the processing list: the older events (left
// claimed by their part, behind the claim) come first, so the check ends in the newer event's
// state; every event read back keeps the sequence number it was claimed with; and the database
// ends as when batches of 32 items apply the same events.
func TestABatchClaimedAheadIsReadBackInClaimOrder(t *testing.T) {
	t.Parallel()
	// the last round's first batch: three rounds of eight parts, then four parts
	db, hook := killedAtApplyCall(t, 3*8+4+1)
	last := partsItems(func(int) string { return "ok" })
	// slot 200 (the second batch): a newer event of check 115 (slot 118, the first batch's last part)
	last[200] = serviceEventFor("host-11", "check 115", "critical")
	rounds := []partsRound{
		{offset: 0, items: partsItems(func(int) string { return "ok" })},
		{offset: 5, items: partsItems(func(int) string { return "ok" })},
		{offset: 10, items: partsItems(func(int) string { return "ok" })},
		{offset: 20, outside: [][]any{
			{"HSET", "check:host-11:check 115", "summary", "changed by a tool", "revision", 99},
			{"HSET", "check:host-11:check 116", "summary", "changed by a tool", "revision", 99}},
			items: last},
	}
	failures := 0
	dropped, _ := runBatches(t, db, 128, rounds, hook, func(h *harness) { h.failures = &failures })
	small, _ := runBatches(t, testredis.New(t), 32, rounds, nil)
	if failures != 1 {
		t.Fatalf("%d calls failed, want 1 (the connections killed once)", failures)
	}
	// the last round: the failed call claimed ahead before its re-read round; the next reads
	// the processing list (no claim) and applies it in two rounds, check 115 having two events
	round := "CAAAAC|AAAAC|C|"
	if want := strings.Repeat(round, 3) + "CAAAACA|AA|C|"; dropped.trace != want {
		t.Errorf("claims (C), apply calls (A) and ProcessNextResult's returns (|):\n%s, want\n%s", dropped.trace, want)
	}
	if s := dropped.hget("check:host-11:check 115", "state"); s != "critical" {
		t.Errorf("check 115 in state %q, want the newer event's critical", s)
	}
	dropped.nothingClaimed()
	// the events read back keep their sequence numbers (check 116's last_sequence, check 115's
	// newer state's count); the conflicted events were archived by their part, which applied,
	// and are archived again when read back (the archive is at least once)
	got, want := dropped.db.Dump(t), small.db.Dump(t)
	if n := strings.Count(got["events_archive:2026010510"], `"check 115"`); n != 5+1 {
		t.Errorf("check 115's five events archived %d times, want 6 (the one the failed batch left, again)", n)
	}
	delete(got, "events_archive:2026010510")
	delete(want, "events_archive:2026010510")
	testredis.DiffDumps(t, got, want)
}

// killedAtApplyCall returns a database on a server of its own and a runBatches hook that kills
// every other client's connections on that server as the call-th apply call is sent.
func killedAtApplyCall(t *testing.T, call int) (*testredis.DB, func()) {
	db := testredis.StartServer(t).NewDB(t)
	db.Pool.TestOnBorrow = func(c redis.Conn, _ time.Time) error { _, err := c.Do("PING"); return err }
	killer := db.Conn(t)
	calls := 0
	return db, func() {
		if calls++; calls == call {
			if _, err := killer.Do("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"); err != nil {
				t.Error(err)
			}
		}
	}
}

// TestAFailedPartLeavesItsItemsArchivedOnce: the connections drop as a batch's third part is
// sent. Each part archives its own items with their removal from the processing list, so the
// items read back from there (the failed part's and those after it, and the second part's unless
// Redis ran it before the drop) are archived once, when applied: the database, archive included,
// ends as when batches of 32 items apply the same events.
func TestAFailedPartLeavesItsItemsArchivedOnce(t *testing.T) {
	t.Parallel()
	// the second round's first batch (the first round: eight parts), its third part
	db, hook := killedAtApplyCall(t, 8+3)
	rounds := []partsRound{
		{offset: 0, items: partsItems(func(c int) string { return map[bool]string{true: "critical", false: "ok"}[c%5 == 0] })},
		{offset: 10, items: partsItems(func(int) string { return "ok" })},
	}
	failures := 0
	dropped, _ := runBatches(t, db, 128, rounds, hook, func(h *harness) { h.failures = &failures })
	small, _ := runBatches(t, testredis.New(t), 32, rounds, nil)
	if failures != 1 {
		t.Fatalf("%d calls failed, want 1 (the connections killed once)", failures)
	}
	dropped.nothingClaimed()
	got, want := dropped.db.Dump(t), small.db.Dump(t)
	if n := strings.Count(got["events_archive:2026010510"], `"check 100"`); n != 2 {
		t.Errorf("check 100's two events (the failed part's) archived %d times, want 2", n)
	}
	testredis.DiffDumps(t, got, want)
}

// TestAStoppingExecutiveFinishesWhatItClaimed: a batch during which shutdown starts claims
// nothing ahead; one that claimed ahead before shutdown leaves that batch to the Loop's Close,
// which applies it instead of handing it back to the queue.
func TestAStoppingExecutiveFinishesWhatItClaimed(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) { c.BatchSize = 128 })
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	applies := 0
	pool := h.db.HookedPool(t, func(cmd string, args []any) {
		if (cmd == "EVALSHA" || cmd == "EVAL") && len(args) > 2 && args[2] == h.x.consumer.ProcessingKey() {
			if applies++; applies == 4+1 {
				stop() // the second batch's first part
			}
		}
	})
	cfg := DefaultConfig()
	cfg.BatchSize = 128
	x := New(Options{Pool: pool, Keys: h.keys, Config: cfg, Clock: h.clk,
		Identity: queue.Identity{Host: "test", PID: 1}, Version: "test"})
	// a script Redis does not know yet costs the first part a call more
	if err := model.LoadApplyScript(h.db.Conn(t)); err != nil {
		t.Fatal(err)
	}
	for c := range 3 * 128 {
		h.db.Do(t, "LPUSH", h.keys.Events(), serviceEventFor("host", fmt.Sprintf("check %d", c), "critical"))
	}
	queued := func() int {
		n, _ := redis.Int(h.db.Do(t, "LLEN", h.keys.Events()), nil)
		return n
	}
	if n, err := x.ProcessNext(ctx, 0); err != nil || n != 128 || x.batches.ahead == nil || queued() != 128 {
		t.Fatalf("first call: finished %d (%v), claimed ahead: %v, %d queued; want 128, the second batch, 128",
			n, err, x.batches.ahead != nil, queued())
	}
	// shutdown starts as the second batch's first part is sent
	if n, err := x.ProcessNext(ctx, 0); err != nil || n != 128 || x.batches.ahead != nil || queued() != 128 {
		t.Fatalf("second call: finished %d (%v), claimed ahead: %v, %d queued; want 128, nothing claimed, 128",
			n, err, x.batches.ahead != nil, queued())
	}
	for c := range 2 * 128 {
		if s := h.hget(fmt.Sprintf("check:host:check %d", c), "state"); s != "critical" {
			t.Fatalf("check %d in state %q after two batches", c, s)
		}
	}

	// a batch claimed ahead when the Loop stops is applied by Close
	if n, err := x.ProcessNext(context.Background(), 0); err != nil || n != 128 || x.batches.ahead != nil {
		t.Fatalf("third call: finished %d (%v), claimed ahead: %v", n, err, x.batches.ahead != nil)
	}
	for c := range 3 * 128 {
		h.db.Do(t, "LPUSH", h.keys.Events(), serviceEventFor("host", fmt.Sprintf("check %d", c), "ok"))
	}
	if n, err := x.ProcessNext(context.Background(), 0); err != nil || n != 128 || x.batches.ahead == nil {
		t.Fatalf("fourth call: finished %d (%v), claimed ahead: %v", n, err, x.batches.ahead != nil)
	}
	if n, err := x.Loop(false).Close(context.Background()); err != nil || n != 0 {
		t.Fatalf("Close handed back %d items (%v), want none", n, err)
	}
	if n := queued(); n != 128 {
		t.Errorf("%d events queued after Close, want the 128 never claimed", n)
	}
	h.nothingClaimed() // x has h.x's identity, so its processing list
	for c := range 2 * 128 {
		if s := h.hget(fmt.Sprintf("check:host:check %d", c), "state"); s != "ok" {
			t.Fatalf("check %d in state %q after Close, want the batch claimed ahead applied", c, s)
		}
	}
}

// TestABatchInPartsSurvivesARedisThatForgotItsScripts: Redis forgets its scripts (a restart or
// SCRIPT FLUSH) as a batch's first part is sent, and its third part holds a check the facts
// cache remembers and an outside tool changed. The first part, and the second sent behind it, come back
// NOSCRIPT with another reply pending; the executive loads the script, so the third part runs,
// but it finds the tail of the processing list still the first part's and writes nothing. The
// parts are sent again once the others are in, and the database ends as when batches too small
// for parts apply the same events: nothing lost, nothing applied twice.
func TestABatchInPartsSurvivesARedisThatForgotItsScripts(t *testing.T) {
	t.Parallel()
	// a server of its own: SCRIPT FLUSH empties every database's scripts
	db := testredis.StartServer(t).NewDB(t)
	flush := db.Conn(t)
	calls := 0
	hook := func() {
		// the third round's first part: the rounds before made five calls each
		if calls++; calls == 11 {
			if _, err := flush.Do("SCRIPT", "FLUSH"); err != nil {
				t.Error(err)
			}
		}
	}
	rounds := []partsRound{
		{offset: 0, items: partsItems(func(int) string { return "ok" })},
		{offset: 5, items: partsItems(func(int) string { return "ok" })},
		{offset: 10, outside: [][]any{{"HSET", "check:host-6:check 60", "summary", "changed by a tool", "revision", 99}},
			items: partsItems(func(int) string { return "ok" })},
	}
	forgot, applies := runBatches(t, db, 256, rounds, hook)
	small, _ := runBatches(t, testredis.New(t), 32, rounds, nil)
	// five parts a round; the third round's five sent again (three of them at most ran, and
	// wrote nothing), and a re-read round for the changed check
	if applies != 3*5+5+1 {
		t.Errorf("%d apply calls, want 21", applies)
	}
	if n := testutil.ToFloat64(forgot.x.metrics.conflicts); n != 1 {
		t.Errorf("%v conflicts, want 1 (the check the tool changed)", n)
	}
	forgot.nothingClaimed()
	testredis.DiffDumps(t, forgot.db.Dump(t), small.db.Dump(t))
}

// TestABatchOnAPoolOfOneConnection: with redis.pool_size 1 there is no second connection for
// parts, and a batch that would go in parts is applied in one call instead of waiting forever for
// a connection while holding the only one.
func TestABatchOnAPoolOfOneConnection(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	pool := testredis.Pool(h.db.Server.Addr, h.db.Index)
	pool.MaxActive, pool.Wait = 1, true
	t.Cleanup(func() { pool.Close() })
	x := New(Options{Pool: pool, Keys: h.keys, Config: DefaultConfig(), Clock: h.clk,
		Identity: queue.Identity{Host: "test", PID: 1}, Version: "test"})
	for _, it := range partsItems(func(int) string { return "ok" }) {
		h.db.Do(t, "LPUSH", h.keys.Events(), it)
	}
	done := make(chan int, 1)
	go func() {
		n, err := x.ProcessNext(context.Background(), 0)
		if err != nil {
			t.Error(err)
		}
		done <- n
	}()
	select {
	case n := <-done:
		if n != 256 {
			t.Errorf("finished %d of 256", n)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the batch did not finish: waiting for a second connection from a pool of one?")
	}
}
