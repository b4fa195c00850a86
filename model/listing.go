package model

import (
	"errors"
	"fmt"
	"slices"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/schema"
)

// Read-only listings of checks for the on-call views (`flapjack status`, `flapjack checks`):
// which checks fail, which are current, which entities carry a tag, when checks last changed.
// Each is one round trip (or one per listChunk checks), never one per check, and none uses KEYS
// or SCAN.

// listChunk bounds how many commands one pipelined flush carries.
const listChunk = 1000

// FailedCheck is a member of failed_checks with its score: the time the check last changed into
// a failing state (docs/flapjack-1x.md 2.2).
type FailedCheck struct {
	CheckRef
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
		since, _ := optNum([]byte(pairs[i+1]))
		failed = append(failed, FailedCheck{CheckRef: CheckRef{Entity: entity, Check: check}, Since: since})
	}
	return failed, total, nil
}

// AllCurrentChecks lists every current (enabled) check: the members of current_checks:ENTITY for
// each entity of current_entities, sorted by entity then check, in two round trips.
func AllCurrentChecks(conn redis.Conn, keys schema.Keys) ([]CheckRef, error) {
	entities, err := redis.Strings(conn.Do("ZRANGE", keys.CurrentEntities(), 0, -1))
	if err != nil {
		return nil, fmt.Errorf("list current entities: %w", err)
	}
	byEntity, err := CurrentChecksOf(conn, keys, entities)
	if err != nil {
		return nil, err
	}
	var out []CheckRef
	for _, e := range sortedKeys(byEntity) {
		for _, c := range byEntity[e] {
			out = append(out, CheckRef{Entity: e, Check: c})
		}
	}
	return out, nil
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
// round trip per listChunk checks.
func LastChanges(conn redis.Conn, keys schema.Keys, refs []CheckRef) ([]int64, error) {
	out := make([]int64, len(refs))
	for start := 0; start < len(refs); start += listChunk {
		part := refs[start:min(start+listChunk, len(refs))]
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
			out[start+i] = num(v)
		}
		if firstErr != nil {
			return nil, firstErr
		}
	}
	return out, nil
}

func sortedKeys(m map[string][]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
