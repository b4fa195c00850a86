package notifier

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/schema"
	"github.com/flapjackgo/flapjack/timerestriction"
)

// intervalReason says why an interval holds a medium back.
func intervalReason(c *candidate, n *schema.Notification) string {
	if c.suppressedUntil > 0 {
		return fmt.Sprintf("interval: %s was already alerted on %s within its %d s interval; held back until %s",
			n.State, c.medium, c.interval, time.Unix(c.suppressedUntil, 0).UTC().Format(time.RFC3339))
	}
	return "interval: a drop_alerts_for_contact key suppresses this medium"
}

// explain describes, per contact, what routing made of the notification.
func (p *plan) explain(contacts []roster.Contact) []schema.ExplainContact {
	out := make([]schema.ExplainContact, 0, len(contacts))
	for i := range contacts {
		c := &contacts[i]
		ec := schema.ExplainContact{ID: c.ID, Name: strings.TrimSpace(c.FirstName + " " + c.LastName), Rules: p.rules[c.ID]}
		seen := map[string]bool{}
		for _, s := range p.sent {
			if s.contact == c.ID {
				ec.Media = append(ec.Media, schema.ExplainMedium{Medium: s.medium, Alerted: true, Reason: s.reason})
				seen[s.medium] = true
			}
		}
		for _, s := range p.skipped {
			if s.contact != c.ID {
				continue
			}
			if s.medium == "" {
				ec.Reason = s.reason
				continue
			}
			ec.Media = append(ec.Media, schema.ExplainMedium{Medium: s.medium, Reason: s.reason})
			seen[s.medium] = true
		}
		if ec.Reason == "" {
			for _, m := range slices.Sorted(maps.Keys(c.Media)) {
				if !seen[m] {
					ec.Media = append(ec.Media, schema.ExplainMedium{Medium: m, Reason: "not chosen by the rules for " + p.notification.Severity})
				}
			}
		}
		slices.SortStableFunc(ec.Media, func(a, b schema.ExplainMedium) int { return strings.Compare(a.Medium, b.Medium) })
		out = append(out, ec)
	}
	return out
}

// recordExplain adds the routing decision to the check's explain list, in the same atomic write.
func (nt *Notifier) recordExplain(p *plan, contacts []roster.Contact, now time.Time) {
	if nt.cfg.ExplainEntries <= 0 || p.notification == nil {
		return
	}
	n := p.notification
	e := schema.ExplainEntry{Time: now.Unix(), Stage: schema.ExplainNotifier, Type: n.Type, State: n.State,
		Severity: n.Severity, Verdict: p.verdict, Contacts: p.explain(contacts), Reason: strings.Join(slices.Concat(p.escalationNotes, p.scheduleNotes), "; ")}
	if p.verdict == "escalation" || p.verdict == "escalation_stopped" {
		e.Stage, e.Reason = schema.ExplainEscalation, p.reason
	}
	payload, _ := json.Marshal(e)
	checkstate.PushExplain(&p.record, nt.keys, n.EventID, payload, nt.cfg.ExplainEntries)
}

// RulesQuery is a hypothetical notification for one contact (`flapjack rules test`).
type RulesQuery struct {
	Contact, Entity, Check, State string
	// Severity, when set, is the severity of a recovery or acknowledgement; by default they
	// inherit the check's highest failing severity notified since its last recovery, as the
	// executive gives it to them.
	Severity string
	Tags     []string
	Time     time.Time
}

// RulesAnswer is what routing would do with it now.
type RulesAnswer struct {
	Time     time.Time `json:"time"`
	Timezone string    `json:"timezone"`
	CheckID  string    `json:"check"`
	Type     string    `json:"type"`
	Severity string    `json:"severity"`
	// SeverityNote says where the severity of a recovery or acknowledgement came from.
	SeverityNote string                `json:"severity_note,omitempty"`
	Contact      schema.ExplainContact `json:"contact"`
}

// ErrNoContact is returned for a contact that does not exist.
var ErrNoContact = errors.New("no such contact")

