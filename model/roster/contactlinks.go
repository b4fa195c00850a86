package roster

import (
	"context"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/redisread"
	"github.com/flapjackgo/flapjack/internal/strset"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/schema"
)

// LinkEntities adds the contacts to the contacts of the entities add and removes them from
// those of remove (contacts_for:ENTITY_ID), what Flapjack 1.x's JSON API does for a contact's
// entities links. All or nothing: a missing contact, or an entity id that is not known
// (all_entity_names_by_id or entity:ID), is a *NotFoundError.
func LinkEntities(ctx context.Context, conn redis.Conn, keys schema.Keys, contactIDs, add, remove []string) error {
	contactIDs, add, remove = strset.Unique(contactIDs), strset.Unique(add), strset.Unique(remove)
	entities := strset.Unique(append(append([]string(nil), add...), remove...))
	return Guarded(ctx, conn, keys, func(t *Txn) (*model.Ops, error) {
		if err := t.MustExist(contactIDs...); err != nil {
			return nil, err
		}
		var b redisread.Batch
		watch := []string{keys.EntityNamesByID()}
		for _, e := range entities {
			watch = append(watch, keys.Entity(e), keys.ContactsFor(e))
		}
		t.Watch(&b, watch...)
		type reads struct{ byName, key int }
		at := make([]reads, len(entities))
		for i, e := range entities {
			at[i] = reads{byName: b.Add("HEXISTS", keys.EntityNamesByID(), e), key: b.Add("EXISTS", keys.Entity(e))}
		}
		if err := b.Run(t.ctx, t.conn); err != nil {
			return nil, err
		}
		if err := Missing("entity", entities, func(i int) bool { return b.Num(at[i].byName) == 1 || b.Num(at[i].key) == 1 }); err != nil {
			return nil, err
		}
		var ops model.Ops
		for _, e := range add {
			for _, c := range contactIDs {
				ops.SAdd(keys.ContactsFor(e), c)
			}
		}
		for _, e := range remove {
			for _, c := range contactIDs {
				ops.SRem(keys.ContactsFor(e), c)
			}
		}
		return &ops, nil
	})
}
