package model_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/schema"
)

// redisCalls is the number of commands Redis has run on db's server, scripts' own calls
// included (INFO commandstats), leaving out the scripts and INFO themselves.
func redisCalls(b *testing.B, db *testredis.DB) int64 {
	info, err := redis.String(db.Do(b, "INFO", "commandstats"), nil)
	if err != nil {
		b.Fatal(err)
	}
	var total int64
	for _, line := range strings.Split(info, "\r\n") {
		name, rest, ok := strings.Cut(strings.TrimPrefix(line, "cmdstat_"), ":calls=")
		if !ok || name == "evalsha" || name == "eval" || name == "info" || name == "flushdb" {
			continue
		}
		calls, _, _ := strings.Cut(rest, ",")
		n, _ := strconv.ParseInt(calls, 10, 64)
		total += n
	}
	return total
}

// redisCPU is the CPU time db's server has used (INFO cpu, user and system), in microseconds.
func redisCPU(b *testing.B, db *testredis.DB) float64 {
	info, err := redis.String(db.Do(b, "INFO", "cpu"), nil)
	if err != nil {
		b.Fatal(err)
	}
	var total float64
	for _, line := range strings.Split(info, "\r\n") {
		for _, field := range []string{"used_cpu_user:", "used_cpu_sys:"} {
			if v, ok := strings.CutPrefix(line, field); ok {
				s, _ := strconv.ParseFloat(v, 64)
				total += s * 1e6
			}
		}
	}
	return total
}

// BenchmarkApply applies batches of 256 ok events on ok checks through the apply script, with
// their items in the processing list, and reports the Redis commands and Redis CPU each record
// costs (the guard HGET, the HSET; the items leave the list in one LRANGE and one DEL per batch,
// or, for a whole claimed batch whose items are left out, in one LLEN and one DEL). The last form
// is the executive's record for an ok result decided on cached facts: the window keys guarded
// absent (one EXISTS per batch), three fields written, and the check marked current in the four
// indexes (one ZADD per index per batch; 10 checks per entity).
func BenchmarkApply(b *testing.B) {
	for _, form := range []struct {
		name          string
		whole, cached bool
	}{{"items sent", false, false}, {"items left out", true, false}, {"executive's cached ok results", true, true}} {
		b.Run(form.name, func(b *testing.B) {
			db := testredis.New(b)
			conn := db.Conn(b)
			keys := schema.NewKeys("")
			const n, processing = 256, "executive_processing:bench:1"
			t := model.ApplyTarget{Processing: processing, Counters: keys.EventCounters()}
			if form.whole {
				t.ListLen = n
			}
			rev := int64(0)
			b.ReportAllocs()
			var calls int64
			var cpu float64
			for b.Loop() {
				b.StopTimer()
				records := make([]model.Record, n)
				items := make([]any, 0, n+1)
				items = append(items, processing)
				if form.cached {
					t.Indexes = model.NewIndexes(keys, rev)
				}
				for i := range records {
					r := &records[i]
					entity, check := fmt.Sprintf("host-%d.example.com", i/10), fmt.Sprintf("check-%d", i%10)
					r.Item, r.Slot, r.Counter = fmt.Sprintf(`{"entity":%q,"check":%q,"type":"service","state":"ok","summary":"all good","time":%d}`, entity, check, rev), i, "ok"
					id := schema.CheckID(entity, check)
					key := keys.Check(id)
					r.Guards = []model.Guard{{Key: key, Revision: rev}}
					if form.cached {
						w := checkstate.NoWindowsGuards(keys, id)
						r.Guards = append(r.Guards, w[:]...)
						r.Ops.HSet(key, "last_update", rev, "last_sequence", rev*n+int64(i), "revision", rev+1)
						t.Indexes.Touch(i, entity, check)
					} else {
						r.Ops.HSet(key, "last_update", rev, "revision", rev+1)
					}
					items = append(items, r.Item)
				}
				db.Do(b, "LPUSH", items...)
				before, cpuBefore := redisCalls(b, db), redisCPU(b, db)
				b.StartTimer()
				statuses, err := model.Apply(conn, t, records)
				b.StopTimer()
				calls += redisCalls(b, db) - before
				cpu += redisCPU(b, db) - cpuBefore
				b.StartTimer()
				if err != nil || len(statuses) != n || statuses[n-1] != model.Applied {
					b.Fatalf("statuses %v, %v", statuses, err)
				}
				if left, _ := redis.Int(db.Do(b, "LLEN", processing), nil); left != 0 {
					b.Fatalf("%d items left claimed", left)
				}
				rev++
			}
			b.ReportMetric(float64(calls)/float64(b.N*n), "redis-calls/record")
			b.ReportMetric(cpu/float64(b.N*n), "redis-µs/record")
		})
	}
}

// BenchmarkReadFactsAlerting reads 300 failing checks as the notifier does to clean a contact's
// alerting set (ModeAlerting; ModeRollup for comparison), reporting Redis commands and Redis CPU
// per check.
func BenchmarkReadFactsAlerting(b *testing.B) {
	for _, mode := range []checkstate.FactsMode{checkstate.ModeAlerting, checkstate.ModeRollup} {
		b.Run(string(mode), func(b *testing.B) {
			db := testredis.New(b)
			conn := db.Conn(b)
			keys := schema.NewKeys("")
			now := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)
			const n = 300
			reqs := make([]checkstate.FactsRequest, n)
			for i := range reqs {
				reqs[i] = checkstate.FactsRequest{Entity: "probe.example.com", Check: fmt.Sprintf("probe-%d", i), Mode: mode}
				id := schema.CheckID(reqs[i].Entity, reqs[i].Check)
				db.Do(b, "HSET", keys.Check(id), "state", "critical", "last_change", now.Unix()-60, "summary", "down")
				db.Do(b, "ZADD", keys.CurrentChecks(reqs[i].Entity), now.Unix(), reqs[i].Check)
				db.Do(b, "ZADD", keys.SortedStateTimestamps(id), now.Unix()-60, now.Unix()-60)
				db.Do(b, "SET", keys.LastNotification(id, "problem"), now.Unix()-60)
			}
			b.ReportAllocs()
			var calls int64
			var cpu float64
			for b.Loop() {
				b.StopTimer()
				before, cpuBefore := redisCalls(b, db), redisCPU(b, db)
				b.StartTimer()
				facts, err := checkstate.ReadFacts(conn, keys, now, reqs)
				b.StopTimer()
				calls += redisCalls(b, db) - before
				cpu += redisCPU(b, db) - cpuBefore
				b.StartTimer()
				if err != nil || len(facts) != n || !facts[n-1].Enabled || facts[n-1].State != "critical" {
					b.Fatalf("%v %+v", err, facts[n-1])
				}
			}
			b.ReportMetric(float64(calls)/float64(b.N*n), "redis-calls/check")
			b.ReportMetric(cpu/float64(b.N*n), "redis-µs/check")
		})
	}
}
