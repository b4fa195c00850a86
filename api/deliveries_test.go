package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/schema"
)

// GET /deliveries reads the delivery log filtered by check, contact, time and count, needs the
// read token when one is set, and refuses bad parameters with 400.
func TestDeliveriesRoute(t *testing.T) {
	t.Parallel()
	srv, db := apiServer(t, func(o *Options) { o.ReadToken = "r3ad" })
	k := schema.NewKeys("")
	var ops model.Ops
	for i, c := range []struct{ check, contact string }{{"web-01:HTTP", "ada"}, {"web-01:HTTP", "grace"}, {"db-01:MySQL", "ada"}} {
		model.QueueDelivery(&ops, k, schema.Alert{ID: fmt.Sprintf("a%d", i), Media: "email", EventID: c.check,
			ContactID: c.contact, State: "critical", NotificationType: "problem"}, 1000+int64(i)*100)
	}
	conn := db.Pool.Get()
	defer conn.Close()
	if _, err := model.Apply(conn, model.ApplyTarget{}, []model.Record{{Ops: ops}}); err != nil {
		t.Fatal(err)
	}
	if err := model.RecordAttempt(conn, k, schema.Alert{ID: "a1", EventID: "web-01:HTTP", ContactID: "grace"},
		model.Attempt{At: 1150, Status: schema.DeliveryDelivered, MessageID: "m-1", Tried: true}); err != nil {
		t.Fatal(err)
	}
	auth := []string{"Authorization", "Bearer r3ad"}
	for _, tc := range []struct {
		query string
		want  []string // ids:status
	}{
		{"", []string{"a0:queued", "a1:delivered", "a2:queued"}},
		{"?check=web-01:HTTP", []string{"a0:queued", "a1:delivered"}},
		{"?contact=ada", []string{"a0:queued", "a2:queued"}},
		{"?check=web-01:HTTP&contact=grace", []string{"a1:delivered"}},
		{"?since=1100", []string{"a1:delivered", "a2:queued"}},
		{"?since=1970-01-01T00:18:20Z", []string{"a1:delivered", "a2:queued"}},
		{"?limit=1", []string{"a2:queued"}},
	} {
		a := call(t, srv, "GET", "/deliveries"+tc.query, "", "", auth...)
		if a.status != http.StatusOK {
			t.Fatalf("%s: %d %s", tc.query, a.status, a.body)
		}
		var body struct{ Deliveries []schema.DeliveryRecord }
		if err := json.Unmarshal(a.body, &body); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, d := range body.Deliveries {
			got = append(got, d.ID+":"+d.Status)
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: %v, want %v", tc.query, got, tc.want)
		}
	}
	if a := call(t, srv, "GET", "/deliveries", "", ""); a.status != http.StatusUnauthorized {
		t.Errorf("without the read token: %d", a.status)
	}
	for _, q := range []string{"?check=nonsense", "?since=yesterday", "?limit=0"} {
		if a := call(t, srv, "GET", "/deliveries"+q, "", "", auth...); a.status != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", q, a.status)
		}
	}
}
