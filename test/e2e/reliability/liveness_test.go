package reliability

import (
	"encoding/json"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/testing/testbinary"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/schema"
)

// Shape of the long-outage test: a beat of livenessBeat, Redis away for livenessOutage (five
// beats and a half: every instance record, kept three beats, expires meanwhile).
const (
	livenessBeat   = time.Second
	livenessOutage = 5*livenessBeat + livenessBeat/2
	livenessEvery  = 20 * time.Millisecond
)

// recovery is one "recovered items of a dead instance" log line.
type recovery struct {
	Stage    string `json:"stage"`
	Instance string `json:"instance"`
	Requeued int    `json:"requeued"`
}

func recoveries(p *testbinary.Process) []recovery {
	var out []recovery
	for _, l := range p.Texts(true) {
		if !strings.Contains(l, "recovered items of a dead instance") {
			continue
		}
		var r recovery
		if json.Unmarshal([]byte(l), &r) == nil {
			out = append(out, r)
		}
	}
	return out
}

// uniqueProducer LPUSHes events of checks of their own until stopped, remembering which Redis
// acknowledged and which got no answer (they may or may not have landed).
type uniqueProducer struct {
	addr string
	db   int
	keys schema.Keys

	mu          sync.Mutex
	acked, lost []streamEvent
}

func (p *uniqueProducer) run(stop <-chan struct{}) {
	tick := time.NewTicker(livenessEvery)
	defer tick.Stop()
	now := time.Now().Unix()
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		e := uniqueEvent("live", i, now)
		err := func() error {
			c, err := redis.Dial("tcp", p.addr, redis.DialDatabase(p.db), redis.DialConnectTimeout(200*time.Millisecond),
				redis.DialReadTimeout(time.Second), redis.DialWriteTimeout(time.Second))
			if err != nil {
				return err
			}
			defer c.Close()
			_, err = c.Do("LPUSH", p.keys.Events(), e.JSON())
			return err
		}()
		p.mu.Lock()
		if err == nil {
			p.acked = append(p.acked, e)
		} else {
			p.lost = append(p.lost, e)
		}
		p.mu.Unlock()
	}
}

// archived counts each summary in the event archive.
func archived(t *testing.T, pool *redis.Pool, keys schema.Keys) map[string]int {
	t.Helper()
	lists, err := redis.Strings(do(pool, "SMEMBERS", keys.KnownEventsArchiveKeys()))
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, l := range lists {
		items, err := redis.Strings(do(pool, "LRANGE", l, 0, -1))
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			var ev struct{ Summary string }
			if json.Unmarshal([]byte(it), &ev) == nil {
				counts[ev.Summary]++
			}
		}
	}
	return counts
}

