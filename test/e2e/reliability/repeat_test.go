package reliability

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/testing/testbinary"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/schema"
)

// processedCount reads flapjack_events_processed_total of one result, summed over types.
func processedCount(t *testing.T, addr, result string) int {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	n := 0
	for _, l := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(l, "flapjack_events_processed_total{") && strings.Contains(l, `result="`+result+`"`) {
			f := strings.Fields(l)
			if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
				n += int(v)
			}
		}
	}
	return n
}

// TestARepeatedEventIsAHarmlessRepeatResult checks what README's Guarantees promise a client
// that sends an event again after a lost reply (a 503 that had queued it, a receiver's re-push):
// the same event (same check, `time` and state) a second time is one more result of an
// unchanged state, which alerts nothing new; arriving after a newer event of its check it is
// stale and ignored.
func TestARepeatedEventIsAHarmlessRepeatResult(t *testing.T) {
	db := testredis.New(t)
	pool := db.Pool
	keys := schema.NewKeys("")
	db.Do(t, "HSET", keys.Contact("oncall"), "first_name", "On", "last_name", "Call")
	db.Do(t, "HSET", keys.ContactMedia("oncall"), "log", "stdout")
	db.Do(t, "SADD", keys.ContactsFor(schema.AllContactsID), "oncall")
	httpAddr := testbinary.FreeAddr(t)
	server := testbinary.Start(t, []string{
		"FLAPJACK_REDIS_URL=" + db.URL(), "FLAPJACK_REDIS_EMBEDDED=never", "FLAPJACK_HTTP_ADDR=" + httpAddr,
		"FLAPJACK_WEB_ENABLED=false", "FLAPJACK_LOG_FORMAT=json", "FLAPJACK_INSTANCE_HEARTBEAT=1s",
		"FLAPJACK_EXECUTIVE_INITIAL_FAILURE_DELAY=0", "FLAPJACK_GATEWAYS_LOG_ENABLED=true",
		"FLAPJACK_GATEWAYS_JABBER_ENABLED=false", "FLAPJACK_GATEWAYS_PAGERDUTY_ENABLED=false",
	}, "server")
	server.WaitLine(t, 15*time.Second, "HTTP listening")
	server.WaitLine(t, 15*time.Second, "stage started", `"stage":"log_gateway"`)

	client := &http.Client{Timeout: 10 * time.Second}
	at := time.Now().Unix() - 60
	critical := streamEvent{Entity: "repeat-01", Check: "load", State: schema.StateCritical, Summary: "seq repeat-01/0", Time: at}
	ok := streamEvent{Entity: "repeat-01", Check: "load", State: schema.StateOK, Summary: "seq repeat-01/1", Time: at + 1}
	alerts := func(kind string) int {
		n := 0
		for _, l := range server.Texts(false) {
			if strings.HasPrefix(l, "ALERT "+kind+": ") && strings.Contains(l, "repeat-01") {
				n++
			}
		}
		return n
	}
	send := func(e streamEvent) {
		t.Helper()
		if a := postEvent(client, httpAddr, e); a.status != http.StatusAccepted {
			t.Fatalf("POST /events %s: %d %s", e.Summary, a.status, a.body)
		}
	}
	processed := func() int {
		n, _ := redis.Int(do(pool, "HGET", keys.EventCounters(), "all"))
		return n
	}

	send(critical)
	if !waitUntil(10*time.Second, 20*time.Millisecond, func() bool { return alerts("Problem") == 1 }) {
		t.Fatalf("no Problem alert for the first event")
	}
	send(critical) // the same event again, as after a lost reply
	if !waitUntil(10*time.Second, 20*time.Millisecond, func() bool { return processed() == 2 }) {
		t.Fatalf("the repeated event was not processed: %d events counted", processed())
	}
	send(ok)
	if !waitUntil(10*time.Second, 20*time.Millisecond, func() bool { return alerts("Recovery") == 1 }) {
		t.Fatalf("no Recovery alert")
	}
	stale := processedCount(t, httpAddr, "stale")
	send(critical) // the first event a third time, after a newer one of its check
	if !waitUntil(10*time.Second, 20*time.Millisecond, func() bool { return processed() == 4 }) {
		t.Fatalf("the late repeat was not processed: %d events counted", processed())
	}
	// Every alert the log gateway would print is out by now: the queues and processing lists are empty.
	if !waitUntil(10*time.Second, 20*time.Millisecond, func() bool {
		left, err := processingLeft(pool)
		return err == nil && len(left) == 0 && queuesEmpty(pool, keys.Notifications(), keys.Queue("log_notifications"))
	}) {
		t.Fatalf("notifications not drained")
	}
	if p, r := alerts("Problem"), alerts("Recovery"); p != 1 || r != 1 {
		t.Errorf("alerts: %d Problem, %d Recovery; want one each (a repeated event alerts nothing new)", p, r)
	}
	if got := processedCount(t, httpAddr, "stale"); got != stale+1 {
		t.Errorf("stale results counted %d, want %d: the late repeat is stale", got, stale+1)
	}
	check, err := redis.StringMap(do(pool, "HGETALL", keys.Check(critical.ID())))
	if err != nil {
		t.Fatal(err)
	}
	if check["state"] != schema.StateOK || check["summary"] != ok.Summary {
		t.Errorf("check %v, want the newest event's state ok", check)
	}
	if n := mustInt(t, pool, "LLEN", keys.States(critical.ID())); n != 2 {
		t.Errorf("%d state changes recorded, want 2 (critical, ok): a repeat changes nothing", n)
	}
}
