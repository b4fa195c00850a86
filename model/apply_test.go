package model_test

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/schema"
)

// TestApplyFinishesItems applies batches against a processing list holding the batch, the batch
// and later items, part of the batch (a peer requeued the rest), duplicates, and a list too long
// to be rewritten, and checks each record's status, its writes, and exactly what stays claimed,
// in order. With ListLen (a whole claimed batch, or a part of one with the rest newer) the items
// are left out of the call and named by their slots; when a peer's requeue reached them, the call
// is sent again with them, with the same outcome.
func TestApplyFinishesItems(t *testing.T) {
	t.Parallel()
	items := func(prefix string, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf(`{"item":"%s%d"}`, prefix, i)
		}
		return out
	}
	cases := []struct {
		name string
		// list is the processing list head first (the newest claim at its head)
		list []string
		// batch is the records' items, oldest claim first; conflict marks records whose guard moved
		batch    []string
		conflict map[int]bool
		want     []model.Status
		left     []string
		listLen  int // model.ApplyTarget.ListLen
		calls    int // script calls expected with listLen: 1 without items, 2 when sent again
	}{
		{name: "whole batch", list: reverse(items("a", 10)), batch: items("a", 10),
			want: statuses(10, nil, nil), left: []string{}},
		{name: "one record (LREM)", list: []string{"x", "y"}, batch: []string{"y"},
			want: []model.Status{model.Applied}, left: []string{"x"}},
		{name: "later items stay", list: append([]string{"later1", "later0"}, reverse(items("a", 10))...),
			batch: items("a", 10), want: statuses(10, nil, nil), left: []string{"later1", "later0"}},
		{name: "requeued by a peer", list: reverse(items("a", 10)[:6]), batch: items("a", 10),
			want: statuses(10, map[int]bool{6: true, 7: true, 8: true, 9: true}, nil), left: []string{}},
		{name: "conflicts stay claimed", list: reverse(items("a", 10)), batch: items("a", 10),
			conflict: map[int]bool{2: true, 5: true},
			want:     statuses(10, nil, map[int]bool{2: true, 5: true}), left: []string{`{"item":"a5"}`, `{"item":"a2"}`}},
		{name: "duplicates", list: []string{"d", "e", "d", "d", "e", "f", "g", "h", "i"},
			batch: []string{"d", "d", "e", "f", "g", "h", "i", "j"},
			want:  statuses(8, map[int]bool{7: true}, nil), left: []string{"d", "e"}},
		{name: "list too long (LREM)", list: append(reverse(items("later", 20)), reverse(items("a", 8))...),
			batch: items("a", 8), want: statuses(8, nil, nil), left: reverse(items("later", 20))},
		{name: "whole batch, items left out", list: reverse(items("a", 10)), batch: items("a", 10), listLen: 10, calls: 1,
			want: statuses(10, nil, nil), left: []string{}},
		{name: "whole batch of one, item left out", list: []string{"y"}, batch: []string{"y"}, listLen: 1, calls: 1,
			want: []model.Status{model.Applied}, left: []string{}},
		{name: "items left out, conflicts stay claimed", list: reverse(items("a", 10)), batch: items("a", 10), listLen: 10, calls: 1,
			conflict: map[int]bool{2: true, 5: true},
			want:     statuses(10, nil, map[int]bool{2: true, 5: true}), left: []string{`{"item":"a5"}`, `{"item":"a2"}`}},
		{name: "items left out, requeued by a peer: sent again", list: reverse(items("a", 10)[:6]), batch: items("a", 10), listLen: 10, calls: 2,
			want: statuses(10, map[int]bool{6: true, 7: true, 8: true, 9: true}, nil), left: []string{}},
		{name: "items left out, newer items stay", list: append([]string{"later1", "later0"}, reverse(items("a", 10))...),
			batch: items("a", 10), listLen: 10, calls: 1, want: statuses(10, nil, nil), left: []string{"later1", "later0"}},
		{name: "more items claimed than records: items sent", list: reverse(items("a", 10)), batch: items("a", 8), listLen: 10, calls: 1,
			want: statuses(8, nil, nil), left: reverse(items("a", 10)[8:])},
		{name: "items left out, duplicates and a conflict", list: []string{"f", "e", "d", "e", "d"}, batch: []string{"d", "e", "d", "e", "f"},
			listLen: 5, calls: 1, conflict: map[int]bool{2: true}, want: statuses(5, nil, map[int]bool{2: true}), left: []string{"d"}},
		{name: "a batch's first part, items left out", list: reverse(items("a", 10)), batch: items("a", 4), listLen: 4, calls: 1,
			want: statuses(4, nil, nil), left: reverse(items("a", 10)[4:])},
		{name: "a part's conflict stays claimed, at the head", list: reverse(items("a", 10)), batch: items("a", 4), listLen: 4, calls: 1,
			conflict: map[int]bool{1: true}, want: statuses(4, nil, map[int]bool{1: true}),
			left: append([]string{`{"item":"a1"}`}, reverse(items("a", 10)[4:])...)},
		{name: "a part after a part that left an item claimed", list: append([]string{"kept"}, reverse(items("a", 10)[4:])...),
			batch: items("a", 10)[4:7], listLen: 3, calls: 1,
			want: statuses(3, nil, nil), left: append([]string{"kept"}, reverse(items("a", 10)[7:])...)},
		{name: "a part, a peer's requeue reached its items: sent again", list: reverse(items("a", 10)[:3]), batch: items("a", 4), listLen: 4, calls: 2,
			want: statuses(4, map[int]bool{3: true}, nil), left: []string{}},
		{name: "a part whose earlier part still holds the tail: sent again", list: reverse(items("a", 10)),
			batch: items("a", 10)[4:8], listLen: 4, calls: 2,
			want: statuses(4, nil, nil), left: append(reverse(items("a", 10)[8:]), reverse(items("a", 4))...)},
		{name: "an older stray item at the tail: sent again", list: append(reverse(items("a", 4)), "stray"),
			batch: items("a", 4), listLen: 4, calls: 2, want: statuses(4, nil, nil), left: []string{"stray"}},
		{name: "a part, a peer's requeue short of its items", list: reverse(items("a", 10)[:5]), batch: items("a", 4), listLen: 4, calls: 1,
			want: statuses(4, nil, nil), left: []string{`{"item":"a4"}`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			db := testredis.New(t)
			conn := db.Conn(t)
			const processing = "executive_processing:host:1"
			for _, it := range c.list {
				db.Do(t, "RPUSH", processing, it)
			}
			records := make([]model.Record, len(c.batch))
			for i, it := range c.batch {
				key := fmt.Sprintf("check:e%d:c", i)
				db.Do(t, "HSET", key, "revision", 3)
				rev := int64(3)
				if c.conflict[i] {
					rev = 2
				}
				records[i] = model.Record{Item: it, Slot: i, Counter: "ok", Guards: []model.Guard{{Key: key, Revision: rev}}}
				records[i].Ops.HSet(key, "summary", "summary of "+it)
			}
			var calls [][]any
			got, err := model.Apply(argsConn{conn, &calls}, model.ApplyTarget{Processing: processing, Counters: "event_counters", ListLen: c.listLen}, records)
			if err != nil {
				t.Fatal(err)
			}
			if c.listLen > 0 {
				if len(calls) != c.calls {
					t.Errorf("%d script calls, want %d", len(calls), c.calls)
				}
				leftOut := len(c.batch) == c.listLen
				if sent := sendsItems(calls[0], c.batch); sent == leftOut {
					t.Errorf("first call sent the items: %v, want %v", sent, !leftOut)
				}
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("statuses %v, want %v", got, c.want)
			}
			left, err := redis.Strings(conn.Do("LRANGE", processing, 0, -1))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(left, c.left) {
				t.Errorf("left claimed %q, want %q", left, c.left)
			}
			applied := 0
			for i, st := range got {
				summary, _ := redis.String(conn.Do("HGET", fmt.Sprintf("check:e%d:c", i), "summary"))
				if (st == model.Applied) != (summary == "summary of "+c.batch[i]) {
					t.Errorf("record %d (%v): summary %q", i, st, summary)
				}
				if st == model.Applied {
					applied++
				}
			}
			if n, _ := redis.Int(conn.Do("HGET", "event_counters", "ok")); n != applied {
				t.Errorf("event_counters ok = %d, want %d", n, applied)
			}
		})
	}
}

