package status

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/schema"
)

func TestSnapshot(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	k := schema.NewKeys("")
	now := time.Unix(1_800_000_000, 0)
	clk := clock.NewFake(now.Add(-time.Minute))
	spec := queue.Spec{Stage: "executive", Source: k.Events(), End: queue.Right}
	dead := &queue.Registry{Pool: db.Pool, Keys: k, Spec: spec, ID: queue.Identity{Host: "old", PID: 1}, Clock: clk, Log: zap.NewNop()}
	if err := dead.Register(context.Background()); err != nil {
		t.Fatal(err)
	}
	clk.Set(now)
	live := &queue.Registry{Pool: db.Pool, Keys: k, Spec: spec, ID: queue.Identity{Host: "new", PID: 2}, Clock: clk, Log: zap.NewNop()}
	if err := live.Register(context.Background()); err != nil {
		t.Fatal(err)
	}
	db.Do(t, "LPUSH", k.Processing("executive", "old:1"), "e1", "e2")
	db.Do(t, "LPUSH", k.Events(), "a", "b", "c")
	db.Do(t, "RPUSH", k.FailedQueue("jabber_notifications"), "x")
	db.Do(t, "SET", k.EventsPerMinute(now), 42)
	db.Do(t, "SET", k.EventsPerMinute(now.Add(-9*time.Minute)), 7)
	db.Do(t, "ZADD", k.FailedChecks(), 1, "web:HTTP", 1, "db:MySQL")
	db.Do(t, "ZADD", k.Maintenances(schema.Unscheduled, "web:HTTP"), 3600, now.Unix()-60)
	db.Do(t, "ZADD", k.SortedMaintenanceTimestamps(schema.Unscheduled, "web:HTTP"), now.Unix()-60, now.Unix()-60)

	conn := db.Pool.Get()
	defer conn.Close()
	s, err := Read(conn, k, Options{Queues: []string{"events", "notifications", "jabber_notifications"}, Stages: []string{"executive", "notifier"}, StaleAfter: 15 * time.Second}, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Instances) != 2 || !s.Instances[1].Stale || s.Instances[0].Stale || s.Instances[1].Processing != 2 {
		t.Fatalf("instances %+v", s.Instances)
	}
	depth := map[string]int64{}
	for _, q := range s.Queues {
		depth[q.Kind+" "+q.Name] = q.Depth
	}
	if depth["queue events"] != 3 || depth["failed jabber_notifications_failed"] != 1 || depth["processing executive_processing:old:1"] != 2 {
		t.Fatalf("queues %v", depth)
	}
	if s.EventsPerMinute[9] != 42 || s.EventsPerMinute[0] != 7 {
		t.Fatalf("rates %v", s.EventsPerMinute)
	}
	if s.Failing != 2 || s.Acknowledged != 1 {
		t.Fatalf("failing %d acknowledged %d", s.Failing, s.Acknowledged)
	}
	problems := s.Problems(2)
	if len(problems) != 2 || !strings.Contains(problems[0], "old:1 is stale") || !strings.Contains(problems[1], "events holds 3") {
		t.Fatalf("problems %v", problems)
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(&Collector{Pool: db.Pool, Keys: k, Options: Options{Queues: []string{"events"}}, Clock: clk, Log: zap.NewNop()})
	problemsLint, err := testutil.GatherAndLint(reg)
	if err != nil || len(problemsLint) > 0 {
		t.Fatalf("metric lint: %v %v", problemsLint, err)
	}
	if n, err := testutil.GatherAndCount(reg, "flapjack_queue_depth"); err != nil || n == 0 {
		t.Fatalf("queue depth series: %d %v", n, err)
	}
}

// TestSnapshotFailingListAndProcessed: the snapshot carries the most recent failing checks, and
// an executive's processed count is current without waiting for its next heartbeat, while other
// stages' counts say how old they are.
func TestSnapshotFailingListAndProcessed(t *testing.T) {
	t.Parallel()
	o := seedOnCall(t) // the executive registered at t0-3h and has not beaten since
	clk := clock.NewFake(t0.Add(-4 * time.Second))
	notifier := &queue.Registry{Pool: o.db.Pool, Keys: o.keys, Spec: queue.Spec{Stage: "notifier", Source: o.keys.Notifications(), End: queue.Right},
		ID: queue.Identity{Host: "n", PID: 2}, Clock: clk, Log: zap.NewNop(), Stats: func() map[string]int64 { return map[string]int64{"processed": 7} }}
	gateway := &queue.Registry{Pool: o.db.Pool, Keys: o.keys, Spec: queue.Spec{Stage: "log_gateway", Source: o.keys.Queue("log_notifications"), End: queue.Right},
		ID: queue.Identity{Host: "g", PID: 3}, Clock: clk, Log: zap.NewNop()}
	for _, r := range []*queue.Registry{notifier, gateway} {
		if err := r.Register(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if v := o.db.Do(t, "HGET", o.keys.Instance("executive", "exec:1"), "processed"); string(v.([]byte)) != "0" {
		t.Fatalf("the heartbeat record already counts %s; the test needs a stale figure", v)
	}

	conn := o.db.Conn(t)
	defer conn.Close()
	s, err := Read(conn, o.keys, Options{Stages: []string{"executive", "notifier", "log_gateway"}, StaleAfter: 24 * time.Hour, FailingLimit: 2}, t0)
	if err != nil {
		t.Fatal(err)
	}
	processed := map[string]string{}
	for _, in := range s.Instances {
		processed[in.Stage] = in.ProcessedText()
	}
	want := map[string]string{"executive": "10", "notifier": "7 as of 4s ago", "log_gateway": "-"}
	for stage, w := range want {
		if processed[stage] != w {
			t.Errorf("%s processed %q, want %q", stage, processed[stage], w)
		}
	}

	if len(s.FailingList) != 2 || s.FailingTotal != 4 || row(s.FailingList[0]) != "db-01.example.com:Disk critical -300" {
		t.Fatalf("failing list %+v, total %d", s.FailingList, s.FailingTotal)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]json.RawMessage
	json.Unmarshal(b, &fields)
	if !strings.HasPrefix(string(fields["failing"]), `[{"entity":"db-01.example.com","check":"Disk","state":"critical","since":`) || string(fields["failing_total"]) != "4" {
		t.Errorf("JSON failing %s, failing_total %s", fields["failing"], fields["failing_total"])
	}
	var text bytes.Buffer
	if err := s.WriteFailing(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "critical for 5m") || !strings.HasSuffix(text.String(), "and 2 more\n") {
		t.Errorf("text:\n%s", text.String())
	}

	none, err := Read(conn, o.keys, Options{FailingLimit: -1}, t0)
	if err != nil || none.FailingList != nil || none.FailingTotal != 0 {
		t.Errorf("FailingLimit -1 still read a list: %v %v", none.FailingList, err)
	}
}
