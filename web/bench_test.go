package web

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/events"
	"github.com/flapjackgo/flapjack/executive"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/schema"
)

// BenchmarkChecksFailing renders /checks_failing over 10,000 checks of which 500 fail, all
// written by the real executive: go test -run '^$' -bench ChecksFailing ./web/
func BenchmarkChecksFailing(b *testing.B) {
	db := testredis.New(b)
	keys := schema.NewKeys("")
	clk := clock.NewFake(t0.Add(-time.Hour))
	x := executive.New(executive.Options{Pool: db.Pool, Keys: keys, Config: executive.DefaultConfig(), Clock: clk,
		Identity: queue.Identity{Host: "exec", PID: 1}, Version: "bench"})
	ctx := context.Background()
	if _, err := x.Loop(false).Open(ctx); err != nil {
		b.Fatal(err)
	}
	conn := db.Pool.Get()
	for i := 0; i < 10000; i++ {
		state := "ok"
		if i%20 == 0 {
			state = "critical"
		}
		conn.Send("LPUSH", keys.Events(), fmt.Sprintf(`{"entity":"host-%04d.example.com","check":"check %d","type":"service","state":%q,"summary":"summary of %d"}`, i/10, i%10, state, i))
	}
	if err := conn.Flush(); err != nil {
		b.Fatal(err)
	}
	conn.Close()
	for {
		n, err := x.ProcessNext(ctx, 0)
		if err != nil {
			b.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	clk.Set(t0)
	h, err := Handler(Options{Addr: "127.0.0.1:0", Pool: db.Pool, Keys: keys, Events: events.NewPublisher(db.Pool, keys, ""), Clock: clk})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req := httptest.NewRequest("GET", "/checks_failing", nil)
		req.RemoteAddr = "127.0.0.1:1234"
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "500 failing check(s)") {
			b.Fatalf("status %d, or not 500 failing checks", rec.Code)
		}
	}
}