// argsConn keeps the arguments of every command it sends.
type argsConn struct {
	redis.Conn
	calls *[][]any
}

func (c argsConn) Do(cmd string, args ...any) (any, error) {
	reply, err := c.Conn.Do(cmd, args...)
	if err == nil || !strings.HasPrefix(err.Error(), "NOSCRIPT") {
		*c.calls = append(*c.calls, append([]any(nil), args...)) // Apply recycles its arguments
	}
	return reply, err
}

// sendsItems reports whether the apply call args (EVALSHA's: hash, key count, ARGV) sends any of
// items as a record's item; the list's two end items (ARGV[8] and ARGV[9]) do not count.
func sendsItems(args []any, items []string) bool {
	for _, a := range args[11:] {
		for _, it := range items {
			if s, ok := a.(string); ok && s == it {
				return true
			}
		}
	}
	return false
}

func reverse(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}

// statuses is n Applied statuses with lost and conflict ones at the given indexes.
func statuses(n int, lost, conflict map[int]bool) []model.Status {
	out := make([]model.Status, n)
	for i := range out {
		switch {
		case lost[i]:
			out[i] = model.Lost
		case conflict[i]:
			out[i] = model.Conflict
		default:
			out[i] = model.Applied
		}
	}
	return out
}

// recordForm is one of the ways the apply script takes a record.
type recordForm int

