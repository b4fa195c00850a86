package model

import (
	"reflect"
	"testing"
)

// TestApplyArgsShortForm: the executive's usual record (a check's revision guarded, its window
// keys guarded absent, its hash's HSET first) goes in the script's short form; a record whose
// first write is another one, or whose second guard is a revision, goes whole.
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
		{"usual", usual, []any{"item", "H", "check:a:b", "7", 2, "a:b:scheduled_maintenances", "a:b:sorted_unscheduled_maintenance_timestamps",
			"ok", 4, "last_update", 100, "revision", 8, 1, "RPUSH", 2, "notifications", "n"}},
		{"another write first", otherFirst, []any{"item", 1, "check:a:b", "7", "ok", 2, "RPUSH", 2, "notifications", "n",
			"HSET", 3, "check:a:b", "revision", 8}},
		{"two revisions", twoRevisions, []any{"item", 2, "check:a:b", "7", "contact:1", "2", "", 2,
			"HSET", 3, "check:a:b", "revision", 8, "HSET", 3, "contact:1", "revision", 3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := ApplyArgs(ApplyTarget{}, []Record{c.record})
			if got := args[8:]; !reflect.DeepEqual(got, c.want) {
				t.Errorf("record sent as\n%v\nwant\n%v", got, c.want)
			}
		})
	}
}
