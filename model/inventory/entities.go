package inventory

import (
	"context"
	"fmt"
	"sort"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/redisread"
	"github.com/flapjackgo/flapjack/internal/strset"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/schema"
)

// Entities as Flapjack 1.x's JSON API sees them (docs/flapjack-1x.md A.6): an id, a name under both
// layouts of docs/decisions.md D15 (all_entity_ids_by_name / all_entity_names_by_id and entity_id:NAME /
// entity:ID), the contacts of contacts_for:ID and the checks of all_checks:NAME and
// current_checks:NAME.

// Entity is a stored entity.
type Entity struct {
	ID, Name string
	Enabled  bool     // has current checks (a member of current_entities)
	Contacts []string // contact ids, sorted
	Checks   []string // check names (all_checks:NAME and current_checks:NAME), sorted
}

// EntityData is an entity to create or rename.
type EntityData struct{ ID, Name string }

// EntityIDs lists every entity id (all_entity_names_by_id and all_entity_ids_by_name), sorted.
func EntityIDs(conn redis.Conn, keys schema.Keys) ([]string, error) {
	conn.Send("HKEYS", keys.EntityNamesByID())
	conn.Send("HVALS", keys.EntityIDsByName())
	if err := conn.Flush(); err != nil {
		return nil, fmt.Errorf("list entity ids: %w", err)
	}
	var all []string
	for i := 0; i < 2; i++ {
		v, err := redis.Strings(conn.Receive())
		if err != nil {
			return nil, fmt.Errorf("list entity ids: %w", err)
		}
		all = append(all, v...)
	}
	all = strset.Unique(all)
	sort.Strings(all)
	return all, nil
}

// entityNameReads queues the reads of the names of ids (either layout).
func entityNameReads(b *redisread.Batch, keys schema.Keys, ids []string) [][2]int {
	at := make([][2]int, len(ids))
	for i, id := range ids {
		at[i] = [2]int{b.Add("HGET", keys.EntityNamesByID(), id), b.Add("HGET", keys.Entity(id), "name")}
	}
	return at
}

func entityName(b *redisread.Batch, at [2]int) string {
	if n := b.Str(at[0]); n != "" {
		return n
	}
	return b.Str(at[1])
}

// ReadEntities reads the entities of ids that exist, in the order given, each once, in two
// round trips.
func ReadEntities(ctx context.Context, conn redis.Conn, keys schema.Keys, ids []string) ([]Entity, error) {
	ids = strset.Unique(ids)
	var b redisread.Batch
	at := entityNameReads(&b, keys, ids)
	if err := b.Run(ctx, conn); err != nil {
		return nil, err
	}
	var out []Entity
	for i, id := range ids {
		if name := entityName(&b, at[i]); name != "" {
			out = append(out, Entity{ID: id, Name: name})
		}
	}
	var d redisread.Batch
	type reads struct{ contacts, all, current, enabled int }
	rs := make([]reads, len(out))
	for i, e := range out {
		rs[i] = reads{contacts: d.Add("SMEMBERS", keys.ContactsFor(e.ID)), all: d.Add("ZRANGE", keys.AllChecksFor(e.Name), 0, -1),
			current: d.Add("ZRANGE", keys.CurrentChecks(e.Name), 0, -1), enabled: d.Add("ZSCORE", keys.CurrentEntities(), e.Name)}
	}
	if err := d.Run(ctx, conn); err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Contacts = d.Strs(rs[i].contacts)
		sort.Strings(out[i].Contacts)
		out[i].Checks = strset.Unique(append(d.Strs(rs[i].all), d.Strs(rs[i].current)...))
		sort.Strings(out[i].Checks)
		out[i].Enabled = d.Str(rs[i].enabled) != ""
	}
	return out, nil
}

// entityState is what a write of entities reads under WATCH.
type entityState struct {
	names  map[string]string // id -> name ("" unknown)
	idOf   map[string]string // name -> id ("" unknown)
	checks map[string]bool   // name -> has checks or history
}

