package status

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/schema"
)

func TestSnapshotListsProcessesWithTheirStages(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	k := schema.NewKeys("")
	now := time.Unix(1_800_000_000, 0)
	register := func(host string, pid int, at time.Time, stages string) {
		r := &queue.Registry{Pool: db.Pool, Keys: k, Spec: queue.Spec{Stage: ProcessStage}, ID: queue.Identity{Host: host, PID: pid},
			Clock: clock.NewFake(at), Version: "v1", Log: zap.NewNop(), Fields: map[string]string{"stages": stages}}
		if err := r.Register(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	register("api-1", 10, now.Add(-2*time.Second), "http")
	register("worker-1", 20, now.Add(-time.Minute), "executive,retention,notifier")

	conn := db.Conn(t)
	defer conn.Close()
	s, err := Read(conn, k, Options{StaleAfter: 15 * time.Second, FailingLimit: -1}, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Processes) != 2 {
		t.Fatalf("processes %+v", s.Processes)
	}
	api, worker := s.Processes[0], s.Processes[1]
	if api.ID != "api-1:10" || api.Host != "api-1" || api.PID != 10 || strings.Join(api.Stages, ",") != "http" || api.Stale || api.HeartbeatAge != 2 {
		t.Errorf("api process %+v", api)
	}
	if strings.Join(worker.Stages, ",") != "executive,retention,notifier" || !worker.Stale {
		t.Errorf("worker process %+v, want its three stages and stale (a minute without heartbeat)", worker)
	}
	problems := strings.Join(s.Problems(0), "\n")
	if !strings.Contains(problems, "process worker-1:20 (executive, retention, notifier) is stale") {
		t.Errorf("problems %q do not name the stale process", problems)
	}
}
