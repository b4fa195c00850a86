package main

import (
	"context"
	_ "embed"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/schema"
)

// floorScript is the least a guarded apply can do for a batch of ok results on ok checks.
//
//go:embed floor.lua
var floorScript string

// floorBatch is the executive's default batch size.
const floorBatch = 256

// floor measures, on the executive scenario's keyspace (100k checks after one event each), what
// Redis spends per ok result on an ok check when only its documented writes are sent, in ever
// fuller forms up to the executive's own claim and apply, so the Redis target can be read
// beside what the layout itself costs.
func (b *bench) floor() error {
	env, err := startRedis()
	if err != nil {
		return err
	}
	defer env.close()
	checks, events := b.o.checks, b.o.events/floorBatch*floorBatch
	fmt.Printf("== floor: Redis CPU per ok result on an ok check, %d events over %dk checks, batches of %d\n", events, checks/1000, floorBatch)
	gen := steadyStream(checks)
	if err := env.push(checks, gen); err != nil {
		return err
	}
	if _, err := b.runExecutives(env, checks, 1); err != nil {
		return err
	}
	f, err := newFloorRun(env, checks)
	if err != nil {
		return err
	}
	defer f.conn.Close()
	if err := env.push(events, func(i int) string { return gen(i + checks) }); err != nil {
		return err
	}
	forms := []struct {
		name string
		run  func(from int) error
	}{
		{"the writes as plain commands, pipelined, unguarded", f.plain},
		{"the writes and guards in one minimal Lua call per batch", f.minimal},
		{"the writes as plain commands in MULTI/EXEC, guarded by WATCH (two round trips)", f.watched},
		{"model.Apply of the executive's records for them (items named by slot)", f.apply},
		{"the same after the executive's claim of each batch (queue.Consumer)", f.claimAndApply},
	}
	// The forms take turns, a few batches each, so the machine's drift meets them all alike.
	const turn = 16 * floorBatch
	spent := make([]float64, len(forms))
	for from := 0; from < events; from += turn {
		for i, form := range forms {
			before, err := env.snapshot()
			if err != nil {
				return err
			}
			for at := from; at < min(from+turn, events); at += floorBatch {
				if err := form.run(at); err != nil {
					return fmt.Errorf("floor, %s: %w", form.name, err)
				}
			}
			after, err := env.snapshot()
			if err != nil {
				return err
			}
			spent[i] += after.cpu - before.cpu
		}
	}
	for i, form := range forms {
		us := spent[i] * 1e6 / float64(events)
		fmt.Printf("   %-78s %5.1f µs\n", form.name, us)
		b.add(row{scenario: "floor: " + form.name, target: "what the layout costs", p50: math.NaN(), p95: math.NaN(), p99: math.NaN(),
			redisUsPerEvent: us, note: "ok results on ok checks; Redis CPU only"})
	}
	return nil
}

// floorRun is the state of the floor's runs: each check's revision moves on with every write.
type floorRun struct {
	env      *redisEnv
	conn     redis.Conn
	checks   int
	ids      []string
	revs     []int64
	now, seq int64
	sha      string
	consumer *queue.Consumer
}

func newFloorRun(env *redisEnv, checks int) (*floorRun, error) {
	f := &floorRun{env: env, conn: env.pool.Get(), checks: checks, ids: make([]string, checks), revs: make([]int64, checks),
		now: base + 7200, seq: int64(checks)}
	for i := range f.ids {
		f.ids[i] = schema.CheckID(streamEntity(i), streamCheck(i))
		f.conn.Send("HGET", env.keys.Check(f.ids[i]), "revision")
	}
	if err := f.conn.Flush(); err != nil {
		return nil, err
	}
	for i := range f.revs {
		rev, err := redis.Int64(f.conn.Receive())
		if err != nil {
			return nil, fmt.Errorf("floor: revision of %s: %w", f.ids[i], err)
		}
		f.revs[i] = rev
	}
	sha, err := redis.String(f.conn.Do("SCRIPT", "LOAD", floorScript))
	if err != nil {
		return nil, err
	}
	f.sha = sha
	f.consumer = queue.NewConsumer(env.pool, env.keys, queue.Spec{Stage: "executive", Source: env.keys.Events(),
		End: queue.Right, Sequence: env.keys.EventsSequence()}, queue.Identity{Host: "floor", PID: 1})
	return f, nil
}

// next moves check c on by one event and returns its expected and new revision and sequence.
func (f *floorRun) next(c int) (expected, revision, seq int64) {
	f.seq++
	f.revs[c]++
	return f.revs[c] - 1, f.revs[c], f.seq
}

// plain sends each event's HSET and each index's ZADD pipelined, with no guard and no script.
func (f *floorRun) plain(from int) error {
	sent, err := f.sendWrites(from, nil)
	if err != nil {
		return err
	}
	return drain(f.conn, sent)
}

// sendWrites sends the batch's HSETs and index ZADDs as plain commands and returns how many it
// sent; expected, when given, are the revisions read for the batch, which must still be the
// ones the floor expects.
func (f *floorRun) sendWrites(from int, expected []int64) (int, error) {
	keys := f.env.keys
	idx := map[string][]any{}
	var entities []string
	all := []any{keys.AllChecks()}
	for i := from; i < from+floorBatch; i++ {
		c := i % f.checks
		want, rev, seq := f.next(c)
		if expected != nil && want != expected[i-from] {
			return 0, fmt.Errorf("check %s at revision %d, want %d", f.ids[c], expected[i-from], want)
		}
		f.conn.Send("HSET", keys.Check(f.ids[c]), "last_update", f.now, "last_sequence", seq, "revision", rev)
		e := streamEntity(c)
		if _, seen := idx[e]; !seen {
			entities = append(entities, e)
		}
		idx[e] = append(idx[e], f.now, streamCheck(c))
		all = append(all, f.now, f.ids[c])
	}
	f.conn.Send("ZADD", all...)
	current := []any{keys.CurrentEntities()}
	for _, e := range entities {
		f.conn.Send("ZADD", append([]any{keys.AllChecksFor(e)}, idx[e]...)...)
		f.conn.Send("ZADD", append([]any{keys.CurrentChecks(e)}, idx[e]...)...)
		current = append(current, f.now, e)
	}
	f.conn.Send("ZADD", current...)
	return floorBatch + 2 + 2*len(entities), nil
}

