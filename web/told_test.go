package web

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/schema"
)

// The check page says who was told from the delivery log: an alert no gateway took reads
// "queued, not delivered yet", never "sent"; only a delivered one reads "delivered", with the
// provider's message id and its retries.
func TestCheckPageSaysWhoWasToldFromTheDeliveryLog(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	conn := f.db.Conn(t)
	defer conn.Close()
	at := t0.Add(-30 * time.Minute).Unix()
	entry := schema.ExplainEntry{Time: at, Stage: schema.ExplainNotifier, Type: "problem", State: "critical", Severity: "critical",
		Verdict: "routed", Contacts: []schema.ExplainContact{{ID: "ada", Name: "Ada Lovelace", Media: []schema.ExplainMedium{
			{Medium: "email", Alerted: true, Reason: "alerted"}, {Medium: "sms", Alerted: true, Reason: "alerted"}}}}}
	raw, _ := json.Marshal(entry)
	var ops model.Ops
	ops.LPush(f.keys.Explain("web-01.example.com:HTTP"), raw)
	email := schema.Alert{ID: "a-email", Media: "email", EventID: "web-01.example.com:HTTP", ContactID: "ada", State: "critical", NotificationType: "problem"}
	sms := email
	sms.ID, sms.Media = "a-sms", "sms"
	model.QueueDelivery(&ops, f.keys, email, at)
	model.QueueDelivery(&ops, f.keys, sms, at)
	if _, err := model.Apply(conn, model.ApplyTarget{}, []model.Record{{Ops: ops}}); err != nil {
		t.Fatal(err)
	}
	for _, a := range []model.Attempt{{At: at + 1, Status: schema.DeliveryRetrying, Error: "HTTP 503", Tried: true},
		{At: at + 3, Status: schema.DeliveryDelivered, MessageID: "SM77", Tried: true}} {
		if err := model.RecordAttempt(conn, f.keys, sms, a); err != nil {
			t.Fatal(err)
		}
	}
	page := f.client(t, false).get(checkPath)
	contains(t, page, checkPath, "Who was told",
		"email: queued, not delivered yet (no gateway has taken it)",
		"sms: delivered, retried once",
		`<td data-label="Medium">email</td><td data-label="Alert">problem (critical)</td><td data-label="Delivery" title="problem critical alert for web-01.example.com:HTTP to ada on email: queued, not yet taken by a gateway">queued, not delivered yet</td>`,
		`<td data-label="Delivery" title="problem critical alert for web-01.example.com:HTTP to ada on sms: delivered (message id SM77), retried once">delivered (SM77), after 2 attempts</td>`)
	lacks(t, page, checkPath, "email: sent", "email: delivered")
}
