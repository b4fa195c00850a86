package failover

import (
	"regexp"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/testing/testbinary"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/schema"
)

// TestClaimLeftAfterAConnectionErrorIsRetried: after a Redis connection error, a live
// executive must look at its own processing list again before claiming new events.
//
// A failover can leave a claimed-but-unfinished item in the processing list of an instance that
// is alive: the old master replicated the claim (BLMOVE, or the claim script) but died before
// the replica got the finish, or before the claiming reply reached the executive. The consumer
// then sees only a connection error from BLMOVE and carries on claiming new events; the item is
// not retried until the process restarts (no peer reaps it: the instance's heartbeat is fresh),
// so its check does not change state and nobody is alerted. The window is small with a real kill, so the test builds
// the same Redis state deterministically on a single server: it puts an event in the running
// executive's processing list and drops the executive's connections (CLIENT KILL), which is what
// the executive sees in a failover.
func TestClaimLeftAfterAConnectionErrorIsRetried(t *testing.T) {
	t.Parallel()
	srv := testredis.StartServer(t) // private: CLIENT KILL must not touch other tests
	keys := schema.NewKeys("")
	conn, err := redis.Dial("tcp", srv.Addr, redis.DialConnectTimeout(2*time.Second), redis.DialReadTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	x := testbinary.Start(t, []string{"FLAPJACK_REDIS_URL=redis://" + srv.Addr + "/0", "FLAPJACK_INSTANCE_HEARTBEAT=1s"}, "executive")
	x.WaitLines(t, regexp.MustCompile(`stage started`), 1, 15*time.Second)
	ids, err := redis.Strings(conn.Do("SMEMBERS", keys.Instances("executive")))
	if err != nil || len(ids) != 1 {
		t.Fatalf("executive instances: %v %v", ids, err)
	}
	processing := keys.Processing("executive", ids[0])

	// The claim the new master inherited, then the connection errors of the failover.
	claimed := `{"entity":"claim-host","check":"stranded","type":"service","state":"critical","summary":"claimed before the failover"}`
	if _, err := conn.Do("LPUSH", processing, claimed); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Do("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"); err != nil {
		t.Fatal(err)
	}

	// The executive reconnects and processes new events...
	if _, err := conn.Do("LPUSH", keys.Events(), `{"entity":"claim-host","check":"fresh","type":"service","state":"critical"}`); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 15*time.Second, "the executive to process a new event after reconnecting", func() bool {
		s, _ := redis.String(conn.Do("HGET", keys.Check("claim-host:fresh"), "state"))
		return s == schema.StateCritical
	})
	// ...and must not leave the inherited claim behind.
	deadline := time.Now().Add(5 * time.Second)
	for {
		state, _ := redis.String(conn.Do("HGET", keys.Check("claim-host:stranded"), "state"))
		left, _ := redis.Int(conn.Do("LLEN", processing))
		if state == schema.StateCritical && left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("5 s after the executive resumed, the event it had claimed before the connection error is "+
				"still unprocessed (check state %q, %d item(s) left in %s): it is never retried while the executive lives",
				state, left, processing)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
