package events

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/redisconn"
	"github.com/flapjackgo/flapjack/schema"
)

func queued(t *testing.T, db *testredis.DB, key string) []string {
	t.Helper()
	items, err := redis.Strings(db.Do(t, "LRANGE", key, 0, -1), nil)
	if err != nil {
		t.Fatal(err)
	}
	// LPUSH puts the newest first; the executive takes from the right.
	for i, j := 0, len(items)-1; i < j; i, j = i+1, j-1 {
		items[i], items[j] = items[j], items[i]
	}
	return items
}

func TestPublish(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name    string
		prefix  string
		queue   string
		wantKey string
	}{
		{name: "default queue", wantKey: "events"},
		{name: "configured queue under a prefix", prefix: "fj:", queue: "incoming", wantKey: "fj:incoming"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := testredis.New(t)
			p := NewPublisher(db.Pool, schema.NewKeys(tc.prefix), tc.queue)
			if p.Key() != tc.wantKey {
				t.Fatalf("key %q, want %q", p.Key(), tc.wantKey)
			}
			got, err := p.Publish(ctx,
				schema.Event{Entity: " Web-01 ", Check: "HTTP", Type: schema.TypeService, State: schema.StateCritical},
				schema.Event{Entity: "web-01", Check: "HTTP", Type: schema.TypeService, State: schema.StateOK})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 || got[0].Entity != "web-01" {
				t.Fatalf("returned %+v, want two events, the first normalised to web-01", got)
			}
			items := queued(t, db, tc.wantKey)
			if len(items) != 2 || !strings.Contains(items[0], `"critical"`) || !strings.Contains(items[1], `"ok"`) {
				t.Fatalf("queued %q, want critical then ok", items)
			}
			if !strings.Contains(items[0], `"entity":"web-01"`) {
				t.Fatalf("queued %s, want the normalised entity", items[0])
			}
		})
	}
}

func TestPublishRawRefusesTheWholeBatch(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	p := NewPublisher(db.Pool, schema.NewKeys(""), "")
	_, err := p.PublishRaw(context.Background(),
		[]byte(`{"entity":"a","check":"b","type":"service","state":"ok"}`),
		[]byte(`{"entity":"a","check":"b","type":"service","state":"fine"}`),
		[]byte(`not json`))
	var invalid *InvalidError
	if !errors.As(err, &invalid) {
		t.Fatalf("err %v, want *InvalidError", err)
	}
	if len(invalid.Problems) != 2 || invalid.Problems[0].Index != 1 || invalid.Problems[1].Index != 2 {
		t.Fatalf("problems %+v, want events 1 and 2", invalid.Problems)
	}
	if !strings.Contains(strings.Join(invalid.Problems[0].Reasons, " "), "state") {
		t.Fatalf("reasons %v do not name the state", invalid.Problems[0].Reasons)
	}
	if n := len(queued(t, db, "events")); n != 0 {
		t.Fatalf("%d events queued from a refused batch, want 0", n)
	}
}

func TestPublishLargeBatchKeepsOrder(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	p := NewPublisher(db.Pool, schema.NewKeys(""), "")
	n := maxPushArgs*2 + 7
	evs := make([]schema.Event, n)
	for i := range evs {
		evs[i] = schema.Event{Entity: "e", Check: fmt.Sprintf("c%d", i), Type: schema.TypeService, State: schema.StateOK}
	}
	if _, err := p.Publish(context.Background(), evs...); err != nil {
		t.Fatal(err)
	}
	items := queued(t, db, "events")
	if len(items) != n {
		t.Fatalf("%d queued, want %d", len(items), n)
	}
	for _, i := range []int{0, maxPushArgs, n - 1} {
		if want := fmt.Sprintf(`"check":"c%d"`, i); !strings.Contains(items[i], want) {
			t.Fatalf("item %d is %s, want %s", i, items[i], want)
		}
	}
}

