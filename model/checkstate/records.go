package checkstate

import (
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/schema"
)

// The writes of decisions that are not a check's own state: each check's explain list, the
// events archive, the event counters the apply script increments, and the notifications the
// notifier cannot route, kept.

// PushExplain adds entry (a schema.ExplainEntry's JSON) at the head of the check's explain list
// in r's writes, keeping the keep newest.
func PushExplain(r *model.Record, keys schema.Keys, checkID string, entry []byte, keep int) {
	key := keys.Explain(checkID)
	r.Ops.LPush(key, entry)
	r.Ops.LTrim(key, 0, int64(keep-1))
}

// ArchiveRecord is the record archiving claimed items in events_archive:<hour of now> for
// maxAge, newest at the head, as Flapjack 1.x's BRPOPLPUSH leaves it (its readers, a mirror,
// read the list from the tail).
func ArchiveRecord(keys schema.Keys, items []string, now time.Time, maxAge time.Duration) model.Record {
	var rec model.Record
	key := keys.EventsArchive(now)
	args := make([]any, len(items))
	for i, it := range items {
		args[i] = it
	}
	rec.Ops.LPush(key, args...)
	rec.Ops.Expire(key, int64(maxAge/time.Second))
	rec.Ops.SAdd(keys.KnownEventsArchiveKeys(), key)
	return rec
}

// InitEventCounters sets the event_counters fields to 0 where absent, and resets an instance's
// counters (instance), which then live ttl unless renewed.
func InitEventCounters(conn redis.Conn, counters, instance string, ttl time.Duration) error {
	conn.Send("MULTI")
	for _, f := range []string{"all", "ok", "failure", "action", "invalid"} {
		conn.Send("HSETNX", counters, f, 0)
		conn.Send("HSET", instance, f, 0)
	}
	conn.Send("EXPIRE", instance, int64(ttl/time.Second))
	if _, err := conn.Do("EXEC"); err != nil {
		return fmt.Errorf("init event counters: %w", err)
	}
	return nil
}

// KeepFailedNotification keeps a notification that cannot be routed (payload: it with the
// reason) in the failed list of its queue, in r's writes.
func KeepFailedNotification(r *model.Record, keys schema.Keys, queue string, payload []byte) {
	r.Ops.RPush(keys.FailedQueue(queue), payload)
}
