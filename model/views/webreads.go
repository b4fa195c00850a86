package views

import (
	"fmt"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/schema"
)

// Reads for the web UI's pages that no other surface needed: each a fixed number of pipelined
// round trips, never one per check.

// NotificationKinds are the kinds of ID:last_<kind>_notification a check page shows, in order.
var NotificationKinds = []string{"critical", "warning", "unknown", "recovery", "acknowledgement"}

// LastUpdates reads each check's last event time (check:ID last_update; 0 when absent), one
// round trip per ListChunk checks.
func LastUpdates(conn redis.Conn, keys schema.Keys, refs []model.CheckRef) ([]int64, error) {
	out := make([]int64, len(refs))
	for start := 0; start < len(refs); start += checkstate.ListChunk {
		part := refs[start:min(start+checkstate.ListChunk, len(refs))]
		for _, r := range part {
			conn.Send("HGET", keys.Check(r.ID()), "last_update")
		}
		if err := conn.Flush(); err != nil {
			return nil, fmt.Errorf("read last updates: %w", err)
		}
		var firstErr error
		for i, r := range part {
			v, err := conn.Receive()
			if err != nil && firstErr == nil {
				firstErr = fmt.Errorf("read last update of %s: %w", r.ID(), err)
			}
			out[start+i] = model.Num(v)
		}
		if firstErr != nil {
			return nil, firstErr
		}
	}
	return out, nil
}

// LastNotifications reads when a check was last notified of each of NotificationKinds (unix
// seconds; absent kinds are left out), in one round trip.
func LastNotifications(conn redis.Conn, keys schema.Keys, ref model.CheckRef) (map[string]int64, error) {
	args := make([]any, len(NotificationKinds))
	for i, k := range NotificationKinds {
		args[i] = keys.LastNotification(ref.ID(), k)
	}
	v, err := redis.Values(conn.Do("MGET", args...))
	if err != nil {
		return nil, fmt.Errorf("read last notifications of %s: %w", ref.ID(), err)
	}
	out := map[string]int64{}
	for i, k := range NotificationKinds {
		if i < len(v) && v[i] != nil {
			out[k] = model.Num(v[i])
		}
	}
	return out, nil
}
