package views

import (
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/schema"
)

// An escalation step's alert counts among the escalations that reached the contact; the week
// follows the contact's clock (a Sunday 23:30 UTC alert is Monday in Berlin).
func TestOncallReportEscalationsAndWeeks(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	k := schema.NewKeys("")
	conn := db.Pool.Get()
	defer conn.Close()
	db.Do(t, "HSET", k.Contact("kim"), "first_name", "Kim", "last_name", "Ng")
	db.Do(t, "SET", k.ContactTimezone("kim"), "Europe/Berlin")
	sunday := time.Date(2026, 1, 11, 23, 30, 0, 0, time.UTC).Unix()
	var ops model.Ops
	for i, esc := range []*schema.AlertEscalation{nil, {PolicyID: "web", Step: 2, Steps: 3}} {
		model.QueueDelivery(&ops, k, schema.Alert{ID: []string{"a", "b"}[i], Media: "sms", EventID: "web-01:HTTP", ContactID: "kim",
			State: "critical", NotificationType: "problem", Escalation: esc}, sunday+int64(i)*60)
	}
	if _, err := model.Apply(conn, model.ApplyTarget{}, []model.Record{{Ops: ops}}); err != nil {
		t.Fatal(err)
	}
	weeks, err := OncallReport(conn, k, sunday-86400, sunday+86400, "", time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if len(weeks) != 1 || weeks[0].Week != "2026-01-12" || weeks[0].Escalations != 1 || weeks[0].Alerts != 2 ||
		weeks[0].Pages != 2 || weeks[0].ByHour[0] != 2 || weeks[0].Nights != 2 || weeks[0].Name != "Kim Ng" {
		t.Errorf("weeks %+v", weeks)
	}
}
