package staleness_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/events"
	"github.com/flapjackgo/flapjack/executive"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/schema"
	"github.com/flapjackgo/flapjack/staleness"
)

const t0 = 1767607200

// world is one Redis with an executive and a publisher on a fake clock.
type world struct {
	db   *testredis.DB
	keys schema.Keys
	clk  *clock.Fake
	pub  *events.Publisher
	x    *executive.Executive
}

func newWorld(t *testing.T, prefix string, policy staleness.Policy) *world {
	t.Helper()
	db := testredis.New(t)
	w := &world{db: db, keys: schema.NewKeys(prefix), clk: clock.NewFake(time.Unix(t0, 0))}
	w.pub = events.NewPublisher(db.Pool, w.keys, "")
	cfg := executive.DefaultConfig()
	cfg.Staleness = policy
	w.x = executive.New(executive.Options{Pool: db.Pool, Keys: w.keys, Config: cfg, Clock: w.clk,
		Identity: queue.Identity{Host: "stale-test", PID: 1}})
	loop := w.x.Loop(false)
	if _, err := loop.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { loop.Close(context.Background()) })
	return w
}

func (w *world) ticker() *staleness.Ticker {
	return &staleness.Ticker{Pool: w.db.Pool, Keys: w.keys, Clock: w.clk, Events: w.pub, Batch: 7}
}

// send queues raw events at the clock's now and processes everything queued.
func (w *world) send(t *testing.T, raws ...string) {
	t.Helper()
	for _, raw := range raws {
		if _, err := w.pub.PublishRaw(context.Background(), []byte(raw)); err != nil {
			t.Fatal(err)
		}
	}
	w.drain(t)
}

func (w *world) drain(t *testing.T) {
	t.Helper()
	for {
		n, err := w.x.ProcessNext(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
}

func (w *world) queued(t *testing.T) []schema.Event {
	t.Helper()
	raws, err := redis.ByteSlices(w.db.Do(t, "LRANGE", w.keys.Events(), 0, -1), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]schema.Event, len(raws))
	for i, raw := range raws {
		if out[i], err = schema.ParseEvent(raw); err != nil {
			t.Fatalf("queued %s: %v", raw, err)
		}
	}
	return out
}

func result(check, extra string) string {
	return fmt.Sprintf(`{"entity":"web-01","check":%q,"type":"service","state":"ok"%s}`, check, extra)
}

// TestExactlyOncePerSilencePeriod: several executives ticking together claim each silent check
// once per period, whatever the batch boundaries, and ticking again at the same instant finds
// nothing.
func TestExactlyOncePerSilencePeriod(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "", staleness.Policy{})
	const checks = 60
	raws := make([]string, checks)
	for i := range raws {
		raws[i] = result(fmt.Sprintf("C%02d", i), `,"ttl":60`)
	}
	w.send(t, raws...)
	for period := 1; period <= 3; period++ {
		w.clk.Set(time.Unix(t0+int64(60*period), 0))
		var wg sync.WaitGroup
		claimed := make([]int, 4)
		for i := range claimed {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := w.ticker().Tick(context.Background())
				if err != nil {
					t.Error(err)
				}
				claimed[i] = res.Claimed
			}()
		}
		wg.Wait()
		total := claimed[0] + claimed[1] + claimed[2] + claimed[3]
		queued := w.queued(t)
		if total != checks || len(queued) != checks {
			t.Fatalf("period %d: tickers claimed %v (%d), %d results queued, want %d", period, claimed, total, len(queued), checks)
		}
		seen := map[string]bool{}
		want := fmt.Sprintf("stale: no result for %d minute", period)
		for _, ev := range queued {
			if seen[ev.ID()] || !ev.Stale || ev.State != "unknown" || !strings.HasPrefix(ev.Summary, want) {
				t.Fatalf("period %d: queued %+v (twice: %v)", period, ev, seen[ev.ID()])
			}
			seen[ev.ID()] = true
		}
		if res, err := w.ticker().Tick(context.Background()); err != nil || res.Looked != 0 {
			t.Fatalf("period %d: a second tick at the same instant looked at %d (%v)", period, res.Looked, err)
		}
		w.drain(t)
	}
	if st, _ := redis.String(w.db.Do(t, "HGET", w.keys.Check("web-01:C07"), "state"), nil); st != "unknown" {
		t.Fatalf("state %q after stale results, want unknown", st)
	}
	// The next real result ends the silence: no stale result at the old deadline.
	w.clk.Set(time.Unix(t0+200, 0))
	w.send(t, result("C07", `,"ttl":60`))
	w.clk.Set(time.Unix(t0+240, 0))
	res, err := w.ticker().Tick(context.Background())
	if err != nil || res.Claimed != checks-1 {
		t.Fatalf("after C07's result: claimed %d (%v), want %d", res.Claimed, err, checks-1)
	}
	for _, ev := range w.queued(t) {
		if ev.Check == "C07" {
			t.Fatalf("C07 went stale 40 s after its result: %+v", ev)
		}
	}
}

