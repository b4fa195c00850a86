package events

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/schema"
)

// TestKeeperKeepsRejectionsBesideTheExecutives: a receiver's rejected lines land in the hour's
// events_rejected list with their reasons and source at the same position of
// events_rejected_reasons, both expiring; kept while Redis was away once it answers again.
func TestKeeperKeepsRejectionsBesideTheExecutives(t *testing.T) {
	t.Parallel()
	srv := testredis.StartServer(t)
	db := srv.NewDB(t)
	keys := schema.NewKeys("")
	at := time.Date(2026, 11, 25, 7, 30, 0, 0, time.UTC)
	core, logs := observer.New(zapcore.WarnLevel)
	k := NewKeeper(db.Pool, keys, clock.NewFake(at), 7*24*time.Hour, zap.New(core))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = k.Run(ctx) }()
	defer func() { cancel(); <-done }()

	k.Keep(checkstate.Rejected{Source: "nagios", Input: "[SERVICEPERFDATA]\tbroken", Reasons: []string{"line 1: 3 fields, want 9"}})
	waitLen(t, db, keys.EventsRejected(at), 1)
	srv.Kill()
	k.Keep(checkstate.Rejected{Source: "nsca", Input: "[1795575299] PROCESS_SERVICE_CHECK_RESULT;web-01;DISK;7;x", Reasons: []string{"return code 7"}})
	// The server comes back only once the keeper has met the outage (a write failed).
	for deadline := time.Now().Add(10 * time.Second); logs.FilterMessage("rejected inputs not kept in Redis yet; retrying").Len() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the keeper never met the outage")
		}
	}
	srv.Restart(t) // an empty server: what was kept before the outage is gone with it
	waitLen(t, db, keys.EventsRejected(at), 1)

	raw, _ := redis.Strings(db.Do(t, "LRANGE", keys.EventsRejected(at), 0, -1), nil)
	whys, _ := redis.Strings(db.Do(t, "LRANGE", keys.EventsRejectedReasons(at), 0, -1), nil)
	if len(whys) != 1 || len(raw) != 1 || raw[0] != "[1795575299] PROCESS_SERVICE_CHECK_RESULT;web-01;DISK;7;x" {
		t.Fatalf("events_rejected %q, reasons %q", raw, whys)
	}
	var newest schema.RejectedReason
	if err := json.Unmarshal([]byte(whys[0]), &newest); err != nil {
		t.Fatal(err)
	}
	if newest.Source != "nsca" || newest.Time != at.Unix() || newest.Event != raw[0] || newest.Reasons[0] != "return code 7" {
		t.Errorf("reason record %+v", newest)
	}
	for _, key := range []string{keys.EventsRejected(at), keys.EventsRejectedReasons(at)} {
		if ttl, _ := redis.Int64(db.Do(t, "TTL", key), nil); ttl <= 0 || ttl > 7*24*3600 {
			t.Errorf("%s TTL %d, want up to 7 days", key, ttl)
		}
	}
}

func waitLen(t *testing.T, db *testredis.DB, key string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c := db.Pool.Get()
		got, _ := redis.Int(c.Do("LLEN", key))
		c.Close()
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s holds %d, want %d", key, got, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
