// Package retention owns bounded memory (SPEC 4.12): it trims each check's history — state
// changes, notification records, maintenance windows, actions — to an age and a count, walking
// the all_checks index in pages and doing bounded work per script call, never KEYS.
package retention

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/schema"
)

var (
	//go:embed scripts/trim_check.lua
	trimSource string
	trimScript = redis.NewScript(0, trimSource)
	//go:embed scripts/unlock.lua
	unlockSource string
	unlockScript = redis.NewScript(1, unlockSource)
)

// Policy is how much history is kept.
type Policy struct {
	MaxAge     time.Duration // 0 = no age limit
	MaxEntries int           // state changes per check; 0 = no limit
}

// Sweeper trims every check's history.
type Sweeper struct {
	Pool   *redis.Pool
	Keys   schema.Keys
	Policy Policy
	Clock  clock.Clock
	Log    *zap.Logger
	// Only, when set, limits a sweep to these check ids (flapjack purge --check).
	Only []string
}

// Stats tells what a sweep removed.
type Stats struct {
	Checks  int
	Deleted int64
}

const (
	pageSize       = 200
	budgetPerCall  = 1000
	lockTTLSeconds = 600
)

// Sweep trims every check once.
func (s *Sweeper) Sweep(ctx context.Context) (Stats, error) {
	var st Stats
	if s.Policy.MaxAge <= 0 && s.Policy.MaxEntries <= 0 {
		return st, nil
	}
	conn, err := s.Pool.GetContext(ctx)
	if err != nil {
		return st, fmt.Errorf("retention sweep: %w", err)
	}
	defer conn.Close()
	cutoff := int64(0)
	if s.Policy.MaxAge > 0 {
		cutoff = s.Clock.Now().Add(-s.Policy.MaxAge).Unix()
	}
	if len(s.Only) > 0 {
		return st, s.trimAll(ctx, conn, s.Only, cutoff, &st)
	}
	// ZSCAN, not ranges by rank: events re-score all_checks all the time, and a cursor still
	// visits every check present for the whole sweep (one may come twice, which is harmless).
	cursor := "0"
	for {
		if ctx.Err() != nil {
			return st, ctx.Err()
		}
		reply, err := redis.Values(conn.Do("ZSCAN", s.Keys.AllChecks(), cursor, "COUNT", pageSize))
		if err != nil {
			return st, fmt.Errorf("retention sweep: list checks: %w", err)
		}
		cursor, _ = redis.String(reply[0], nil)
		pairs, _ := redis.Strings(reply[1], nil)
		ids := make([]string, 0, len(pairs)/2)
		for i := 0; i < len(pairs); i += 2 {
			ids = append(ids, pairs[i])
		}
		if err := s.trimAll(ctx, conn, ids, cutoff, &st); err != nil {
			return st, err
		}
		if cursor == "0" {
			return st, s.forgetExpiredArchives(conn)
		}
	}
}

// forgetExpiredArchives removes from known_events_archive_keys the archive lists that have
// expired (reference §1.1), so the index does not grow for ever.
func (s *Sweeper) forgetExpiredArchives(conn redis.Conn) error {
	known, err := redis.Strings(conn.Do("SMEMBERS", s.Keys.KnownEventsArchiveKeys()))
	if err != nil || len(known) == 0 {
		return err
	}
	for _, k := range known {
		conn.Send("EXISTS", k)
	}
	if err := conn.Flush(); err != nil {
		return err
	}
	var gone []any
	for _, k := range known {
		n, err := redis.Int(conn.Receive())
		if err != nil {
			return err
		}
		if n == 0 {
			gone = append(gone, k)
		}
	}
	if len(gone) == 0 {
		return nil
	}
	_, err = conn.Do("SREM", append([]any{s.Keys.KnownEventsArchiveKeys()}, gone...)...)
	return err
}

func (s *Sweeper) trimAll(ctx context.Context, conn redis.Conn, ids []string, cutoff int64, st *Stats) error {
	for _, id := range ids {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		n, err := s.trimCheck(conn, id, cutoff)
		if err != nil {
			return err
		}
		st.Checks++
		st.Deleted += n
	}
	return nil
}

func (s *Sweeper) trimCheck(conn redis.Conn, id string, cutoff int64) (int64, error) {
	k := s.Keys
	args := []any{cutoff, s.Policy.MaxEntries, k.StateHistoryPrefix(id), budgetPerCall,
		k.SortedStateTimestamps(id), k.States(id), k.Actions(id),
		k.Maintenances(schema.Scheduled, id), k.SortedMaintenanceTimestamps(schema.Scheduled, id),
		k.Maintenances(schema.Unscheduled, id), k.SortedMaintenanceTimestamps(schema.Unscheduled, id),
		schema.Scheduled + "_maintenance:summary", schema.Unscheduled + "_maintenance:summary"}
	for _, kind := range model.KindNames {
		args = append(args, k.NotificationHistory(id, kind))
	}
	var total int64
	for {
		reply, err := redis.Int64s(trimScript.Do(conn, args...))
		if err != nil {
			return total, fmt.Errorf("trim history of %s: %w", id, err)
		}
		total += reply[0]
		if reply[1] == 0 {
			return total, nil
		}
	}
}

// Run sweeps every interval until ctx ends; with several processes, a lock lets one sweep at a
// time.
func (s *Sweeper) Run(ctx context.Context, interval time.Duration) {
	if interval <= 0 || (s.Policy.MaxAge <= 0 && s.Policy.MaxEntries <= 0) {
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !s.lock(ctx) {
			continue
		}
		started := time.Now()
		st, err := s.Sweep(ctx)
		s.unlock()
		if err != nil {
			s.Log.Error("retention sweep failed; retrying next interval", zap.Error(err))
			continue
		}
		s.Log.Info("retention sweep done", zap.Int("checks", st.Checks), zap.Int64("deleted", st.Deleted),
			zap.Duration("took", time.Since(started)))
	}
}

func (s *Sweeper) lock(ctx context.Context) bool {
	conn, err := s.Pool.GetContext(ctx)
	if err != nil {
		return false
	}
	defer conn.Close()
	_, err = redis.String(conn.Do("SET", s.Keys.RetentionLock(), queue.LocalIdentity().ID(), "NX", "EX", lockTTLSeconds))
	return err == nil
}

func (s *Sweeper) unlock() {
	conn := s.Pool.Get()
	defer conn.Close()
	unlockScript.Do(conn, s.Keys.RetentionLock(), queue.LocalIdentity().ID())
}