// TestRules answers which of a contact's media a notification would alert at q.Time and why,
// by running the notifier's own routing, interval and rollup decisions on what Redis holds
// without writing anything: the planned writes are discarded.
func TestRules(conn redis.Conn, keys schema.Keys, cfg Config, q RulesQuery) (RulesAnswer, error) {
	if cfg.DefaultTimezone == nil {
		cfg.DefaultTimezone = time.UTC
	}
	if cfg.DefaultInterval <= 0 {
		cfg.DefaultInterval = 15 * time.Minute
	}
	nt := &Notifier{keys: keys, cfg: cfg, log: zap.NewNop(), m: NewMetrics(nil),
		router: newRouter(timerestriction.NewCache(64)), zones: newZoneCache(cfg.DefaultTimezone)}
	contacts, err := roster.LoadContacts(conn, keys, []string{q.Contact})
	if err != nil {
		return RulesAnswer{}, err
	}
	if len(contacts) == 0 {
		return RulesAnswer{}, fmt.Errorf("%w: %s", ErrNoContact, q.Contact)
	}
	state := strings.ToLower(q.State)
	n := schema.Notification{EventID: q.Entity + ":" + q.Check, State: state, Tags: q.Tags,
		Type: schema.NotificationProblem, Severity: state}
	var severityNote string
	switch state {
	case schema.StateOK, "up", "acknowledgement":
		n.Type = schema.NotificationRecovery
		if state == "acknowledgement" {
			n.Type = schema.NotificationAcknowledgement
		}
		if n.Severity, severityNote, err = inheritedSeverity(conn, keys, q); err != nil {
			return RulesAnswer{}, err
		}
	case schema.StateCritical, schema.StateWarning, schema.StateUnknown:
	case "down":
		n.Severity = schema.SeverityCritical
	default:
		return RulesAnswer{}, fmt.Errorf("state %q: use ok, warning, critical, unknown or acknowledgement", q.State)
	}
	if n.Tags == nil {
		n.Tags = []string{}
	}
	p := &plan{notification: &n, verdict: "routed"}
	cands := nt.candidates(p, contacts, q.Entity, q.Time)
	if err := nt.readCandidates(conn, []*schema.Notification{&n}, [][]*candidate{cands}, q.Time); err != nil {
		return RulesAnswer{}, err
	}
	nt.decide(p, contacts, cands, q.Time)
	loc := nt.zones.location(contacts[0].Timezone, func(error) {})
	return RulesAnswer{Time: q.Time.In(loc), Timezone: loc.String(), CheckID: n.EventID, Type: n.Type,
		Severity: n.Severity, SeverityNote: severityNote, Contact: p.explain(contacts)[0]}, nil
}

// inheritedSeverity is the severity a recovery or acknowledgement of the check would carry: the
// one asked for, else the highest failing severity notified since the check's last recovery.
func inheritedSeverity(conn redis.Conn, keys schema.Keys, q RulesQuery) (severity, note string, err error) {
	switch q.Severity {
	case schema.SeverityCritical, schema.SeverityWarning, schema.SeverityUnknown, schema.SeverityOK:
		return q.Severity, "as asked (--severity)", nil
	case "":
	default:
		return "", "", fmt.Errorf("severity %q: use critical, warning, unknown or ok", q.Severity)
	}
	facts, err := checkstate.ReadFacts(conn, keys, q.Time, []checkstate.FactsRequest{{Entity: q.Entity, Check: q.Check, Mode: checkstate.ModeEvent}})
	if err != nil {
		return "", "", fmt.Errorf("read the notifications of %s:%s: %w", q.Entity, q.Check, err)
	}
	if max := facts[0].MaxNotifiedSeverity(); max != "" {
		return max, "inherited: the highest severity notified since the check's last recovery", nil
	}
	return schema.SeverityOK, "no problem of this check was notified since its last recovery, so its severity is ok " +
		"(and the executive would not send a recovery at all); --severity tests another", nil
}
