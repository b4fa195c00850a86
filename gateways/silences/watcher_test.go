package silences

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/schema"
)

var t0 = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

type env struct {
	db    *testredis.DB
	keys  schema.Keys
	clock *clock.Fake
	w     *Watcher
}

func newEnv(t *testing.T) *env {
	db := testredis.New(t)
	keys := schema.NewKeys("")
	clk := clock.NewFake(t0)
	return &env{db: db, keys: keys, clock: clk,
		w: &Watcher{Pool: db.Pool, Keys: keys, Clock: clk, Log: zap.NewNop(), Interval: time.Second, Address: "http://am:9093"}}
}

// failing makes id a failing check, fed by Alertmanager when labelled.
func (e *env) failing(t *testing.T, id string, labelled bool) {
	e.db.Do(t, "ZADD", e.keys.FailedChecks(), t0.Unix(), id)
	if labelled {
		e.db.Do(t, "HSET", e.keys.AlertmanagerLabels(), id, `{"via":"alertmanager","labels":{"alertname":"A"}}`)
	}
}

// ack stores an acknowledgement window of id as the executive does (documented keys).
func (e *env) ack(t *testing.T, id string, start, duration int64, summary string) {
	e.db.Do(t, "ZADD", e.keys.Maintenances(schema.Unscheduled, id), duration, start)
	e.db.Do(t, "ZADD", e.keys.SortedMaintenanceTimestamps(schema.Unscheduled, id), start, start)
	e.db.Do(t, "SET", e.keys.MaintenanceSummary(schema.Unscheduled, id, start), summary)
	e.db.Do(t, "SET", e.keys.CurrentMaintenance(schema.Unscheduled, id), start)
}

// jobs pops the queued jobs.
func (e *env) jobs(t *testing.T) []schema.Alert {
	raws, _ := redis.ByteSlices(e.db.Do(t, "LRANGE", e.keys.Queue(schema.AlertmanagerSilenceQueue), 0, -1), nil)
	e.db.Do(t, "DEL", e.keys.Queue(schema.AlertmanagerSilenceQueue))
	var out []schema.Alert
	for _, raw := range raws {
		a, err := schema.ParseAlert(raw)
		if err != nil {
			t.Fatalf("job %s: %v", raw, err)
		}
		out = append(out, a)
	}
	return out
}

func (e *env) sync(t *testing.T) []schema.Alert {
	t.Helper()
	if err := e.w.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	return e.jobs(t)
}

func TestWatcherQueuesAJobPerChange(t *testing.T) {
	e := newEnv(t)
	id, other := "db-1:DiskFull", "web-01:HTTP"
	e.failing(t, id, true)
	e.failing(t, other, false) // not fed by Alertmanager
	start := t0.Unix() - 10
	e.ack(t, id, start, 3600, "on it")
	e.ack(t, other, start, 3600, "on that too")

	jobs := e.sync(t)
	if len(jobs) != 1 {
		t.Fatalf("jobs %+v, want one silence for %s", jobs, id)
	}
	j := jobs[0]
	if j.EventID != id || j.State != stateSilence || *j.Time != start || *j.Duration != 3600 || *j.Summary != "on it" ||
		j.Media != Medium || j.Address != "http://am:9093" || strings.Join(j.Tags, ",") != "alertname=A" {
		t.Fatalf("silence job %+v", j)
	}
	if jobs := e.sync(t); len(jobs) != 0 {
		t.Fatalf("a pass with nothing changed queued %+v", jobs)
	}

	e.ack(t, id, start, 7200, "on it") // extended
	if jobs := e.sync(t); len(jobs) != 1 || jobs[0].State != stateSilence || *jobs[0].Duration != 7200 {
		t.Fatalf("extension queued %+v, want a silence job of 7200 s", jobs)
	}

	// New labels (the alert's severity rose): a silence of the new labels, the old one expired.
	e.db.Do(t, "HSET", e.keys.AlertmanagerLabels(), id, `{"via":"alertmanager","labels":{"alertname":"A","severity":"critical"}}`)
	jobs = e.sync(t)
	if len(jobs) != 2 || jobs[0].State != stateSilence || strings.Join(jobs[0].Tags, ",") != "alertname=A,severity=critical" ||
		jobs[1].State != stateExpire || strings.Join(jobs[1].Tags, ",") != "alertname=A" {
		t.Fatalf("labels changed: queued %+v, want a silence of the new labels and the expiry of the old", jobs)
	}

	e.clock.Advance(time.Minute)
	e.ack(t, id, start, 70, "on it") // ended early, as EndUnscheduledMaintenance does
	if jobs := e.sync(t); len(jobs) != 1 || jobs[0].State != stateExpire || jobs[0].EventID != id ||
		strings.Join(jobs[0].Tags, ",") != "alertname=A,severity=critical" {
		t.Fatalf("early end queued %+v, want an expiry of the silence's labels", jobs)
	}
	if n, _ := redis.Int(e.db.Do(t, "HLEN", e.keys.AlertmanagerSilences()), nil); n != 0 {
		t.Fatalf("%d checks still mirrored", n)
	}

	// An acknowledgement that runs out needs no expiry: its silence ends by itself.
	second := e.clock.Now().Unix()
	e.ack(t, id, second, 60, "again")
	if jobs := e.sync(t); len(jobs) != 1 || jobs[0].State != stateSilence {
		t.Fatalf("second acknowledgement queued %+v", jobs)
	}
	e.clock.Advance(2 * time.Minute)
	if jobs := e.sync(t); len(jobs) != 0 {
		t.Fatalf("an acknowledgement that ran out queued %+v", jobs)
	}
	if n, _ := redis.Int(e.db.Do(t, "HLEN", e.keys.AlertmanagerSilences()), nil); n != 0 {
		t.Fatalf("%d checks still mirrored after the acknowledgement ran out", n)
	}
}

