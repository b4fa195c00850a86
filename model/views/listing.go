package views

import (
	"errors"
	"fmt"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/schema"
)

// Read-only listings of checks for the on-call views (`flapjack status`, `flapjack checks`):
// which checks fail, which are current, which entities carry a tag, when checks last changed.
// Each is one round trip (or one per ListChunk checks), never one per check, and none uses KEYS
// or SCAN.

// FailedCheck is a member of failed_checks with its score: the time the check last changed into
// a failing state (docs/flapjack-1x.md 2.2).
type FailedCheck struct {
	model.CheckRef
	Since int64
}

// RecentFailedChecks returns the limit most recent members of failed_checks, newest first (ties
// in Redis's order: check id descending), and how many members there are, in one round trip. A
// negative limit returns every member. Members that are not ENTITY:CHECK are skipped (they still
// count in total).
func RecentFailedChecks(conn redis.Conn, keys schema.Keys, limit int) (failed []FailedCheck, total int64, err error) {
	stop := limit - 1
	if limit < 0 {
		stop = -1
	}
	conn.Send("ZCARD", keys.FailedChecks())
	if limit != 0 {
		conn.Send("ZREVRANGE", keys.FailedChecks(), 0, stop, "WITHSCORES")
	}
	if err := conn.Flush(); err != nil {
		return nil, 0, fmt.Errorf("list failing checks: %w", err)
	}
	total, err = redis.Int64(conn.Receive())
	if err != nil {
		return nil, 0, fmt.Errorf("count failing checks: %w", err)
	}
	if limit == 0 {
		return nil, total, nil
	}
	pairs, err := redis.Strings(conn.Receive())
	if err != nil {
		return nil, 0, fmt.Errorf("list failing checks: %w", err)
	}
	failed = make([]FailedCheck, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		entity, check, ok := schema.SplitCheckID(pairs[i])
		if !ok {
			continue
		}
		since, _ := model.OptNum([]byte(pairs[i+1]))
		failed = append(failed, FailedCheck{CheckRef: model.CheckRef{Entity: entity, Check: check}, Since: since})
	}
	return failed, total, nil
}

// EntitiesTagged reports which of the named entities carry tag (their id is a member of
// entity_tag:TAG; ids are looked up as EntityID does), in one round trip. Entities without an
// id carry no tags.
func EntitiesTagged(conn redis.Conn, keys schema.Keys, tag string, entities []string) (map[string]bool, error) {
	conn.Send("SMEMBERS", keys.EntityTag(tag))
	for _, e := range entities {
		conn.Send("HGET", keys.EntityIDsByName(), e)
		conn.Send("GET", keys.EntityID(e))
	}
	if err := conn.Flush(); err != nil {
		return nil, fmt.Errorf("entities tagged %s: %w", tag, err)
	}
	members, err := redis.Strings(conn.Receive())
	if err != nil {
		// Drain the pipelined replies so the connection stays usable.
		for range entities {
			conn.Receive()
			conn.Receive()
		}
		return nil, fmt.Errorf("entities tagged %s: %w", tag, err)
	}
	ids := make(map[string]bool, len(members))
	for _, m := range members {
		ids[m] = true
	}
	out := make(map[string]bool, len(entities))
	var firstErr error
	for _, e := range entities {
		byName, err1 := redis.String(conn.Receive())
		byKey, err2 := redis.String(conn.Receive())
		for _, err := range []error{err1, err2} {
			if err != nil && !errors.Is(err, redis.ErrNil) && firstErr == nil {
				firstErr = fmt.Errorf("entity id of %s: %w", e, err)
			}
		}
		id := byName
		if id == "" {
			id = byKey
		}
		if id != "" && ids[id] {
			out[e] = true
		}
	}
	if firstErr != nil {
		return nil, firstErr
	}
	return out, nil
}

// LastChanges reads each check's last state change (check:ID last_change; 0 when absent), one
// round trip per ListChunk checks.
func LastChanges(conn redis.Conn, keys schema.Keys, refs []model.CheckRef) ([]int64, error) {
	out := make([]int64, len(refs))
	for start := 0; start < len(refs); start += checkstate.ListChunk {
		part := refs[start:min(start+checkstate.ListChunk, len(refs))]
		for _, r := range part {
			conn.Send("HGET", keys.Check(r.ID()), "last_change")
		}
		if err := conn.Flush(); err != nil {
			return nil, fmt.Errorf("read last changes: %w", err)
		}
		var firstErr error
		for i, r := range part {
			v, err := conn.Receive()
			if err != nil && firstErr == nil {
				firstErr = fmt.Errorf("read last change of %s: %w", r.ID(), err)
			}
			out[start+i] = model.Num(v)
		}
		if firstErr != nil {
			return nil, firstErr
		}
	}
	return out, nil
}
