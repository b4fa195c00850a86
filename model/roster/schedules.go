package roster

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/redisread"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/oncall"
	"github.com/flapjackgo/flapjack/schema"
)

// On-call schedules are stored whole, as their import-format JSON, in the schedules hash; an
// entity names the schedules it routes to in entity_schedules:ENTITY_ID and an escalation step
// in its Schedules. Who is on call is decided by package oncall, at the time routing asks.

// scheduleContacts lists every contact a schedule names, with the field naming it.
func scheduleContacts(s *oncall.Schedule) (ids, fields []string) {
	for i, l := range s.Layers {
		for j, m := range l.Members {
			ids, fields = append(ids, m), append(fields, fmt.Sprintf("layers[%d].members[%d]", i, j))
		}
	}
	for i, o := range s.Overrides {
		ids, fields = append(ids, o.Contact), append(fields, fmt.Sprintf("overrides[%d].contact", i))
	}
	for i, f := range s.Fallback {
		ids, fields = append(ids, f), append(fields, fmt.Sprintf("fallback[%d]", i))
	}
	return ids, fields
}

// PutSchedules adds or replaces schedules (by id), refusing any that names a contact that does
// not exist (has no contact:ID hash, as Flapjack 1.6 decides); schedules not named are left alone. Without opts.Partial any problem writes
// nothing. The schedules are valid already (they came out of oncall.Parse or oncall.New).
func PutSchedules(ctx context.Context, conn redis.Conn, keys schema.Keys, schedules []*oncall.Schedule, opts ReplaceOptions) (BulkResult, error) {
	static, norm := checkItems(schedules, "schedule", func(s *oncall.Schedule) error {
		if r := IDProblem(s.ID); r != "" {
			return &ValidationError{Errors: []FieldError{{Field: "id", Reason: r}}}
		}
		return nil
	}, func(s *oncall.Schedule) string { return s.ID }, func(s *oncall.Schedule) *oncall.Schedule { return s })
	var res BulkResult
	err := Guarded(ctx, conn, keys, func(t *Txn) (*model.Ops, error) {
		res = BulkResult{Refused: append([]bool(nil), static.Refused...), Problems: append([]Problem(nil), static.Problems...)}
		var b redisread.Batch
		watch := []string{keys.AllContacts(), keys.Schedules()}
		for i, s := range norm {
			if !res.Refused[i] {
				ids, _ := scheduleContacts(s)
				for _, c := range ids {
					watch = append(watch, keys.Contact(c))
				}
			}
		}
		t.Watch(&b, watch...)
		at := make([][]contactAt, len(norm))
		for i, s := range norm {
			if res.Refused[i] {
				continue
			}
			ids, _ := scheduleContacts(s)
			for _, c := range ids {
				at[i] = append(at[i], addContactExists(&b, keys, c))
			}
		}
		if err := b.Run(t.ctx, t.conn); err != nil {
			return nil, err
		}
		for i, s := range norm {
			if res.Refused[i] {
				continue
			}
			ids, fields := scheduleContacts(s)
			for k, c := range ids {
				if !at[i][k].exists(&b) {
					res.refuse(i, FieldError{Field: fields[k], Reason: fmt.Sprintf("contact %q does not exist", c), Err: ErrNotFound})
				}
			}
		}
		return putJSON(&res, opts, keys.Schedules(), norm, func(s *oncall.Schedule) string { return s.ID }), nil
	})
	if err != nil {
		return BulkResult{}, err
	}
	return res, nil
}

// Schedules reads every schedule, sorted by id. A stored value that cannot be read is returned
// as an error beside the readable schedules.
func Schedules(conn redis.Conn, keys schema.Keys) ([]*oncall.Schedule, []error, error) {
	m, err := AllScheduleDefs(conn, keys)
	if err != nil {
		return nil, nil, err
	}
	out, problems := decodeSchedules(m)
	return out, problems, nil
}

// AllScheduleDefs reads the stored JSON of every schedule by id, in one read.
func AllScheduleDefs(conn redis.Conn, keys schema.Keys) (map[string]string, error) {
	m, err := redis.StringMap(conn.Do("HGETALL", keys.Schedules()))
	if err != nil {
		return nil, fmt.Errorf("read schedules: %w", err)
	}
	return m, nil
}