const (
	shapedForm  recordForm = iota // the guarded hash's HSET alone: shaped
	shortForm                     // the guarded hash's HSET first, then other writes: short
	genericForm                   // another write first: generic
)

// addWrites gives r an HSET of key and, unless f is shapedForm, another write, in f's order.
func addWrites(r *model.Record, f recordForm, key string, fieldValues []any, other func(o *model.Ops)) {
	if f == genericForm {
		other(&r.Ops)
	}
	r.Ops.HSet(key, fieldValues...)
	if f == shortForm {
		other(&r.Ops)
	}
}

// inEveryForm runs test in parallel subtests for each way the apply script takes a record.
func inEveryForm(t *testing.T, test func(t *testing.T, f recordForm)) {
	for _, form := range []struct {
		name string
		form recordForm
	}{{"shaped form", shapedForm}, {"short form", shortForm}, {"generic form", genericForm}} {
		t.Run(form.name, func(t *testing.T) {
			t.Parallel()
			test(t, form.form)
		})
	}
}

// TestApplyAbsentGuards: a record guarded by keys that must not exist is applied while none of
// them exists, and is a conflict (nothing written, no revision moved) once one does, whichever
// of its keys it is and whatever other records of the batch hold.
func TestApplyAbsentGuards(t *testing.T) {
	t.Parallel()
	inEveryForm(t, testApplyAbsentGuards)
}

