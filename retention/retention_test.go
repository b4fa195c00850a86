package retention

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/schema"
)

const day = int64(86400)

func TestSweepTrimsByAgeAndCountAndKeepsTheCurrentState(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	k := schema.NewKeys("")
	now := int64(1_800_000_000)
	id := "web-01:HTTP"
	// 60 state changes, one a day (the newest today), notifications and maintenance as old
	for i := int64(0); i < 60; i++ {
		ts := now - (59-i)*day
		db.Do(t, "RPUSH", k.States(id), ts)
		db.Do(t, "ZADD", k.SortedStateTimestamps(id), ts, ts)
		db.Do(t, "SET", k.StateAt(id, ts), "critical")
		db.Do(t, "SET", k.SummaryAt(id, ts), "s")
		db.Do(t, "RPUSH", k.NotificationHistory(id, "problem"), ts)
		db.Do(t, "HSET", k.Actions(id), ts, "acknowledgement")
	}
	for _, w := range [][2]int64{{now - 50*day, 3600}, {now - 2*day, 3600}, {now + day, 60}} {
		db.Do(t, "ZADD", k.Maintenances(schema.Scheduled, id), w[1], w[0])
		db.Do(t, "ZADD", k.SortedMaintenanceTimestamps(schema.Scheduled, id), w[0], w[0])
		db.Do(t, "SET", k.MaintenanceSummary(schema.Scheduled, id, w[0]), "w")
	}
	db.Do(t, "ZADD", k.AllChecks(), now, id)
	s := &Sweeper{Pool: db.Pool, Keys: k, Policy: Policy{MaxAge: 30 * 24 * time.Hour, MaxEntries: 20},
		Clock: clock.NewFake(time.Unix(now, 0)), Log: zap.NewNop()}
	st, err := s.Sweep(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Checks != 1 || st.Deleted == 0 {
		t.Fatalf("stats %+v", st)
	}
	count := func(cmd, key string) int {
		n, err := redis.Int(db.Do(t, cmd, key), nil)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count("ZCARD", k.SortedStateTimestamps(id)); n != 20 {
		t.Fatalf("%d state changes kept, want the newest 20", n)
	}
	if n := count("LLEN", k.States(id)); n != 20 {
		t.Fatalf("states list holds %d, want 20", n)
	}
	if v := db.Do(t, "GET", k.StateAt(id, now-20*day)); v != nil {
		t.Fatal("per-timestamp key of a trimmed change survived")
	}
	if v := db.Do(t, "GET", k.StateAt(id, now)); v == nil {
		t.Fatal("the current state's record was trimmed")
	}
	if n := count("LLEN", k.NotificationHistory(id, "problem")); n != 31 {
		t.Fatalf("%d notification records kept, want the 31 not older than 30 days", n)
	}
	if n := count("HLEN", k.Actions(id)); n != 31 {
		t.Fatalf("%d actions kept, want 31", n)
	}
	if n := count("ZCARD", k.Maintenances(schema.Scheduled, id)); n != 2 {
		t.Fatalf("%d maintenance windows kept, want the recent and the future one", n)
	}
	if v := db.Do(t, "GET", k.MaintenanceSummary(schema.Scheduled, id, now-50*day)); v != nil {
		t.Fatal("summary of a trimmed window survived")
	}
	// a second sweep finds nothing more
	st, _ = s.Sweep(context.Background())
	if st.Deleted != 0 {
		t.Fatalf("second sweep deleted %d", st.Deleted)
	}
}

func TestOldQuietCheckKeepsItsOnlyStateChange(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	k := schema.NewKeys("")
	now := int64(1_800_000_000)
	id := "quiet:check"
	ts := now - 400*day
	db.Do(t, "RPUSH", k.States(id), ts)
	db.Do(t, "ZADD", k.SortedStateTimestamps(id), ts, ts)
	db.Do(t, "SET", k.StateAt(id, ts), "ok")
	db.Do(t, "ZADD", k.AllChecks(), now, id)
	s := &Sweeper{Pool: db.Pool, Keys: k, Policy: Policy{MaxAge: 90 * 24 * time.Hour, MaxEntries: 10},
		Clock: clock.NewFake(time.Unix(now, 0)), Log: zap.NewNop()}
	if _, err := s.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	if v := db.Do(t, "GET", k.StateAt(id, ts)); v == nil {
		t.Fatal("the only state change was removed")
	}
}

func TestSweepVisitsEveryCheckAndForgetsExpiredArchives(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	k := schema.NewKeys("")
	now := int64(1_800_000_000)
	for i := 0; i < 1234; i++ {
		db.Do(t, "ZADD", k.AllChecks(), now-int64(i), fmt.Sprintf("e%d:c", i))
	}
	db.Do(t, "RPUSH", "events_archive:2026010100", "x")
	db.Do(t, "SADD", k.KnownEventsArchiveKeys(), "events_archive:2026010100", "events_archive:2025010100")
	s := &Sweeper{Pool: db.Pool, Keys: k, Policy: Policy{MaxAge: time.Hour}, Clock: clock.NewFake(time.Unix(now, 0)), Log: zap.NewNop()}
	st, err := s.Sweep(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Checks < 1234 {
		t.Fatalf("visited %d of 1234 checks", st.Checks)
	}
	known, _ := redis.Strings(db.Do(t, "SMEMBERS", k.KnownEventsArchiveKeys()), nil)
	if len(known) != 1 || known[0] != "events_archive:2026010100" {
		t.Fatalf("archive index %v", known)
	}
}
