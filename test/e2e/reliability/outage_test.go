package reliability

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/testing/testbinary"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/schema"
)

// Shape of the outage test: outageChecks checks flip state with one event every outageEvery
// (round robin); Redis is killed outageAfter into the stream for outageFor, and the stream
// goes on until outageStream.
const (
	outageChecks = 10
	outageEvery  = 25 * time.Millisecond
	outageAfter  = 4 * time.Second
	outageFor    = 5 * time.Second
	outageStream = 15 * time.Second
)

// persistent makes redis-server durable for what it acknowledges: every write is in the
// append-only file, fsynced, before the reply (the defaults of testredis turn persistence off;
// later arguments override earlier ones).
var persistent = []string{"--appendonly", "yes", "--appendfsync", "always"}

// resolveScript tells whether an event whose LPUSH got no answer reached Redis: it is still
// queued, claimed by a stage, or applied (the check's newest event time is at least its time).
// The three places are read in one atomic step, so an event moving on meanwhile is not missed.
var resolveScript = redis.NewScript(1, `
if redis.call('LPOS', KEYS[1], ARGV[1]) then return 1 end
for _, k in ipairs(redis.call('KEYS', '*_processing:*')) do
  if redis.call('LPOS', k, ARGV[1]) then return 1 end
end
local t = redis.call('HGET', ARGV[2], 'last_event_time')
if t and tonumber(t) >= tonumber(ARGV[3]) then return 1 end
return 0`)

// producer pushes a flip stream with its own connections; an LPUSH without an answer is
// resolved once Redis is back (found: it counts; not found: pushed again), and meanwhile no
// later event of that check is pushed, so every check's events reach Redis exactly once and in
// order.
type producer struct {
	addr string
	db   int
	keys schema.Keys
	base int64

	mu        sync.Mutex
	pushed    [outageChecks][]streamEvent // acknowledged (or found after an outage), in order
	failed    int                         // LPUSH attempts that got no answer
	found     int                         // of those, events that had reached Redis anyway
	repushed  int                         // of those, events pushed again
	firstFail time.Time
	resumed   time.Time // first acknowledged push after a failure
}

func (p *producer) dial() (redis.Conn, error) {
	return redis.Dial("tcp", p.addr, redis.DialDatabase(p.db), redis.DialConnectTimeout(500*time.Millisecond),
		redis.DialReadTimeout(2*time.Second), redis.DialWriteTimeout(2*time.Second))
}

// push sends one event; it reports whether Redis acknowledged it.
func (p *producer) push(e streamEvent) bool {
	c, err := p.dial()
	if err != nil {
		return false
	}
	defer c.Close()
	_, err = c.Do("LPUSH", p.keys.Events(), e.JSON())
	return err == nil
}

// resolve answers whether an unanswered event reached Redis; ok is false while Redis is down.
func (p *producer) resolve(e streamEvent) (present, ok bool) {
	c, err := p.dial()
	if err != nil {
		return false, false
	}
	defer c.Close()
	n, err := redis.Int(resolveScript.Do(c, p.keys.Events(), e.JSON(), p.keys.Check(e.ID()), e.Time))
	if err != nil {
		return false, false
	}
	return n == 1, true
}

func (p *producer) run(stop <-chan struct{}) {
	next := [outageChecks]int{}
	tick := time.NewTicker(outageEvery)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		c := i % outageChecks
		e := flipEvent("outage", c, next[c], p.base)
		if p.push(e) {
			p.mu.Lock()
			p.pushed[c] = append(p.pushed[c], e)
			if !p.firstFail.IsZero() && p.resumed.IsZero() {
				p.resumed = time.Now()
			}
			p.mu.Unlock()
			next[c]++
			continue
		}
		p.mu.Lock()
		p.failed++
		if p.firstFail.IsZero() {
			p.firstFail = time.Now()
		}
		p.mu.Unlock()
		// In doubt: wait for Redis, then find out (and push again if it never arrived).
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			present, ok := p.resolve(e)
			if !ok {
				continue
			}
			if present {
				p.mu.Lock()
				p.found++
				p.pushed[c] = append(p.pushed[c], e)
				p.mu.Unlock()
				next[c]++
				break
			}
			if p.push(e) {
				p.mu.Lock()
				p.repushed++
				p.pushed[c] = append(p.pushed[c], e)
				p.mu.Unlock()
				next[c]++
				break
			}
			p.mu.Lock()
			p.failed++
			p.mu.Unlock()
		}
	}
}

// readySample is one /readyz answer (0: no answer): asked at at, answered (or given up) at done.
type readySample struct {
	at, done time.Time
	status   int
}

