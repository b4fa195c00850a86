package twilio

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/internal/testing/testproviders"
	"github.com/flapjackgo/flapjack/model/views"
	"github.com/flapjackgo/flapjack/schema"
)

// The delivery log matches what the provider received, alert for alert: each delivered record
// carries the sid Twilio gave the one request that carried its alert, across gateway restarts
// (one while an alert waited to be retried) and 503s answered before a 201; an alert no gateway
// took stays queued, never "delivered".
func TestDeliveryLogMatchesWhatTwilioReceived(t *testing.T) {
	t.Parallel()
	srv := testproviders.NewServer(t, testproviders.Twilio(sid, token))
	g := testproviders.NewGateway(t, Medium)
	sender := newSender(t, srv.URL, nil)
	at := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC).Unix()
	numbered := func(n int) schema.Alert {
		a := alert("problem", "critical", fmt.Sprintf("HTTP 500 #%d", n))
		a.ID = fmt.Sprintf("alert-%d", n)
		return a
	}
	// An email alert: no email gateway runs, so it must stay queued.
	unsent := testproviders.Alert("email", "ops@example.com", "problem", "critical", "HTTP 500")
	unsent.ID = "alert-email"
	g.QueueLogged(unsent, at)

	srv.Answer(testproviders.Reply{}, testproviders.Reply{Status: 503})
	g.QueueLogged(numbered(1), at)
	g.QueueLogged(numbered(2), at)
	stop := g.Start(sender, nil, testproviders.RunOptions{})
	g.Settle("the first two alerts", func() bool { return delivered(t, g) == 2 })
	stop()

	g.QueueLogged(numbered(3), at+60)
	if got := record(t, g, "alert-3"); got.Status != schema.DeliveryQueued || got.Attempts != 0 {
		t.Fatalf("alert queued while the gateway is down: %+v, want queued with no attempt", got)
	}
	srv.Answer(testproviders.Reply{}, testproviders.Reply{Status: 503})
	stop = g.Start(sender, nil, testproviders.RunOptions{})
	g.Settle("the third alert", func() bool { return delivered(t, g) == 3 })
	stop()

	// Stopped while waiting to retry: the alert goes back to the queue and the next gateway's
	// attempt is its second.
	srv.Answer(testproviders.Reply{}, testproviders.Reply{Status: 503})
	stop = g.Start(sender, nil, testproviders.RunOptions{FirstBackoff: time.Hour, MaxBackoff: time.Hour})
	g.QueueLogged(numbered(4), at+120)
	waitFor(t, "alert-4 to wait for its retry", func() bool {
		r := record(t, g, "alert-4")
		return r.Status == schema.DeliveryRetrying && r.Attempts == 1
	})
	stop()
	g.Start(sender, nil, testproviders.RunOptions{})
	g.Settle("the fourth alert", func() bool { return delivered(t, g) == 4 })

	_, accepted, _ := srv.Snapshot()
	var sids []string
	for _, req := range accepted {
		sids = append(sids, testproviders.TwilioSID(req.Body))
	}
	var logged []string
	for _, n := range []int{1, 2, 3, 4} {
		r := record(t, g, fmt.Sprintf("alert-%d", n))
		logged = append(logged, r.MessageID)
		wantAttempts := map[int]int{1: 2, 2: 1, 3: 2, 4: 2}[n]
		if r.Status != schema.DeliveryDelivered || r.Attempts != wantAttempts || r.Check != "web-01:HTTP" || r.Contact != "ops" {
			t.Errorf("alert-%d: %+v, want delivered after %d attempts", n, r, wantAttempts)
		}
		if wantAttempts > 1 && r.Error == "" {
			t.Errorf("alert-%d: the 503 before delivery is not recorded", n)
		}
	}
	slices.Sort(sids)
	slices.Sort(logged)
	if !slices.Equal(sids, logged) {
		t.Errorf("message ids logged %q, Twilio created %q", logged, sids)
	}
	if got := record(t, g, "alert-email"); got.Status != schema.DeliveryQueued {
		t.Errorf("alert no gateway took: %+v, want queued", got)
	}
	srv.AssertNoViolations(t)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func delivered(t *testing.T, g *testproviders.Gateway) int {
	n := 0
	for _, r := range readLog(t, g) {
		if r.Status == schema.DeliveryDelivered {
			n++
		}
	}
	return n
}

func record(t *testing.T, g *testproviders.Gateway, id string) schema.DeliveryRecord {
	t.Helper()
	for _, r := range readLog(t, g) {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("no delivery record for %s", id)
	return schema.DeliveryRecord{}
}

func readLog(t *testing.T, g *testproviders.Gateway) []schema.DeliveryRecord {
	t.Helper()
	conn := g.DB.Pool.Get()
	defer conn.Close()
	recs, err := views.ReadDeliveries(conn, g.Keys, views.DeliveryFilter{Contact: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	return recs
}
