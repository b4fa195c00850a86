package inventory

import (
	"context"
	_ "embed"
	"strconv"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/redisread"
	"github.com/flapjackgo/flapjack/internal/strset"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/schema"
)

var (
	//go:embed scripts/rename_entity.lua
	renameSource string
	renameScript = redis.NewScript(0, renameSource)
)

// RenameEntity renames entity id to newName (lower-cased, docs/decisions.md D14), as Flapjack 1.6's
// PATCH /entities/:id and POST /entities do (docs/flapjack-1x.md A.6): the data of its checks moves from
// the old name to the new one, and when another entity has newName already the two are merged
// (see planMove). The entity id keeps its contacts_for links; a merged-away entity's id loses
// its name. now is the caller's clock; the move itself reads none (TTLs move with the keys).
// A missing entity is a *roster.NotFoundError.
func RenameEntity(ctx context.Context, conn redis.Conn, keys schema.Keys, id, newName string, now time.Time) error {
	_ = now
	return UpdateEntities(ctx, conn, keys, []string{id}, EntityChange{Name: newName})
}

// planMove WATCHes and reads what entity old holds and queues, for the same MULTI/EXEC as the
// name writes, the moves of the rename script that put it under name (Flapjack 1.6
// Entity.rename, or Entity.merge when name holds checks already):
//
//   - per check C of all_checks:OLD and current_checks:OLD: check:OLD:C (the newer by
//     last_update wins a merge) with its failed_checks membership; OLD:C:states and
//     sorted_state_timestamps (merged in time order / union); the per-timestamp state, summary,
//     details, count and check_latency keys (the new name's kept on a clash); OLD:C:actions;
//     both kinds' maintenances and sorted timestamps (union), current-maintenance keys (the one
//     expiring last kept, with its TTL) and window summaries; last_KIND_notification (the latest
//     kept) and KIND_notifications lists; all_checks membership; the acknowledgement hash
//     entries (check_hashes_by_id, checks_by_hash); check_tag:TAG memberships;
//   - all_checks:OLD and current_checks:OLD (union), current_entities membership (latest
//     score).
func (t *txn) planMove(old, name string) error {
	k := t.keys
	var b redisread.Batch
	t.Watch(&b, k.AllChecksFor(old), k.CurrentChecks(old), k.KnownCheckTags())
	all, cur, tags := b.Add("ZRANGE", k.AllChecksFor(old), 0, -1), b.Add("ZRANGE", k.CurrentChecks(old), 0, -1), b.Add("SMEMBERS", k.KnownCheckTags())
	if err := b.Run(t.ctx, t.conn); err != nil {
		return err
	}
	checks := strset.Unique(append(b.Strs(all), b.Strs(cur)...))
	knownTags := b.Strs(tags)

	kinds := []string{schema.Scheduled, schema.Unscheduled}
	var d redisread.Batch
	type reads struct{ states, sorted int }
	rs := make([]reads, len(checks))
	maint := make([][]int, len(checks))
	for i, c := range checks {
		src, dst := schema.CheckID(old, c), schema.CheckID(name, c)
		watch := []string{k.Check(src), k.Check(dst), k.States(src), k.SortedStateTimestamps(src)}
		for _, kind := range kinds {
			watch = append(watch, k.Maintenances(kind, src))
		}
		t.Watch(&d, watch...)
		rs[i] = reads{d.Add("LRANGE", k.States(src), 0, -1), d.Add("ZRANGE", k.SortedStateTimestamps(src), 0, -1)}
		for _, kind := range kinds {
			maint[i] = append(maint[i], d.Add("ZRANGE", k.Maintenances(kind, src), 0, -1))
		}
	}
	if err := d.Run(t.ctx, t.conn); err != nil {
		return err
	}

	mv := func(args ...any) { t.RunFirst(renameScript, args...) }
	key := func(kind, src, dst string) { mv("key", kind, src, dst) }
	for i, c := range checks {
		src, dst := schema.CheckID(old, c), schema.CheckID(name, c)
		mv("check", k.Check(src), k.Check(dst), k.FailedChecks(), src, dst)
		key("list", k.States(src), k.States(dst))
		key("zset", k.SortedStateTimestamps(src), k.SortedStateTimestamps(dst))
		for _, s := range strset.Unique(append(d.Strs(rs[i].states), d.Strs(rs[i].sorted)...)) {
			ts, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				continue // not a timestamp: no per-timestamp keys to find
			}
			for _, at := range []func(string, int64) string{k.StateAt, k.SummaryAt, k.DetailsAt, k.CountAt, k.CheckLatencyAt} {
				key("keep", at(src, ts), at(dst, ts))
			}
		}
		key("hash", k.Actions(src), k.Actions(dst))
		// whoever a schedule alerted for the failure still hears of its recovery
		key("hash", k.ScheduleAlerted(src), k.ScheduleAlerted(dst))
		key("keep", k.Explain(src), k.Explain(dst)) // on a merge the destination's trail is kept
		for j, kind := range kinds {
			key("zset", k.Maintenances(kind, src), k.Maintenances(kind, dst))
			key("zset", k.SortedMaintenanceTimestamps(kind, src), k.SortedMaintenanceTimestamps(kind, dst))
			key("ttl", k.CurrentMaintenance(kind, src), k.CurrentMaintenance(kind, dst))
			for _, s := range d.Strs(maint[i][j]) {
				if start, err := strconv.ParseInt(s, 10, 64); err == nil {
					key("keep", k.MaintenanceSummary(kind, src, start), k.MaintenanceSummary(kind, dst, start))
				}
			}
		}
		for _, kind := range checkstate.KindNames {
			key("max", k.LastNotification(src, kind), k.LastNotification(dst, kind))
			key("list", k.NotificationHistory(src, kind), k.NotificationHistory(dst, kind))
		}
		mv("zmember", k.AllChecks(), src, dst)
		mv("ack", k.CheckHashesByID(), k.ChecksByHash(), src, dst, schema.AckHash(src), schema.AckHash(dst))
		for _, tag := range knownTags {
			mv("smember", k.CheckTag(tag), src, dst)
		}
	}
	key("zset", k.AllChecksFor(old), k.AllChecksFor(name))
	key("zset", k.CurrentChecks(old), k.CurrentChecks(name))
	mv("zmember", k.CurrentEntities(), old, name)
	return nil
}
