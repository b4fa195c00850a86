package checkstate_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/schema"
)

// TestDecisionRecords applies the records of decisions beside a check's own state (explain
// list, events archive, a check first seen through an action) and reads back what they wrote.
func TestDecisionRecords(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	conn := db.Conn(t)
	k := schema.NewKeys("pfx:")
	now := time.Unix(1767607200, 0)
	apply := func(r model.Record) {
		t.Helper()
		if st, err := model.Apply(conn, model.ApplyTarget{}, []model.Record{r}); err != nil || st[0] != model.Applied {
			t.Fatalf("apply: %v %v", st, err)
		}
	}

	for _, e := range []string{"one", "two", "three"} {
		var r model.Record
		checkstate.PushExplain(&r, k, "web-01:HTTP", []byte(e), 2)
		apply(r)
	}
	if got, _ := redis.Strings(conn.Do("LRANGE", k.Explain("web-01:HTTP"), 0, -1)); !reflect.DeepEqual(got, []string{"three", "two"}) {
		t.Errorf("explain list %v, want the 2 newest first", got)
	}

	apply(checkstate.ArchiveRecord(k, []string{"e1", "e2"}, now, 3*time.Hour))
	archive := k.EventsArchive(now)
	if got, _ := redis.Strings(conn.Do("LRANGE", archive, 0, -1)); !reflect.DeepEqual(got, []string{"e2", "e1"}) {
		t.Errorf("archive %v, want newest at the head", got)
	}
	if ttl, _ := redis.Int64(conn.Do("TTL", archive)); ttl != 3*3600 {
		t.Errorf("archive TTL %d, want %d", ttl, 3*3600)
	}
	if known, _ := redis.Bool(conn.Do("SISMEMBER", k.KnownEventsArchiveKeys(), archive)); !known {
		t.Error("the archive key is not among the known archive keys")
	}

	var r model.Record
	checkstate.NewCheckWriter(k, "web-01", "HTTP", &r.Ops).KnowCheck(now.Unix())
	apply(r)
	all, _ := redis.Int64(conn.Do("ZSCORE", k.AllChecks(), "web-01:HTTP"))
	of, _ := redis.Int64(conn.Do("ZSCORE", k.AllChecksFor("web-01"), "HTTP"))
	current, _ := redis.Int(conn.Do("EXISTS", k.CurrentChecks("web-01")))
	if all != now.Unix() || of != now.Unix() || current != 0 {
		t.Errorf("a known check: all_checks %d, all_checks:web-01 %d (want %d), current_checks exists %d (want 0)", all, of, now.Unix(), current)
	}
}

// TestInitEventCounters keeps the shared counters' values and resets the instance's.
func TestInitEventCounters(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	conn := db.Conn(t)
	db.Do(t, "HSET", "counters", "ok", 5)
	db.Do(t, "HSET", "instance", "ok", 7)
	if err := checkstate.InitEventCounters(conn, "counters", "instance", time.Hour); err != nil {
		t.Fatal(err)
	}
	shared, _ := redis.StringMap(conn.Do("HGETALL", "counters"))
	inst, _ := redis.StringMap(conn.Do("HGETALL", "instance"))
	zero := map[string]string{"all": "0", "ok": "0", "failure": "0", "action": "0", "invalid": "0"}
	if want := map[string]string{"all": "0", "ok": "5", "failure": "0", "action": "0", "invalid": "0"}; !reflect.DeepEqual(shared, want) {
		t.Errorf("event_counters %v, want %v", shared, want)
	}
	if !reflect.DeepEqual(inst, zero) {
		t.Errorf("instance counters %v, want %v", inst, zero)
	}
	if ttl, _ := redis.Int64(conn.Do("TTL", "instance")); ttl != 3600 {
		t.Errorf("instance counters TTL %d, want 3600", ttl)
	}
}
