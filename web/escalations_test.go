package web

import (
	"context"
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/notifier"
	"github.com/flapjackgo/flapjack/queue"
)

// TestEscalationOnCheckAndContactPages: a problem of web-01's HTTP escalated by a policy shows
// its ladder on the check's page (step fired, next step due, who was alerted), and the contact's
// page lists the policy with the contact's steps.
func TestEscalationOnCheckAndContactPages(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	conn := f.db.Conn(t)
	defer conn.Close()
	ctx := context.Background()
	res, err := roster.PutEscalationPolicies(ctx, conn, f.keys, []roster.EscalationPolicy{{ID: "web-oncall", Name: "Web on-call",
		Entities: []string{"web-01.example.com"},
		Steps:    []roster.EscalationStep{{Delay: 0, Contacts: []string{"ada"}}, {Delay: 900, Contacts: []string{"ada"}}}}}, roster.ReplaceOptions{})
	if err != nil || len(res.Problems) > 0 {
		t.Fatalf("put policy: %v %v", err, res.Problems)
	}
	f.event(t, time.Minute, "web-01.example.com", "HTTP", "critical", "HTTP 500 Internal Server Error")
	cfg := notifier.DefaultConfig()
	cfg.MediaQueues = map[string]string{"email": "email_notifications"}
	n := notifier.New(notifier.Options{Pool: f.db.Pool, Keys: f.keys, Config: cfg, Clock: f.clk, HeartbeatClock: clock.Real{},
		Identity: queue.Identity{Host: "web-test", PID: 1}})
	for {
		r, err := n.ProcessNextResult(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		if r.Finished == 0 {
			break
		}
	}
	// ada is also web-01's contact: her problem alert started her interval, which holds back
	// the step's page (intervals apply to escalations as to any alert); she counts as alerted
	if r, err := n.Escalate(ctx); err != nil || r.Finished != 1 || len(r.Alerts) != 0 {
		t.Fatalf("step 1: %d ladders, %d alerts (%v), want 1 and 0", r.Finished, len(r.Alerts), err)
	}
	c := f.client(t, false)
	contains(t, c.get(checkPath), checkPath, "<h2>Escalation</h2>",
		"Policy web-oncall: step 1 of 2 fired (started 2026-01-05 10:01:00 UTC); step 2 due at 2026-01-05 10:16:00 UTC (in 15 minutes); alerted: ada")
	contains(t, c.get("/contacts/ada"), "/contacts/ada", "<h2>Escalation policies</h2>",
		"web-oncall (Web on-call): step 1 of 2, after 0 seconds; step 2 of 2, after 15 minutes")
}
