package notifier_test

import (
	"testing"

	"github.com/flapjackgo/flapjack/model/views"
	"github.com/flapjackgo/flapjack/schema"
)

// Every alert the notifier queues is in the delivery log as queued, under its check and its
// contact, at the time it was queued; a message skipped for want of a queue has no record.
func TestEveryQueuedAlertIsLoggedAsQueued(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	delete(w.ncfg.MediaQueues, "sms")
	w.contact("ada", []string{"sms=+100", "email=ada@example.com", "jabber=ada@example.com"})
	w.entity("web-01", "ada")
	alerts := w.alerts(ev(0, "web-01", "HTTP", "critical"), ev(60, "web-01", "HTTP", "ok"))
	if len(alerts) != 4 {
		t.Fatalf("%d alerts, want a problem and a recovery on email and jabber", len(alerts))
	}
	conn := w.db.Pool.Get()
	defer conn.Close()
	for _, f := range []views.DeliveryFilter{{Check: "web-01:HTTP"}, {Contact: "ada"}, {}} {
		recs, err := views.ReadDeliveries(conn, w.keys, f)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != len(alerts) {
			t.Fatalf("filter %+v: %d records, want %d: %+v", f, len(recs), len(alerts), recs)
		}
		byID := map[string]schema.DeliveryRecord{}
		for _, r := range recs {
			byID[r.ID] = r
		}
		for _, a := range alerts {
			r, ok := byID[a.ID]
			if !ok || r.Status != schema.DeliveryQueued || r.Medium != a.Media || r.Type != a.NotificationType ||
				r.Contact != "ada" || r.Check != "web-01:HTTP" || r.QueuedAt != *a.Time {
				t.Errorf("filter %+v: alert %s (%s %s at %d) logged as %+v", f, a.ID, a.Media, a.NotificationType, *a.Time, r)
			}
		}
	}
	since, err := views.ReadDeliveries(conn, w.keys, views.DeliveryFilter{Contact: "ada", Since: T0 + 30})
	if err != nil || len(since) != 2 || since[0].Type != schema.NotificationRecovery {
		t.Errorf("since the recovery: %+v (%v), want its 2 alerts", since, err)
	}
}