// minimal sends floor.lua the batch.
func (f *floorRun) minimal(from int) error {
	keys := f.env.keys
	args := []any{f.sha, 0, f.now, floorBatch, keys.AllChecks(), keys.CurrentEntities()}
	for i := from; i < from+floorBatch; i++ {
		c := i % f.checks
		expected, rev, seq := f.next(c)
		e := streamEntity(c)
		args = append(args, keys.Check(f.ids[c]), keys.Maintenances(schema.Scheduled, f.ids[c]),
			keys.SortedMaintenanceTimestamps(schema.Unscheduled, f.ids[c]), strconv.FormatInt(expected, 10), rev, seq,
			keys.AllChecksFor(e), keys.CurrentChecks(e), e, streamCheck(c), f.ids[c])
	}
	applied, err := redis.Int(f.conn.Do("EVALSHA", args...))
	if err == nil && applied != floorBatch {
		err = fmt.Errorf("%d of %d applied", applied, floorBatch)
	}
	return err
}

// watched guards the plain writes without a script: one round trip WATCHes each event's check
// hash and window keys and reads the revisions and the windows' existence, Go compares, and a
// second sends the writes in MULTI/EXEC, which Redis refuses if a watched key changed between.
func (f *floorRun) watched(from int) error {
	keys := f.env.keys
	watch := make([]any, 0, 3*floorBatch)
	windows := make([]any, 0, 2*floorBatch)
	expected := make([]int64, 0, floorBatch)
	for i := from; i < from+floorBatch; i++ {
		c := i % f.checks
		id := f.ids[c]
		w1, w2 := keys.Maintenances(schema.Scheduled, id), keys.SortedMaintenanceTimestamps(schema.Unscheduled, id)
		watch = append(watch, keys.Check(id), w1, w2)
		windows = append(windows, w1, w2)
	}
	f.conn.Send("WATCH", watch...)
	for i := from; i < from+floorBatch; i++ {
		f.conn.Send("HGET", keys.Check(f.ids[i%f.checks]), "revision")
	}
	f.conn.Send("EXISTS", windows...)
	if err := f.conn.Flush(); err != nil {
		return err
	}
	if _, err := f.conn.Receive(); err != nil {
		return err
	}
	for i := 0; i < floorBatch; i++ {
		rev, err := redis.Int64(f.conn.Receive())
		if err != nil {
			return err
		}
		expected = append(expected, rev)
	}
	if n, err := redis.Int(f.conn.Receive()); err != nil || n != 0 {
		return fmt.Errorf("windows exist: %d, %v", n, err)
	}
	f.conn.Send("MULTI")
	if _, err := f.sendWrites(from, expected); err != nil {
		f.conn.Do("DISCARD")
		return err
	}
	f.conn.Send("HINCRBY", keys.EventCounters(), "ok", floorBatch)
	reply, err := f.conn.Do("EXEC")
	if err == nil && reply == nil {
		err = fmt.Errorf("EXEC refused: a watched key changed")
	}
	return err
}

// records are the executive's records for ok results decided on cached facts.
func (f *floorRun) records(from int) ([]model.Record, *model.Indexes) {
	keys := f.env.keys
	records := make([]model.Record, 0, floorBatch)
	idx := model.NewIndexes(keys, f.now)
	for i := from; i < from+floorBatch; i++ {
		c := i % f.checks
		expected, rev, seq := f.next(c)
		key := keys.Check(f.ids[c])
		w := checkstate.NoWindowsGuards(keys, f.ids[c])
		r := model.Record{Item: "-", Slot: i - from, Counter: "ok", Guards: []model.Guard{{Key: key, Revision: expected}, w[0], w[1]}}
		r.Ops.HSet(key, "last_update", f.now, "last_sequence", seq, "revision", rev)
		records = append(records, r)
		idx.Touch(i-from, streamEntity(c), streamCheck(c))
	}
	return records, idx
}

func (f *floorRun) apply(from int) error {
	records, idx := f.records(from)
	return f.applyAll(model.ApplyTarget{Counters: f.env.keys.EventCounters(), Indexes: idx}, records)
}

func (f *floorRun) claimAndApply(from int) error {
	batch, err := f.consumer.Next(context.Background(), floorBatch, time.Second)
	if err != nil {
		return err
	}
	if len(batch.Items) != floorBatch || !batch.Whole {
		return fmt.Errorf("claimed %d items (whole: %t)", len(batch.Items), batch.Whole)
	}
	records, idx := f.records(from)
	for i := range records {
		records[i].Item = batch.Items[i]
	}
	return f.applyAll(model.ApplyTarget{Processing: f.consumer.ProcessingKey(), Counters: f.env.keys.EventCounters(),
		Indexes: idx, ListLen: floorBatch}, records)
}

func (f *floorRun) applyAll(t model.ApplyTarget, records []model.Record) error {
	statuses, err := model.Apply(f.conn, t, records)
	if err != nil {
		return err
	}
	for i, st := range statuses {
		if st != model.Applied {
			return fmt.Errorf("record %d: status %d", i, st)
		}
	}
	return nil
}
