package roster

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/redisread"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/schema"
)

// Contacts, media and rules are written by the importer, the JSON API and the server's demo
// seeding, possibly from several processes at once. Each write is one attempt of guarded: it
// WATCHes every key its decision reads before reading it, then applies its writes through the
// apply script inside MULTI/EXEC. Redis refuses the EXEC when a watched key changed in between
// (another writer got there first, whoever it was); then the attempt runs again on what is
// there now. So a write never acts on a state that is no longer there, and nothing extra (no
// revision field) is stored: the documented layout stays exactly Flapjack's.

// maxContactAttempts bounds the retries of a write whose keys keep changing under it.
const maxContactAttempts = 20

// ErrNotFound is wrapped by a *NotFoundError.
var ErrNotFound = errors.New("not found")

// ErrExists is wrapped by an *ExistsError.
var ErrExists = errors.New("already exists")

// ErrRuleTaken is the Err of a FieldError refusing a rule id that belongs to another contact.
var ErrRuleTaken = errors.New("rule belongs to another contact")

// ErrContended is wrapped when a write gave up because its keys kept changing.
var ErrContended = errors.New("kept changing; try again")

// NotFoundError names the contacts, media or rules a write needs that do not exist; nothing
// was written.
type NotFoundError struct {
	What string   // "contact", "medium" or "notification rule"
	IDs  []string // medium ids are CONTACT_MEDIUM, as in Flapjack's JSON API
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("no such %s: %s", e.What, strings.Join(e.IDs, ", "))
}

// Is makes errors.Is(err, ErrNotFound) true.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// ExistsError names the contacts or rules a create found already there; nothing was written.
type ExistsError struct {
	What string
	IDs  []string
}

func (e *ExistsError) Error() string {
	return fmt.Sprintf("%s already exists: %s", e.What, strings.Join(e.IDs, ", "))
}

// Is makes errors.Is(err, ErrExists) true.
func (e *ExistsError) Is(target error) bool { return target == ErrExists }

// Txn is one attempt of a guarded write.
type Txn struct {
	ctx     context.Context
	conn    redis.Conn
	keys    schema.Keys
	watched map[string]bool
	// first runs with firstArgs before the writes, in their MULTI/EXEC (RunFirst)
	first     *redis.Script
	firstArgs []any
}

// Context, Conn and Keys are what the attempt reads with.
func (t *Txn) Context() context.Context { return t.ctx }

// Conn is the connection the attempt reads and commits on.
func (t *Txn) Conn() redis.Conn { return t.conn }

// Keys names the keys.
func (t *Txn) Keys() schema.Keys { return t.keys }

// RunFirst adds args to the arguments of script s, which the commit runs before the writes, in
// the same MULTI/EXEC (an attempt runs one such script).
func (t *Txn) RunFirst(s *redis.Script, args ...any) {
	t.first = s
	t.firstArgs = append(t.firstArgs, args...)
}

// Watch queues, at this point of b, a WATCH of the keys not watched yet. Reads queued after it
// are guarded.
func (t *Txn) Watch(b *redisread.Batch, keys ...string) {
	if args := t.unwatched(keys); len(args) > 0 {
		b.Add("WATCH", args...)
	}
}

// WatchNow WATCHes keys at once.
func (t *Txn) WatchNow(keys ...string) error {
	args := t.unwatched(keys)
	if len(args) == 0 {
		return nil
	}
	if _, err := t.conn.Do("WATCH", args...); err != nil {
		return fmt.Errorf("watch: %w", err)
	}
	return nil
}

func (t *Txn) unwatched(keys []string) []any {
	var args []any
	for _, k := range keys {
		if !t.watched[k] {
			t.watched[k] = true
			args = append(args, k)
		}
	}
	return args
}

// commit applies ops in MULTI/EXEC; false means a watched key changed and nothing was written.
func (t *Txn) commit(ops *model.Ops) (bool, error) {
	if err := t.ctx.Err(); err != nil {
		return false, err
	}
	if err := t.conn.Send("MULTI"); err != nil {
		return false, err
	}
	parts := 1
	if len(t.firstArgs) > 0 {
		if err := t.first.Send(t.conn, t.firstArgs...); err != nil {
			return false, err
		}
		parts = 2
	}
	if err := model.SendApply(t.conn, model.ApplyTarget{}, []model.Record{{Ops: *ops}}); err != nil {
		return false, err
	}
	reply, err := t.conn.Do("EXEC")
	if err != nil {
		return false, fmt.Errorf("apply writes: %w", err)
	}
	if reply == nil {
		return false, nil
	}
	replies, err := redis.Values(reply, nil)
	if err != nil || len(replies) != parts {
		return false, fmt.Errorf("apply writes: unexpected reply %v", reply)
	}
	if rerr, ok := replies[0].(redis.Error); ok && parts == 2 {
		// MULTI/EXEC does not roll back: the name writes after it still ran.
		return true, fmt.Errorf("run before the writes: partly applied: %w", rerr)
	}
	statuses, err := model.DecodeApply(replies[parts-1], nil)
	var werr *model.WriteError
	if errors.As(err, &werr) {
		// A key holds another type than the layout's (another tool wrote it).
		return true, fmt.Errorf("partly applied: %w", err)
	}
	if err != nil {
		return false, err
	}
	if len(statuses) != 1 || statuses[0] != model.Applied {
		return false, fmt.Errorf("apply writes: not applied (status %v)", statuses)
	}
	return true, nil
}

// Guarded runs attempt until its writes commit. attempt WATCHes (t.Watch, t.WatchNow) every key
// it reads before reading it, and returns the writes to apply, or nil to write nothing.
func Guarded(ctx context.Context, conn redis.Conn, keys schema.Keys, attempt func(t *Txn) (*model.Ops, error)) error {
	for range maxContactAttempts {
		t := &Txn{ctx: ctx, conn: conn, keys: keys, watched: map[string]bool{}}
		ops, err := attempt(t)
		if err != nil || ops == nil || ops.Len() == 0 {
			if len(t.watched) > 0 {
				if _, uerr := conn.Do("UNWATCH"); uerr != nil && err == nil {
					err = uerr
				}
			}
			return err
		}
		done, err := t.commit(ops)
		if err != nil && !done {
			_, _ = conn.Do("UNWATCH") // when the EXEC was never sent (best effort: err says why)
		}
		if err != nil || done {
			return err
		}
	}
	return ErrContended
}
