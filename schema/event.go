package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/flapjackgo/flapjack/internal/text"
)

// MaxEventBytes is the largest event payload accepted (SPEC 4.2).
const MaxEventBytes = 64 * 1024

// Event types.
const (
	TypeService = "service"
	TypeAction  = "action"
)

// Event states.
const (
	StateOK                = "ok"
	StateWarning           = "warning"
	StateCritical          = "critical"
	StateUnknown           = "unknown"
	StateAcknowledgement   = "acknowledgement"
	StateTestNotifications = "test_notifications"
)

// Event is a validated, normalised check result or action (reference §1.2).
type Event struct {
	Entity   string // lower-cased
	Check    string // case kept; may contain ':' and spaces
	Type     string // TypeService or TypeAction
	State    string // lower-cased
	Summary  string // trimmed; "" = absent
	Details  string
	Perfdata string
	Tags     []string

	Time                int64
	HasTime             bool
	Duration            int64 // acknowledgement length in seconds
	HasDuration         bool
	InitialFailureDelay int64
	HasInitialDelay     bool
	RepeatFailureDelay  int64
	HasRepeatDelay      bool
	AcknowledgementID   string
}

// ID is the event id ENTITY:CHECK.
func (e *Event) ID() string { return CheckID(e.Entity, e.Check) }

// CheckID joins an entity and a check into the id used in keys and notifications.
func CheckID(entity, check string) string { return entity + ":" + check }

// SplitCheckID splits ENTITY:CHECK at the first colon (check names may contain colons).
func SplitCheckID(id string) (entity, check string, ok bool) {
	i := strings.IndexByte(id, ':')
	if i <= 0 || i == len(id)-1 {
		return "", "", false
	}
	return id[:i], id[i+1:], true
}

// IsFailure reports a failing check state.
func IsFailure(state string) bool {
	return state == StateWarning || state == StateCritical || state == StateUnknown
}

// IsService reports a service event (a check result).
func (e *Event) IsService() bool { return e.Type == TypeService }

// IsOK reports a passing service event.
func (e *Event) IsOK() bool { return e.Type == TypeService && e.State == StateOK }

// IsFailure reports a failing service event.
func (e *Event) IsFailure() bool { return e.Type == TypeService && IsFailure(e.State) }

// IsAcknowledgement reports an acknowledgement action.
func (e *Event) IsAcknowledgement() bool {
	return e.Type == TypeAction && e.State == StateAcknowledgement
}

// IsTest reports a test-notifications action.
func (e *Event) IsTest() bool { return e.Type == TypeAction && e.State == StateTestNotifications }

// RejectError lists every reason an event was refused.
type RejectError struct {
	Reasons []string
}

func (r *RejectError) Error() string { return "invalid event: " + strings.Join(r.Reasons, "; ") }

var requiredEventFields = []string{"type", "state", "entity", "check"}

var optionalEventFields = map[string]bool{
	"time": true, "summary": true, "details": true, "perfdata": true, "acknowledgement_id": true,
	"duration": true, "tags": true, "initial_failure_delay": true, "repeat_failure_delay": true,
}

var serviceStates = map[string]bool{
	StateOK: true, StateWarning: true, StateCritical: true, StateUnknown: true,
}

var actionStates = map[string]bool{StateAcknowledgement: true, StateTestNotifications: true}

// ParseEvent validates and normalises one raw event. Every problem found is reported in the
// returned *RejectError, so a producer can fix all of them at once.
func ParseEvent(raw []byte) (Event, error) {
	if len(raw) > MaxEventBytes {
		return Event{}, &RejectError{Reasons: []string{fmt.Sprintf(
			"event is %d bytes, over the %d-byte limit", len(raw), MaxEventBytes)}}
	}
	if !utf8.Valid(raw) {
		return Event{}, &RejectError{Reasons: []string{"event is not valid UTF-8"}}
	}
	if e, ok := parseFast(raw); ok {
		return e, nil
	}
	return parseFull(raw)
}

// parseFull is the reflective parser: slower, but it finds and words every problem.
func parseFull(raw []byte) (Event, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return Event{}, &RejectError{Reasons: []string{"event must be a JSON object"}}
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &fields); err != nil {
		return Event{}, &RejectError{Reasons: []string{"event is not valid JSON: " + err.Error()}}
	}
	p := eventParser{fields: fields}
	return p.parse()
}

type eventParser struct {
	fields  map[string]json.RawMessage
	reasons []string
}

func (p *eventParser) fail(format string, args ...any) {
	p.reasons = append(p.reasons, fmt.Sprintf(format, args...))
}

