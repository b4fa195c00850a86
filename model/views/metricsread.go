package views

import (
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/schema"
)

// FreshnessBounds are the lower bounds, in seconds since a check's last event, of Flapjack
// 1.x's check_freshness buckets; the last bucket has no upper bound.
var FreshnessBounds = []int64{0, 60, 300, 900, 3600}

// StoreMetrics are the counts Flapjack 1.x's JSON metrics report (docs/flapjack-1x.md A.10).
type StoreMetrics struct {
	TotalKeys        int64            // DBSIZE: every key of the database, whatever its prefix
	EventCounters    map[string]int64 // event_counters
	EventQueueLength int64            // LLEN of the events list (executive.queue)
	// Freshness counts current checks by seconds since their last event (the score in
	// current_checks:ENTITY), one count per FreshnessBounds bucket.
	Freshness                                     []int64
	EntitiesAll, EntitiesEnabled, EntitiesFailing int64
	ChecksAll, ChecksFailing                      int64
	// ChecksStale counts current checks whose ttl ran out with no result since (docs/decisions.md D19).
	ChecksStale int64
}

// ReadStoreMetrics reads StoreMetrics at now in two round trips; eventsList is the full key of
// the list the executive takes events from (executive.queue, e.g. events.Publisher.Key()).
func ReadStoreMetrics(conn redis.Conn, keys schema.Keys, eventsList string, now time.Time) (StoreMetrics, error) {
	var m StoreMetrics
	conn.Send("DBSIZE")
	conn.Send("HGETALL", keys.EventCounters())
	conn.Send("LLEN", eventsList)
	conn.Send("ZRANGE", keys.CurrentEntities(), 0, -1)
	conn.Send("HKEYS", keys.EntityIDsByName())
	conn.Send("ZRANGE", keys.FailedChecks(), 0, -1)
	if err := conn.Flush(); err != nil {
		return m, fmt.Errorf("read metrics: %w", err)
	}
	total, err1 := redis.Int64(conn.Receive())
	counters, err2 := redis.Int64Map(conn.Receive())
	queue, err3 := redis.Int64(conn.Receive())
	current, err4 := redis.Strings(conn.Receive())
	named, err5 := redis.Strings(conn.Receive())
	failed, err6 := redis.Strings(conn.Receive())
	for _, err := range []error{err1, err2, err3, err4, err5, err6} {
		if err != nil {
			return m, fmt.Errorf("read metrics: %w", err)
		}
	}
	m.TotalKeys, m.EventCounters, m.EventQueueLength = total, counters, queue
	all := map[string]bool{}
	for _, e := range append(current, named...) {
		all[e] = true
	}
	m.EntitiesAll, m.EntitiesEnabled = int64(len(all)), int64(len(current))
	m.Freshness = make([]int64, len(FreshnessBounds))
	for _, e := range current {
		conn.Send("ZRANGE", keys.CurrentChecks(e), 0, -1, "WITHSCORES")
	}
	lastSeen := map[string]int64{}
	at := now.Unix()
	if err := receiveAll(conn, "read current checks", func(i int) error {
		v, err := redis.Strings(conn.Receive())
		if err != nil {
			return err
		}
		for j := 0; j+1 < len(v); j += 2 {
			last, _ := model.OptNum([]byte(v[j+1]))
			lastSeen[schema.CheckID(current[i], v[j])] = last
			age := at - last
			b := 0
			for b+1 < len(FreshnessBounds) && age >= FreshnessBounds[b+1] {
				b++
			}
			m.Freshness[b]++
		}
		return nil
	}, len(current)); err != nil {
		return m, err
	}
	m.ChecksAll = int64(len(lastSeen))
	failingEntities := map[string]bool{}
	for _, id := range failed {
		if _, isCurrent := lastSeen[id]; !isCurrent {
			continue
		}
		m.ChecksFailing++
		if e, _, ok := schema.SplitCheckID(id); ok {
			failingEntities[e] = true
		}
	}
	m.EntitiesFailing = int64(len(failingEntities))
	stale, err := checkstate.CountStale(conn, keys, at, lastSeen)
	m.ChecksStale = stale
	return m, err
}
