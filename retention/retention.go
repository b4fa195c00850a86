// Package retention owns bounded memory (docs/decisions.md D12): it trims each check's history — state
// changes, notification records, maintenance windows, actions — to an age and a count, walking
// the all_checks index in pages and doing bounded work per script call, never KEYS; it forgets
// stopped escalation ladders once their policy's restart window has passed, and delivery log
// records by age and count (docs/decisions.md D24).
package retention

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/schema"
)

var (
	//go:embed scripts/trim_check.lua
	trimSource string
	trimScript = redis.NewScript(0, trimSource)
	//go:embed scripts/forget_ladders.lua
	forgetLaddersSource string
	forgetLaddersScript = redis.NewScript(0, forgetLaddersSource)
	//go:embed scripts/unlock.lua
	unlockSource string
	unlockScript = redis.NewScript(1, unlockSource)
)

// Policy is how much history is kept.
type Policy struct {
	MaxAge     time.Duration // 0 = no age limit
	MaxEntries int           // state changes per check; 0 = no limit
	// MaxDeliveries bounds the delivery log (records of all checks); 0 = no count limit. The
	// log is also trimmed by MaxAge.
	MaxDeliveries int
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
	Ladders int64 // stopped escalation ladders forgotten
	// Deliveries are delivery log records forgotten (older than MaxAge or beyond MaxDeliveries).
	Deliveries int64
}

const (
	pageSize       = 200
	budgetPerCall  = 1000
	lockTTLSeconds = 600
	ladderBatch    = 200
)