// TestDisarm: a deadline whose check got a result without ttl, was disabled, or got ttl 0 is
// dropped at its claim without a stale result; a late tick queues one result, not one per
// missed period, and the next deadline is one ttl after it. Under a key prefix, which the claim
// script's key families carry.
func TestDisarm(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "fj:", staleness.Policy{})
	w.send(t, result("NO_TTL_LATER", `,"ttl":60`), result("DISABLED", `,"ttl":60`),
		result("ZERO", `,"ttl":60`), result("LATE", `,"ttl":60`))
	w.clk.Set(time.Unix(t0+10, 0))
	w.send(t, result("NO_TTL_LATER", ``), result("ZERO", `,"ttl":0`))
	conn := w.db.Conn(t)
	defer conn.Close()
	if err := checkstate.DisableCheck(conn, w.keys, "web-01", "DISABLED", w.clk.Now()); err != nil {
		t.Fatal(err)
	}
	w.clk.Set(time.Unix(t0+200, 0))
	reg := prometheus.NewRegistry()
	tk := w.ticker()
	tk.Metrics = staleness.NewMetrics(reg)
	res, err := tk.Tick(context.Background())
	if err != nil || res.Claimed != 1 || res.Disarmed != 3 {
		t.Fatalf("tick: %+v %v, want 1 claimed, 3 disarmed", res, err)
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP flapjack_stale_deadlines_disarmed_total Staleness deadlines dropped at their claim: the check's latest result had no ttl, or the check is disabled or gone.
# TYPE flapjack_stale_deadlines_disarmed_total counter
flapjack_stale_deadlines_disarmed_total 3
# HELP flapjack_stale_results_total Stale results (unknown, "stale: no result for ...") queued for checks whose ttl ran out.
# TYPE flapjack_stale_results_total counter
flapjack_stale_results_total 1
`), "flapjack_stale_results_total", "flapjack_stale_deadlines_disarmed_total"); err != nil {
		t.Fatal(err)
	}
	q := w.queued(t)
	if len(q) != 1 || q[0].Check != "LATE" || q[0].Summary != "stale: no result for 3 minutes, 20 seconds (ttl 60 s)" {
		t.Fatalf("queued %+v", q)
	}
	left, _ := redis.StringMap(conn.Do("ZRANGE", w.keys.StaleDeadlines(), 0, -1, "WITHSCORES"))
	entries, _ := redis.Int(conn.Do("HLEN", w.keys.StaleChecks()))
	if fmt.Sprint(left) != fmt.Sprint(map[string]string{"web-01:LATE": fmt.Sprint(t0 + 260)}) || entries != 1 {
		t.Fatalf("deadlines %v, %d entries; want only web-01:LATE at t0+260", left, entries)
	}
}

// TestPolicy: an event's own ttl wins, then the first matching rule (0 exempts), then the
// default; stale results never arm.
func TestPolicy(t *testing.T) {
	t.Parallel()
	rules, err := staleness.ParseRules([]string{`^db-.*:MySQL$=0`, `^db-=10 minutes`, `:HTTP$=90s`})
	if err != nil {
		t.Fatal(err)
	}
	p := staleness.Policy{Default: 300, Rules: rules}
	for _, c := range []struct {
		ev   schema.Event
		want int64
	}{
		{schema.Event{Entity: "db-01", Check: "MySQL"}, 0},
		{schema.Event{Entity: "db-01", Check: "DISK"}, 600},
		{schema.Event{Entity: "web-01", Check: "HTTP"}, 90},
		{schema.Event{Entity: "web-01", Check: "PING"}, 300},
		{schema.Event{Entity: "db-01", Check: "MySQL", TTL: 45, HasTTL: true}, 45},
		{schema.Event{Entity: "web-01", Check: "PING", TTL: 0, HasTTL: true}, 0},
	} {
		if got := p.TTL(&c.ev); got != c.want {
			t.Errorf("%s (ttl %d/%v): %d, want %d", c.ev.ID(), c.ev.TTL, c.ev.HasTTL, got, c.want)
		}
	}
	for _, bad := range []string{"nope", "=60", "([=60", "^x=soon", "^x=1.5s", "^x=-5"} {
		if _, err := staleness.ParseRules([]string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	var ops model.Ops
	p.Arm(&ops, schema.NewKeys(""), &schema.Event{Entity: "web-01", Check: "PING", Stale: true}, t0)
	p.Arm(&ops, schema.NewKeys(""), &schema.Event{Entity: "db-01", Check: "MySQL"}, t0)
	if ops.Len() != 0 {
		t.Fatalf("a stale result or an exempt check armed %d writes", ops.Len())
	}
	p.Arm(&ops, schema.NewKeys(""), &schema.Event{Entity: "web-01", Check: "PING"}, t0)
	if ops.Len() != 2 {
		t.Fatalf("a result with the default ttl armed %d writes, want 2", ops.Len())
	}
}

// TestDefaultTTL: with executive.default_ttl, results without a ttl arm deadlines and go stale.
func TestDefaultTTL(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "", staleness.Policy{Default: 120})
	w.send(t, result("PING", ``))
	w.clk.Set(time.Unix(t0+119, 0))
	if res, _ := w.ticker().Tick(context.Background()); res.Claimed != 0 {
		t.Fatalf("stale 1 s early: %+v", res)
	}
	w.clk.Set(time.Unix(t0+120, 0))
	if res, _ := w.ticker().Tick(context.Background()); res.Claimed != 1 {
		t.Fatalf("not stale at the deadline: %+v", res)
	}
	w.drain(t)
	// The stale result (a result without ttl of its own) did not re-arm from its own instant.
	w.clk.Set(time.Unix(t0+240, 0))
	res, _ := w.ticker().Tick(context.Background())
	q := w.queued(t)
	if res.Claimed != 1 || len(q) != 1 || q[0].Summary != "stale: no result for 4 minutes (ttl 120 s)" {
		t.Fatalf("second period: %+v, queued %+v", res, q)
	}
}

// TestOutsideStaleResult: an event marked stale by an outside producer is recorded like any
// failing result, arms no deadline and leaves last_update alone; a never-seen check still
// becomes current.
func TestOutsideStaleResult(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "", staleness.Policy{Default: 60})
	w.send(t, `{"entity":"web-01","check":"Cron","type":"service","state":"unknown","stale":true,"ttl":30,"summary":"gone quiet"}`)
	if st, _ := redis.String(w.db.Do(t, "HGET", w.keys.Check("web-01:Cron"), "state"), nil); st != "unknown" {
		t.Fatalf("state %q", st)
	}
	if n, _ := redis.Int(w.db.Do(t, "ZCARD", w.keys.StaleDeadlines()), nil); n != 0 {
		t.Errorf("a stale result armed %d deadlines", n)
	}
	if lu := w.db.Do(t, "HGET", w.keys.Check("web-01:Cron"), "last_update"); lu != nil {
		t.Errorf("a stale result set last_update %s", lu)
	}
	if score := w.db.Do(t, "ZSCORE", w.keys.CurrentChecks("web-01"), "Cron"); score == nil {
		t.Error("a never-seen check reported stale is not current")
	}
}
