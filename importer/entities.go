package importer

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/jsonfield"
	"github.com/flapjackgo/flapjack/internal/redisread"
	"github.com/flapjackgo/flapjack/internal/strset"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/schema"
)

var entityFields = strset.Of([]string{"id", "name", "contacts", "schedules", "tags", "links", "type"})

// entity is a valid entity record, ready to be written.
type entity struct {
	index    int
	id, name string
	contacts []string
	// schedules are the on-call schedules the entity routes to (entity_schedules:ID)
	schedules []string
	tags      []string
}

// Entities imports a Flapjack 1.x entities file (see the package comment for the format).
//
// Each entity is written under both layouts (docs/decisions.md D15): entity:ID {name}, entity_id:NAME,
// all_entity_ids_by_name and all_entity_names_by_id. A renamed entity (same id, new name) loses
// its old name in both. A name that pointed to another id (an entity first seen in events gets
// a generated id) is re-pointed to the imported id and the other id's reverse entries are
// removed; its contacts_for and entity_tag memberships are left as they were, and a note says
// so. Check state and history are kept under entity names, so they follow the name, not the id.
//
// It reads the current state first (old names, the ids the names map to, tag memberships), then
// writes everything in one atomic script. Race window: an entity created or renamed by an event
// or the API between those reads and the write can be left with a name entry the import would
// have replaced; the import's own entries are written in full either way.
func Entities(ctx context.Context, conn redis.Conn, keys schema.Keys, data []byte, opts Options) (Report, error) {
	raws, err := records(data, "entities")
	if err != nil {
		return Report{}, err
	}
	var rep Report
	bad := map[int]bool{}
	byID := map[string]int{}
	byName := map[string]int{}
	valid := parseRecords(raws, parseEntity, func(i int, e *entity) []Problem {
		var problems []Problem
		if prev, dup := byID[e.id]; dup {
			problems = append(problems, Problem{Index: i, ID: e.id, Field: "id", Reason: fmt.Sprintf("duplicate of record %d", prev)})
		} else {
			byID[e.id] = i
		}
		if prev, dup := byName[e.name]; dup {
			problems = append(problems, Problem{Index: i, ID: e.id, Field: "name", Reason: fmt.Sprintf("%q is also the name of record %d", e.name, prev)})
		} else {
			byName[e.name] = i
		}
		return problems
	}, &rep, bad)

	st, problems, err := readEntities(ctx, conn, keys, valid)
	if err != nil {
		return Report{}, err
	}
	for _, p := range problems {
		rep.Problems = append(rep.Problems, p)
		bad[p.Index] = true
	}
	if err := outcome(&rep, len(raws), bad, opts); err != nil {
		return rep, err
	}
	var good []*entity
	for _, e := range valid {
		if !bad[e.index] {
			good = append(good, e)
		}
	}
	ops, notes := planEntities(keys, good, st)
	rep.Notes = append(rep.Notes, notes...)
	err = write(ctx, conn, "entities", ops, opts, &rep)
	return rep, err
}

func parseEntity(index int, raw json.RawMessage) (*entity, []Problem) {
	c := &check{index: index}
	obj, ok := c.object(raw, "")
	if !ok {
		return nil, c.problems
	}
	id := recordID(c, obj["id"])
	c.id = id
	switch {
	case id == schema.AllContactsID:
		c.fail("id", "%q is reserved (contacts_for:%s lists the contacts of every entity)", id, id)
	case strings.Contains(id, ":"):
		c.fail("id", "must not contain ':' (contacts_for:ENTITY_ID:CHECK would be ambiguous)")
	}
	e := &entity{index: index, id: id}
	if jsonfield.IsNull(obj["name"]) {
		c.fail("name", "is required")
	} else if name := c.str(obj["name"], "name"); jsonfield.First(obj["name"]) == '"' {
		e.name = strings.ToLower(strings.TrimSpace(name)) // docs/decisions.md D14
		switch {
		case e.name == "":
			c.fail("name", "must not be empty")
		case strings.Contains(e.name, ":"):
			c.fail("name", "must not contain ':' (check ids are ENTITY:CHECK)")
		}
	}
	e.contacts = strset.Unique(c.idents(obj["contacts"], "contacts"))
	e.schedules = strset.Unique(c.idents(obj["schedules"], "schedules"))
	e.tags = strset.Unique(c.strings(obj["tags"], "tags"))
	c.unknown(obj, "", entityFields)
	if !c.ok() {
		return nil, c.problems
	}
	return e, nil
}

