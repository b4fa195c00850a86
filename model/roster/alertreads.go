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

// StateReads gathers several notifications' reads of suppression keys and alerting sets, to
// run in one round trip.
type StateReads struct {
	reads []stateRead
}

type stateRead struct {
	keys []string
	sets []AlertingSet
}

// StateReply is one notification's reads: whether each key exists, and each set's members.
type StateReply struct {
	Exists  []bool
	Members [][]string
}

// Add gathers one notification's reads: an EXISTS of each of suppressions and a ZRANGE of each
// alerting set. Run's replies are in the order of Add.
func (r *StateReads) Add(suppressions []string, sets []AlertingSet) {
	r.reads = append(r.reads, stateRead{keys: suppressions, sets: sets})
}

// Run sends the reads in one round trip and returns their replies; nil, without a round trip,
// when there is nothing to read. An error leaves the replies after the failed one unread (see
// redisread.Drain).
func (r *StateReads) Run(conn redis.Conn, keys schema.Keys) ([]StateReply, error) {
	sent := false
	for _, rd := range r.reads {
		for _, k := range rd.keys {
			conn.Send("EXISTS", k)
		}
		for _, s := range rd.sets {
			conn.Send("ZRANGE", keys.AlertingChecks(s.ContactID, s.Medium), 0, -1)
		}
		sent = sent || len(rd.keys)+len(rd.sets) > 0
	}
	if !sent {
		return nil, nil
	}
	if err := conn.Flush(); err != nil {
		return nil, fmt.Errorf("read interval keys and alerting sets: %w", err)
	}
	out := make([]StateReply, len(r.reads))
	for i, rd := range r.reads {
		reply := StateReply{Exists: make([]bool, len(rd.keys)), Members: make([][]string, len(rd.sets))}
		var err error
		for j := range rd.keys {
			if reply.Exists[j], err = redis.Bool(conn.Receive()); err != nil {
				return nil, fmt.Errorf("read interval key: %w", err)
			}
		}
		for j, s := range rd.sets {
			if reply.Members[j], err = redis.Strings(conn.Receive()); err != nil {
				return nil, fmt.Errorf("read alerting checks of %s: %w", s.ContactID, err)
			}
		}
		out[i] = reply
	}
	return out, nil
}
