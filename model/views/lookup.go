package views

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/schema"
)

// Read-only queries for interactive tools (the Jabber bot): ack-hash lookup, entity and check
// listings, and a check's status with its maintenance at an instant. None of them writes, and
// none uses KEYS or SCAN.

// CheckByHash finds the check of an acknowledgement hash (checks_by_hash, docs/flapjack-1x.md 2.7).
// Hashes are lower-case hex, so the lookup is made with hash lower-cased; found is false for an
// unknown hash or an entry that is not ENTITY:CHECK.
func CheckByHash(conn redis.Conn, keys schema.Keys, hash string) (ref model.CheckRef, found bool, err error) {
	id, err := redis.String(conn.Do("HGET", keys.ChecksByHash(), strings.ToLower(strings.TrimSpace(hash))))
	if errors.Is(err, redis.ErrNil) {
		return model.CheckRef{}, false, nil
	}
	if err != nil {
		return model.CheckRef{}, false, fmt.Errorf("look up ack hash %s: %w", hash, err)
	}
	entity, check, ok := schema.SplitCheckID(id)
	if !ok {
		return model.CheckRef{}, false, nil
	}
	return model.CheckRef{Entity: entity, Check: check}, true, nil
}

// EntityNames lists every known entity name, sorted and without repeats: the members of
// current_entities and the names in Flapjack 1.6's all_entity_ids_by_name. (Entities known only
// through the seed's entity_id:NAME keys cannot be listed without KEYS; they still count for
// EntityExists.)
func EntityNames(conn redis.Conn, keys schema.Keys) ([]string, error) {
	conn.Send("ZRANGE", keys.CurrentEntities(), 0, -1)
	conn.Send("HKEYS", keys.EntityIDsByName())
	if err := conn.Flush(); err != nil {
		return nil, fmt.Errorf("list entities: %w", err)
	}
	seen := map[string]bool{}
	var names []string
	for i := 0; i < 2; i++ {
		v, err := redis.Strings(conn.Receive())
		if err != nil {
			return nil, fmt.Errorf("list entities: %w", err)
		}
		for _, n := range v {
			if n != "" && !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
	}
	sort.Strings(names)
	return names, nil
}

// EntityExists reports whether an entity is known under either layout (docs/decisions.md D15) or has
// current checks. The name is lower-cased first (docs/decisions.md D14).
func EntityExists(conn redis.Conn, keys schema.Keys, name string) (bool, error) {
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "" {
		return false, nil
	}
	conn.Send("HEXISTS", keys.EntityIDsByName(), name)
	conn.Send("EXISTS", keys.EntityID(name))
	conn.Send("ZSCORE", keys.CurrentEntities(), name)
	if err := conn.Flush(); err != nil {
		return false, fmt.Errorf("entity %s exists: %w", name, err)
	}
	found := false
	for i := 0; i < 3; i++ {
		v, err := conn.Receive()
		if err != nil {
			return false, fmt.Errorf("entity %s exists: %w", name, err)
		}
		switch x := v.(type) {
		case int64:
			found = found || x > 0
		case []byte:
			found = true
		}
	}
	return found, nil
}

// CheckStatus is what is known about a check at one instant.
type CheckStatus struct {
	model.CheckRef
	State      string // "" = never seen
	Summary    string
	LastChange int64 // unix seconds of the last state change
	Enabled    bool  // listed in current_checks:ENTITY
	// Scheduled is the scheduled maintenance window covering the instant (the one ending last),
	// zero when none; Unscheduled the acknowledgement covering it. Both come from the stored
	// windows and the given instant, never from key TTLs (docs/decisions.md D1).
	Scheduled          checkstate.Window
	ScheduledSummary   string
	Unscheduled        checkstate.Window
	UnscheduledSummary string
}

// InScheduledMaintenance reports an active scheduled window.
func (s CheckStatus) InScheduledMaintenance() bool { return s.Scheduled.End > 0 }

// InUnscheduledMaintenance reports an active acknowledgement.
func (s CheckStatus) InUnscheduledMaintenance() bool { return s.Unscheduled.End > 0 }

// CheckStatusAt reads one check's status at now.
func CheckStatusAt(conn redis.Conn, keys schema.Keys, entity, check string, now time.Time) (CheckStatus, error) {
	out, err := CheckStatuses(conn, keys, now, []model.CheckRef{{Entity: entity, Check: check}})
	if err != nil {
		return CheckStatus{}, err
	}
	return out[0], nil
}

// CheckStatuses reads the status of several checks at now in two round trips (facts through
// ReadFacts in ModeRollup, then the summaries of the active maintenance windows).
func CheckStatuses(conn redis.Conn, keys schema.Keys, now time.Time, refs []model.CheckRef) ([]CheckStatus, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	reqs := make([]checkstate.FactsRequest, len(refs))
	for i, r := range refs {
		reqs[i] = checkstate.FactsRequest{Entity: r.Entity, Check: r.Check, Mode: checkstate.ModeRollup}
	}
	facts, err := checkstate.ReadFacts(conn, keys, now, reqs)
	if err != nil {
		return nil, err
	}
	at := now.Unix()
	out := make([]CheckStatus, len(refs))
	type summaryRead struct {
		dst  *string
		kind string
		id   string
		at   int64
	}
	var reads []summaryRead
	for i, f := range facts {
		s := CheckStatus{CheckRef: refs[i], State: f.State, Summary: f.Summary, LastChange: f.LastChange, Enabled: f.Enabled}
		if f.ScheduledMaintenance.Covers(at) {
			s.Scheduled = f.ScheduledMaintenance
		}
		if f.UnscheduledMaintenance.Covers(at) {
			s.Unscheduled = f.UnscheduledMaintenance
		}
		out[i] = s
	}
	for i := range out {
		if out[i].InScheduledMaintenance() {
			reads = append(reads, summaryRead{&out[i].ScheduledSummary, schema.Scheduled, out[i].ID(), out[i].Scheduled.Start})
		}
		if out[i].InUnscheduledMaintenance() {
			reads = append(reads, summaryRead{&out[i].UnscheduledSummary, schema.Unscheduled, out[i].ID(), out[i].Unscheduled.Start})
		}
	}
	if len(reads) == 0 {
		return out, nil
	}
	for _, r := range reads {
		conn.Send("GET", keys.MaintenanceSummary(r.kind, r.id, r.at))
	}
	if err := conn.Flush(); err != nil {
		return nil, fmt.Errorf("maintenance summaries: %w", err)
	}
	for _, r := range reads {
		v, err := redis.String(conn.Receive())
		if err != nil && !errors.Is(err, redis.ErrNil) {
			return nil, fmt.Errorf("maintenance summary of %s: %w", r.id, err)
		}
		*r.dst = v
	}
	return out, nil
}