// entityState is what Redis holds now for the entities of a file.
type entityState struct {
	hashName  map[string]string   // entity id -> name field of entity:ID
	idName    map[string]string   // entity id -> all_entity_names_by_id[ID]
	nameID    map[string]string   // name -> all_entity_ids_by_name[NAME]
	keyID     map[string]string   // name -> entity_id:NAME
	knownTags []string            // members of known_tags:entity_tag
	probed    []string            // tags whose sets were read: known ∪ the file's
	tagSize   map[string]int64    // tag -> SCARD entity_tag:TAG
	tagsOf    map[string][]string // entity id -> tags whose entity_tag:TAG holds it now
	contacts  map[string]bool     // contact id -> known (all_contacts, contact:ID or contact_media:ID)
	schedules map[string]bool     // schedule id -> stored
}

// readEntities reads the state the import replaces, and refuses what would make a write fail
// inside the script (a key of another type).
func readEntities(ctx context.Context, conn redis.Conn, keys schema.Keys, recs []*entity) (*entityState, []Problem, error) {
	st := &entityState{hashName: map[string]string{}, idName: map[string]string{}, nameID: map[string]string{},
		keyID: map[string]string{}, tagSize: map[string]int64{}, tagsOf: map[string][]string{}, contacts: map[string]bool{},
		schedules: map[string]bool{}}
	if len(recs) == 0 {
		return st, nil, nil
	}
	var b redisread.Batch
	globals := []struct {
		key, typ string
		at       int
	}{
		{key: keys.EntityIDsByName(), typ: "hash"},
		{key: keys.EntityNamesByID(), typ: "hash"},
		{key: keys.KnownEntityTags(), typ: "set"},
	}
	for i := range globals {
		globals[i].at = b.Add("TYPE", globals[i].key)
	}
	knownAt := b.Add("SMEMBERS", keys.KnownEntityTags())
	type reads struct{ typ, hashName, idName, nameID, keyID int }
	readAt := make([]reads, len(recs))
	for i, e := range recs {
		readAt[i] = reads{
			typ:      b.Add("TYPE", keys.Entity(e.id)),
			hashName: b.Add("HGET", keys.Entity(e.id), "name"),
			idName:   b.Add("HGET", keys.EntityNamesByID(), e.id),
			nameID:   b.Add("HGET", keys.EntityIDsByName(), e.name),
			keyID:    b.Add("GET", keys.EntityID(e.name)),
		}
	}
	tagTypeAt := map[string]int{}
	var fileTags []string
	contactAt := map[string][2]int{}
	for _, e := range recs {
		for _, t := range e.tags {
			if _, seen := tagTypeAt[t]; !seen {
				tagTypeAt[t] = b.Add("TYPE", keys.EntityTag(t))
				fileTags = append(fileTags, t)
			}
		}
		for _, c := range e.contacts {
			if _, seen := contactAt[c]; !seen {
				contactAt[c] = [2]int{
					b.Add("SISMEMBER", keys.AllContacts(), c),
					b.Add("EXISTS", keys.Contact(c), keys.ContactMedia(c)),
				}
			}
		}
	}
	scheduleAt := map[string]int{}
	for _, e := range recs {
		for _, s := range e.schedules {
			if _, seen := scheduleAt[s]; !seen {
				scheduleAt[s] = b.Add("HEXISTS", keys.Schedules(), s)
			}
		}
	}
	if err := b.Run(ctx, conn); err != nil {
		return nil, nil, err
	}
	for s, i := range scheduleAt {
		st.schedules[s] = b.Num(i) == 1
	}
	for _, g := range globals {
		if t, ok := b.TypeOK(g.at, g.typ); !ok {
			return nil, nil, fmt.Errorf("key %s holds a %s, not a %s: fix or delete it; nothing written", g.key, t, g.typ)
		}
	}
	var problems []Problem
	for i, e := range recs {
		if t, ok := b.TypeOK(readAt[i].typ, "hash"); !ok {
			problems = append(problems, Problem{Index: e.index, ID: e.id, Field: "id",
				Reason: fmt.Sprintf("key %s holds a %s, not a hash", keys.Entity(e.id), t)})
		}
		for k, tag := range e.tags {
			if t, ok := b.TypeOK(tagTypeAt[tag], "set"); !ok {
				problems = append(problems, Problem{Index: e.index, ID: e.id, Field: jsonfield.At("tags", k),
					Reason: fmt.Sprintf("key %s holds a %s, not a set", keys.EntityTag(tag), t)})
			}
		}
		for k, s := range e.schedules {
			if !st.schedules[s] {
				problems = append(problems, Problem{Index: e.index, ID: e.id, Field: jsonfield.At("schedules", k),
					Reason: fmt.Sprintf("unknown schedule %q (import schedules first)", s)})
			}
		}
		st.hashName[e.id] = b.Str(readAt[i].hashName)
		st.idName[e.id] = b.Str(readAt[i].idName)
		st.nameID[e.name] = b.Str(readAt[i].nameID)
		st.keyID[e.name] = b.Str(readAt[i].keyID)
	}
	for c, i := range contactAt {
		st.contacts[c] = b.Num(i[0]) == 1 || b.Num(i[1]) > 0
	}
	st.knownTags = b.Strs(knownAt)
	st.probed = strset.Unique(append(append([]string{}, st.knownTags...), fileTags...))

	// Then: tag memberships of our ids, the ids old names map to, and the names of the other
	// ids the file's names map to now.
	ids := make([]string, len(recs))
	inFile := map[string]bool{}
	for i, e := range recs {
		ids[i] = e.id
		inFile[e.id] = true
	}
	tagKeys := make([]string, len(st.probed))
	for i, t := range st.probed {
		tagKeys[i] = keys.EntityTag(t)
	}
	sizes, members, err := redisread.Memberships(ctx, conn, tagKeys, ids)
	if err != nil {
		return nil, nil, err
	}
	for i, t := range st.probed {
		st.tagSize[t] = sizes[i]
		for id := range members[i] {
			st.tagsOf[id] = append(st.tagsOf[id], t)
		}
	}
	var b2 redisread.Batch
	nameAt := map[string][2]int{}
	for _, e := range recs {
		for _, old := range []string{st.hashName[e.id], st.idName[e.id]} {
			if _, seen := st.nameID[old]; old != "" && !seen {
				if _, queued := nameAt[old]; !queued {
					nameAt[old] = [2]int{b2.Add("HGET", keys.EntityIDsByName(), old), b2.Add("GET", keys.EntityID(old))}
				}
			}
		}
	}
	idAt := map[string][2]int{}
	for _, e := range recs {
		for _, other := range []string{st.nameID[e.name], st.keyID[e.name]} {
			if other != "" && !inFile[other] {
				if _, queued := idAt[other]; !queued {
					idAt[other] = [2]int{b2.Add("HGET", keys.Entity(other), "name"), b2.Add("HGET", keys.EntityNamesByID(), other)}
				}
			}
		}
	}
	if err := b2.Run(ctx, conn); err != nil {
		return nil, nil, err
	}
	for name, i := range nameAt {
		st.nameID[name], st.keyID[name] = b2.Str(i[0]), b2.Str(i[1])
	}
	for id, i := range idAt {
		st.hashName[id], st.idName[id] = b2.Str(i[0]), b2.Str(i[1])
	}
	return st, problems, nil
}

