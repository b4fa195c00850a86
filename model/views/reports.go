package views

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/schema"
)

// Read-only reads for the JSON API's reports (docs/flapjack-1x.md A.9) and JSON metrics (A.10): state
// histories, maintenance windows in a time range, status fields and entity ids. Each makes a
// fixed number of pipelined round trips per ListChunk checks, never one per check, and none
// writes or uses KEYS or SCAN.

// StateRecord is one recorded state change.
type StateRecord struct {
	Time             int64
	State            string
	Summary, Details string
}

// StateHistories reads, for each check, its state changes with start <= time <= end (0 = no
// bound) in time order, preceded by the last change before start when start is set (the state in
// force at start). Two round trips per ListChunk checks.
func StateHistories(conn redis.Conn, keys schema.Keys, refs []model.CheckRef, start, end int64) ([][]StateRecord, error) {
	out := make([][]StateRecord, len(refs))
	lo, hi := bound(start, "-inf"), bound(end, "+inf")
	for first := 0; first < len(refs); first += checkstate.ListChunk {
		part := refs[first:min(first+checkstate.ListChunk, len(refs))]
		for _, r := range part {
			conn.Send("ZRANGEBYSCORE", keys.SortedStateTimestamps(r.ID()), lo, hi)
			if start > 0 {
				conn.Send("ZREVRANGEBYSCORE", keys.SortedStateTimestamps(r.ID()), "("+strconv.FormatInt(start, 10), "-inf", "LIMIT", 0, 1)
			}
		}
		times := make([][]int64, len(part))
		if err := receiveAll(conn, "read state histories", func(i int) error {
			in, err := redis.Int64s(conn.Receive())
			if start > 0 {
				before, err2 := redis.Int64s(conn.Receive())
				if err == nil && err2 != nil {
					err = err2
				}
				in = append(before, in...)
			}
			if err != nil {
				return err
			}
			times[i] = in
			return nil
		}, len(part)); err != nil {
			return nil, err
		}
		for i, r := range part {
			if len(times[i]) == 0 {
				continue
			}
			args := make([]any, 0, 3*len(times[i]))
			for _, t := range times[i] {
				args = append(args, keys.StateAt(r.ID(), t), keys.SummaryAt(r.ID(), t), keys.DetailsAt(r.ID(), t))
			}
			conn.Send("MGET", args...)
		}
		if err := receiveAll(conn, "read state history values", func(i int) error {
			if len(times[i]) == 0 {
				return nil
			}
			v, err := redis.Strings(conn.Receive())
			if err != nil {
				return err
			}
			recs := make([]StateRecord, len(times[i]))
			for j, t := range times[i] {
				recs[j] = StateRecord{Time: t, State: v[3*j], Summary: v[3*j+1], Details: v[3*j+2]}
			}
			out[first+i] = recs
			return nil
		}, len(part)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// MaintenancesIn reads, for each check, its windows of kind (schema.Scheduled or
// schema.Unscheduled) that overlap [start, end] (0 = no bound): those starting in the range and
// those that began before start and still ran at it, oldest first, with their summaries. Two
// round trips per ListChunk checks.
func MaintenancesIn(conn redis.Conn, keys schema.Keys, kind string, refs []model.CheckRef, start, end int64) ([][]checkstate.MaintenanceWindow, error) {
	out := make([][]checkstate.MaintenanceWindow, len(refs))
	for first := 0; first < len(refs); first += checkstate.ListChunk {
		part := refs[first:min(first+checkstate.ListChunk, len(refs))]
		for _, r := range part {
			conn.Send("ZRANGE", keys.Maintenances(kind, r.ID()), 0, -1, "WITHSCORES")
		}
		if err := receiveAll(conn, "read "+kind+" maintenances", func(i int) error {
			v, err := redis.Int64s(conn.Receive())
			if err != nil {
				return err
			}
			var ws []checkstate.MaintenanceWindow
			for j := 0; j+1 < len(v); j += 2 {
				w := checkstate.MaintenanceWindow{CheckID: part[i].ID(), Kind: kind, Start: v[j], Duration: v[j+1]}
				inRange := (start == 0 || w.Start >= start) && (end == 0 || w.Start <= end)
				runningAtStart := start > 0 && w.Start < start && w.Start+w.Duration > start
				if inRange || runningAtStart {
					ws = append(ws, w)
				}
			}
			sort.Slice(ws, func(a, b int) bool { return ws[a].Start < ws[b].Start })
			out[first+i] = ws
			return nil
		}, len(part)); err != nil {
			return nil, err
		}
		n := 0
		for i := range part {
			for _, w := range out[first+i] {
				conn.Send("GET", keys.MaintenanceSummary(kind, w.CheckID, w.Start))
				n++
			}
		}
		if n == 0 {
			continue
		}
		if err := conn.Flush(); err != nil {
			return nil, fmt.Errorf("read %s maintenance summaries: %w", kind, err)
		}
		var firstErr error
		for i := range part {
			for j := range out[first+i] {
				s, err := redis.String(conn.Receive())
				if err != nil && !errors.Is(err, redis.ErrNil) && firstErr == nil {
					firstErr = fmt.Errorf("read %s maintenance summary: %w", kind, err)
				}
				out[first+i][j].Summary = s
			}
		}
		if firstErr != nil {
			return nil, firstErr
		}
	}
	return out, nil
}

// ReportStatus is a check's status as the status report shows it.
type ReportStatus struct {
	CheckStatus
	Fields map[string]string // the check hash (summary, details, perfdata, last_update, ...)
	// LastProblem, LastRecovery and LastAcknowledgement are the times of the last
	// notifications of those types, nil when none was sent.
	LastProblem, LastRecovery, LastAcknowledgement *int64
}

// ReportStatuses reads the status of each check at now: its facts and active maintenance
// (CheckStatuses) and, in one more round trip per ListChunk checks, its check hash and last
// notification times.
func ReportStatuses(conn redis.Conn, keys schema.Keys, now time.Time, refs []model.CheckRef) ([]ReportStatus, error) {
	out := make([]ReportStatus, len(refs))
	for first := 0; first < len(refs); first += checkstate.ListChunk {
		part := refs[first:min(first+checkstate.ListChunk, len(refs))]
		statuses, err := CheckStatuses(conn, keys, now, part)
		if err != nil {
			return nil, err
		}
		for _, r := range part {
			conn.Send("HGETALL", keys.Check(r.ID()))
			conn.Send("MGET", keys.LastNotification(r.ID(), "problem"), keys.LastNotification(r.ID(), "recovery"),
				keys.LastNotification(r.ID(), "acknowledgement"))
		}
		if err := receiveAll(conn, "read check statuses", func(i int) error {
			fields, err := redis.StringMap(conn.Receive())
			last, err2 := redis.Values(conn.Receive())
			if err != nil {
				return err
			}
			if err2 != nil {
				return err2
			}
			s := ReportStatus{CheckStatus: statuses[i], Fields: fields}
			for j, dst := range []**int64{&s.LastProblem, &s.LastRecovery, &s.LastAcknowledgement} {
				if n, ok := model.OptNum(last[j]); ok && last[j] != nil {
					*dst = &n
				}
			}
			out[first+i] = s
			return nil
		}, len(part)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ChecksExist reports which of refs are known checks (a check hash or a member of all_checks),
// in one round trip per ListChunk checks.
func ChecksExist(conn redis.Conn, keys schema.Keys, refs []model.CheckRef) ([]bool, error) {
	out := make([]bool, len(refs))
	for first := 0; first < len(refs); first += checkstate.ListChunk {
		part := refs[first:min(first+checkstate.ListChunk, len(refs))]
		for _, r := range part {
			conn.Send("EXISTS", keys.Check(r.ID()))
			conn.Send("ZSCORE", keys.AllChecks(), r.ID())
		}
		if err := receiveAll(conn, "look up checks", func(i int) error {
			n, err := redis.Int(conn.Receive())
			score, err2 := conn.Receive()
			if err != nil {
				return err
			}
			if err2 != nil {
				return err2
			}
			out[first+i] = n > 0 || score != nil
			return nil
		}, len(part)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// EntityIDsOf finds the ids of named entities as EntityID does, in one round trip: names
// without an id are absent from the map.
func EntityIDsOf(conn redis.Conn, keys schema.Keys, names []string) (map[string]string, error) {
	for _, n := range names {
		conn.Send("HGET", keys.EntityIDsByName(), n)
		conn.Send("GET", keys.EntityID(n))
	}
	out := make(map[string]string, len(names))
	err := receiveAll(conn, "look up entity ids", func(i int) error {
		byName, err1 := redis.String(conn.Receive())
		byKey, err2 := redis.String(conn.Receive())
		for _, err := range []error{err1, err2} {
			if err != nil && !errors.Is(err, redis.ErrNil) {
				return err
			}
		}
		if byName != "" {
			out[names[i]] = byName
		} else if byKey != "" {
			out[names[i]] = byKey
		}
		return nil
	}, len(names))
	return out, err
}

// EntityNamesOf finds the names of entity ids (all_entity_names_by_id, else entity:ID's name),
// in one round trip: unknown ids are absent from the map.
func EntityNamesOf(conn redis.Conn, keys schema.Keys, ids []string) (map[string]string, error) {
	for _, id := range ids {
		conn.Send("HGET", keys.EntityNamesByID(), id)
		conn.Send("HGET", keys.Entity(id), "name")
	}
	out := make(map[string]string, len(ids))
	err := receiveAll(conn, "look up entity names", func(i int) error {
		byHash, err1 := redis.String(conn.Receive())
		byKey, err2 := redis.String(conn.Receive())
		for _, err := range []error{err1, err2} {
			if err != nil && !errors.Is(err, redis.ErrNil) {
				return err
			}
		}
		if byHash != "" {
			out[ids[i]] = byHash
		} else if byKey != "" {
			out[ids[i]] = byKey
		}
		return nil
	}, len(ids))
	return out, err
}

// receiveAll flushes the pipeline and calls each(i) for i < n, which must receive exactly the
// replies sent for item i. After the first error it keeps receiving (so the connection stays
// usable) and returns that error.
func receiveAll(conn redis.Conn, what string, each func(i int) error, n int) error {
	if n == 0 {
		return nil
	}
	if err := conn.Flush(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	var firstErr error
	for i := 0; i < n; i++ {
		if err := each(i); err != nil && firstErr == nil {
			firstErr = fmt.Errorf("%s: %w", what, err)
		}
	}
	return firstErr
}

func bound(t int64, none string) string {
	if t == 0 {
		return none
	}
	return strconv.FormatInt(t, 10)
}
