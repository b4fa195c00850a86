package reliability

import (
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/testing/testbinary"
	"github.com/flapjackgo/flapjack/internal/testing/testprosody"
)

func TestMain(m *testing.M) {
	testprosody.EnsureNoProxy()
	testbinary.Main(m)
}

// waitUntil polls cond every interval until it holds or timeout passes; it reports whether it
// held.
func waitUntil(timeout, interval time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(interval)
	}
}

// do runs one command on a pooled connection.
func do(pool *redis.Pool, cmd string, args ...any) (any, error) {
	c := pool.Get()
	defer c.Close()
	return c.Do(cmd, args...)
}

// mustInt runs a command returning an integer and fails the test on error.
func mustInt(t *testing.T, pool *redis.Pool, cmd string, args ...any) int {
	t.Helper()
	n, err := redis.Int(do(pool, cmd, args...))
	if err != nil && err != redis.ErrNil {
		t.Fatalf("redis %s %v: %v", cmd, args, err)
	}
	return n
}
