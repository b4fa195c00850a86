package reliability

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/testing/testbinary"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/schema"
)

// testSeed is the seed of a test's random choices: FLAPJACK_RELIABILITY_SEED when set (to
// replay a failure), else the clock. It is logged.
func testSeed(t *testing.T) uint64 {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("FLAPJACK_RELIABILITY_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("FLAPJACK_RELIABILITY_SEED=%q: %v", s, err)
		}
		seed = v
	}
	t.Logf("seed %d (replay with FLAPJACK_RELIABILITY_SEED=%d)", seed, seed)
	return seed
}

// stageRunner keeps one stage (one flapjack subprocess) running, and kills and restarts it.
type stageRunner struct {
	t     *testing.T
	name  string   // for logs: "executive", "gateway jabber" ...
	stage string   // its instance/processing name: "executive", "jabber_gateway" ...
	args  []string // flapjack command line
	env   []string

	mu       sync.Mutex
	cur      *testbinary.Process
	all      []*testbinary.Process
	kills    int
	inFlight int // kills that left claimed items in the dead instance's processing list
	items    int // items those kills left
}

func (s *stageRunner) start() *testbinary.Process {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := testbinary.Start(s.t, s.env, s.args...)
	s.cur = p
	s.all = append(s.all, p)
	return p
}

func (s *stageRunner) current() *testbinary.Process {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur
}

// instance is HOST:PID of a process of this stage.
func instance(p *testbinary.Process) string {
	return fmt.Sprintf("%s:%d", queue.LocalIdentity().Host, p.PID())
}

// killPlan says when, within its moment, a kill lands.
type killPlan struct {
	stage *stageRunner
	// busy: wait (up to 300 ms) until the stage has claimed something, then wait jitter more;
	// otherwise wait jitter only (any moment, idle or not).
	busy   bool
	jitter time.Duration
	pause  time.Duration // before the restart (0: at once)
}

// kill carries out a plan: SIGKILL, count what the dead instance left claimed, restart.
func (s *stageRunner) kill(t *testing.T, pool *redis.Pool, keys schema.Keys, plan killPlan) {
	t.Helper()
	p := s.current()
	if p.Exited() {
		t.Errorf("%s (pid %d) exited by itself (code %d):\n%s", s.name, p.PID(), p.ExitCode(), p.Tail(40))
	}
	processing := keys.Processing(s.stage, instance(p))
	if plan.busy {
		waitUntil(300*time.Millisecond, time.Millisecond, func() bool {
			n, _ := redis.Int(do(pool, "LLEN", processing))
			return n > 0
		})
	}
	time.Sleep(plan.jitter)
	p.Kill()
	left, err := redis.Int(do(pool, "LLEN", processing))
	if err != nil {
		t.Fatalf("LLEN %s: %v", processing, err)
	}
	s.mu.Lock()
	s.kills++
	if left > 0 {
		s.inFlight++
		s.items += left
	}
	s.mu.Unlock()
	time.Sleep(plan.pause)
	s.start()
}

// stopAll stops the stages with SIGTERM, expecting a clean exit (status 0) from each.
func stopAll(t *testing.T, stages []*stageRunner) {
	t.Helper()
	var wg sync.WaitGroup
	for _, s := range stages {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := s.current()
			if code := p.Terminate(30 * time.Second); code != 0 {
				t.Errorf("%s exited %d after SIGTERM (want 0):\n%s", s.name, code, p.Tail(30))
			}
		}()
	}
	wg.Wait()
}

// processingLeft lists the non-empty processing lists of the database.
func processingLeft(pool *redis.Pool) ([]string, error) {
	keys, err := redis.Strings(do(pool, "KEYS", "*_processing:*"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, k := range keys {
		n, err := redis.Int(do(pool, "LLEN", k))
		if err != nil {
			return nil, err
		}
		if n > 0 {
			out = append(out, fmt.Sprintf("%s (%d)", k, n))
		}
	}
	return out, nil
}

// queuesEmpty reports whether every list in names is empty.
func queuesEmpty(pool *redis.Pool, names ...string) bool {
	for _, q := range names {
		n, err := redis.Int(do(pool, "LLEN", q))
		if err != nil || n != 0 {
			return false
		}
	}
	return true
}

// deadLetters lists the non-empty `*_failed` lists (notifications_failed,
// <medium>_notifications_failed).
func deadLetters(t *testing.T, pool *redis.Pool) []string {
	t.Helper()
	keys, err := redis.Strings(do(pool, "KEYS", "*_failed"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, k := range keys {
		items, _ := redis.Strings(do(pool, "LRANGE", k, 0, 2))
		out = append(out, fmt.Sprintf("%s: %s", k, strings.Join(items, " | ")))
	}
	return out
}

// shuffledKills spreads kills over ticks [first, last], several per stage, in a seeded random
// order, with random landing moments and restart pauses.
func shuffledKills(rng *rand.Rand, stages []*stageRunner, perStage, first, last int, jitter map[string]time.Duration) map[int]killPlan {
	var order []*stageRunner
	for _, s := range stages {
		for i := 0; i < perStage; i++ {
			order = append(order, s)
		}
	}
	rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	ticks := rng.Perm(last - first + 1)[:len(order)]
	plans := map[int]killPlan{}
	for i, s := range order {
		plan := killPlan{stage: s, busy: rng.IntN(4) != 0}
		if plan.busy {
			plan.jitter = time.Duration(rng.Int64N(int64(jitter[s.stage]) + 1))
		} else {
			plan.jitter = time.Duration(rng.Int64N(int64(800 * time.Millisecond)))
		}
		if rng.IntN(2) == 0 {
			plan.pause = time.Duration(100+rng.IntN(600)) * time.Millisecond
		}
		plans[first+ticks[i]] = plan
	}
	return plans
}
