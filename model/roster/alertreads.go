package roster

import (
	"fmt"
	"slices"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/schema"
)

// The notifier's reads of contacts' notification state beside the routing read: the documented
// suppression keys (drop_alerts_for_contact, drop_rollup_alerts_for_contact) that a manual hook
// may set, and the alerting sets rollup decides on.

// existsChunk bounds the keys of one EXISTS.
const existsChunk = 1000

// ExistingKeys reports which of keys exist (nil when none does). Nearly none does (the notifier
// keeps its own intervals in contact_alert_state), which one EXISTS over them all tells; only
// when some do is each asked (a second round trip).
func ExistingKeys(conn redis.Conn, keys []string) (map[string]bool, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	args := make([]any, len(keys))
	for i, k := range keys {
		args[i] = k
	}
	for chunk := range slices.Chunk(args, existsChunk) {
		conn.Send("EXISTS", chunk...)
	}
	if err := conn.Flush(); err != nil {
		return nil, fmt.Errorf("read interval keys: %w", err)
	}
	some := false
	for range slices.Chunk(args, existsChunk) {
		n, err := redis.Int(conn.Receive())
		if err != nil {
			return nil, fmt.Errorf("read interval keys: %w", err)
		}
		some = some || n > 0
	}
	if !some {
		return nil, nil
	}
	for _, k := range keys {
		conn.Send("EXISTS", k)
	}
	if err := conn.Flush(); err != nil {
		return nil, fmt.Errorf("read interval keys: %w", err)
	}
	exists := make(map[string]bool, len(keys))
	for _, k := range keys {
		n, err := redis.Int(conn.Receive())
		if err != nil {
			return nil, fmt.Errorf("read interval key: %w", err)
		}
		exists[k] = n > 0
	}
	return exists, nil
}

// StateReads are one notification's reads of suppression keys and alerting sets, sent and not
// yet received, so that the reads of several notifications share a round trip.
type StateReads struct {
	keys []string
	sets []AlertingSet
}

// SendStateReads sends an EXISTS of each of keys and a ZRANGE of each alerting set; the caller
// flushes conn.
func SendStateReads(conn redis.Conn, keys schema.Keys, suppressions []string, sets []AlertingSet) *StateReads {
	for _, k := range suppressions {
		conn.Send("EXISTS", k)
	}
	for _, s := range sets {
		conn.Send("ZRANGE", keys.AlertingChecks(s.ContactID, s.Medium), 0, -1)
	}
	return &StateReads{keys: suppressions, sets: sets}
}

// Receive reads the replies of what SendStateReads sent: whether each key exists, and each
// set's members.
func (r *StateReads) Receive(conn redis.Conn) (exists []bool, members [][]string, err error) {
	exists = make([]bool, len(r.keys))
	for i := range r.keys {
		if exists[i], err = redis.Bool(conn.Receive()); err != nil {
			return nil, nil, fmt.Errorf("read interval key: %w", err)
		}
	}
	members = make([][]string, len(r.sets))
	for i, s := range r.sets {
		if members[i], err = redis.Strings(conn.Receive()); err != nil {
			return nil, nil, fmt.Errorf("read alerting checks of %s: %w", s.ContactID, err)
		}
	}
	return exists, members, nil
}