// readEntityState WATCHes and reads the names of ids, the ids of names and whether each name
// has checks.
func (t *txn) readEntityState(ids, names []string) (*entityState, error) {
	k := t.keys
	var b redisread.Batch
	watch := []string{k.EntityNamesByID(), k.EntityIDsByName()}
	for _, id := range ids {
		watch = append(watch, k.Entity(id))
	}
	for _, n := range names {
		watch = append(watch, k.EntityID(n), k.AllChecksFor(n), k.CurrentChecks(n))
	}
	t.Watch(&b, watch...)
	at := entityNameReads(&b, k, ids)
	type nameReads struct{ byName, key, all, current int }
	nat := make([]nameReads, len(names))
	for i, n := range names {
		nat[i] = nameReads{b.Add("HGET", k.EntityIDsByName(), n), b.Add("GET", k.EntityID(n)),
			b.Add("ZCARD", k.AllChecksFor(n)), b.Add("ZCARD", k.CurrentChecks(n))}
	}
	if err := b.Run(t.ctx, t.conn); err != nil {
		return nil, err
	}
	st := &entityState{names: map[string]string{}, idOf: map[string]string{}, checks: map[string]bool{}}
	for i, id := range ids {
		st.names[id] = entityName(&b, at[i])
	}
	for i, n := range names {
		id := b.Str(nat[i].byName)
		if id == "" {
			id = b.Str(nat[i].key)
		}
		st.idOf[n] = id
		st.checks[n] = b.Num(nat[i].all) > 0 || b.Num(nat[i].current) > 0
	}
	return st, nil
}

// nameEntity writes entity id under name in both layouts, dropping its old name when it had
// one. A rename moves the data of the entity's checks to the new name (planMove); when another
// entity has the name already the two merge, and the other id loses the name. A new id under a
// name another entity has is an *roster.ExistsError.
func nameEntity(t *txn, ops *model.Ops, st *entityState, id, name string) error {
	keys := t.keys
	old := st.names[id]
	if old == name {
		if st.idOf[name] == "" { // known under one layout only: complete it
			writeEntityName(ops, keys, id, name)
		}
		return nil
	}
	other := st.idOf[name]
	if other != "" && other != id {
		if old == "" {
			return &roster.ExistsError{What: "entity name", IDs: []string{name + " (entity " + other + ")"}}
		}
		ops.HDel(keys.EntityNamesByID(), other)
		ops.HDel(keys.Entity(other), "name")
	}
	if old != "" {
		if err := t.planMove(old, name); err != nil {
			return err
		}
		ops.HDel(keys.EntityIDsByName(), old)
		ops.Del(keys.EntityID(old))
	}
	writeEntityName(ops, keys, id, name)
	st.names[id], st.idOf[name] = name, id
	if old != "" {
		st.idOf[old] = ""
	}
	return nil
}

func writeEntityName(ops *model.Ops, keys schema.Keys, id, name string) {
	ops.HSet(keys.EntityIDsByName(), name, id)
	ops.HSet(keys.EntityNamesByID(), id, name)
	ops.Set(keys.EntityID(name), id)
	ops.HSet(keys.Entity(id), "name", name)
}