func testApplyAbsentGuards(t *testing.T, form recordForm) {
	cases := []struct {
		name     string
		existing []string // keys created before the apply
		want     []model.Status
	}{
		{name: "none exists", want: statuses(3, nil, nil)},
		{name: "first key of record 1", existing: []string{"windows:1:a"}, want: statuses(3, nil, map[int]bool{1: true})},
		{name: "second key of record 2", existing: []string{"windows:2:b"}, want: statuses(3, nil, map[int]bool{2: true})},
		{name: "keys of two records", existing: []string{"windows:0:b", "windows:2:a"}, want: statuses(3, nil, map[int]bool{0: true, 2: true})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			db := testredis.New(t)
			conn := db.Conn(t)
			for _, k := range c.existing {
				db.Do(t, "ZADD", k, 1, "x")
			}
			records := make([]model.Record, 3)
			for i := range records {
				key := fmt.Sprintf("check:e%d:c", i)
				db.Do(t, "HSET", key, "revision", 3)
				records[i].Guards = []model.Guard{{Key: key, Revision: 3},
					{Key: fmt.Sprintf("windows:%d:a", i), Absent: true}, {Key: fmt.Sprintf("windows:%d:b", i), Absent: true}}
				addWrites(&records[i], form, key, []any{"summary", "applied", "revision", 4}, func(o *model.Ops) { o.RPush("log", i) })
			}
			got, err := model.Apply(conn, model.ApplyTarget{}, records)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("statuses %v, want %v", got, c.want)
			}
			logged, _ := redis.Int(conn.Do("LLEN", "log"))
			if want := 3 - len(c.existing); form != shapedForm && logged != want {
				t.Errorf("%d records' other writes done, want %d", logged, want)
			}
			for i, st := range got {
				fields, _ := redis.StringMap(conn.Do("HGETALL", fmt.Sprintf("check:e%d:c", i)))
				want := map[string]string{"revision": "3"}
				if st == model.Applied {
					want = map[string]string{"revision": "4", "summary": "applied"}
				}
				if !reflect.DeepEqual(fields, want) {
					t.Errorf("record %d (%v): check hash %v, want %v", i, st, fields, want)
				}
			}
		})
	}
}

// TestApplyReportsRefusedWrites: a write Redis refuses (a key of the wrong type left by another
// tool) is reported with its record and command, and the record is still finished with its
// other writes.
func TestApplyReportsRefusedWrites(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	conn := db.Conn(t)
	const processing = "executive_processing:host:1"
	db.Do(t, "RPUSH", processing, "b", "a")
	db.Do(t, "SADD", "other", "x")
	records := []model.Record{{Item: "a", Guards: []model.Guard{{Key: "check:a"}}}, {Item: "b", Guards: []model.Guard{{Key: "check:b"}}}}
	records[0].Ops.HSet("check:a", "revision", 1)
	records[1].Ops.HSet("check:b", "revision", 1)
	records[1].Ops.HSet("other", "field", "refused")
	got, err := model.Apply(conn, model.ApplyTarget{Processing: processing}, records)
	var refused *model.WriteError
	if !errors.As(err, &refused) || len(refused.Messages) != 1 || !strings.HasPrefix(refused.Messages[0], "2: HSET other: WRONGTYPE") {
		t.Fatalf("error %v, want record 2's HSET of other refused", err)
	}
	if !reflect.DeepEqual(got, statuses(2, nil, nil)) {
		t.Errorf("statuses %v, want both applied", got)
	}
	if n, _ := redis.Int(conn.Do("LLEN", processing)); n != 0 {
		t.Errorf("%d items left claimed", n)
	}
	for _, key := range []string{"check:a", "check:b"} {
		if v, _ := redis.String(conn.Do("HGET", key, "revision")); v != "1" {
			t.Errorf("%s revision %q, want 1", key, v)
		}
	}
}

// TestApplyChainedGuards: records guarding one key in a chain (each expecting the revision the
// one before leaves) apply in turn; once one of them is not applied, none after it that guards
// the same key is, even when someone else's write moved the revision to what it expects.
func TestApplyChainedGuards(t *testing.T) {
	t.Parallel()
	inEveryForm(t, testApplyChainedGuards)
}

