package views

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/schema"
)

// ReadExplain returns the recorded decisions about check id (ENTITY:CHECK) made at or after
// since (unix seconds), oldest first. Entries that cannot be read are skipped.
func ReadExplain(conn redis.Conn, keys schema.Keys, id string, since int64) ([]schema.ExplainEntry, error) {
	raw, err := redis.ByteSlices(conn.Do("LRANGE", keys.Explain(id), 0, -1))
	if err != nil {
		return nil, fmt.Errorf("read explain list of %s: %w", id, err)
	}
	out := make([]schema.ExplainEntry, 0, len(raw))
	for _, r := range slices.Backward(raw) {
		var e schema.ExplainEntry
		if json.Unmarshal(r, &e) != nil || e.Time < since {
			continue
		}
		out = append(out, e)
	}
	return out, nil
}

var filterNames = map[string]string{
	"ok":                      "the ok filter",
	"scheduled_maintenance":   "scheduled maintenance",
	"unscheduled_maintenance": "unscheduled maintenance",
	"delays":                  "the delays filter",
	"acknowledgement":         "the acknowledgement filter",
}

// ExplainLines renders one decision as sentences for an on-call engineer: a first line, then
// indented details (contacts, rules, media). Times are shown in loc. The notifier queues alerts;
// whether one was delivered is the delivery log's to say (fates, nil for none): an alert reads
// "delivered" only when its record says so (docs/decisions.md D24).
func ExplainLines(e schema.ExplainEntry, loc *time.Location, fates Fates) []string {
	at := time.Unix(e.Time, 0).In(loc).Format("2006-01-02 15:04:05 MST")
	until := func() string {
		if e.Until == 0 {
			return ""
		}
		return " until " + time.Unix(e.Until, 0).In(loc).Format("2006-01-02 15:04:05 MST")
	}
	what := e.State + " " + e.Type + " event"
	if e.Type == "action" || e.Type == e.State {
		what = e.State + " event"
	}
	if e.Stage == schema.ExplainExecutive {
		var s string
		switch e.Verdict {
		case "notified":
			article := "a"
			if strings.IndexByte("aeiou", e.Notification[0]) >= 0 {
				article = "an"
			}
			s = fmt.Sprintf("%s %s notification (severity %s) was generated.", article, e.Notification, e.Severity)
		case "blocked":
			name := filterNames[e.Filter]
			if name == "" {
				name = "the " + e.Filter + " filter"
			}
			s = fmt.Sprintf("no notification: blocked by %s (%s%s).", name, e.Reason, until())
		case "stale":
			s = "ignored: " + e.Reason + "."
		case "new_check":
			s = "no notification: " + e.Reason + until() + "."
		default:
			s = e.Verdict + ": " + e.Reason + "."
		}
		return []string{fmt.Sprintf("%s  executive: %s: %s", at, what, s)}
	}
	head := fmt.Sprintf("%s  notifier: %s notification (%s): ", at, e.Type, e.Severity)
	var escalation []string
	if e.Reason != "" {
		escalation = []string{"    " + e.Reason}
	}
	if e.Stage == schema.ExplainEscalation {
		head = at + "  escalation: " + e.Reason + ". "
		escalation = nil
		if e.Verdict == "escalation_stopped" {
			return []string{strings.TrimSpace(head)}
		}
	}
	if e.Verdict == "no_contacts" || len(e.Contacts) == 0 {
		return append([]string{head + "no contact is interested in this check; nothing was sent."}, escalation...)
	}
	queued := 0
	for _, c := range e.Contacts {
		for _, m := range c.Media {
			if m.Alerted {
				queued++
			}
		}
	}
	lines := append([]string{head + fmt.Sprintf("%d contact(s) considered, %d alert(s) queued.", len(e.Contacts), queued)}, escalation...)
	for _, c := range e.Contacts {
		who := c.ID
		if c.Name != "" {
			who = c.Name + " (" + c.ID + ")"
		}
		lines = append(lines, "    "+who+":")
		for _, r := range c.Rules {
			lines = append(lines, "      "+r)
		}
		if c.Reason != "" {
			lines = append(lines, "      nothing sent: "+c.Reason)
		}
		for _, m := range c.Media {
			text := "not sent: " + m.Reason
			if m.Alerted {
				text = fates.fate(c.ID, m.Medium, e.Time)
				switch how := strings.TrimSpace(strings.TrimPrefix(m.Reason, "alerted")); {
				case strings.HasPrefix(how, "("):
					text += " " + how
				case how != "":
					text += ", " + how
				}
			}
			lines = append(lines, "      "+m.Medium+": "+text)
		}
	}
	return lines
}

// Fates are delivery log records found by what an explain entry knows of each alert it queued:
// the contact, the medium and the second it was queued.
type Fates map[fateKey]schema.DeliveryRecord

type fateKey struct {
	contact, medium string
	at              int64
}

// NewFates indexes records (a check's, from ReadDeliveries) for ExplainLines.
func NewFates(recs []schema.DeliveryRecord) Fates {
	f := make(Fates, len(recs))
	for _, r := range recs {
		f[fateKey{r.Contact, r.Medium, r.QueuedAt}] = r
	}
	return f
}

// fate is what became of an alert, in a few words.
func (f Fates) fate(contact, medium string, at int64) string {
	r, ok := f[fateKey{contact, medium, at}]
	if !ok {
		return "queued"
	}
	switch r.Status {
	case schema.DeliveryDelivered:
		return "delivered" + retriedText(r)
	case schema.DeliveryFailed:
		return fmt.Sprintf("queued, not delivered: failed after %d attempts (%s)", r.Attempts, r.Error)
	case schema.DeliveryRetrying:
		return fmt.Sprintf("queued, not delivered yet: %d attempts failed (%s)", r.Attempts, r.Error)
	}
	return "queued, not delivered yet (no gateway has taken it)"
}