// TestWatchersDoNotQueueTwice: two watchers passing over the same change queue one job.
func TestWatchersDoNotQueueTwice(t *testing.T) {
	e := newEnv(t)
	e.failing(t, "db-1:DiskFull", true)
	e.ack(t, "db-1:DiskFull", t0.Unix(), 3600, "on it")
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := *e.w
			if err := w.Sync(context.Background()); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if jobs := e.jobs(t); len(jobs) != 1 {
		t.Fatalf("%d jobs queued by four watchers, want 1", len(jobs))
	}
}

// TestUnreachableAlertmanagerIsRetriedThenDeadLettered: the shared runner retries a job the
// Alertmanager cannot take and dead-letters it with the reason.
func TestUnreachableAlertmanagerIsRetriedThenDeadLettered(t *testing.T) {
	e := newEnv(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	sender, err := NewSender(Config{URL: "http://" + closed, Timeout: time.Second}, e.clock)
	if err != nil {
		t.Fatal(err)
	}
	g := gateways.New(gateways.Options{Pool: e.db.Pool, Keys: e.keys, Medium: Medium, Queue: schema.AlertmanagerSilenceQueue,
		Identity: queue.LocalIdentity(), Clock: e.clock, Log: zap.NewNop(), MaxAttempts: 3,
		FirstBackoff: 10 * time.Millisecond, MaxBackoff: 20 * time.Millisecond}, sender)
	e.failing(t, "db-1:DiskFull", true)
	e.ack(t, "db-1:DiskFull", t0.Unix(), 3600, "on it")
	if err := e.w.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n, err := g.ProcessNext(context.Background(), time.Second); err != nil || n != 1 {
		t.Fatalf("processed %d: %v", n, err)
	}
	failed, _ := redis.Strings(e.db.Do(t, "LRANGE", e.keys.FailedQueue(schema.AlertmanagerSilenceQueue), 0, -1), nil)
	if len(failed) != 1 {
		t.Fatalf("dead letters %q, want the job", failed)
	}
	var f struct {
		Alert    schema.Alert `json:"alert"`
		Error    string       `json:"error"`
		Attempts int          `json:"attempts"`
	}
	if err := json.Unmarshal([]byte(failed[0]), &f); err != nil {
		t.Fatal(err)
	}
	if f.Attempts != 3 || f.Alert.EventID != "db-1:DiskFull" || !strings.Contains(f.Error, "Alertmanager "+closed) {
		t.Fatalf("dead letter %+v", f)
	}
}

func TestNewSenderChecksItsSettings(t *testing.T) {
	for _, c := range []Config{{URL: "am:9093"}, {URL: "ftp://am"}, {URL: "http://am", Username: "u", BearerToken: "t"}} {
		if _, err := NewSender(c, clock.Real{}); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}