// TestOutageOfFiveBeatsRequeuesNothingFromLivePeers: Redis goes away (killed, restarted on the
// same port with its data) for five heartbeats under two executives and two notifiers, while
// events stream in. Every instance record expires meanwhile; when Redis is back no live
// instance is judged dead, nothing is requeued from one, and every event is archived exactly
// once. A third executive, stopped with an item claimed and killed during the outage, is
// judged dead after it and its item is recovered and applied.
func TestOutageOfFiveBeatsRequeuesNothingFromLivePeers(t *testing.T) {
	srv := testredis.StartServer(t, persistent...)
	db := srv.NewDB(t)
	pool := db.Pool
	keys := schema.NewKeys("")
	db.Do(t, "HSET", keys.Contact("oncall"), "first_name", "On", "last_name", "Call")
	db.Do(t, "HSET", keys.ContactMedia("oncall"), "log", "stdout")
	db.Do(t, "SADD", keys.ContactsFor(schema.AllContactsID), "oncall")

	env := []string{
		"FLAPJACK_REDIS_URL=" + db.URL(),
		"FLAPJACK_REDIS_COMMAND_TIMEOUT=1s",
		"FLAPJACK_LOG_FORMAT=json",
		"FLAPJACK_INSTANCE_HEARTBEAT=" + livenessBeat.String(),
		"FLAPJACK_EXECUTIVE_INITIAL_FAILURE_DELAY=0",
		"FLAPJACK_EXECUTIVE_ARCHIVE_EVENTS=true",
	}
	var live []*testbinary.Process
	for _, stage := range []string{"executive", "executive", "notifier", "notifier"} {
		p := testbinary.Start(t, env, stage)
		p.WaitLine(t, 15*time.Second, "stage started")
		live = append(live, p)
	}
	doomed := testbinary.Start(t, env, "executive")
	doomed.WaitLine(t, 15*time.Second, "stage started")
	liveIDs := map[string]bool{}
	for _, p := range live {
		liveIDs[instance(p)] = true
	}

	prod := &uniqueProducer{addr: srv.Addr, db: db.Index, keys: keys}
	stop := make(chan struct{})
	produced := make(chan struct{})
	go func() { defer close(produced); prod.run(stop) }()
	time.Sleep(2 * livenessBeat) // a stream under way: batches claimed, notifications routed

	// The doomed executive stops with an item claimed, then dies while Redis is away.
	if err := doomed.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	planted := uniqueEvent("planted", 0, time.Now().Unix())
	db.Do(t, "LPUSH", keys.Processing("executive", instance(doomed)), planted.JSON())
	srv.Kill()
	killedAt := time.Now()
	doomed.Kill()
	time.Sleep(livenessOutage)
	srv.Restart(t, persistent...)
	back := time.Since(killedAt)

	// The recovery of the doomed executive proves the live ones would have been seen reaping.
	var reaper *testbinary.Process
	if !waitUntil(20*time.Second, 50*time.Millisecond, func() bool {
		for _, p := range live {
			for _, r := range recoveries(p) {
				if r.Instance == instance(doomed) && r.Stage == "executive" && r.Requeued >= 1 {
					reaper = p
					return true
				}
			}
		}
		return false
	}) {
		t.Fatalf("the executive killed during the outage was never recovered")
	}
	recoveredAfter := time.Since(killedAt) - back
	time.Sleep(livenessBeat) // the stream goes on after the recovery
	close(stop)
	<-produced

	if !waitUntil(20*time.Second, 100*time.Millisecond, func() bool {
		left, err := processingLeft(pool)
		return err == nil && len(left) == 0 && queuesEmpty(pool, keys.Events(), keys.Notifications()) && applied(pool, keys, planted)
	}) {
		left, _ := processingLeft(pool)
		t.Errorf("not drained: processing lists %v, events %d, notifications %d, planted applied %v", left,
			mustInt(t, pool, "LLEN", keys.Events()), mustInt(t, pool, "LLEN", keys.Notifications()), applied(pool, keys, planted))
	}

	// Nothing was requeued from, or forgotten of, a live instance.
	judgedLive, requeuedLive := 0, 0
	for _, p := range append([]*testbinary.Process{doomed}, live...) {
		for _, r := range recoveries(p) {
			if r.Instance != instance(doomed) {
				judgedLive++
				requeuedLive += r.Requeued
				t.Errorf("%s judged %s %s dead (requeued %d) though it was alive", p, r.Stage, r.Instance, r.Requeued)
			}
		}
	}
	for _, p := range live {
		if p.Exited() {
			t.Errorf("%s exited (code %d):\n%s", p, p.ExitCode(), p.Tail(30))
		}
	}
	for _, stage := range []string{"executive", "notifier"} {
		members, err := redis.Strings(do(pool, "SMEMBERS", keys.Instances(stage)))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range members {
			if !liveIDs[m] {
				t.Errorf("%s_instances still lists %s", stage, m)
			}
		}
	}

	// Every acknowledged event is archived once; an unacknowledged one at most once.
	counts := archived(t, pool, keys)
	prod.mu.Lock()
	acked, lost := prod.acked, prod.lost
	prod.mu.Unlock()
	for _, e := range append([]streamEvent{planted}, acked...) {
		if n := counts[e.Summary]; n != 1 {
			t.Errorf("%s archived %d times, want once", e.Summary, n)
		}
	}
	landed := 0
	for _, e := range lost {
		switch n := counts[e.Summary]; {
		case n > 1:
			t.Errorf("%s (its LPUSH unanswered) archived %d times, want at most once", e.Summary, n)
		case n == 1:
			landed++
		}
	}
	if len(lost) == 0 {
		t.Errorf("no LPUSH failed: the stream did not meet the outage")
	}
	t.Logf("Redis away %v (heartbeat %v) under 2 executives and 2 notifiers: live instances judged dead %d times, %d items requeued from them; %d events acknowledged, each archived once; "+
		"%d unanswered pushes, %d of them landed; the executive killed meanwhile recovered by %s %v after Redis was back",
		back.Round(time.Millisecond), livenessBeat, judgedLive, requeuedLive, len(acked), len(lost), landed, reaper, recoveredAfter.Round(time.Millisecond))
}
