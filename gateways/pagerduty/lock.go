package pagerduty

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"
)

var (
	//go:embed scripts/acquire.lua
	acquireSource string
	acquireScript = redis.NewScript(1, acquireSource)

	//go:embed scripts/release.lua
	releaseSource string
	releaseScript = redis.NewScript(1, releaseSource)
)

// Outcomes of taking the lock.
const (
	lockBusy   = 0 // another poller is running
	lockTaken  = 1
	lockRecent = 2 // a run ended less than a poll interval ago
)

// lock is the poller's hold on sem_pagerduty_acks_running: the key holds a random token while
// a run goes on (set with an expiry, in case the poller dies), and "idle:<unix ms>" after it,
// the earliest time (by the injected clock) the next run may start on any instance. Taking
// and releasing are Lua scripts (compare-and-set), so a lock that expired and was retaken by a
// peer is never released by us.
type lock struct {
	pool  *redis.Pool
	key   string
	token string
}

// tryLock takes the lock for ttl at now; outcome is lockTaken, lockBusy or lockRecent.
func tryLock(ctx context.Context, pool *redis.Pool, key string, now time.Time, ttl time.Duration) (*lock, int, error) {
	buf := make([]byte, 16)
	if _, err := rand.Read(buf); err != nil {
		return nil, 0, fmt.Errorf("lock token: %w", err)
	}
	l := &lock{pool: pool, key: key, token: hex.EncodeToString(buf)}
	conn, err := pool.GetContext(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("take lock %s: %w", key, err)
	}
	defer conn.Close()
	outcome, err := redis.Int(acquireScript.Do(conn, key, l.token, now.UnixMilli(), max(int64(ttl/time.Second), 1)))
	if err != nil {
		return nil, 0, fmt.Errorf("take lock %s: %w", key, err)
	}
	return l, outcome, nil
}

// release frees the lock if it is still ours, leaving the marker that no run should start
// before nextRun (zero: none). keep is how long the marker stays in Redis (garbage collection).
func (l *lock) release(ctx context.Context, nextRun time.Time, keep time.Duration) (released bool, err error) {
	conn, err := l.pool.GetContext(ctx)
	if err != nil {
		return false, fmt.Errorf("release lock %s: %w", l.key, err)
	}
	defer conn.Close()
	next := int64(0)
	if !nextRun.IsZero() {
		next = nextRun.UnixMilli()
	}
	n, err := redis.Int(releaseScript.Do(conn, l.key, l.token, next, max(keep.Milliseconds(), 1)))
	if err != nil {
		return false, fmt.Errorf("release lock %s: %w", l.key, err)
	}
	return n == 1, nil
}
