package web

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/events"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/redisconn"
	"github.com/flapjackgo/flapjack/schema"
)

// TestFrozenRedisPageIs503: with Redis stopped (SIGSTOP) a page answers 503 saying Redis is
// unavailable within the command timeout, not a 500 and not a hang.
func TestFrozenRedisPageIs503(t *testing.T) {
	t.Parallel()
	rs := testredis.StartServer(t)
	db := rs.NewDB(t)
	const timeout = 300 * time.Millisecond
	pool, err := redisconn.NewPool(redisconn.Config{URL: db.URL(), CommandTimeout: timeout}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	keys := schema.NewKeys("")
	h, err := Handler(Options{Addr: "127.0.0.1:0", Pool: pool, Keys: keys, Events: events.NewPublisher(pool, keys, ""), Clock: clock.Real{}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	rs.Freeze(t)
	defer rs.Thaw(t)
	began := time.Now()
	resp, err := http.Get(srv.URL + "/checks_all")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	took := time.Since(began)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "Redis unavailable") {
		t.Errorf("a page on a frozen Redis: %d, want 503 saying Redis is unavailable; body %.300s", resp.StatusCode, body)
	}
	if bound := timeout + time.Second; took > bound {
		t.Errorf("a page on a frozen Redis answered after %v, want at most %v", took, bound)
	}
}
