package inventory

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/redisread"
	"github.com/flapjackgo/flapjack/internal/strset"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/schema"
)

// Checks as Flapjack 1.x's JSON API sees them (docs/flapjack-1x.md A.7): a check exists when it is in
// all_checks:ENTITY or current_checks:ENTITY or has a check hash; enabled means in
// current_checks:ENTITY; its tags are the check_tag:TAG sets (known_tags:check_tag) holding it.

// Check is a stored check.
type Check struct {
	model.CheckRef
	EntityID string // "" when the entity has no id
	Enabled  bool
	Tags     []string // sorted
}

// NewCheck is a check to create under an entity id.
type NewCheck struct {
	EntityID, Name string
	Tags           []string
}

// CheckIDs lists every check (all_checks and the current checks of current_entities), sorted.
func CheckIDs(conn redis.Conn, keys schema.Keys) ([]model.CheckRef, error) {
	all, err := redis.Strings(conn.Do("ZRANGE", keys.AllChecks(), 0, -1))
	if err != nil {
		return nil, fmt.Errorf("list checks: %w", err)
	}
	current, err := checkstate.AllCurrentChecks(conn, keys)
	if err != nil {
		return nil, err
	}
	seen := map[model.CheckRef]bool{}
	var out []model.CheckRef
	add := func(r model.CheckRef) {
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	for _, id := range all {
		if e, c, ok := schema.SplitCheckID(id); ok {
			add(model.CheckRef{Entity: e, Check: c})
		}
	}
	for _, r := range current {
		add(r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Entity != out[j].Entity {
			return out[i].Entity < out[j].Entity
		}
		return out[i].Check < out[j].Check
	})
	return out, nil
}

// ReadChecks reads the checks of refs that exist, in the order given, each once, in two round
// trips. missingEntities are the entities of refs not found that are not known at all (no check,
// no id), for callers that tell an unknown entity from an unknown check.
func ReadChecks(ctx context.Context, conn redis.Conn, keys schema.Keys, refs []model.CheckRef) (found []Check, missingEntities map[string]bool, err error) {
	seen := map[model.CheckRef]bool{}
	var uniq []model.CheckRef
	for _, r := range refs {
		if !seen[r] {
			seen[r] = true
			uniq = append(uniq, r)
		}
	}
	var b redisread.Batch
	type reads struct{ all, current, hash int }
	at := make([]reads, len(uniq))
	for i, r := range uniq {
		at[i] = reads{b.Add("ZSCORE", keys.AllChecksFor(r.Entity), r.Check), b.Add("ZSCORE", keys.CurrentChecks(r.Entity), r.Check),
			b.Add("EXISTS", keys.Check(r.ID()))}
	}
	var entities []string
	for _, r := range uniq {
		entities = append(entities, r.Entity)
	}
	entities = strset.Unique(entities)
	type entityReads struct{ byName, key, all, current int }
	eat := map[string]entityReads{}
	for _, e := range entities {
		eat[e] = entityReads{b.Add("HGET", keys.EntityIDsByName(), e), b.Add("GET", keys.EntityID(e)),
			b.Add("ZCARD", keys.AllChecksFor(e)), b.Add("ZCARD", keys.CurrentChecks(e))}
	}
	tagsAt := b.Add("SMEMBERS", keys.KnownCheckTags())
	if err := b.Run(ctx, conn); err != nil {
		return nil, nil, err
	}
	missingEntities = map[string]bool{}
	entityID := func(e string) string {
		if id := b.Str(eat[e].byName); id != "" {
			return id
		}
		return b.Str(eat[e].key)
	}
	for i, r := range uniq {
		if b.Str(at[i].all) == "" && b.Str(at[i].current) == "" && b.Num(at[i].hash) == 0 {
			if entityID(r.Entity) == "" && b.Num(eat[r.Entity].all) == 0 && b.Num(eat[r.Entity].current) == 0 {
				missingEntities[r.Entity] = true
			}
			continue
		}
		found = append(found, Check{CheckRef: r, EntityID: entityID(r.Entity), Enabled: b.Str(at[i].current) != "", Tags: []string{}})
	}
	tags := b.Strs(tagsAt)
	sort.Strings(tags)
	if len(found) == 0 || len(tags) == 0 {
		return found, missingEntities, nil
	}
	setKeys := make([]string, len(tags))
	for i, t := range tags {
		setKeys[i] = keys.CheckTag(t)
	}
	ids := make([]string, len(found))
	for i, c := range found {
		ids[i] = c.ID()
	}
	_, members, err := redisread.Memberships(ctx, conn, setKeys, ids)
	if err != nil {
		return nil, nil, err
	}
	for i := range found {
		for j, t := range tags {
			if members[j][ids[i]] {
				found[i].Tags = append(found[i].Tags, t)
			}
		}
	}
	return found, missingEntities, nil
}

// CreateChecks makes checks current under their entities (all_checks, current_checks:ENTITY,
// current_entities) with their tags, at now. All or nothing: an entity id that is not known is
// a *roster.NotFoundError, an empty name or bad tag a *roster.ValidationError. It returns the check ids.
func CreateChecks(ctx context.Context, conn redis.Conn, keys schema.Keys, checks []NewCheck, now time.Time) ([]string, error) {
	var k roster.Checker
	var entityIDs []string
	for i, c := range checks {
		k.Prefix = roster.Index("checks", i)
		k.Check("entity_id", roster.IDProblem(c.EntityID))
		k.Check("name", roster.IDProblem(c.Name))
		for j, t := range c.Tags {
			k.Check(roster.Index("tags", j), roster.TagProblem(t))
		}
		entityIDs = append(entityIDs, c.EntityID)
	}
	if err := k.Err(); err != nil {
		return nil, err
	}
	entityIDs = strset.Unique(entityIDs)
	var ids []string
	err := Guarded(ctx, conn, keys, func(t *txn) (*model.Ops, error) {
		st, err := t.readEntityState(entityIDs, nil)
		if err != nil {
			return nil, err
		}
		if err := roster.Missing("entity", entityIDs, func(i int) bool { return st.names[entityIDs[i]] != "" }); err != nil {
			return nil, err
		}
		var ops model.Ops
		ids = ids[:0]
		for _, c := range checks {
			name := st.names[c.EntityID]
			w := checkstate.NewCheckWriter(keys, name, c.Name, &ops)
			w.TouchIndexes(now.Unix())
			tagCheck(&ops, keys, w.ID, c.Tags, nil)
			ids = append(ids, w.ID)
		}
		return &ops, nil
	})
	return ids, err
}

func tagCheck(ops *model.Ops, keys schema.Keys, id string, add, remove []string) {
	for _, t := range strset.Unique(add) {
		ops.SAdd(keys.CheckTag(t), id)
	}
	for _, t := range strset.Unique(remove) {
		ops.SRem(keys.CheckTag(t), id)
	}
	if len(add) > 0 {
		ops.SAdd(keys.KnownCheckTags(), roster.ToBulk(strset.Unique(add))...)
	}
}

// TagChecks adds and removes tags of checks (check_tag:TAG). The checks must exist (the caller
// has read them); a bad tag is a *roster.ValidationError. One MULTI/EXEC.
func TagChecks(ctx context.Context, conn redis.Conn, keys schema.Keys, refs []model.CheckRef, add, remove []string) error {
	var k roster.Checker
	for i, t := range append(append([]string(nil), add...), remove...) {
		k.Check(roster.Index("tags", i), roster.TagProblem(t))
	}
	if err := k.Err(); err != nil {
		return err
	}
	return Guarded(ctx, conn, keys, func(t *txn) (*model.Ops, error) {
		var ops model.Ops
		for _, r := range refs {
			tagCheck(&ops, keys, r.ID(), add, remove)
		}
		return &ops, nil
	})
}
