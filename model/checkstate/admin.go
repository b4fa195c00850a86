package checkstate

import (
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/schema"
)

// ErrNoSuchWindow is returned when a maintenance window to end does not exist or is over.
var ErrNoSuchWindow = errors.New("no such maintenance window (or it has already ended)")

// maxAdminAttempts bounds retries when events keep changing the check under an admin action.
const maxAdminAttempts = 20

// adminWrite reads a check's facts at now, lets build decide the writes, and applies them
// guarded by the check's revision (so a concurrent executive re-reads), retrying on conflict.
func adminWrite(conn redis.Conn, keys schema.Keys, entity, check string, now time.Time,
	build func(f *CheckFacts, w *CheckWriter) error) error {
	for attempt := 0; attempt < maxAdminAttempts; attempt++ {
		facts, err := ReadFacts(conn, keys, now, []FactsRequest{{Entity: entity, Check: check, Mode: ModeRollup}})
		if err != nil {
			return err
		}
		f := &facts[0]
		rec := model.Record{Guards: []model.Guard{{Key: keys.Check(f.ID), Revision: f.Revision}}}
		w := NewCheckWriter(keys, entity, check, &rec.Ops)
		if err := build(f, w); err != nil {
			return err
		}
		w.Flush(f.Revision + 1)
		statuses, err := model.Apply(conn, model.ApplyTarget{}, []model.Record{rec})
		if err != nil {
			return fmt.Errorf("%s:%s: %w", entity, check, err)
		}
		if statuses[0] == model.Applied {
			return nil
		}
	}
	return fmt.Errorf("%s:%s kept changing; try again", entity, check)
}

// CreateScheduledMaintenance stores a scheduled window (docs/flapjack-1x.md 2.6 Create: a window with the
// same start is replaced) and revalidates the current-maintenance key.
func CreateScheduledMaintenance(conn redis.Conn, keys schema.Keys, entity, check string, start time.Time, duration time.Duration, summary string, now time.Time) error {
	if duration < time.Second {
		return fmt.Errorf("scheduled maintenance needs a duration of at least 1 second, got %v", duration)
	}
	s, d := start.Unix(), int64(duration/time.Second)
	return adminWrite(conn, keys, entity, check, now, func(f *CheckFacts, w *CheckWriter) error {
		windows, err := scheduledWindows(conn, keys, f.ID)
		if err != nil {
			return err
		}
		_, replacing := windows[s]
		w.StoreMaintenance(schema.Scheduled, s, d, summary, replacing)
		windows[s] = d
		w.SyncCurrentMaintenance(schema.Scheduled, coveringLast(windows, now.Unix()), Window{}, f.ScheduledCurrent, now.Unix())
		if f.State == "" {
			w.TouchIndexes(now.Unix())
		}
		return nil
	})
}

// EndScheduledMaintenance ends the window starting at start (docs/flapjack-1x.md 2.6 End): a future
// window is deleted, a running one is shortened to end now, a finished one is an error. The
// current-maintenance key is revalidated: another window covering now takes over at once.
func EndScheduledMaintenance(conn redis.Conn, keys schema.Keys, entity, check string, start time.Time, now time.Time) error {
	s := start.Unix()
	return adminWrite(conn, keys, entity, check, now, func(f *CheckFacts, w *CheckWriter) error {
		windows, err := scheduledWindows(conn, keys, f.ID)
		if err != nil {
			return err
		}
		duration, ok := windows[s]
		n := now.Unix()
		switch {
		case !ok:
			return ErrNoSuchWindow
		case s > n:
			w.DeleteMaintenance(schema.Scheduled, s)
			delete(windows, s)
		case s+duration > n:
			w.SetMaintenanceDuration(schema.Scheduled, s, n-s)
			windows[s] = n - s
		default:
			return ErrNoSuchWindow
		}
		w.SyncCurrentMaintenance(schema.Scheduled, coveringLast(windows, n), Window{}, f.ScheduledCurrent, n)
		return nil
	})
}

// scheduledWindows reads a check's stored scheduled windows, start -> duration. Admin actions
// read them after the check's facts, under the same revision guard.
func scheduledWindows(conn redis.Conn, keys schema.Keys, id string) (map[int64]int64, error) {
	v, err := redis.Int64s(conn.Do("ZRANGE", keys.Maintenances(schema.Scheduled, id), 0, -1, "WITHSCORES"))
	if err != nil {
		return nil, fmt.Errorf("read scheduled maintenance of %s: %w", id, err)
	}
	windows := make(map[int64]int64, len(v)/2)
	for i := 0; i+1 < len(v); i += 2 {
		windows[v[i]] = v[i+1]
	}
	return windows, nil
}

// coveringLast is the window covering now that ends last (zero when none), as the facts script
// chooses it: of two ending together, the later start (the shorter duration).
func coveringLast(windows map[int64]int64, now int64) Window {
	var active Window
	for start, duration := range windows {
		w := Window{Start: start, End: start + duration}
		if w.Covers(now) && (w.End > active.End || w.End == active.End && w.Start > active.Start) {
			active = w
		}
	}
	return active
}