func testApplyChainedGuards(t *testing.T, form recordForm) {
	cases := []struct {
		name     string
		start    int64 // the key's revision when the apply runs (the records were decided at 3)
		want     []model.Status
		revision string // the key's revision after
	}{
		{name: "nobody else wrote", start: 3, want: []model.Status{model.Applied, model.Applied, model.Applied, model.Applied}, revision: "6"},
		{name: "someone else bumped it once", start: 4,
			want: []model.Status{model.Conflict, model.Conflict, model.Conflict, model.Applied}, revision: "4"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			db := testredis.New(t)
			conn := db.Conn(t)
			db.Do(t, "HSET", "state:ada", "revision", c.start)
			db.Do(t, "HSET", "state:bob", "revision", 7)
			var records []model.Record
			for i := int64(0); i < 3; i++ {
				var r model.Record
				r.Guards = []model.Guard{{Key: "state:ada", Revision: 3 + i}}
				alert := func(o *model.Ops) { o.RPush("alerts", fmt.Sprintf("ada %d", i)) }
				if form == genericForm {
					alert(&r.Ops) // Apply adds the revision's HSET after it
				} else {
					addWrites(&r, form, "state:ada", []any{"revision", 4 + i}, alert)
				}
				records = append(records, r)
			}
			// a record of another contact applies whatever happened to ada's
			var bob model.Record
			bob.Guards = []model.Guard{{Key: "state:bob", Revision: 7}}
			bob.Ops.RPush("alerts", "bob")
			records = append(records, bob)
			got, err := model.Apply(conn, model.ApplyTarget{}, records)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("statuses %v, want %v", got, c.want)
			}
			if rev, _ := redis.String(conn.Do("HGET", "state:ada", "revision")); rev != c.revision {
				t.Errorf("ada's revision %s, want %s", rev, c.revision)
			}
			alerts, _ := redis.Strings(conn.Do("LRANGE", "alerts", 0, -1))
			var want []string
			for i, st := range c.want[:3] {
				if st == model.Applied && form != shapedForm {
					want = append(want, fmt.Sprintf("ada %d", i))
				}
			}
			if want = append(want, "bob"); !reflect.DeepEqual(alerts, want) {
				t.Errorf("alerts %q, want %q", alerts, want)
			}
		})
	}
}

// TestApplyGuardOfTheWrongType: a guarded key of the wrong type (left by another tool) makes its
// record a conflict; the records around it apply, and the items of all of them leave the
// processing list as usual (nothing is written twice by a call aborted half-way).
func TestApplyGuardOfTheWrongType(t *testing.T) {
	t.Parallel()
	inEveryForm(t, testApplyGuardOfTheWrongType)
}

func testApplyGuardOfTheWrongType(t *testing.T, form recordForm) {
	db := testredis.New(t)
	conn := db.Conn(t)
	var records []model.Record
	for i := 0; i < 10; i++ {
		key := fmt.Sprintf("state:%d", i)
		db.Do(t, "HSET", key, "revision", 1)
		var r model.Record
		r.Item = fmt.Sprintf("item-%d", i)
		r.Guards = []model.Guard{{Key: key, Revision: 1}}
		alert := func(o *model.Ops) { o.RPush("alerts", i) }
		if form == genericForm {
			alert(&r.Ops) // Apply adds the revision's HSET after it
		} else {
			addWrites(&r, form, key, []any{"revision", 2}, alert)
		}
		records = append(records, r)
		db.Do(t, "LPUSH", "processing", r.Item)
	}
	db.Do(t, "DEL", "state:4")
	db.Do(t, "SET", "state:4", "not a hash")
	got, err := model.Apply(conn, model.ApplyTarget{Processing: "processing"}, records)
	if err != nil {
		t.Fatal(err)
	}
	want := statuses(10, nil, map[int]bool{4: true})
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("statuses %v, want %v", got, want)
	}
	left, _ := redis.Strings(conn.Do("LRANGE", "processing", 0, -1))
	alerts, _ := redis.Strings(conn.Do("LRANGE", "alerts", 0, -1))
	wantAlerts := 9
	if form == shapedForm {
		wantAlerts = 0
	}
	if !reflect.DeepEqual(left, []string{"item-4"}) || len(alerts) != wantAlerts {
		t.Fatalf("processing list %v, alerts %v: want only item-4 left and %d alerts", left, alerts, wantAlerts)
	}
	for i := 0; i < 10; i++ {
		if rev, _ := redis.String(conn.Do("HGET", fmt.Sprintf("state:%d", i), "revision")); i != 4 && rev != "2" {
			t.Errorf("state:%d revision %q, want 2", i, rev)
		}
	}
}

