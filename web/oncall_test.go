package web

import (
	"net/http"
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/schema"
)

// The on-call report page shows each contact's week: alerts, nights, pages acknowledged and how
// fast (the fixture's MySQL check was acknowledged at 09:58, three minutes after Ada's page; the
// HTTP pages at 00:00 and 01:00 were not).
func TestOncallReportPage(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	conn := f.db.Conn(t)
	defer conn.Close()
	var ops model.Ops
	for i, m := range []string{"email", "sms"} {
		model.QueueDelivery(&ops, f.keys, schema.Alert{ID: "p" + m, Media: m, EventID: "db-01.example.com:MySQL", ContactID: "ada",
			State: "warning", NotificationType: "problem"}, t0.Add(-5*time.Minute).Unix())
		model.QueueDelivery(&ops, f.keys, schema.Alert{ID: "n" + m, Media: m, EventID: "web-01.example.com:HTTP", ContactID: "ada",
			State: "critical", NotificationType: "problem"}, t0.Add(-time.Duration(9+i)*time.Hour).Unix()) // 01:00 and 00:00 UTC
	}
	if _, err := model.Apply(conn, model.ApplyTarget{}, []model.Record{{Ops: ops}}); err != nil {
		t.Fatal(err)
	}
	c := f.client(t, false)
	page := c.get("/reports/oncall")
	contains(t, page, "/reports/oncall", `<a href="/contacts/ada">Ada Lovelace</a>`, "2026-01-05 (UTC)", "4 (0 delivered)", "email 2 sms 2",
		`<td data-label="At night">2</td>`, "00:00 1 01:00 1 09:00 2", "1 of 3", `<td data-label="Median">3 minutes</td>`,
		`value="2025-12-30"`, `value="2026-01-06"`)
	lacks(t, c.get("/reports/oncall?from=2026-01-06&until=2026-01-08"), "a later week", "Ada Lovelace")
	if code, _, _ := c.do("GET", "/reports/oncall?from=yesterday", nil); code != http.StatusBadRequest {
		t.Errorf("bad date: HTTP %d", code)
	}
}
