package main

import (
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/testing/testbinary"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/schema"
)

// TestStaleCheckLive: two `flapjack executive` processes on the wall clock; a check whose
// result carried ttl 3 and then fell silent gets one stale result per 3 s between them (not
// one per executive), and `flapjack status` lists it as stale.
func TestStaleCheckLive(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	keys := schema.NewKeys("")
	env := []string{"FLAPJACK_REDIS_URL=" + db.URL(), "FLAPJACK_EXECUTIVE_STALENESS_INTERVAL=100ms"}
	for range 2 {
		x := testbinary.Start(t, env, "executive")
		t.Cleanup(func() { x.Stop(t) })
	}
	conn := db.Conn(t)
	defer conn.Close()
	pushed := time.Now()
	db.Do(t, "LPUSH", keys.Events(), `{"entity":"web-01","check":"Cron","type":"service","state":"ok","ttl":3,"summary":"ran"}`)
	// Deadlines are whole seconds after the result was applied: the stale results come 2-3 s
	// and 5-6 s after it, the third 8-9 s after.
	deadline := pushed.Add(10 * time.Second)
	for {
		st, _ := redis.String(conn.Do("HGET", keys.Check("web-01:Cron"), "state"))
		if st == "unknown" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("state %q 10 s after a result with ttl 3", st)
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(time.Until(pushed.Add(7 * time.Second)))
	processed, _ := redis.Int(conn.Do("HGET", keys.EventCounters(), "all"))
	if processed != 3 {
		t.Errorf("7 s after a result with ttl 3, %d events processed; want 3 (the result and one stale result per 3 s, from either executive)", processed)
	}
	summary, _ := redis.String(conn.Do("HGET", keys.Check("web-01:Cron"), "summary"))
	// The second stale result is claimed in the second of its deadline, 6 s after the result
	// (7 s when the machine delayed that tick past the second's end).
	if summary != "stale: no result for 6 seconds (ttl 3 s)" && summary != "stale: no result for 7 seconds (ttl 3 s)" {
		t.Errorf("summary %q", summary)
	}
	out, errOut, _ := flapjack(t, []string{"FLAPJACK_REDIS_URL=" + db.URL()}, "", "status")
	if !strings.Contains(out, "[stale]") || !strings.Contains(out, "Cron") {
		t.Errorf("status does not list web-01:Cron as stale:\n%s\n%s", out, errOut)
	}
}
