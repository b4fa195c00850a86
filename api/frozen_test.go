package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/events"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/redisconn"
	"github.com/flapjackgo/flapjack/schema"
)

// TestFrozenRedisAnswers503WithTheReason: with Redis stopped (SIGSTOP), POST /events and a JSON
// API read answer 503 naming Redis within the command timeout, as when Redis is unreachable,
// instead of hanging until Redis resumes.
func TestFrozenRedisAnswers503WithTheReason(t *testing.T) {
	t.Parallel()
	rs := testredis.StartServer(t)
	db := rs.NewDB(t)
	const timeout = 300 * time.Millisecond
	pool, err := redisconn.NewPool(redisconn.Config{URL: db.URL(), CommandTimeout: timeout, PoolSize: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	keys := schema.NewKeys("")
	srv := httptest.NewServer(Handler(Options{MaxBody: 1 << 16, Pool: pool, Keys: keys, JSONAPI: true, EventsEnabled: true,
		Events: events.NewPublisher(pool, keys, "").WithTimeout(timeout), RedisTimeout: timeout}))
	defer srv.Close()

	rs.Freeze(t)
	defer rs.Thaw(t)
	bound := timeout + time.Second
	for _, tc := range []struct {
		name, method, path, body string
		want                     string
	}{
		{"POST /events", "POST", "/events", `{"entity":"web-01","check":"HTTP","type":"service","state":"ok"}`, "could not queue events: Redis unavailable"},
		{"GET /contacts", "GET", "/contacts", "", "Redis unavailable"},
		// The pool's one connection was closed by the timeout above: this one waits for a new one.
		{"GET /checks", "GET", "/checks", "", "Redis unavailable"},
	} {
		began := time.Now()
		a := call(t, srv, tc.method, tc.path, "application/json", tc.body)
		took := time.Since(began)
		if a.status != http.StatusServiceUnavailable || !strings.Contains(string(a.body), tc.want) {
			t.Errorf("%s on a frozen Redis: %d %s, want 503 saying %q", tc.name, a.status, a.body, tc.want)
		}
		if took > bound {
			t.Errorf("%s on a frozen Redis answered after %v, want at most %v", tc.name, took, bound)
		}
	}
}
