package inventory

import (
	"context"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/schema"
)

// txn is an attempt of a guarded write of entities and checks, with what it reads with.
type txn struct {
	*roster.Txn
	ctx  context.Context
	conn redis.Conn
	keys schema.Keys
}

// guarded is roster.Guarded for attempts reading entities and checks.
func Guarded(ctx context.Context, conn redis.Conn, keys schema.Keys, attempt func(t *txn) (*model.Ops, error)) error {
	return roster.Guarded(ctx, conn, keys, func(t *roster.Txn) (*model.Ops, error) {
		return attempt(&txn{Txn: t, ctx: t.Context(), conn: t.Conn(), keys: t.Keys()})
	})
}
