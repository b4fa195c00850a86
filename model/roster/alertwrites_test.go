package roster_test

import (
	"reflect"
	"testing"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/schema"
)

// TestWriteAlertChanges applies a decision's changes and reads back every documented key they
// stand for; a change made on a stale read of contact_alert_state writes nothing.
func TestWriteAlertChanges(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	conn := db.Conn(t)
	k := schema.NewKeys("pfx:")
	const check = "web-01:HTTP"
	interval := schema.DropField("email", check, "critical")
	rollup := schema.RollupDropField("sms")
	old := schema.DropField("email", "db-01:PING", "warning")
	db.Do(t, "HSET", k.ContactAlertState("ada"), "revision", 3, old, 100)
	db.Do(t, "SET", k.DropAlerts("ada", "email", "db-01:PING", "warning"), 1)
	db.Do(t, "ZADD", k.AlertingChecks("ada", "sms"), 90, "db-01:PING", 91, "db-02:PING")

	changes := roster.AlertChanges{
		Read: []roster.StateRead{{ContactID: "ada", Revision: 3}},
		Alerting: []roster.AlertingChange{
			{ContactID: "ada", Medium: "email", Add: check, At: 200},
			{ContactID: "ada", Medium: "sms", Add: check, At: 200, Remove: []string{"db-01:PING"}},
		},
		Started: []roster.Suppression{
			{ContactID: "ada", Field: interval, Until: 500, TTL: 300},
			{ContactID: "ada", Field: rollup, Until: 260, TTL: 60},
		},
		Ended:      []roster.Suppression{{ContactID: "ada", Field: old}},
		Deliveries: []roster.Delivery{{Queue: "email_notifications", Payload: []byte(`{"a":1}`)}, {Queue: "sms_notifications", Payload: []byte(`{"b":2}`)}},
	}
	apply := func(c roster.AlertChanges) model.Status {
		var r model.Record
		roster.WriteAlertChanges(&r, k, &c)
		st, err := model.Apply(conn, model.ApplyTarget{}, []model.Record{r})
		if err != nil || len(st) != 1 {
			t.Fatalf("apply: %v %v", st, err)
		}
		return st[0]
	}
	if st := apply(changes); st != model.Applied {
		t.Fatalf("status %v, want applied", st)
	}

	state, _ := redis.StringMap(conn.Do("HGETALL", k.ContactAlertState("ada")))
	if want := map[string]string{"revision": "4", interval: "500", rollup: "260"}; !reflect.DeepEqual(state, want) {
		t.Errorf("contact_alert_state %v, want %v", state, want)
	}
	for key, ttl := range map[string]int64{
		k.DropAlerts("ada", "email", check, "critical"):       300,
		k.DropRollupAlerts("ada", "sms"):                      60,
		k.DropAlerts("ada", "email", "db-01:PING", "warning"): -2,
	} {
		if got, _ := redis.Int64(conn.Do("TTL", key)); got != ttl {
			t.Errorf("TTL %s = %d, want %d", key, got, ttl)
		}
	}
	for key, want := range map[string][]string{
		k.AlertingChecks("ada", "email"): {check},
		k.AlertingChecks("ada", "sms"):   {"db-02:PING", check},
		k.Queue("email_notifications"):   {`{"a":1}`},
		k.Queue("sms_notifications"):     {`{"b":2}`},
	} {
		cmd, args := "ZRANGE", []any{key, 0, -1}
		if key == k.Queue("email_notifications") || key == k.Queue("sms_notifications") {
			cmd = "LRANGE"
		}
		if got, _ := redis.Strings(conn.Do(cmd, args...)); !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %v, want %v", key, got, want)
		}
	}

	// the same changes on the revision read before: a conflict, nothing written
	changes.Deliveries = []roster.Delivery{{Queue: "email_notifications", Payload: []byte(`{"c":3}`)}}
	if st := apply(changes); st != model.Conflict {
		t.Fatalf("status on a stale read %v, want a conflict", st)
	}
	if n, _ := redis.Int(conn.Do("LLEN", k.Queue("email_notifications"))); n != 1 {
		t.Errorf("a conflicting decision queued an alert: %d alerts", n)
	}
}

// TestWriteScheduleAlerted: a problem records whom its schedules reached, a problem that
// reached nobody through a schedule writes nothing, and a recovery clears the record.
func TestWriteScheduleAlerted(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	conn := db.Conn(t)
	k := schema.NewKeys("pfx:")
	const check = "web-01:HTTP"
	tests := []struct {
		name    string
		clear   bool
		reached []roster.ScheduleReach
		want    map[string]string
	}{
		{"problem", false, []roster.ScheduleReach{{"ada", "ops"}, {"bob", "dba"}}, map[string]string{"ada": "ops", "bob": "dba"}},
		{"problem reaching nobody by schedule keeps the record", false, nil, map[string]string{"ada": "ops", "bob": "dba"}},
		{"recovery", true, nil, map[string]string{}},
	}
	for _, tc := range tests {
		var r model.Record
		roster.WriteScheduleAlerted(&r, k, check, tc.clear, tc.reached)
		if r.Ops.Len() > 0 {
			if st, err := model.Apply(conn, model.ApplyTarget{}, []model.Record{r}); err != nil || st[0] != model.Applied {
				t.Fatalf("%s: apply %v %v", tc.name, st, err)
			}
		}
		got, _ := redis.StringMap(conn.Do("HGETALL", k.ScheduleAlerted(check)))
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: schedule_alerted %v, want %v", tc.name, got, tc.want)
		}
	}
}
