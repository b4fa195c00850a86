package inventory_test

import (
	"context"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/executive"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/model/inventory"
	"github.com/flapjackgo/flapjack/model/views"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/schema"
)

// renameFixture runs a real executive on db with a fake clock.
type renameFixture struct {
	t     *testing.T
	db    *testredis.DB
	keys  schema.Keys
	clock *clock.Fake
	x     *executive.Executive
}

func newRenameFixture(t *testing.T) *renameFixture {
	db := testredis.New(t)
	keys := schema.NewKeys("")
	fc := clock.NewFake(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	x := executive.New(executive.Options{Pool: db.Pool, Keys: keys, Config: executive.DefaultConfig(), Clock: fc,
		Identity: queue.Identity{Host: "exec", PID: 1}, Version: "test"})
	if _, err := x.Loop(false).Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	return &renameFixture{t: t, db: db, keys: keys, clock: fc, x: x}
}

// event processes one event at the fake clock's time, then moves the clock a minute on.
func (f *renameFixture) event(json string) {
	f.t.Helper()
	f.db.Do(f.t, "LPUSH", "events", json)
	for {
		n, err := f.x.ProcessNext(context.Background(), 0)
		if err != nil {
			f.t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	f.clock.Advance(time.Minute)
}

// seedEntity gives entity two checks through the executive: HTTP failing, recovering, failing
// again and acknowledged (so it has problem and acknowledgement notifications, an ack hash and unscheduled maintenance),
// and PING ok with a running scheduled window.
func (f *renameFixture) seedEntity(entity string) {
	f.t.Helper()
	f.event(`{"entity":"` + entity + `","check":"HTTP","type":"service","state":"critical","summary":"down","details":"500"}`)
	f.event(`{"entity":"` + entity + `","check":"PING","type":"service","state":"ok","summary":"pong"}`)
	f.event(`{"entity":"` + entity + `","check":"HTTP","type":"service","state":"ok","summary":"up"}`)
	f.event(`{"entity":"` + entity + `","check":"HTTP","type":"service","state":"critical","summary":"down again"}`)
	f.event(`{"entity":"` + entity + `","check":"HTTP","type":"service","state":"critical","summary":"still down"}`)
	f.event(`{"entity":"` + entity + `","check":"HTTP","type":"action","state":"acknowledgement","summary":"on it","duration":3600}`)
	conn := f.db.Conn(f.t)
	defer conn.Close()
	now := f.clock.Now()
	if err := checkstate.CreateScheduledMaintenance(conn, f.keys, entity, "PING", now.Add(-time.Minute), 2*time.Hour, "upgrade", now); err != nil {
		f.t.Fatal(err)
	}
}

func (f *renameFixture) statuses(entity string, checks ...string) []views.CheckStatus {
	f.t.Helper()
	conn := f.db.Conn(f.t)
	defer conn.Close()
	var out []views.CheckStatus
	for _, c := range checks {
		s, err := views.CheckStatusAt(conn, f.keys, entity, c, f.clock.Now())
		if err != nil {
			f.t.Fatal(err)
		}
		s.Entity = "" // compared across names
		out = append(out, s)
	}
	return out
}

func (f *renameFixture) rename(id, name string) {
	f.t.Helper()
	conn := f.db.Conn(f.t)
	defer conn.Close()
	if err := inventory.RenameEntity(context.Background(), conn, f.keys, id, name, f.clock.Now()); err != nil {
		f.t.Fatal(err)
	}
}

// untouched are keys a rename leaves as they are: queues, archives and counters hold the event
// and notification JSON as it was.
func untouched(key string) bool {
	for _, p := range []string{"events", "notifications", "known_events_archive_keys", "event_counters", "executive_", "stats:"} {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// normalize sorts the items of a rendered hash, set or sorted set, whose order a rename of
// members may change.
func normalize(v string) string {
	for _, p := range []string{"hash{", "set{", "zset["} {
		if strings.HasPrefix(v, p) {
			items := strings.Split(v[len(p):len(v)-1], ", ")
			sort.Strings(items)
			return p + strings.Join(items, ", ")
		}
	}
	return v
}

func TestRenameEntityMovesEveryKey(t *testing.T) {
	t.Parallel()
	f := newRenameFixture(t)
	f.seedEntity("web-01")
	f.event(`{"entity":"db-01","check":"DISK","type":"service","state":"warning"}`)
	f.db.Do(t, "HSET", f.keys.ScheduleAlerted("web-01:HTTP"), "ada", "web-primary") // as routing through a schedule leaves it
	id := schema.NewEntityID("web-01")
	before := f.db.Dump(t)
	wantStatus := f.statuses("web-01", "HTTP", "PING")
	if !wantStatus[0].InUnscheduledMaintenance() || !wantStatus[1].InScheduledMaintenance() || wantStatus[0].State != "critical" {
		t.Fatalf("seed: %+v", wantStatus)
	}
	ttl := f.db.Do(t, "PTTL", f.keys.CurrentMaintenance(schema.Scheduled, "web-01:PING")).(int64)
	if ttl <= 0 {
		t.Fatalf("no current scheduled maintenance key (PTTL %d)", ttl)
	}

	f.rename(id, "WEB-02")

	after := f.db.Dump(t)
	ren := strings.NewReplacer("web-01", "web-02",
		schema.AckHash("web-01:HTTP"), schema.AckHash("web-02:HTTP"), schema.AckHash("web-01:PING"), schema.AckHash("web-02:PING"))
	want := map[string]string{}
	moved := 0
	for k, v := range before {
		if untouched(k) {
			want[k] = normalize(v)
			continue
		}
		if nk := ren.Replace(k); nk != k || ren.Replace(v) != v {
			moved++
			k, v = nk, ren.Replace(v)
		}
		want[k] = normalize(v)
	}
	got := map[string]string{}
	for k, v := range after {
		got[k] = normalize(v)
	}
	for k := range want {
		if got[k] != want[k] {
			t.Errorf("%s:\n got %q\nwant %q", k, got[k], want[k])
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected key %s = %q", k, got[k])
		}
		if !untouched(k) && strings.Contains(k+got[k], "web-01") {
			t.Errorf("old name left in %s = %q", k, got[k])
		}
	}
	for _, k := range []string{"web-02:HTTP:last_problem_notification", "web-02:HTTP:critical_notifications",
		"web-02:HTTP:acknowledgement_notifications", "web-02:HTTP:unscheduled_maintenance", "web-02:PING:scheduled_maintenance",
		"schedule_alerted:web-02:HTTP"} {
		if _, ok := after[k]; !ok {
			t.Errorf("the seed should have %s", k)
		}
	}
	if moved < 40 {
		t.Errorf("only %d keys changed; the seed is too thin to prove much", moved)
	}
	if pttl := f.db.Do(t, "PTTL", f.keys.CurrentMaintenance(schema.Scheduled, "web-02:PING")).(int64); pttl <= 0 || pttl > ttl {
		t.Errorf("current maintenance TTL %d ms after, %d ms before", pttl, ttl)
	}
	if got := f.statuses("web-02", "HTTP", "PING"); !reflect.DeepEqual(got, wantStatus) {
		t.Errorf("status after rename:\n%+v\nwant\n%+v", got, wantStatus)
	}
	conn := f.db.Conn(t)
	defer conn.Close()
	if ref, found, err := views.CheckByHash(conn, f.keys, schema.AckHash("web-02:HTTP")); err != nil || !found || ref.Entity != "web-02" {
		t.Errorf("ack hash: %+v %v %v", ref, found, err)
	}

	// The executive carries on under the new name, with the same entity id.
	f.event(`{"entity":"web-02","check":"HTTP","type":"service","state":"ok","summary":"fine"}`)
	es, err := inventory.ReadEntities(context.Background(), conn, f.keys, []string{id})
	if err != nil || len(es) != 1 || es[0].Name != "web-02" || !reflect.DeepEqual(es[0].Checks, []string{"HTTP", "PING"}) {
		t.Fatalf("entity after: %+v %v", es, err)
	}
	if s := f.statuses("web-02", "HTTP")[0]; s.State != "ok" {
		t.Errorf("HTTP after a new event: %+v", s)
	}
}

func TestRenameEntityMerges(t *testing.T) {
	t.Parallel()
	f := newRenameFixture(t)
	f.seedEntity("web-01")
	oldPing := f.statuses("web-01", "PING")
	oldStates := f.db.Do(t, "LRANGE", "web-01:HTTP:states", 0, -1).([]any)
	f.event(`{"entity":"web-02","check":"HTTP","type":"service","state":"warning","summary":"slow"}`)
	f.event(`{"entity":"web-02","check":"DISK","type":"service","state":"ok"}`)
	newHTTP := f.statuses("web-02", "HTTP")
	rev := func(id string) int64 {
		v, _ := f.db.Do(t, "HGET", "check:"+id, "revision").([]byte)
		var n int64
		for _, c := range v {
			n = n*10 + int64(c-'0')
		}
		return n
	}
	maxRev := max(rev("web-01:HTTP"), rev("web-02:HTTP"))
	winner := f.db.Do(t, "HGET", "check:web-02:HTTP", "summary")

	a, b := schema.NewEntityID("web-01"), schema.NewEntityID("web-02")
	f.rename(a, "web-02")

	for k := range f.db.Dump(t) {
		if !untouched(k) && strings.Contains(k, "web-01") {
			t.Errorf("left under the old name: %s", k)
		}
	}
	if got := f.statuses("web-02", "PING"); !reflect.DeepEqual(got, oldPing) {
		t.Errorf("PING moved: %+v, want %+v", got, oldPing)
	}
	if got := f.statuses("web-02", "HTTP"); !reflect.DeepEqual(got[0].State, newHTTP[0].State) || got[0].Summary != "slow" {
		t.Errorf("HTTP: the newer check hash should win: %+v", got)
	}
	if s, _ := f.db.Do(t, "HGET", "check:web-02:HTTP", "summary").([]byte); string(s) != string(winner.([]byte)) {
		t.Errorf("check hash summary %q", s)
	}
	if r := rev("web-02:HTTP"); r != maxRev+1 {
		t.Errorf("revision %d, want %d", r, maxRev+1)
	}
	states := f.db.Do(t, "LRANGE", "web-02:HTTP:states", 0, -1).([]any)
	if len(states) != len(oldStates)+1 {
		t.Errorf("states %d, want %d (both histories)", len(states), len(oldStates)+1)
	}
	for i := 1; i < len(states); i++ {
		if string(states[i-1].([]byte)) > string(states[i].([]byte)) {
			t.Errorf("states out of order: %s", states)
		}
	}
	if n := f.db.Do(t, "ZCARD", "web-02:HTTP:sorted_state_timestamps").(int64); n != int64(len(states)) {
		t.Errorf("sorted_state_timestamps %d", n)
	}
	if n := f.db.Do(t, "ZCARD", "web-02:HTTP:unscheduled_maintenances").(int64); n != 1 {
		t.Errorf("acknowledgement window not moved: %d", n)
	}
	// HTTP is warning now (web-02's newer hash): failed_checks holds it once, under the new name.
	if s := f.db.Do(t, "ZSCORE", "failed_checks", "web-02:HTTP"); s == nil {
		t.Error("web-02:HTTP not failing")
	}
	conn := f.db.Conn(t)
	defer conn.Close()
	es, err := inventory.ReadEntities(context.Background(), conn, f.keys, []string{a, b})
	if err != nil || len(es) != 1 || es[0].ID != a || es[0].Name != "web-02" || !reflect.DeepEqual(es[0].Checks, []string{"DISK", "HTTP", "PING"}) {
		t.Fatalf("entities after merge: %+v %v", es, err)
	}
	if v, _ := f.db.Do(t, "HGET", "all_entity_ids_by_name", "web-02").([]byte); string(v) != a {
		t.Errorf("all_entity_ids_by_name web-02 = %s", v)
	}
}
