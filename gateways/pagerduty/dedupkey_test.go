package pagerduty

import (
	"context"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/flapjackgo/flapjack/schema"
)

// longID is a check whose ENTITY:CHECK (329 bytes) is over PagerDuty's 255-character limit on
// dedup_key / incident_key.
var longID = strings.Repeat("app-server-", 18) + "example.com:" + strings.Repeat("Disk usage of /var/lib/data ", 4) + "é"

func TestDedupKey(t *testing.T) {
	t.Parallel()
	for _, id := range []string{"web-01:HTTP", strings.Repeat("w", 251) + ":ssh"} {
		if got := DedupKey(id); got != id {
			t.Errorf("DedupKey(%d bytes) = %q, want the check id itself (Flapjack's incident key)", len(id), got)
		}
	}
	twin := longID[:240] + strings.Repeat(" other check", 3) // the same first 240 bytes
	seen := map[string]string{}
	for _, id := range []string{longID, twin, strings.Repeat("é", 200) + ":" + strings.Repeat("ü", 200)} {
		k := DedupKey(id)
		if len(k) > MaxDedupKeyLength || !utf8.ValidString(k) || k != DedupKey(id) {
			t.Errorf("DedupKey(%q) = %q (%d bytes): want at most %d bytes of valid UTF-8, the same every time",
				id, k, len(k), MaxDedupKeyLength)
		}
		prefix, _, ok := strings.Cut(k, "~")
		if !ok || !strings.HasPrefix(id, prefix) || len(prefix) < 200 {
			t.Errorf("DedupKey(%q) = %q: want a long prefix of the id, then ~hash", id, k)
		}
		if other, dup := seen[k]; dup {
			t.Errorf("DedupKey(%q) = DedupKey(%q) = %q", id, other, k)
		}
		seen[k] = id
	}
}

// TestLongCheckNamesPage: a check whose ENTITY:CHECK is longer than PagerDuty's dedup_key limit
// still pages (the contract server refuses keys over 255 characters, which was dead-lettered):
// trigger, acknowledge and resolve share one derived key, on Events API v2 and v1; and the
// acknowledgement poller, asking PagerDuty for the incident by that key, acknowledges the right
// check.
func TestLongCheckNamesPage(t *testing.T) {
	t.Parallel()
	if len(longID) <= MaxDedupKeyLength {
		t.Fatalf("longID is only %d bytes", len(longID))
	}
	var keys []string
	for _, v1 := range []bool{false, true} {
		srv := newEventsServer(t)
		g, _ := startDelivery(t, Config{UseV1Events: v1}, srv.srv.URL)
		for _, a := range []schema.Alert{
			alert("problem", "critical", "full"), alert("acknowledgement", "critical", "ada: on it"), alert("recovery", "ok", "fine"),
		} {
			a.EventID = longID
			g.Queue(a)
		}
		g.Settle("three deliveries", func() bool { _, acc, _ := srv.snapshot(); return len(acc)+len(g.Failed()) >= 3 })
		_, accepted, violations := srv.snapshot()
		if len(violations) > 0 || len(accepted) != 3 || len(g.Failed()) != 0 {
			t.Fatalf("v1 %v: %d accepted, %d dead-lettered, violations %q", v1, len(accepted), len(g.Failed()), violations)
		}
		for _, ev := range accepted {
			k := ev.V1.IncidentKey
			if !v1 {
				k = *ev.V2.DedupKey
			}
			keys = append(keys, k)
		}
		if !v1 && accepted[0].V2.Payload.CustomDetails["check"] != strings.SplitN(longID, ":", 2)[1] {
			t.Errorf("custom_details.check = %v, want the full check name", accepted[0].V2.Payload.CustomDetails["check"])
		}
	}
	for _, k := range keys {
		if k != DedupKey(longID) || len(k) > MaxDedupKeyLength {
			t.Fatalf("keys sent = %q, want every one %q", keys, DedupKey(longID))
		}
	}

	p := newPollEnv(t)
	p.check(longID, "critical")
	entity, _, _ := schema.SplitCheckID(longID)
	p.contact("c1", entity, pdMedia, tokenCreds)
	p.rest.add(incident{key: keys[0], status: "acknowledged", created: t0.Add(-time.Hour), acknowledgers: []string{"Jane Doe"}})
	res, err := p.poller(p.config(), nil).RunOnce(context.Background())
	if err != nil || len(res.Enqueued) != 1 || res.Enqueued[0] != longID {
		t.Fatalf("poll = %+v, %v; want the long check acknowledged", res, err)
	}
	wantAck(t, p.queued(), longID, "Acknowledged on PagerDuty by Jane Doe")
	if q := first(p.requests()[0].Query, "incident_key"); q != keys[0] {
		t.Fatalf("incident_key asked = %q, want %q", q, keys[0])
	}
}