// CreateEntities records entities (names lower-cased, docs/decisions.md D14); an id that exists under
// another name renames it (merging when the name is taken), as Flapjack 1.x did. All or
// nothing: an empty id or name is a *roster.ValidationError, a new id under a name another entity has
// an *roster.ExistsError.
func CreateEntities(ctx context.Context, conn redis.Conn, keys schema.Keys, in []EntityData) error {
	var k roster.Checker
	entities := make([]EntityData, len(in))
	for i, e := range in {
		entities[i] = EntityData{ID: e.ID, Name: roster.NormalizeEntityName(e.Name)}
		k.Prefix = roster.Index("entities", i)
		k.Check("id", roster.IDProblem(e.ID))
		if entities[i].Name == "" {
			k.Check("name", "missing")
		}
	}
	if err := k.Err(); err != nil {
		return err
	}
	var ids, names []string
	for _, e := range entities {
		ids, names = append(ids, e.ID), append(names, e.Name)
	}
	return Guarded(ctx, conn, keys, func(t *txn) (*model.Ops, error) {
		st, err := t.readEntityState(strset.Unique(ids), strset.Unique(names))
		if err != nil {
			return nil, err
		}
		if st, err = t.withOldNames(st, ids, names); err != nil {
			return nil, err
		}
		var ops model.Ops
		for _, e := range entities {
			if err := nameEntity(t, &ops, st, e.ID, e.Name); err != nil {
				return nil, err
			}
		}
		return &ops, nil
	})
}

// withOldNames re-reads the state including the current names of ids (so a rename knows
// whether the old name has checks), under the same WATCH.
func (t *txn) withOldNames(st *entityState, ids, names []string) (*entityState, error) {
	more := append([]string(nil), names...)
	for _, id := range ids {
		if n := st.names[id]; n != "" {
			more = append(more, n)
		}
	}
	return t.readEntityState(strset.Unique(ids), strset.Unique(more))
}

// EntityChange is a change of entities (PATCH /entities/:ids).
type EntityChange struct {
	Name                        string // "" = keep
	AddContacts, RemoveContacts []string
	AddTags, RemoveTags         []string
}

// UpdateEntities applies change to every entity of ids. All or nothing: a missing entity or
// contact is a *roster.NotFoundError, a bad tag a *roster.ValidationError.
func UpdateEntities(ctx context.Context, conn redis.Conn, keys schema.Keys, ids []string, change EntityChange) error {
	ids = strset.Unique(ids)
	name := roster.NormalizeEntityName(change.Name)
	var k roster.Checker
	for i, tag := range append(append([]string(nil), change.AddTags...), change.RemoveTags...) {
		k.Check(roster.Index("tags", i), roster.TagProblem(tag))
	}
	if change.Name != "" && name == "" {
		k.Check("name", "missing")
	}
	if name != "" && len(ids) > 1 {
		k.Check("name", "cannot give several entities one name")
	}
	if err := k.Err(); err != nil {
		return err
	}
	contacts := strset.Unique(append(append([]string(nil), change.AddContacts...), change.RemoveContacts...))
	return Guarded(ctx, conn, keys, func(t *txn) (*model.Ops, error) {
		if err := t.MustExist(contacts...); err != nil {
			return nil, err
		}
		var names []string
		if name != "" {
			names = []string{name}
		}
		st, err := t.readEntityState(ids, names)
		if err != nil {
			return nil, err
		}
		if err := roster.Missing("entity", ids, func(i int) bool { return st.names[ids[i]] != "" }); err != nil {
			return nil, err
		}
		if st, err = t.withOldNames(st, ids, names); err != nil {
			return nil, err
		}
		var ops model.Ops
		for _, id := range ids {
			if name != "" {
				if err := nameEntity(t, &ops, st, id, name); err != nil {
					return nil, err
				}
			}
			for _, c := range strset.Unique(change.AddContacts) {
				ops.SAdd(keys.ContactsFor(id), c)
			}
			for _, c := range strset.Unique(change.RemoveContacts) {
				ops.SRem(keys.ContactsFor(id), c)
			}
			for _, tag := range strset.Unique(change.AddTags) {
				ops.SAdd(keys.EntityTag(tag), id)
			}
			for _, tag := range strset.Unique(change.RemoveTags) {
				ops.SRem(keys.EntityTag(tag), id)
			}
		}
		if len(change.AddTags) > 0 {
			ops.SAdd(keys.KnownEntityTags(), roster.ToBulk(strset.Unique(change.AddTags))...)
		}
		return &ops, nil
	})
}
