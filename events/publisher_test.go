package events

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/testing/testredis"
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
