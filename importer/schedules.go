package importer

import (
	"context"
	"encoding/json"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/oncall"
	"github.com/flapjackgo/flapjack/schema"
)

// Schedules imports an on-call schedules file (`flapjack import schedules -f FILE`): an array of
// schedules, or {"schedules": [...]}, in the format docs/schedules.md describes (id, name,
// timezone, layers of name, start, turn, members and restrictions, overrides, fallback). Each
// record is checked by package oncall; every contact it names must exist (import contacts
// first). A schedule replaces the one stored under its id; schedules not in the file are left
// alone. Written by roster.PutSchedules.
func Schedules(ctx context.Context, conn redis.Conn, keys schema.Keys, data []byte, opts Options) (Report, error) {
	raws, err := records(data, "schedules")
	if err != nil {
		return Report{}, err
	}
	rep, _, err := importKeyed(raws, func(i int, raw json.RawMessage) (*keyed[*oncall.Schedule], []Problem) {
		s, problems := oncall.ParseSchedule(i, raw)
		out := make([]Problem, len(problems))
		for k, p := range problems {
			out[k] = Problem{Index: p.Index, ID: p.ID, Field: p.Field, Reason: p.Reason}
		}
		return &keyed[*oncall.Schedule]{index: i, id: s.ID, value: s}, out
	}, func(schedules []*oncall.Schedule, o roster.ReplaceOptions) (roster.BulkResult, error) {
		return roster.PutSchedules(ctx, conn, keys, schedules, o)
	}, opts)
	return rep, err
}
