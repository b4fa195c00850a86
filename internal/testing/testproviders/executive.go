package testproviders

import (
	"context"
	"testing"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/executive"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/schema"
)

// Executive is the real executive on a test's Redis and clock, for the tests of what providers
// call back (a Slack click, an SMS reply): what they queue is done once the executive applied it.
type Executive struct {
	t testing.TB
	x *executive.Executive
}

// NewExecutive opens an executive with the default configuration.
func NewExecutive(t testing.TB, pool *redis.Pool, keys schema.Keys, clk clock.Clock) *Executive {
	t.Helper()
	x := executive.New(executive.Options{Pool: pool, Keys: keys, Config: executive.DefaultConfig(), Clock: clk,
		Identity: queue.Identity{Host: "exec", PID: 1}, Version: "test"})
	if _, err := x.Loop(false).Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	return &Executive{t: t, x: x}
}

// Process lets the executive take every queued event.
func (e *Executive) Process() {
	e.t.Helper()
	for {
		n, err := e.x.ProcessNext(context.Background(), 0)
		if err != nil {
			e.t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
}