// EndUnscheduledMaintenance ends a running acknowledgement at now (docs/flapjack-1x.md 2.6 End).
func EndUnscheduledMaintenance(conn redis.Conn, keys schema.Keys, entity, check string, now time.Time) error {
	return adminWrite(conn, keys, entity, check, now, func(f *CheckFacts, w *CheckWriter) error {
		um := f.UnscheduledMaintenance
		if !um.Covers(now.Unix()) {
			return ErrNoSuchWindow
		}
		w.SetMaintenanceDuration(schema.Unscheduled, um.Start, now.Unix()-um.Start)
		w.SyncCurrentMaintenance(schema.Unscheduled, Window{}, um, f.UnscheduledCurrent, now.Unix())
		return nil
	})
}

// DisableCheck removes a check from current_checks:ENTITY (Flapjack's "disabled"); the next
// event for it enables it again.
func DisableCheck(conn redis.Conn, keys schema.Keys, entity, check string, now time.Time) error {
	return adminWrite(conn, keys, entity, check, now, func(_ *CheckFacts, w *CheckWriter) error {
		w.Ops.ZRem(keys.CurrentChecks(entity), check)
		return nil
	})
}

// EnableCheck puts a check back into current_checks:ENTITY.
func EnableCheck(conn redis.Conn, keys schema.Keys, entity, check string, now time.Time) error {
	return adminWrite(conn, keys, entity, check, now, func(_ *CheckFacts, w *CheckWriter) error {
		w.Ops.ZAdd(keys.CurrentChecks(entity), now.Unix(), check)
		w.Ops.ZAdd(keys.CurrentEntities(), now.Unix(), entity)
		return nil
	})
}

// MaintenanceWindow is a stored window with its summary, for listings.
type MaintenanceWindow struct {
	CheckID  string
	Kind     string
	Start    int64
	Duration int64
	Summary  string
}

// ListMaintenance returns the windows of kind for a check, oldest first.
func ListMaintenance(conn redis.Conn, keys schema.Keys, kind, checkID string) ([]MaintenanceWindow, error) {
	v, err := redis.Int64s(conn.Do("ZRANGE", keys.Maintenances(kind, checkID), 0, -1, "WITHSCORES"))
	if err != nil {
		return nil, fmt.Errorf("list %s maintenance of %s: %w", kind, checkID, err)
	}
	var out []MaintenanceWindow
	for i := 0; i+1 < len(v); i += 2 {
		out = append(out, MaintenanceWindow{CheckID: checkID, Kind: kind, Start: v[i], Duration: v[i+1]})
	}
	for i := range out {
		conn.Send("GET", keys.MaintenanceSummary(kind, checkID, out[i].Start))
	}
	if err := conn.Flush(); err != nil {
		return nil, err
	}
	for i := range out {
		s, err := redis.String(conn.Receive())
		if err != nil && !errors.Is(err, redis.ErrNil) {
			return nil, err
		}
		out[i].Summary = s
	}
	return out, nil
}

// MaintenanceQuery selects windows for ListMaintenanceWindows.
type MaintenanceQuery struct {
	Kind         string         // schema.Scheduled or schema.Unscheduled
	Entity       *regexp.Regexp // nil: every entity
	Check        *regexp.Regexp // nil: every check
	IncludeEnded bool           // windows that ended before now too
}

// ListMaintenanceWindows returns the windows of the current checks that q selects, by check and
// then start, with the state of each at now ("future", "active" or "ended").
func ListMaintenanceWindows(conn redis.Conn, keys schema.Keys, q MaintenanceQuery, now time.Time) ([]MaintenanceWindow, error) {
	entities, err := redis.Strings(conn.Do("ZRANGE", keys.CurrentEntities(), 0, -1))
	if err != nil {
		return nil, fmt.Errorf("list current entities: %w", err)
	}
	var out []MaintenanceWindow
	for _, e := range entities {
		if q.Entity != nil && !q.Entity.MatchString(e) {
			continue
		}
		checks, err := CurrentChecks(conn, keys, e)
		if err != nil {
			return nil, err
		}
		for _, ch := range checks {
			if q.Check != nil && !q.Check.MatchString(ch) {
				continue
			}
			windows, err := ListMaintenance(conn, keys, q.Kind, schema.CheckID(e, ch))
			if err != nil {
				return nil, err
			}
			for _, w := range windows {
				if w.State(now) != "ended" || q.IncludeEnded {
					out = append(out, w)
				}
			}
		}
	}
	return out, nil
}

// State is "future", "active" or "ended" at now.
func (w MaintenanceWindow) State(now time.Time) string {
	switch t := now.Unix(); {
	case w.Start+w.Duration <= t:
		return "ended"
	case w.Start <= t:
		return "active"
	}
	return "future"
}
