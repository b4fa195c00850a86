// Package redisread holds the pipelined reads that plan a bulk write (an import, a contact
// replaced with its rules and tags): queue commands, send them in one round trip, read each
// reply; list set keys with SCAN; find which of some ids a set holds.
package redisread

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/strset"
)

// Batch pipelines reads: queue commands, run them in one round trip, then read each reply.
type Batch struct {
	cmds    [][]any
	replies []any
	errs    []error
}

// Add queues a command and returns the index of its reply.
func (b *Batch) Add(cmd string, args ...any) int {
	b.cmds = append(b.cmds, append([]any{cmd}, args...))
	return len(b.cmds) - 1
}

// Run sends the queued commands. A reply that is a Redis error (WRONGTYPE...) is kept for its
// reader; a connection error fails the whole batch.
func (b *Batch) Run(ctx context.Context, conn redis.Conn) error {
	if len(b.cmds) == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, c := range b.cmds {
		if err := conn.Send(c[0].(string), c[1:]...); err != nil {
			return fmt.Errorf("read current state: %w", err)
		}
	}
	if err := conn.Flush(); err != nil {
		return fmt.Errorf("read current state: %w", err)
	}
	b.replies = make([]any, len(b.cmds))
	b.errs = make([]error, len(b.cmds))
	for i := range b.cmds {
		v, err := conn.Receive()
		var rerr redis.Error
		if err != nil && !errors.As(err, &rerr) {
			return fmt.Errorf("read current state: %w", err)
		}
		b.replies[i], b.errs[i] = v, err
	}
	return nil
}

// Str is a string reply; nil, missing and error replies read as "".
func (b *Batch) Str(i int) string {
	s, _ := redis.String(b.replies[i], b.errs[i])
	return s
}

// Strs is a multi-bulk reply of strings; error replies read as empty.
func (b *Batch) Strs(i int) []string {
	v, _ := redis.Strings(b.replies[i], b.errs[i])
	return v
}

// Ints is a multi-bulk reply of integers (SMISMEMBER).
func (b *Batch) Ints(i int) []int {
	v, _ := redis.Ints(b.replies[i], b.errs[i])
	return v
}

// Num is an integer reply.
func (b *Batch) Num(i int) int64 {
	v, _ := redis.Int64(b.replies[i], b.errs[i])
	return v
}

// TypeOK tells whether the TYPE reply at i is want or none (the key does not exist yet).
func (b *Batch) TypeOK(i int, want string) (string, bool) {
	t := b.Str(i)
	return t, t == "none" || t == want
}

// ScanSets lists the set keys starting with base (SCAN: non-blocking, one pass over the
// keyspace), returning the part of each key after base.
func ScanSets(ctx context.Context, conn redis.Conn, base string) ([]string, error) {
	return Scan(ctx, conn, base, "set")
}

// Scan lists the keys starting with base, of type typ ("" for any), as ScanSets does.
func Scan(ctx context.Context, conn redis.Conn, base, typ string) ([]string, error) {
	args := []any{"0", "MATCH", globEscape(base) + "*", "COUNT", 1000}
	if typ != "" {
		args = append(args, "TYPE", typ)
	}
	var out []string
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		reply, err := redis.Values(conn.Do("SCAN", args...))
		if err != nil {
			return nil, fmt.Errorf("scan %s*: %w", base, err)
		}
		if len(reply) != 2 {
			return nil, fmt.Errorf("scan %s*: unexpected reply", base)
		}
		cursor, err := redis.String(reply[0], nil)
		if err != nil {
			return nil, fmt.Errorf("scan %s*: %w", base, err)
		}
		args[0] = cursor
		keys, err := redis.Strings(reply[1], nil)
		if err != nil {
			return nil, fmt.Errorf("scan %s*: %w", base, err)
		}
		for _, k := range keys {
			if rest, ok := strings.CutPrefix(k, base); ok {
				out = append(out, rest)
			}
		}
		if cursor == "0" {
			return strset.Unique(out), nil
		}
	}
}

// globEscape quotes the characters SCAN MATCH treats specially.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '*', '?', '[', ']', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Memberships tells, for each set key, its size and which of ids it holds. It costs about
// min(size, len(ids)) per set: small sets are read whole (SMEMBERS), big ones asked about ids
// (SMISMEMBER), so a file of many records against many tags stays linear.
func Memberships(ctx context.Context, conn redis.Conn, setKeys []string, ids []string) ([]int64, []map[string]bool, error) {
	var sizes Batch
	for _, k := range setKeys {
		sizes.Add("SCARD", k)
	}
	if err := sizes.Run(ctx, conn); err != nil {
		return nil, nil, err
	}
	want := strset.Of(ids)
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	out := make([]map[string]bool, len(setKeys))
	size := make([]int64, len(setKeys))
	var b Batch
	at := make([]int, len(setKeys))
	for i, k := range setKeys {
		size[i] = sizes.Num(i)
		switch {
		case size[i] == 0 || len(ids) == 0:
			at[i] = -1
		case size[i] <= int64(len(ids)):
			at[i] = b.Add("SMEMBERS", k)
		default:
			at[i] = b.Add("SMISMEMBER", append([]any{k}, args...)...)
		}
	}
	if err := b.Run(ctx, conn); err != nil {
		return nil, nil, err
	}
	for i, k := range setKeys {
		out[i] = map[string]bool{}
		if at[i] < 0 {
			continue
		}
		if err := b.errs[at[i]]; err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", k, err)
		}
		if size[i] <= int64(len(ids)) {
			for _, m := range b.Strs(at[i]) {
				if want[m] {
					out[i][m] = true
				}
			}
			continue
		}
		for j, flag := range b.Ints(at[i]) {
			if flag == 1 {
				out[i][ids[j]] = true
			}
		}
	}
	return size, out, nil
}

// Err is the Redis error reply at i (WRONGTYPE...), nil when the command succeeded.
func (b *Batch) Err(i int) error { return b.errs[i] }

// Reply is the reply at i with its Redis error, for the redis.X helpers.
func (b *Batch) Reply(i int) (any, error) { return b.replies[i], b.errs[i] }

// Drain reads the replies a pipelined read that failed part-way left unread, so the next
// command on conn gets its own reply.
func Drain(conn redis.Conn) {
	_, _ = conn.Do("")
}
