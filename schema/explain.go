package schema

import (
	"encoding/json"
	"strconv"
)

// Explain is the per-check list of the last decisions of the executive and the notifier (added
// by us; newest first, capped by executive.explain_entries), read by `flapjack explain`. id is
// ENTITY:CHECK.
func (k Keys) Explain(id string) string { return k.key("explain", id) }

// Explain entry stages.
const (
	ExplainExecutive = "executive"
	ExplainNotifier  = "notifier"
	// ExplainEscalation entries are written by the escalation tick: a step fired (verdict
	// "escalation", with the contacts like a notifier entry) or a ladder stopped
	// ("escalation_stopped"); Reason says which and why.
	ExplainEscalation = "escalation"
)

// ExplainEntry is one decision in an Explain list: an event the executive judged, or a
// notification the notifier routed.
type ExplainEntry struct {
	Time  int64  `json:"time"`
	Stage string `json:"stage"`
	// executive: the event's type and state; notifier: the notification's type and state
	Type  string `json:"type"`
	State string `json:"state,omitempty"`
	// executive: notified, blocked, stale or new_check; notifier: routed or no_contacts
	Verdict string `json:"verdict"`
	Filter  string `json:"filter,omitempty"` // the filter that blocked the event
	Reason  string `json:"reason,omitempty"`
	// Until is when the maintenance that blocked the event ends (unix seconds).
	Until        int64            `json:"until,omitempty"`
	Notification string           `json:"notification,omitempty"` // type of the notification generated
	Severity     string           `json:"severity,omitempty"`
	Contacts     []ExplainContact `json:"contacts,omitempty"`
}

// ExplainContact is what one contact's rules, intervals and rollup made of a notification.
type ExplainContact struct {
	ID    string   `json:"id"`
	Name  string   `json:"name,omitempty"`
	Rules []string `json:"rules,omitempty"` // what each rule did, in order
	// Reason is why the contact got nothing at all ("" when media were considered).
	Reason string          `json:"reason,omitempty"`
	Media  []ExplainMedium `json:"media,omitempty"`
}

// ExplainMedium is the outcome on one medium of a contact.
type ExplainMedium struct {
	Medium  string `json:"medium"`
	Alerted bool   `json:"alerted"`
	Reason  string `json:"reason"`
}

// AppendJSON appends the entry as JSON, as encoding/json writes it, without reflection: the
// executive writes one per event.
func (e *ExplainEntry) AppendJSON(b []byte) []byte {
	if len(e.Contacts) > 0 {
		out, _ := json.Marshal(e)
		return append(b, out...)
	}
	b = append(b, `{"time":`...)
	b = strconv.AppendInt(b, e.Time, 10)
	b = appendField(b, "stage", e.Stage, false)
	b = appendField(b, "type", e.Type, false)
	b = appendField(b, "state", e.State, true)
	b = appendField(b, "verdict", e.Verdict, false)
	b = appendField(b, "filter", e.Filter, true)
	b = appendField(b, "reason", e.Reason, true)
	if e.Until != 0 {
		b = append(b, `,"until":`...)
		b = strconv.AppendInt(b, e.Until, 10)
	}
	b = appendField(b, "notification", e.Notification, true)
	b = appendField(b, "severity", e.Severity, true)
	return append(b, '}')
}

func appendField(b []byte, name, value string, omitEmpty bool) []byte {
	if omitEmpty && value == "" {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	for i := 0; i < len(value); i++ {
		if c := value[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(value) // escapes as encoding/json does (HTML-safe)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, value...)
	return append(b, '"')
}