// decodeSchedules decodes fields of the schedules hash (id -> JSON), sorted by id.
func decodeSchedules(m map[string]string) ([]*oncall.Schedule, []error) {
	out := make([]*oncall.Schedule, 0, len(m))
	var problems []error
	for id, raw := range m {
		s, err := oncall.Decode([]byte(raw))
		if err != nil {
			problems = append(problems, fmt.Errorf("schedule %s: %w", id, err))
			continue
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, problems
}

// EntitySchedules reads the schedule ids of entities by entity id.
func EntitySchedules(conn redis.Conn, keys schema.Keys, entityIDs []string) (map[string][]string, error) {
	for _, id := range entityIDs {
		conn.Send("SMEMBERS", keys.EntitySchedules(id))
	}
	out := make(map[string][]string, len(entityIDs))
	if len(entityIDs) == 0 {
		return out, nil
	}
	if err := conn.Flush(); err != nil {
		return nil, fmt.Errorf("read entity schedules: %w", err)
	}
	for _, id := range entityIDs {
		ids, err := redis.Strings(conn.Receive())
		if err != nil {
			return nil, fmt.Errorf("read schedules of entity %s: %w", id, err)
		}
		sort.Strings(ids)
		out[id] = ids
	}
	return out, nil
}

// ScheduleDefs reads the stored JSON of schedules by id; a schedule that does not exist is absent.
func ScheduleDefs(conn redis.Conn, keys schema.Keys, ids []string) (map[string]string, error) {
	out := make(map[string]string, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, 0, len(ids)+1)
	args = append(args, keys.Schedules())
	for _, id := range ids {
		args = append(args, id)
	}
	vals, err := redis.Values(conn.Do("HMGET", args...))
	if err != nil {
		return nil, fmt.Errorf("read schedules: %w", err)
	}
	for i, v := range vals {
		if s, err := redis.String(v, nil); err == nil {
			out[ids[i]] = s
		}
	}
	return out, nil
}

// ScheduleEntities maps each schedule id some entity routes to onto those entities' ids, sorted.
// It reads every imported entity's entity_schedules set (entities are listed in
// all_entity_names_by_id, which the import writes, as it writes the sets), pipelined.
func ScheduleEntities(conn redis.Conn, keys schema.Keys) (map[string][]string, error) {
	ids, err := redis.Strings(conn.Do("HKEYS", keys.EntityNamesByID()))
	if err != nil {
		return nil, fmt.Errorf("read entities: %w", err)
	}
	byEntity, err := EntitySchedules(conn, keys, ids)
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for id, schedules := range byEntity {
		for _, s := range schedules {
			out[s] = append(out[s], id)
		}
	}
	for _, ids := range out {
		sort.Strings(ids)
	}
	return out, nil
}

// ScheduleContacts is every contact a schedule names (members, overrides, fallback), sorted,
// once each.
func ScheduleContacts(s *oncall.Schedule) []string {
	ids, _ := scheduleContacts(s)
	sort.Strings(ids)
	return slices.Compact(ids)
}

// AddOverride puts contact on call in schedule id over [start, end), above its layers: the
// stored schedule is read and written back with the override appended, in one guarded write, so
// overrides added at once by two people are both kept. The contact must exist; a schedule that
// does not exist is a *NotFoundError.
func AddOverride(ctx context.Context, conn redis.Conn, keys schema.Keys, id string, o oncall.Override) error {
	return Guarded(ctx, conn, keys, func(t *Txn) (*model.Ops, error) {
		var b redisread.Batch
		t.Watch(&b, keys.Schedules(), keys.AllContacts(), keys.Contact(o.Contact))
		rawAt := b.Add("HGET", keys.Schedules(), id)
		knownAt := addContactExists(&b, keys, o.Contact)
		if err := b.Run(t.ctx, t.conn); err != nil {
			return nil, err
		}
		raw := b.Str(rawAt)
		if raw == "" {
			return nil, &NotFoundError{What: "schedule", IDs: []string{id}}
		}
		if !knownAt.exists(&b) {
			return nil, &NotFoundError{What: "contact", IDs: []string{o.Contact}}
		}
		s, err := oncall.Decode([]byte(raw))
		if err != nil {
			return nil, fmt.Errorf("schedule %s as stored: %w", id, err)
		}
		def := *s
		def.Overrides = append(slices.Clone(s.Overrides), o)
		next, err := oncall.New(def)
		if err != nil {
			return nil, &ValidationError{Errors: []FieldError{{Field: "overrides", Reason: err.Error()}}}
		}
		payload, _ := json.Marshal(next)
		var ops model.Ops
		ops.HSet(keys.Schedules(), id, string(payload))
		return &ops, nil
	})
}