func TestPublishWithoutRedis(t *testing.T) {
	t.Parallel()
	p := NewPublisher(testredis.Pool("127.0.0.1:1", 0), schema.NewKeys(""), "")
	_, err := p.Publish(context.Background(), schema.Event{Entity: "a", Check: "b", Type: schema.TypeService, State: schema.StateOK})
	if err == nil || !strings.Contains(err.Error(), "queue events on events") {
		t.Fatalf("err %v, want one naming the list", err)
	}
}

// PublishEncoded queues already validated events as they are, in order, in one push; a batch
// larger than one LPUSH is still queued whole.
func TestPublishEncoded(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	p := NewPublisher(db.Pool, schema.NewKeys(""), "")
	var payloads [][]byte
	for i := range 2500 {
		ev, err := schema.ValidateEvent(schema.Event{Entity: "web-01", Check: fmt.Sprintf("c%d", i), Type: schema.TypeService, State: schema.StateOK})
		if err != nil {
			t.Fatal(err)
		}
		payloads = append(payloads, ev.AppendJSON(nil))
	}
	if err := p.PublishEncoded(context.Background(), payloads...); err != nil {
		t.Fatal(err)
	}
	got := queued(t, db, p.Key())
	if len(got) != len(payloads) {
		t.Fatalf("%d queued, want %d", len(got), len(payloads))
	}
	for i := range got {
		if got[i] != string(payloads[i]) {
			t.Fatalf("event %d is %s, want %s", i, got[i], payloads[i])
		}
	}
}

// TestPublishAnswersWithinItsTimeoutWhenRedisFreezes: with Redis stopped (SIGSTOP) every
// publish fails within the publisher's timeout, even those waiting behind others for the one
// pooled connection, and says Redis is unavailable; once Redis resumes, publishing works again.
func TestPublishAnswersWithinItsTimeoutWhenRedisFreezes(t *testing.T) {
	t.Parallel()
	srv := testredis.StartServer(t)
	db := srv.NewDB(t)
	const timeout = 500 * time.Millisecond
	pool, err := redisconn.NewPool(redisconn.Config{URL: db.URL(), CommandTimeout: timeout, PoolSize: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	p := NewPublisher(pool, schema.NewKeys(""), "").WithTimeout(timeout)
	ev := func(i int) []byte {
		return []byte(fmt.Sprintf(`{"entity":"web-%d","check":"HTTP","type":"service","state":"ok"}`, i))
	}
	if _, err := p.PublishRaw(context.Background(), ev(0)); err != nil {
		t.Fatal(err)
	}

	srv.Freeze(t)
	thawed := false
	defer func() {
		if !thawed {
			srv.Thaw(t)
		}
	}()
	// Five at once on a pool of one: unbounded, the last would wait out four timeouts first.
	const concurrent = 5
	type result struct {
		took time.Duration
		err  error
	}
	results := make(chan result, concurrent)
	for i := 1; i <= concurrent; i++ {
		go func() {
			began := time.Now()
			_, err := p.PublishRaw(context.Background(), ev(i))
			results <- result{time.Since(began), err}
		}()
	}
	bound := timeout + time.Second // scheduling slack on a busy machine, under two timeouts
	for range concurrent {
		r := <-results
		t.Logf("publish to a frozen Redis answered in %v: %v", r.took.Round(time.Millisecond), r.err)
		if r.err == nil || !redisconn.Unavailable(r.err) {
			t.Fatalf("publish to a frozen Redis: err %v, want an unavailable error", r.err)
		}
		if r.took > bound {
			t.Fatalf("publish to a frozen Redis took %v, want at most %v (timeout %v)", r.took, bound, timeout)
		}
	}
	srv.Thaw(t)
	thawed = true
	if _, err := p.PublishRaw(context.Background(), ev(9)); err != nil {
		t.Fatalf("publish after Redis resumed: %v", err)
	}
	if got := queued(t, db, "events"); len(got) < 2 || !strings.Contains(got[len(got)-1], "web-9") {
		t.Fatalf("queue after Redis resumed: %v, want web-0 first and web-9 last", got)
	}
}