// planEntities lists the writes, every deletion first so records of one file never undo each
// other (two entities swapping names), and the notes worth telling the operator.
func planEntities(keys schema.Keys, recs []*entity, st *entityState) (model.Ops, []string) {
	var ops model.Ops
	var notes []string
	good := map[string]bool{}
	for _, e := range recs {
		good[e.id] = true
	}
	removed := map[string]int64{}
	added := map[string]int64{}
	for _, e := range recs {
		for _, old := range strset.Unique([]string{st.hashName[e.id], st.idName[e.id]}) {
			if old == "" || old == e.name {
				continue
			}
			if st.nameID[old] == e.id {
				ops.HDel(keys.EntityIDsByName(), old)
			}
			if st.keyID[old] == e.id {
				ops.Del(keys.EntityID(old))
			}
			notes = append(notes, fmt.Sprintf("entity %q: renamed from %q to %q (check state and history stay under the old name)", e.id, old, e.name))
		}
		for _, other := range strset.Unique([]string{st.nameID[e.name], st.keyID[e.name]}) {
			if other == "" || other == e.id || good[other] {
				continue
			}
			if st.idName[other] == e.name {
				ops.HDel(keys.EntityNamesByID(), other)
			}
			if st.hashName[other] == e.name {
				ops.Del(keys.Entity(other))
			}
			notes = append(notes, fmt.Sprintf("entity %q: the name %q pointed to entity id %q; it now points to %q (%s and that id's tags are left as they were)",
				e.id, e.name, other, e.id, keys.ContactsFor(other)))
		}
		ops.Del(keys.ContactsFor(e.id))
		ops.Del(keys.EntitySchedules(e.id))
		wants := strset.Of(e.tags)
		has := strset.Of(st.tagsOf[e.id])
		for _, t := range st.tagsOf[e.id] {
			if !wants[t] {
				ops.SRem(keys.EntityTag(t), e.id)
				removed[t]++
			}
		}
		for _, t := range e.tags {
			if !has[t] {
				added[t]++
			}
		}
		for _, c := range e.contacts {
			if !st.contacts[c] {
				notes = append(notes, fmt.Sprintf("entity %q: contact %q is not known yet (import contacts first?)", e.id, c))
			}
		}
	}
	var unused []any
	for _, t := range st.knownTags {
		if st.tagSize[t]-removed[t]+added[t] <= 0 {
			unused = append(unused, t)
		}
	}
	if len(unused) > 0 {
		ops.SRem(keys.KnownEntityTags(), unused...)
	}
	var tags []string
	for _, e := range recs {
		ops.HSet(keys.Entity(e.id), "name", e.name)
		ops.HSet(keys.EntityIDsByName(), e.name, e.id)
		ops.HSet(keys.EntityNamesByID(), e.id, e.name)
		ops.Set(keys.EntityID(e.name), e.id)
		if len(e.contacts) > 0 {
			ids := make([]any, len(e.contacts))
			for i, c := range e.contacts {
				ids[i] = c
			}
			ops.SAdd(keys.ContactsFor(e.id), ids...)
		}
		if len(e.schedules) > 0 {
			ids := make([]any, len(e.schedules))
			for i, s := range e.schedules {
				ids[i] = s
			}
			ops.SAdd(keys.EntitySchedules(e.id), ids...)
		}
		for _, t := range e.tags {
			ops.SAdd(keys.EntityTag(t), e.id)
			tags = append(tags, t)
		}
	}
	var known []any
	for _, t := range strset.Unique(tags) {
		known = append(known, t)
	}
	if len(known) > 0 {
		ops.SAdd(keys.KnownEntityTags(), known...)
	}
	return ops, notes
}
