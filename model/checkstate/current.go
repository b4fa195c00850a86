package checkstate

import (
	"fmt"
	"slices"
	"sort"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/schema"
)

// ListChunk bounds how many commands one pipelined flush carries.
const ListChunk = 1000

// CurrentChecks lists an entity's current (enabled) checks, sorted (current_checks:ENTITY).
func CurrentChecks(conn redis.Conn, keys schema.Keys, entity string) ([]string, error) {
	m, err := CurrentChecksOf(conn, keys, []string{entity})
	if err != nil {
		return nil, err
	}
	return m[entity], nil
}

// CurrentChecksOf is CurrentChecks for several entities in one round trip; entities without
// current checks are absent from the map.
func CurrentChecksOf(conn redis.Conn, keys schema.Keys, entities []string) (map[string][]string, error) {
	for _, e := range entities {
		conn.Send("ZRANGE", keys.CurrentChecks(e), 0, -1)
	}
	if err := conn.Flush(); err != nil {
		return nil, fmt.Errorf("current checks: %w", err)
	}
	out := make(map[string][]string, len(entities))
	for _, e := range entities {
		v, err := redis.Strings(conn.Receive())
		if err != nil {
			return nil, fmt.Errorf("current checks of %s: %w", e, err)
		}
		if len(v) > 0 {
			sort.Strings(v)
			out[e] = v
		}
	}
	return out, nil
}

// AllCurrentChecks lists every current (enabled) check: the members of current_checks:ENTITY for
// each entity of current_entities, sorted by entity then check, in two round trips.
func AllCurrentChecks(conn redis.Conn, keys schema.Keys) ([]model.CheckRef, error) {
	entities, err := redis.Strings(conn.Do("ZRANGE", keys.CurrentEntities(), 0, -1))
	if err != nil {
		return nil, fmt.Errorf("list current entities: %w", err)
	}
	byEntity, err := CurrentChecksOf(conn, keys, entities)
	if err != nil {
		return nil, err
	}
	var out []model.CheckRef
	for _, e := range sortedKeys(byEntity) {
		for _, c := range byEntity[e] {
			out = append(out, model.CheckRef{Entity: e, Check: c})
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