func (p *eventParser) parse() (Event, error) {
	var e Event
	for _, name := range requiredEventFields {
		v, ok := p.fields[name]
		if !ok || isNull(v) {
			p.fail("%s is required", name)
			continue
		}
		s, isString := jsonString(v)
		switch {
		case !isString:
			p.fail("%s must be a string", name)
		case strings.TrimSpace(s) == "":
			p.fail("%s must not be empty", name)
		}
	}
	var unknown []string
	for name := range p.fields {
		if !optionalEventFields[name] && !isRequired(name) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		p.fail("unknown fields: %s", strings.Join(unknown, ", "))
	}
	if len(p.reasons) > 0 {
		return e, &RejectError{Reasons: p.reasons}
	}

	e.Type = strings.ToLower(p.str("type"))
	e.State = strings.ToLower(p.str("state"))
	e.Entity = strings.ToLower(strings.TrimSpace(p.str("entity")))
	e.Check = p.str("check")
	p.checkTypeAndState(e.Type, e.State)

	e.Summary = p.optionalText("summary")
	e.Details = p.optionalText("details")
	e.Perfdata = p.optionalText("perfdata")
	e.Time, e.HasTime = p.optionalInt("time")
	e.Duration, e.HasDuration = p.optionalInt("duration")
	e.InitialFailureDelay, e.HasInitialDelay = p.optionalInt("initial_failure_delay")
	e.RepeatFailureDelay, e.HasRepeatDelay = p.optionalInt("repeat_failure_delay")
	e.AcknowledgementID = p.acknowledgementID()
	e.Tags = p.tags()

	if e.HasDuration && e.Duration <= 0 && e.IsAcknowledgement() {
		p.fail("duration must be a positive number of seconds for an acknowledgement, got %d", e.Duration)
	}
	for _, d := range []struct {
		name string
		v    int64
		has  bool
	}{{"duration", e.Duration, e.HasDuration}, {"initial_failure_delay", e.InitialFailureDelay, e.HasInitialDelay}, {"repeat_failure_delay", e.RepeatFailureDelay, e.HasRepeatDelay}, {"time", e.Time, e.HasTime}} {
		if d.has && d.v < 0 {
			p.fail("%s must not be negative, got %d", d.name, d.v)
		}
	}
	if strings.ContainsRune(e.Entity, ':') {
		p.fail("entity must not contain ':' (it separates entity and check in check ids)")
	}
	if len(p.reasons) > 0 {
		return Event{}, &RejectError{Reasons: p.reasons}
	}
	return e, nil
}

func (p *eventParser) checkTypeAndState(typ, state string) {
	switch typ {
	case TypeService:
		if !serviceStates[state] {
			if actionStates[state] {
				p.fail("state %q needs type \"action\", not \"service\"", state)
			} else {
				p.fail("state %q is not one of ok, warning, critical, unknown", state)
			}
		}
	case TypeAction:
		if !actionStates[state] {
			if serviceStates[state] {
				p.fail("state %q needs type \"service\", not \"action\"", state)
			} else {
				p.fail("state %q is not one of acknowledgement, test_notifications", state)
			}
		}
	default:
		p.fail("type %q is not one of service, action", typ)
	}
}

func isRequired(name string) bool {
	for _, r := range requiredEventFields {
		if r == name {
			return true
		}
	}
	return false
}

func isNull(v json.RawMessage) bool { return string(v) == "null" }

func jsonString(v json.RawMessage) (string, bool) {
	if len(v) == 0 || v[0] != '"' {
		return "", false
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", false
	}
	return s, true
}

func (p *eventParser) str(name string) string {
	s, _ := jsonString(p.fields[name])
	return s
}

func (p *eventParser) optionalText(name string) string {
	v, ok := p.fields[name]
	if !ok || isNull(v) {
		return ""
	}
	s, isString := jsonString(v)
	if !isString {
		p.fail("%s must be a string", name)
		return ""
	}
	return strings.TrimSpace(s)
}

// optionalInt accepts a JSON integer or a string of digits (reference §1.2).
func (p *eventParser) optionalInt(name string) (int64, bool) {
	v, ok := p.fields[name]
	if !ok || isNull(v) {
		return 0, false
	}
	if s, isString := jsonString(v); isString {
		if s == "" || strings.TrimLeft(s, "0123456789") != "" {
			p.fail("%s must be an integer or a string of digits, got %q", name, s)
			return 0, false
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			p.fail("%s is out of range: %q", name, s)
			return 0, false
		}
		return n, true
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		p.fail("%s must be an integer, got %s", name, text.Truncate(string(v), 40))
		return 0, false
	}
	return n, true
}

func (p *eventParser) acknowledgementID() string {
	v, ok := p.fields["acknowledgement_id"]
	if !ok || isNull(v) {
		return ""
	}
	if s, isString := jsonString(v); isString {
		return s
	}
	if _, err := strconv.ParseInt(string(v), 10, 64); err == nil {
		return string(v)
	}
	p.fail("acknowledgement_id must be a string or an integer")
	return ""
}

func (p *eventParser) tags() []string {
	v, ok := p.fields["tags"]
	if !ok || isNull(v) {
		return nil
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(v, &raw); err != nil {
		p.fail("tags must be an array of strings")
		return nil
	}
	tags := make([]string, 0, len(raw))
	for i, t := range raw {
		s, isString := jsonString(t)
		if !isString {
			p.fail("tags[%d] must be a string", i)
			continue
		}
		tags = append(tags, s)
	}
	return tags
}

// MarshalJSON encodes the event in Flapjack's event format (absent optional fields omitted).
func (e Event) MarshalJSON() ([]byte, error) {
	m := map[string]any{
		"entity": e.Entity, "check": e.Check, "type": e.Type, "state": e.State,
	}
	if e.Summary != "" {
		m["summary"] = e.Summary
	}
	if e.Details != "" {
		m["details"] = e.Details
	}
	if e.Perfdata != "" {
		m["perfdata"] = e.Perfdata
	}
	if len(e.Tags) > 0 {
		m["tags"] = e.Tags
	}
	if e.HasTime {
		m["time"] = e.Time
	}
	if e.HasDuration {
		m["duration"] = e.Duration
	}
	if e.HasInitialDelay {
		m["initial_failure_delay"] = e.InitialFailureDelay
	}
	if e.HasRepeatDelay {
		m["repeat_failure_delay"] = e.RepeatFailureDelay
	}
	if e.AcknowledgementID != "" {
		m["acknowledgement_id"] = e.AcknowledgementID
	}
	return json.Marshal(m)
}
