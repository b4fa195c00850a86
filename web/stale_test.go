package web

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/staleness"
)

// TestStaleBadge: /checks_failing marks a check whose ttl ran out as stale, with its ttl, and
// its "last update" stays at its last real result (the stale result is not one).
func TestStaleBadge(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.event(t, -900*time.Second, "web-01.example.com", "Cron", "ok", "ran", `"ttl":300`, `"initial_failure_delay":0`)
	f.clk.Set(t0.Add(-600 * time.Second))
	tk := &staleness.Ticker{Pool: f.db.Pool, Keys: f.keys, Clock: f.clk, Events: f.opts.Events}
	if res, err := tk.Tick(context.Background()); err != nil || res.Claimed != 1 {
		t.Fatalf("tick: %+v %v", res, err)
	}
	f.drain(t)
	f.clk.Set(t0)
	page := f.client(t, false).get("/checks_failing")
	contains(t, page, "/checks_failing", "stale: no result for 5 minutes (ttl 300 s)",
		`<span class="badge stale">stale</span> no result within its ttl of 300 s; last result <time datetime="2026-01-05T09:45:00Z" title="2026-01-05 09:45:00 UTC">15m ago</time>`)
	if n := strings.Count(page, `class="badge stale"`); n != 1 {
		t.Errorf("%d stale badges, want 1 (only Cron)", n)
	}
}
