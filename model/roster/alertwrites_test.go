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

// TestScheduleAlerted: a problem's record adds whom the schedules reached to the check's
// schedule_alerted (keeping those an earlier problem added), and a recovery's clears it.
func TestScheduleAlerted(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	conn := db.Conn(t)
	k := schema.NewKeys("pfx:")
	const check = "web-01:HTTP"
	apply := func(write func(*model.Record)) {
		var r model.Record
		write(&r)
		if st, err := model.Apply(conn, model.ApplyTarget{}, []model.Record{r}); err != nil || len(st) != 1 || st[0] != model.Applied {
			t.Fatalf("apply: %v %v", st, err)
		}
	}
	apply(func(r *model.Record) {
		roster.RememberScheduleAlerted(r, k, check, map[string]string{"ada": "web-primary"})
	})
	apply(func(r *model.Record) {
		roster.RememberScheduleAlerted(r, k, check, map[string]string{"bob": "web-primary", "carl": "db-primary"})
		roster.RememberScheduleAlerted(r, k, check, nil) // nobody reached: nothing written
	})
	got, _ := redis.StringMap(conn.Do("HGETALL", k.ScheduleAlerted(check)))
	if want := map[string]string{"ada": "web-primary", "bob": "web-primary", "carl": "db-primary"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("schedule_alerted %v, want %v", got, want)
	}
	apply(func(r *model.Record) { roster.ForgetScheduleAlerted(r, k, check) })
	if n, _ := redis.Int(conn.Do("EXISTS", k.ScheduleAlerted(check))); n != 0 {
		t.Errorf("the recovery left schedule_alerted")
	}
}
