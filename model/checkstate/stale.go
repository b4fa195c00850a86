package checkstate

import (
	"fmt"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/schema"
)

// ArmStale schedules the check's staleness deadline (docs/decisions.md D19) within a real result's writes:
// the check is stale at e.Last+e.TTL unless another result arrives first. Results without a ttl
// write nothing here; the claim of a deadline notices them (last_update moved on) and disarms it.
func ArmStale(ops *model.Ops, keys schema.Keys, id string, e schema.StaleEntry) {
	ops.ZAdd(keys.StaleDeadlines(), e.Last+e.TTL, id)
	ops.HSet(keys.StaleChecks(), id, e.AppendJSON(make([]byte, 0, 48)))
}

// Staleness is what the surfaces show about a check's ttl.
type Staleness struct {
	TTL  int64 // 0: the check has no ttl
	Last int64 // when its latest real result was applied
	// Stale: the ttl ran out with no real result since Last.
	Stale bool
}

// IsStale judges an entry at now, given the check's last_update: a check is stale when its ttl
// ran out and no result arrived since the one that set it.
func IsStale(e schema.StaleEntry, lastUpdate, now int64) bool {
	return e.TTL > 0 && lastUpdate == e.Last && now >= e.Last+e.TTL
}

// ReadStaleness reads each check's ttl entry and last_update and judges them at now: one round
// trip per ListChunk checks.
func ReadStaleness(conn redis.Conn, keys schema.Keys, now int64, refs []model.CheckRef) ([]Staleness, error) {
	out := make([]Staleness, len(refs))
	for start := 0; start < len(refs); start += ListChunk {
		part := refs[start:min(start+ListChunk, len(refs))]
		ids := make([]any, 0, len(part)+1)
		ids = append(ids, keys.StaleChecks())
		for _, r := range part {
			ids = append(ids, r.ID())
		}
		conn.Send("HMGET", ids...)
		for _, r := range part {
			conn.Send("HGET", keys.Check(r.ID()), "last_update")
		}
		if err := conn.Flush(); err != nil {
			return nil, fmt.Errorf("read staleness: %w", err)
		}
		entries, err := redis.Values(conn.Receive())
		var firstErr error
		if err != nil {
			firstErr = fmt.Errorf("read staleness: %w", err)
		}
		for i := range part {
			v, err := conn.Receive()
			if err != nil && firstErr == nil {
				firstErr = fmt.Errorf("read last update of %s: %w", part[i].ID(), err)
			}
			if i >= len(entries) || entries[i] == nil {
				continue
			}
			raw, _ := entries[i].([]byte)
			e, err := schema.ParseStaleEntry(raw)
			if err != nil {
				continue // a damaged entry is disarmed by the next claim; it shows as no ttl
			}
			out[start+i] = Staleness{TTL: e.TTL, Last: e.Last, Stale: IsStale(e, model.Num(v), now)}
		}
		if firstErr != nil {
			return nil, firstErr
		}
	}
	return out, nil
}

// CountStale counts the stale checks among current ones, given each current check's
// current_checks score (the last real result applied: stale results do not touch it). One
// round trip for the whole stale_checks hash, which holds only checks with a ttl.
func CountStale(conn redis.Conn, keys schema.Keys, now int64, current map[string]int64) (int64, error) {
	all, err := redis.StringMap(conn.Do("HGETALL", keys.StaleChecks()))
	if err != nil {
		return 0, fmt.Errorf("count stale checks: %w", err)
	}
	var n int64
	for id, raw := range all {
		last, ok := current[id]
		if !ok {
			continue
		}
		if e, err := schema.ParseStaleEntry([]byte(raw)); err == nil && IsStale(e, last, now) {
			n++
		}
	}
	return n, nil
}