// Sweep trims every check once (with Only, those checks) and, sweeping everything, forgets the
// stopped escalation ladders whose restart window has passed.
func (s *Sweeper) Sweep(ctx context.Context) (Stats, error) {
	var st Stats
	conn, err := s.Pool.GetContext(ctx)
	if err != nil {
		return st, fmt.Errorf("retention sweep: %w", err)
	}
	defer conn.Close()
	cutoff := int64(0)
	if s.Policy.MaxAge > 0 {
		cutoff = s.Clock.Now().Add(-s.Policy.MaxAge).Unix()
	}
	if len(s.Only) == 0 {
		if st.Ladders, err = s.forgetLadders(ctx, conn); err != nil {
			return st, err
		}
		if st.Deliveries, err = s.forgetDeliveries(ctx, conn, cutoff); err != nil {
			return st, err
		}
	}
	if s.Policy.MaxAge <= 0 && s.Policy.MaxEntries <= 0 {
		return st, nil
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
// expired (docs/flapjack-1x.md 1.1), so the index does not grow for ever.
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
	for _, kind := range checkstate.KindNames {
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
// time. Without a history limit it still forgets stopped escalation ladders.
func (s *Sweeper) Run(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
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
			zap.Int64("escalation_ladders", st.Ladders), zap.Int64("deliveries", st.Deliveries), zap.Duration("took", time.Since(started)))
	}
}

// forgetLadders removes the stopped ladders whose time has come in escalations_stopped, a
// batch per script call: the sorted set yields only those, so the cost follows what is removed.
func (s *Sweeper) forgetLadders(ctx context.Context, conn redis.Conn) (int64, error) {
	now := s.Clock.Now().Unix()
	var total int64
	for ctx.Err() == nil {
		members, err := redis.Strings(conn.Do("ZRANGEBYSCORE", s.Keys.EscalationsStopped(), "-inf", now, "LIMIT", 0, ladderBatch))
		if err != nil {
			return total, fmt.Errorf("retention: read stopped escalations: %w", err)
		}
		if len(members) == 0 {
			return total, nil
		}
		type ref struct{ member, policy, check string }
		var refs []ref
		var ids []any
		for _, m := range members {
			policy, check, ok := schema.ParseEscalationMember(m)
			if !ok {
				// never ours: drop it from the index so it is not read again
				if _, err := conn.Do("ZREM", s.Keys.EscalationsStopped(), m); err != nil {
					return total, fmt.Errorf("retention: drop index entry %q: %w", m, err)
				}
				s.Log.Error("escalations_stopped member is not POLICY:ENTITY:CHECK; removed", zap.String("member", m))
				continue
			}
			refs = append(refs, ref{m, policy, check})
			ids = append(ids, policy)
		}
		if len(refs) == 0 {
			continue
		}
		raws, err := redis.Values(conn.Do("HMGET", append([]any{s.Keys.EscalationPolicies()}, ids...)...))
		if err != nil {
			return total, fmt.Errorf("retention: read escalation policies: %w", err)
		}
		args := []any{now, s.Keys.EscalationsStopped(), s.Keys.EscalationsDue(), len(refs)}
		for i, r := range refs {
			window := int64(0) // the policy is gone: nothing can resume the ladder
			if raw, _ := redis.String(raws[i], nil); raw != "" {
				window = roster.DefaultRestartAfter
				if ps, _ := roster.DecodeEscalationPolicies(map[string]string{r.policy: raw}); len(ps) == 1 {
					window = ps[0].RestartWindow()
				}
			}
			args = append(args, r.member, s.Keys.EscalationLadder(r.policy, r.check), s.Keys.CheckEscalations(r.check),
				s.Keys.Check(r.check), r.policy, window)
		}
		n, err := redis.Int64(forgetLaddersScript.Do(conn, args...))
		if err != nil {
			return total, fmt.Errorf("retention: forget stopped escalations: %w", err)
		}
		total += n
	}
	return total, ctx.Err()
}

// forgetDeliveries removes the delivery log records queued before cutoff (0: none by age) and
// the oldest beyond Policy.MaxDeliveries, a batch per atomic write: each record goes together
// with its entries in the three indexes, so a reader never finds an index entry whose record
// was forgotten for good (a read skipping a record removed meanwhile is harmless).
func (s *Sweeper) forgetDeliveries(ctx context.Context, conn redis.Conn, cutoff int64) (int64, error) {
	var total int64
	for ctx.Err() == nil {
		ids, err := s.expiredDeliveries(conn, cutoff)
		if err != nil || len(ids) == 0 {
			return total, err
		}
		for _, id := range ids {
			if err := conn.Send("HMGET", s.Keys.Delivery(id), schema.DeliveryFieldCheck, schema.DeliveryFieldContact); err != nil {
				return total, fmt.Errorf("retention: read delivery records: %w", err)
			}
		}
		if err := conn.Flush(); err != nil {
			return total, fmt.Errorf("retention: read delivery records: %w", err)
		}
		var ops model.Ops
		for _, id := range ids {
			h, err := redis.Strings(conn.Receive())
			if err != nil {
				return total, fmt.Errorf("retention: read delivery record %s: %w", id, err)
			}
			ops.Del(s.Keys.Delivery(id))
			ops.ZRem(s.Keys.Deliveries(), id)
			if h[0] != "" {
				ops.ZRem(s.Keys.CheckDeliveries(h[0]), id)
			}
			if h[1] != "" {
				ops.ZRem(s.Keys.ContactDeliveries(h[1]), id)
			}
		}
		ops.Coalesce()
		if _, err := model.Apply(conn, model.ApplyTarget{}, []model.Record{{Ops: ops}}); err != nil {
			return total, fmt.Errorf("retention: forget delivery records: %w", err)
		}
		total += int64(len(ids))
	}
	return total, ctx.Err()
}

// expiredDeliveries is the next batch of delivery log ids to forget: the oldest beyond the
// count limit, else those queued before cutoff.
func (s *Sweeper) expiredDeliveries(conn redis.Conn, cutoff int64) ([]string, error) {
	if s.Policy.MaxDeliveries > 0 {
		n, err := redis.Int(conn.Do("ZCARD", s.Keys.Deliveries()))
		if err != nil {
			return nil, fmt.Errorf("retention: count delivery records: %w", err)
		}
		if over := n - s.Policy.MaxDeliveries; over > 0 {
			ids, err := redis.Strings(conn.Do("ZRANGE", s.Keys.Deliveries(), 0, min(over, ladderBatch)-1))
			if err != nil {
				return nil, fmt.Errorf("retention: list delivery records: %w", err)
			}
			return ids, nil
		}
	}
	if cutoff <= 0 {
		return nil, nil
	}
	ids, err := redis.Strings(conn.Do("ZRANGEBYSCORE", s.Keys.Deliveries(), "-inf", "("+strconv.FormatInt(cutoff, 10), "LIMIT", 0, ladderBatch))
	if err != nil {
		return nil, fmt.Errorf("retention: list delivery records: %w", err)
	}
	return ids, nil
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