func TestRedisOutageUnderLoad(t *testing.T) {
	began := time.Now()
	srv := testredis.StartServer(t, persistent...)
	db := srv.NewDB(t)
	pool := db.Pool
	keys := schema.NewKeys("")
	for setting, want := range map[string]string{"appendonly": "yes", "appendfsync": "always"} {
		if v, err := redis.Strings(do(pool, "CONFIG", "GET", setting)); err != nil || len(v) != 2 || v[1] != want {
			t.Fatalf("redis-server did not take --%s %s: %v %v", setting, want, v, err)
		}
	}

	db.Do(t, "HSET", keys.Contact("oncall"), "first_name", "On", "last_name", "Call")
	db.Do(t, "HSET", keys.ContactMedia("oncall"), "log", "stdout")
	db.Do(t, "SADD", keys.ContactsFor(schema.AllContactsID), "oncall")

	httpAddr := testbinary.FreeAddr(t)
	server := testbinary.Start(t, []string{
		"FLAPJACK_REDIS_URL=" + db.URL(),
		"FLAPJACK_REDIS_EMBEDDED=never",
		"FLAPJACK_HTTP_ADDR=" + httpAddr,
		"FLAPJACK_LOG_FORMAT=json",
		"FLAPJACK_INSTANCE_HEARTBEAT=1s",
		"FLAPJACK_EXECUTIVE_INITIAL_FAILURE_DELAY=0",
		"FLAPJACK_EXECUTIVE_REPEAT_FAILURE_DELAY=0",
		"FLAPJACK_NOTIFIER_DEFAULT_INTERVAL=1s",
		"FLAPJACK_GATEWAYS_LOG_ENABLED=true",
		"FLAPJACK_GATEWAYS_JABBER_ENABLED=false",
		"FLAPJACK_GATEWAYS_PAGERDUTY_ENABLED=false",
	}, "server")
	server.WaitLine(t, 15*time.Second, "HTTP listening")
	for _, stage := range []string{"executive", "notifier", "log_gateway"} {
		server.WaitLine(t, 15*time.Second, "stage started", `"stage":"`+stage+`"`)
	}

	// /readyz, sampled all along
	var (
		samplesMu sync.Mutex
		samples   []readySample
	)
	stopSampling := make(chan struct{})
	samplingDone := make(chan struct{})
	client := &http.Client{Timeout: 3 * time.Second}
	go func() {
		defer close(samplingDone)
		for {
			s := readySample{at: time.Now()}
			if resp, err := client.Get("http://" + httpAddr + "/readyz"); err == nil {
				s.status = resp.StatusCode
				resp.Body.Close()
			}
			s.done = time.Now()
			samplesMu.Lock()
			samples = append(samples, s)
			samplesMu.Unlock()
			select {
			case <-stopSampling:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()

	prod := &producer{addr: srv.Addr, db: db.Index, keys: keys, base: time.Now().Unix() - 3600}
	stopProducer := make(chan struct{})
	producerDone := make(chan struct{})
	streamStart := time.Now()
	go func() { defer close(producerDone); prod.run(stopProducer) }()

	time.Sleep(outageAfter)
	if server.Exited() {
		t.Fatalf("server exited before the outage:\n%s", server.Tail(40))
	}
	killedAt := time.Now()
	srv.Kill()
	time.Sleep(outageFor)
	if server.Exited() {
		t.Fatalf("server exited during the outage:\n%s", server.Tail(40))
	}
	restartBegun := time.Now() // redis-server is launched; Restart returns once it answers
	srv.Restart(t, persistent...)
	restartedAt := time.Now()

	time.Sleep(time.Until(streamStart.Add(outageStream)))
	close(stopProducer)
	<-producerDone

	// Everything pushed must come through.
	prod.mu.Lock()
	pushed := prod.pushed
	prod.mu.Unlock()
	total := 0
	expected := map[string]streamEvent{}
	for c := range pushed {
		total += len(pushed[c])
		for _, e := range pushed[c] {
			expected[e.Summary] = e
		}
	}
	var alerts map[string]int
	var unexpected []string
	readAlerts := func() {
		alerts, unexpected = map[string]int{}, nil
		for _, l := range server.Texts(false) {
			if !strings.HasPrefix(l, "ALERT ") {
				continue
			}
			sm := summaryRE.FindStringSubmatch(strings.SplitN(l, " [contact=", 2)[0])
			e, ok := streamEvent{}, sm != nil
			if ok {
				e, ok = expected[sm[0]]
			}
			want := "ALERT Problem: "
			if ok && e.State == schema.StateOK {
				want = "ALERT Recovery: "
			}
			if !ok || !strings.HasPrefix(l, want) || !strings.Contains(l, "contact=oncall") {
				unexpected = append(unexpected, l)
				continue
			}
			alerts[e.Summary]++
		}
	}
	queues := []string{keys.Events(), keys.Notifications(), keys.Queue("log_notifications")}
	drained := waitUntil(60*time.Second, 200*time.Millisecond, func() bool {
		left, err := processingLeft(pool)
		if err != nil || len(left) > 0 || !queuesEmpty(pool, queues...) {
			return false
		}
		readAlerts()
		return len(alerts) == len(expected)
	})
	drainedAt := time.Now()
	time.Sleep(time.Second)
	close(stopSampling)
	<-samplingDone
	readAlerts()
	if !drained {
		left, _ := processingLeft(pool)
		depth := map[string]int{}
		for _, q := range queues {
			depth[q] = mustInt(t, pool, "LLEN", q)
		}
		t.Errorf("not drained within 60 s after the stream: queues %v, processing lists %v, %d of %d events alerted",
			depth, left, len(alerts), len(expected))
	}
	if server.Exited() {
		t.Fatalf("server exited (code %d):\n%s", server.ExitCode(), server.Tail(40))
	}

	// ---- every event Redis acknowledged was processed exactly once ----
	for c := range pushed {
		if len(pushed[c]) == 0 {
			t.Fatalf("check %d got no events", c)
		}
		last := pushed[c][len(pushed[c])-1]
		id := last.ID()
		if n := mustInt(t, pool, "LLEN", keys.States(id)); n != len(pushed[c]) {
			t.Errorf("%s: %d state changes recorded, want %d (one per acknowledged event)", id, n, len(pushed[c]))
		}
		check, err := redis.StringMap(do(pool, "HGETALL", keys.Check(id)))
		if err != nil {
			t.Fatal(err)
		}
		if check["summary"] != last.Summary || check["state"] != last.State {
			t.Errorf("%s: state %q summary %q, want the last event's %q %q", id, check["state"], check["summary"], last.State, last.Summary)
		}
		problems, recoveries := (len(pushed[c])+1)/2, len(pushed[c])/2
		if n := mustInt(t, pool, "LLEN", keys.NotificationHistory(id, schema.NotificationProblem)); n != problems {
			t.Errorf("%s: %d problem notifications, want %d", id, n, problems)
		}
		if n := mustInt(t, pool, "LLEN", keys.NotificationHistory(id, schema.NotificationRecovery)); n != recoveries {
			t.Errorf("%s: %d recovery notifications, want %d", id, n, recoveries)
		}
	}
	counters, err := redis.StringMap(do(pool, "HGETALL", keys.EventCounters()))
	if err != nil {
		t.Fatal(err)
	}
	okCount, _ := strconv.Atoi(counters["ok"])
	failCount, _ := strconv.Atoi(counters["failure"])
	if all, _ := strconv.Atoi(counters["all"]); all != total || okCount+failCount != total {
		t.Errorf("event_counters %v, want all = ok + failure = %d", counters, total)
	}
	missing, duplicated := 0, 0
	for s := range expected {
		switch n := alerts[s]; {
		case n == 0:
			missing++
			if missing <= 10 {
				t.Errorf("no ALERT line for %s (%s)", s, expected[s].State)
			}
		case n > 1:
			duplicated++
			t.Errorf("ALERT for %s printed %d times", s, n)
		}
	}
	for _, u := range unexpected {
		t.Errorf("unexpected ALERT line: %s", u)
	}
	if left, err := processingLeft(pool); err != nil || len(left) > 0 {
		t.Errorf("processing lists not empty: %v %v", left, err)
	}
	if dl := deadLetters(t, pool); len(dl) > 0 {
		t.Errorf("dead letters: %v", dl)
	}

	// ---- /readyz followed the outage ----
	samplesMu.Lock()
	defer samplesMu.Unlock()
	var before, during, after []int
	readyAgain := time.Time{}
	for _, s := range samples {
		switch {
		case s.done.Before(killedAt):
			// Answered before the kill; one asked just before it may be answered after it.
			before = append(before, s.status)
		case s.at.After(killedAt.Add(500*time.Millisecond)) && s.done.Before(restartBegun):
			during = append(during, s.status)
		case s.at.After(restartedAt):
			after = append(after, s.status)
			if s.status == http.StatusOK && readyAgain.IsZero() {
				readyAgain = s.at
			}
		}
	}
	if len(before) == 0 || !allEqual(before, http.StatusOK) {
		t.Errorf("/readyz before the outage: %v, want 200s", before)
	}
	if len(during) == 0 || !allEqual(during, http.StatusServiceUnavailable) {
		t.Errorf("/readyz during the outage: %v, want 503s", during)
	}
	if readyAgain.IsZero() || after[len(after)-1] != http.StatusOK {
		t.Errorf("/readyz after the restart: %v, want 200 again", after)
	}

	// ---- every stage logged the failure, backed off and recovered ----
	logs := server.Texts(true)
	for _, stage := range []string{"executive", "notifier", "log_gateway"} {
		failedAt, restoredAt := -1, -1
		for i, l := range logs {
			if !strings.Contains(l, `"stage":"`+stage+`"`) {
				continue
			}
			if failedAt < 0 && strings.Contains(l, "heartbeat failed") {
				failedAt = i
			}
			if failedAt >= 0 && strings.Contains(l, "heartbeat restored") {
				restoredAt = i
				break
			}
		}
		if failedAt < 0 || restoredAt < 0 {
			t.Errorf("%s: no 'heartbeat failed' then 'heartbeat restored' in the log", stage)
		}
	}
	// Each stage logged its failed attempts with a growing retry delay (capped backoff).
	backoffs := map[string][]time.Duration{}
	for _, l := range logs {
		var entry struct {
			Level   string          `json:"level"`
			Stage   string          `json:"stage"`
			RetryIn json.RawMessage `json:"retry_in"`
		}
		if json.Unmarshal([]byte(l), &entry) != nil || entry.Level != "error" || entry.RetryIn == nil {
			continue
		}
		if d, ok := logDuration(entry.RetryIn); ok {
			backoffs[entry.Stage] = append(backoffs[entry.Stage], d)
		}
	}
	for _, stage := range []string{"executive", "notifier", "log_gateway"} {
		delays := backoffs[stage]
		growing := slices.IsSorted(delays) && len(delays) >= 3 && delays[0] < delays[len(delays)-1]
		if !growing {
			t.Errorf("%s: want failed attempts logged with growing retry_in (backoff), got %v", stage, delays)
		}
	}

	// ---- numbers ----
	// First alert delivered after the restart: when the whole pipeline worked again.
	var flowingAgain time.Duration = -1
	for _, l := range logs {
		var entry struct {
			Msg string `json:"msg"`
			TS  string `json:"ts"`
		}
		if json.Unmarshal([]byte(l), &entry) != nil || entry.Msg != "alert delivered" {
			continue
		}
		if at, err := time.Parse("2006-01-02T15:04:05.000Z0700", entry.TS); err == nil && at.After(restartBegun) {
			flowingAgain = at.Sub(restartBegun)
			break
		}
	}
	prod.mu.Lock()
	t.Logf("%d events acknowledged by Redis (%d checks), %d LPUSHes unanswered during the outage: %d had reached Redis, %d pushed again",
		total, outageChecks, prod.failed, prod.found, prod.repushed)
	t.Logf("Redis down %v; /readyz 503 during it (%d samples), 200 again %v after it answered again; producer resumed %v and the first alert was delivered %v after redis-server was relaunched; backlog drained %v after the stream ended",
		restartBegun.Sub(killedAt).Round(time.Millisecond), len(during), readyAgain.Sub(restartedAt).Round(time.Millisecond),
		prod.resumed.Sub(restartBegun).Round(time.Millisecond), flowingAgain.Round(time.Millisecond),
		drainedAt.Sub(streamStart.Add(outageStream)).Round(time.Millisecond))
	prod.mu.Unlock()
	t.Logf("ALERT lines: %d expected, %d missing, %d duplicated; backoff delays logged: %v", len(expected), missing, duplicated, backoffs)

	if code := server.Terminate(30 * time.Second); code != 0 {
		t.Errorf("server exited %d after SIGTERM, want 0:\n%s", code, server.Tail(30))
	}
	if t.Failed() {
		var problems []string
		for _, l := range logs {
			if !strings.Contains(l, `"level":"info"`) {
				problems = append(problems, l)
			}
		}
		if len(problems) > 60 {
			problems = problems[:60]
		}
		t.Logf("server warnings and errors:\n%s", strings.Join(problems, "\n"))
	}
	t.Logf("TestRedisOutageUnderLoad took %v", time.Since(began).Round(time.Millisecond))
}

func allEqual(v []int, want int) bool {
	for _, x := range v {
		if x != want {
			return false
		}
	}
	return true
}

// logDuration reads a zap duration field, encoded as seconds (a number) or as text ("1.5s").
func logDuration(raw json.RawMessage) (time.Duration, bool) {
	var secs float64
	if json.Unmarshal(raw, &secs) == nil {
		return time.Duration(secs * float64(time.Second)), true
	}
	var text string
	if json.Unmarshal(raw, &text) == nil {
		d, err := time.ParseDuration(text)
		return d, err == nil
	}
	return 0, false
}