// TestApplyWritesIndexes: the checks of a batch whose records apply are marked current in all
// four indexes with the batch's score, in slices when they are many (a batch of up to 10,000
// checks once overflowed the Lua stack as one ZADD); a check whose record conflicted is not; an
// index of the wrong type is reported and the rest is written.
func TestApplyWritesIndexes(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	conn := db.Conn(t)
	keys := schema.NewKeys("")
	const now = 1767607200
	db.Do(t, "HSET", "check:moved", "revision", 5)
	db.Do(t, "SET", keys.CurrentChecks("wrong.example.com"), "a string")
	idx := model.NewIndexes(keys, now)
	records := []model.Record{{Guards: []model.Guard{{Key: "check:moved", Revision: 4}}}}
	records[0].Ops.HSet("check:moved", "state", "critical")
	idx.Touch(0, "big.example.com", "moved")
	idx.Touch(0, "conflicted.example.com", "moved")
	touch := func(entity, check string) {
		idx.Touch(len(records), entity, check)
		records = append(records, model.Record{})
	}
	for i := 0; i < 4600; i++ {
		touch("big.example.com", fmt.Sprintf("check %d", i))
	}
	for i := 0; i < 700; i++ {
		touch(fmt.Sprintf("host-%d.example.com", i), "PING")
	}
	touch("wrong.example.com", "PING")
	got, err := model.Apply(conn, model.ApplyTarget{Indexes: idx}, records)
	var refused *model.WriteError
	if !errors.As(err, &refused) || len(refused.Messages) != 1 ||
		!strings.HasPrefix(refused.Messages[0], "indexes: ZADD current_checks:wrong.example.com: WRONGTYPE") {
		t.Fatalf("error %v, want the ZADD of current_checks:wrong.example.com refused", err)
	}
	if got[0] != model.Conflict || slices.ContainsFunc(got[1:], func(s model.Status) bool { return s != model.Applied }) {
		t.Errorf("statuses %v, want the first record's conflict and the rest applied", got)
	}
	for key, want := range map[string]int{
		keys.AllChecks(): 5301, keys.CurrentEntities(): 702,
		keys.AllChecksFor("big.example.com"): 4600, keys.CurrentChecks("big.example.com"): 4600,
		keys.AllChecksFor("host-699.example.com"): 1, keys.CurrentChecks("host-0.example.com"): 1,
		keys.AllChecksFor("wrong.example.com"): 1, keys.AllChecksFor("conflicted.example.com"): 0,
	} {
		if n, _ := redis.Int(conn.Do("ZCARD", key)); n != want {
			t.Errorf("%s holds %d members, want %d", key, n, want)
		}
		if n, _ := redis.Int(conn.Do("ZCOUNT", key, now, now)); n != want {
			t.Errorf("%s holds %d members scored %d, want %d", key, n, now, want)
		}
	}
	for key, member := range map[string]string{
		keys.AllChecks(): "big.example.com:check 4599", keys.CurrentEntities(): "host-350.example.com",
		keys.CurrentChecks("big.example.com"): "check 0",
	} {
		if _, err := redis.Int64(conn.Do("ZSCORE", key, member)); err != nil {
			t.Errorf("%s has no member %q: %v", key, member, err)
		}
	}
	for key, member := range map[string]string{
		keys.AllChecks(): "big.example.com:moved", keys.CurrentEntities(): "conflicted.example.com",
		keys.CurrentChecks("big.example.com"): "moved",
	} {
		if score, err := conn.Do("ZSCORE", key, member); score != nil || err != nil {
			t.Errorf("%s has %q (score %v, %v), whose record conflicted", key, member, score, err)
		}
	}
}
