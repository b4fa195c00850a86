package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/schema"
)

// TestLogCommand: `flapjack log` lists the alerts the example timeline queued as queued (no
// gateway runs), filtered by check, contact and time; an alert a gateway then delivered reads
// "delivered" with the provider's message id, one it retried says so; bad flags exit 2.
func TestLogCommand(t *testing.T) {
	t.Parallel()
	db, env := whatifLive(t)
	out, errOut, code := flapjack(t, env, "", "log", "--contact", "ada", "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var recs []schema.DeliveryRecord
	if err := json.Unmarshal([]byte(out), &recs); err != nil || len(recs) == 0 {
		t.Fatalf("not a JSON list of records (%v):\n%s", err, out)
	}
	for _, r := range recs {
		if r.Contact != "ada" || r.Status != schema.DeliveryQueued {
			t.Errorf("record %+v: want ada's, queued", r)
		}
	}
	// a gateway takes ada's first alert: a 503, then delivery
	first := schema.Alert{ID: recs[0].ID, EventID: recs[0].Check, ContactID: "ada", Media: recs[0].Medium}
	conn := db.Pool.Get()
	defer conn.Close()
	for _, a := range []model.Attempt{
		{At: recs[0].QueuedAt + 1, Status: schema.DeliveryRetrying, Error: "HTTP 503", Tried: true},
		{At: recs[0].QueuedAt + 3, Status: schema.DeliveryDelivered, MessageID: "SM42", Tried: true},
	} {
		if err := model.RecordAttempt(conn, schema.NewKeys(""), first, a); err != nil {
			t.Fatal(err)
		}
	}
	out, errOut, code = flapjack(t, env, "", "log", "--check", recs[0].Check, "--contact", "ada", "--since", "2026-01-05 10:00")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if !strings.Contains(lines[0], "to ada on "+recs[0].Medium+": delivered (message id SM42), retried once") {
		t.Errorf("first line %q, want it delivered with the message id", lines[0])
	}
	if len(lines) < 2 || !strings.Contains(out, ": queued, not yet taken by a gateway") || strings.Count(out, "delivered") != 1 {
		t.Errorf("the others must read queued:\n%s", out)
	}
	out, _, code = flapjack(t, env, "", "log", "--since", "2h")
	if code != 0 || strings.TrimSpace(out) != "no alerts in the delivery log" {
		t.Errorf("--since 2h (the timeline is from January): exit %d, %q", code, out)
	}
	for _, args := range [][]string{{"log", "--check", "nonsense"}, {"log", "--since", "yesterdayish"}} {
		if _, errOut, code := flapjack(t, env, "", args...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, errOut)
		}
	}
}
