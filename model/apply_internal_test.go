package model

import (
	"fmt"
	"reflect"
	"testing"
)

// TestApplyArgsShortForm: the executive's usual record with more writes than its hash's HSET (a
// check's revision guarded, its window keys guarded absent, its hash's HSET first) goes in the
// script's short form; a record whose first write is another one, or whose second guard is a
// revision, goes whole.
func TestApplyArgsShortForm(t *testing.T) {
	usual := Record{Item: "item", Counter: "ok", Guards: []Guard{{Key: "check:a:b", Revision: 7},
		{Key: "a:b:scheduled_maintenances", Absent: true}, {Key: "a:b:sorted_unscheduled_maintenance_timestamps", Absent: true}}}
	usual.Ops.HSet("check:a:b", "last_update", 100, "revision", 8)
	usual.Ops.RPush("notifications", "n")
	otherFirst := Record{Item: "item", Counter: "ok", Guards: []Guard{{Key: "check:a:b", Revision: 7}}}
	otherFirst.Ops.RPush("notifications", "n")
	otherFirst.Ops.HSet("check:a:b", "revision", 8)
	twoRevisions := Record{Item: "item", Guards: []Guard{{Key: "check:a:b", Revision: 7}, {Key: "contact:1", Revision: 2}}}
	twoRevisions.Ops.HSet("check:a:b", "revision", 8)
	twoRevisions.Ops.HSet("contact:1", "revision", 3)
	cases := []struct {
		name   string
		record Record
		want   []any
	}{
		{"usual", usual, []any{0, "item", "H", "check:a:b", "7", 2, "a:b:scheduled_maintenances", "a:b:sorted_unscheduled_maintenance_timestamps",
			"ok", 4, "last_update", 100, "revision", 8, 1, "RPUSH", 2, "notifications", "n"}},
		{"another write first", otherFirst, []any{0, "item", 1, "check:a:b", "7", "ok", 2, "RPUSH", 2, "notifications", "n",
			"HSET", 3, "check:a:b", "revision", 8}},
		{"two revisions", twoRevisions, []any{0, "item", 2, "check:a:b", "7", "contact:1", "2", "", 2,
			"HSET", 3, "check:a:b", "revision", 8, "HSET", 3, "contact:1", "revision", 3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := ApplyArgs(ApplyTarget{}, []Record{c.record})
			if got := args[10:]; !reflect.DeepEqual(got, c.want) {
				t.Errorf("record sent as\n%v\nwant\n%v", got, c.want)
			}
		})
	}
}

// TestApplyArgsShapedForm: records whose only write is their hash's HSET go in the shaped form,
// the counter, the absent key count and the field names sent once per shape, in the order the
// shapes first appear; each record sends its hash, revision, absent keys and values.
func TestApplyArgsShapedForm(t *testing.T) {
	record := func(check string, revision int64, counter string, fieldValues ...any) Record {
		key := "check:a:" + check
		r := Record{Counter: counter, Guards: []Guard{{Key: key, Revision: revision}, {Key: "a:" + check + ":scheduled_maintenances", Absent: true}}}
		r.Ops.HSet(key, fieldValues...)
		return r
	}
	records := []Record{
		record("b", 7, "ok", "last_update", 100, "revision", 8),
		record("c", 3, "ok", "last_update", 100, "summary", "fine", "revision", 4),
		record("d", 5, "ok", "last_update", 101, "revision", 6),
		record("e", 1, "failure", "last_update", 101, "revision", 2),
	}
	for i := range records {
		records[i].Item, records[i].Slot = "item", i
	}
	want := []any{3,
		"ok", 1, 2, "last_update", "revision",
		"ok", 1, 3, "last_update", "summary", "revision",
		"failure", 1, 2, "last_update", "revision",
		0, "S1", "check:a:b", "7", "a:b:scheduled_maintenances", 100, 8,
		1, "S2", "check:a:c", "3", "a:c:scheduled_maintenances", 100, "fine", 4,
		2, "S1", "check:a:d", "5", "a:d:scheduled_maintenances", 101, 6,
		3, "S3", "check:a:e", "1", "a:e:scheduled_maintenances", 101, 2,
	}
	args := ApplyArgs(ApplyTarget{ListLen: len(records)}, records)
	if got := args[10:]; !reflect.DeepEqual(got, want) {
		t.Errorf("records sent as\n%v\nwant\n%v", got, want)
	}
}

// TestApplyArgsShapeLimits: records differing only in their absent keys' count are shapes of
// their own; beyond four shapes, and for an HSET with a field left without a value, records go
// in the short form.
func TestApplyArgsShapeLimits(t *testing.T) {
	odd := Record{Item: "item", Counter: "ok", Guards: []Guard{{Key: "check:a:odd", Revision: 1}}}
	odd.Ops.HSet("check:a:odd", "revision", 2, "summary")
	records := []Record{odd}
	for i := range 6 {
		key := fmt.Sprintf("check:a:%d", i)
		r := Record{Item: "item", Counter: "ok", Guards: []Guard{{Key: key, Revision: 1}}}
		for a := range i {
			r.Guards = append(r.Guards, Guard{Key: fmt.Sprintf("w:%d:%d", i, a), Absent: true})
		}
		r.Ops.HSet(key, "revision", 2)
		records = append(records, r)
	}
	args := ApplyArgs(ApplyTarget{}, records)
	if n := args[10]; n != 4 {
		t.Fatalf("%v shapes, want 4", n)
	}
	var forms []any
	for i, a := range args[:len(args)-1] {
		if a == "item" {
			forms = append(forms, args[i+1])
		}
	}
	want := []any{"H", "S1", "S2", "S3", "S4", "H", "H"}
	if !reflect.DeepEqual(forms, want) {
		t.Errorf("records sent in the forms %v, want %v", forms, want)
	}
}
