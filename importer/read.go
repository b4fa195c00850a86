package importer

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gomodule/redigo/redis"
)

// batch pipelines reads: queue commands, run them in one round trip, then read each reply.
type batch struct {
	cmds    [][]any
	replies []any
	errs    []error
}

// add queues a command and returns the index of its reply.
func (b *batch) add(cmd string, args ...any) int {
	b.cmds = append(b.cmds, append([]any{cmd}, args...))
	return len(b.cmds) - 1
}

// run sends the queued commands. A reply that is a Redis error (WRONGTYPE...) is kept for its
// reader; a connection error fails the whole batch.
func (b *batch) run(ctx context.Context, conn redis.Conn) error {
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

// str is a string reply; nil, missing and error replies read as "".
func (b *batch) str(i int) string {
	s, _ := redis.String(b.replies[i], b.errs[i])
	return s
}

// strs is a multi-bulk reply of strings; error replies read as empty.
func (b *batch) strs(i int) []string {
	v, _ := redis.Strings(b.replies[i], b.errs[i])
	return v
}

// ints is a multi-bulk reply of integers (SMISMEMBER).
func (b *batch) ints(i int) []int {
	v, _ := redis.Ints(b.replies[i], b.errs[i])
	return v
}

// num is an integer reply.
func (b *batch) num(i int) int64 {
	v, _ := redis.Int64(b.replies[i], b.errs[i])
	return v
}

// typeOK tells whether the TYPE reply at i is want or none (the key does not exist yet).
func (b *batch) typeOK(i int, want string) (string, bool) {
	t := b.str(i)
	return t, t == "none" || t == want
}

// scanSets lists the set keys starting with base (SCAN: non-blocking, one pass over the
// keyspace), returning the part of each key after base.
func scanSets(ctx context.Context, conn redis.Conn, base string) ([]string, error) {
	pattern := globEscape(base) + "*"
	cursor := "0"
	var out []string
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		reply, err := redis.Values(conn.Do("SCAN", cursor, "MATCH", pattern, "COUNT", 1000, "TYPE", "set"))
		if err != nil {
			return nil, fmt.Errorf("scan %s*: %w", base, err)
		}
		if len(reply) != 2 {
			return nil, fmt.Errorf("scan %s*: unexpected reply", base)
		}
		cursor, err = redis.String(reply[0], nil)
		if err != nil {
			return nil, fmt.Errorf("scan %s*: %w", base, err)
		}
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
			return unique(out), nil
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

// memberships tells, for each set key, its size and which of ids it holds. It costs about
// min(size, len(ids)) per set: small sets are read whole (SMEMBERS), big ones asked about ids
// (SMISMEMBER), so a file of many records against many tags stays linear.
func memberships(ctx context.Context, conn redis.Conn, setKeys []string, ids []string) ([]int64, []map[string]bool, error) {
	var sizes batch
	for _, k := range setKeys {
		sizes.add("SCARD", k)
	}
	if err := sizes.run(ctx, conn); err != nil {
		return nil, nil, err
	}
	want := set(ids)
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	out := make([]map[string]bool, len(setKeys))
	size := make([]int64, len(setKeys))
	var b batch
	at := make([]int, len(setKeys))
	for i, k := range setKeys {
		size[i] = sizes.num(i)
		switch {
		case size[i] == 0 || len(ids) == 0:
			at[i] = -1
		case size[i] <= int64(len(ids)):
			at[i] = b.add("SMEMBERS", k)
		default:
			at[i] = b.add("SMISMEMBER", append([]any{k}, args...)...)
		}
	}
	if err := b.run(ctx, conn); err != nil {
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
			for _, m := range b.strs(at[i]) {
				if want[m] {
					out[i][m] = true
				}
			}
			continue
		}
		for j, flag := range b.ints(at[i]) {
			if flag == 1 {
				out[i][ids[j]] = true
			}
		}
	}
	return size, out, nil
}
