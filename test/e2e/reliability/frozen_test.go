package reliability

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/testing/testbinary"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/schema"
)

// frozenTimeout is redis.command_timeout in the frozen-Redis test; frozenSlack is what a busy
// machine may add to an answer (HTTP, scheduling), well under the time Redis stays frozen.
const (
	frozenTimeout = time.Second
	frozenSlack   = time.Second
)

// postAnswer is one POST /events answer.
type postAnswer struct {
	status int
	body   string
	took   time.Duration
}

func postEvent(client *http.Client, addr string, e streamEvent) postAnswer {
	began := time.Now()
	resp, err := client.Post("http://"+addr+"/events", "application/json", strings.NewReader(e.JSON()))
	if err != nil {
		return postAnswer{body: err.Error(), took: time.Since(began)}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return postAnswer{status: resp.StatusCode, body: string(body), took: time.Since(began)}
}

// uniqueEvent is a critical event of a check of its own (so nothing orders it against another).
func uniqueEvent(prefix string, i int, at int64) streamEvent {
	entity := fmt.Sprintf("%s-%03d", prefix, i)
	return streamEvent{Entity: entity, Check: "load", State: schema.StateCritical, Summary: "seq " + entity + "/0", Time: at}
}

// applied reports whether the executive has applied an event of e's check.
func applied(pool *redis.Pool, keys schema.Keys, e streamEvent) bool {
	n, err := redis.Int(do(pool, "HEXISTS", keys.Check(e.ID()), "last_event_time"))
	return err == nil && n == 1
}

// TestFrozenRedisAnswers503InBoundedTime: with redis-server stopped (SIGSTOP) POST /events
// answers 503 with the reason within redis.command_timeout, also for requests queued behind a
// small pool; /readyz says Redis does not answer; once Redis resumes every event answered 202
// is processed and the executive, which backed off meanwhile, goes on.
func TestFrozenRedisAnswers503InBoundedTime(t *testing.T) {
	srv := testredis.StartServer(t)
	db := srv.NewDB(t)
	pool := db.Pool
	keys := schema.NewKeys("")
	httpAddr := testbinary.FreeAddr(t)
	server := testbinary.Start(t, []string{
		"FLAPJACK_REDIS_URL=" + db.URL(),
		"FLAPJACK_REDIS_EMBEDDED=never",
		"FLAPJACK_REDIS_COMMAND_TIMEOUT=" + frozenTimeout.String(),
		"FLAPJACK_REDIS_POOL_SIZE=4",
		"FLAPJACK_HTTP_ADDR=" + httpAddr,
		"FLAPJACK_WEB_ENABLED=false",
		"FLAPJACK_LOG_FORMAT=json",
		"FLAPJACK_INSTANCE_HEARTBEAT=1s",
		"FLAPJACK_NOTIFIER_ENABLED=false",
		"FLAPJACK_GATEWAYS_JABBER_ENABLED=false",
		"FLAPJACK_GATEWAYS_PAGERDUTY_ENABLED=false",
	}, "server")
	server.WaitLine(t, 15*time.Second, "HTTP listening")
	server.WaitLine(t, 15*time.Second, "stage started", `"stage":"executive"`)

	client := &http.Client{Timeout: 15 * time.Second}
	now := time.Now().Unix()
	var accepted []streamEvent
	for i := range 5 {
		e := uniqueEvent("before", i, now)
		if a := postEvent(client, httpAddr, e); a.status != http.StatusAccepted {
			t.Fatalf("POST /events before the freeze: %d %s", a.status, a.body)
		}
		accepted = append(accepted, e)
	}

	srv.Freeze(t)
	frozenAt := time.Now()
	thawed := false
	thaw := func() {
		if !thawed {
			srv.Thaw(t)
			thawed = true
		}
	}
	defer thaw()
	// Three times the pool at once: most wait for a connection first.
	const concurrent = 12
	answers := make([]postAnswer, concurrent)
	during := make([]streamEvent, concurrent)
	var wg sync.WaitGroup
	for i := range concurrent {
		during[i] = uniqueEvent("during", i, now)
		wg.Go(func() { answers[i] = postEvent(client, httpAddr, during[i]) })
	}
	var ready postAnswer
	wg.Go(func() {
		began := time.Now()
		resp, err := client.Get("http://" + httpAddr + "/readyz")
		if err != nil {
			ready = postAnswer{body: err.Error(), took: time.Since(began)}
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		ready = postAnswer{status: resp.StatusCode, body: string(body), took: time.Since(began)}
	})
	wg.Wait()
	answeredIn := time.Since(frozenAt)
	// Stay frozen a little longer, so the stages' loops meet the frozen Redis too.
	time.Sleep(2 * time.Second)
	thaw()

	bound := frozenTimeout + frozenSlack
	slowest := time.Duration(0)
	for i, a := range answers {
		slowest = max(slowest, a.took)
		if a.status != http.StatusServiceUnavailable {
			t.Errorf("POST /events %d on a frozen Redis: %d %s, want 503", i, a.status, a.body)
			continue
		}
		var body struct{ Error, Reason string }
		if err := json.Unmarshal([]byte(a.body), &body); err != nil || body.Reason == "" || !strings.Contains(body.Error, "Redis unavailable") {
			t.Errorf("503 body %s: want the error and a reason (%v)", a.body, err)
		}
		if a.took > bound {
			t.Errorf("POST /events %d on a frozen Redis answered after %v, want at most %v (redis.command_timeout %v)", i, a.took, bound, frozenTimeout)
		}
	}
	if ready.status != http.StatusServiceUnavailable || !strings.Contains(ready.body, "redis: no answer within") {
		t.Errorf("/readyz on a frozen Redis: %d %q, want 503 saying Redis does not answer", ready.status, ready.body)
	}

	for i := range 5 {
		e := uniqueEvent("after", i, now)
		if a := postEvent(client, httpAddr, e); a.status != http.StatusAccepted {
			t.Fatalf("POST /events after Redis resumed: %d %s", a.status, a.body)
		}
		accepted = append(accepted, e)
	}
	if !waitUntil(20*time.Second, 50*time.Millisecond, func() bool {
		for _, e := range accepted {
			if !applied(pool, keys, e) {
				return false
			}
		}
		return true
	}) {
		for _, e := range accepted {
			if !applied(pool, keys, e) {
				t.Errorf("accepted event %s never applied", e.Summary)
			}
		}
	}
	landed := 0
	for _, e := range during {
		if applied(pool, keys, e) {
			landed++
		}
	}
	logs := server.Text(true)
	failed := strings.Index(logs, "heartbeat failed")
	if failed < 0 || !strings.Contains(logs[failed:], "heartbeat restored") {
		t.Errorf("no 'heartbeat failed' then 'heartbeat restored' in the log")
	}
	t.Logf("frozen Redis, redis.command_timeout %v, pool 4: %d concurrent POST /events all answered within %v (slowest %v), /readyz %d in %v; "+
		"%d of the %d answered 503 were queued anyway when Redis resumed (at least once); all %d accepted events applied",
		frozenTimeout, concurrent, answeredIn.Round(time.Millisecond), slowest.Round(time.Millisecond), ready.status,
		ready.took.Round(time.Millisecond), landed, concurrent, len(accepted))
}
