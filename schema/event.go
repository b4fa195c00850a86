package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/flapjackgo/flapjack/internal/text"
)

// MaxEventBytes is the largest event payload accepted (docs/decisions.md D2).
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

// Event is a validated, normalised check result or action (docs/flapjack-1x.md 1.2).
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

	// TTL is how long, in seconds, the check may stay silent after this result before the
	// executive records it stale (docs/decisions.md D19); 0 with HasTTL: no ttl, whatever the defaults say.
	TTL    int64
	HasTTL bool
	// Stale marks a result flapjack recorded itself because the check went silent: it is not
	// evidence that the check is alive (no freshness, no new deadline).
	Stale bool
}

// MaxTTL is the longest ttl an event may carry: a year.
const MaxTTL = 365 * 24 * 3600

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

// ParseEventString is ParseEvent of a claimed item, without copying it to a []byte first: the
// parsers only read raw, and every string in the Event they return is a copy of its own.
func ParseEventString(raw string) (Event, error) {
	return ParseEvent(unsafe.Slice(unsafe.StringData(raw), len(raw)))
}

// parseFull reads any JSON with encoding/json: slower than parseFast, but it reads every shape,
// so every problem is found and worded.
func parseFull(raw []byte) (Event, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return Event{}, &RejectError{Reasons: []string{"event must be a JSON object"}}
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &fields); err != nil {
		return Event{}, &RejectError{Reasons: []string{"event is not valid JSON: " + err.Error()}}
	}
	m := readMembers(fields)
	var r reasons
	e := m.validate(&r)
	if r.failed() {
		return Event{}, &RejectError{Reasons: r.list}
	}
	return e, nil
}

// The members of an event, in the order validate reports their problems.
const (
	mType = iota
	mState
	mEntity
	mCheck
	mSummary
	mDetails
	mPerfdata
	mTime
	mDuration
	mInitialDelay
	mRepeatDelay
	mAckID
	mTags
	mTTL
	mStale
	numMembers
)

var memberNames = [numMembers]string{
	"type", "state", "entity", "check", "summary", "details", "perfdata", "time", "duration",
	"initial_failure_delay", "repeat_failure_delay", "acknowledgement_id", "tags", "ttl", "stale",
}

var memberIndex = func() map[string]int {
	m := make(map[string]int, numMembers)
	for i, name := range memberNames {
		m[name] = i
	}
	return m
}()

// valueKind is the kind of JSON value a member holds, as far as the event rules care.
type valueKind uint8

const (
	kindAbsent valueKind = iota // missing, or null
	kindString                  // value.text is the decoded string
	kindList                    // an array, read only for tags: eventMembers.tags and badTags
	kindOther                   // value.raw is the JSON text: a number, a boolean, an object, an array
)

type value struct {
	kind valueKind
	text string
	raw  []byte
}

// eventMembers is an event object as a tokeniser read it, before any rule is applied. parseFull
// and parseFast each fill it their own way; validate, the one home of the event rules, turns it
// into an Event.
type eventMembers struct {
	v       [numMembers]value
	tags    []string // the string elements, when tags is a list
	badTags []int    // the indexes of its other elements
	unknown []string // names that are not members of an event, sorted
}

// readMembers sorts what encoding/json read into eventMembers.
func readMembers(fields map[string]json.RawMessage) eventMembers {
	var m eventMembers
	for name, raw := range fields {
		i, known := memberIndex[name]
		if !known {
			m.unknown = append(m.unknown, name)
			continue
		}
		if isNull(raw) {
			continue
		}
		if s, isString := jsonString(raw); isString {
			m.v[i] = value{kind: kindString, text: s}
			continue
		}
		var elems []json.RawMessage
		if i == mTags && json.Unmarshal(raw, &elems) == nil {
			m.v[i].kind = kindList
			m.tags = make([]string, 0, len(elems))
			for j, el := range elems {
				if s, isString := jsonString(el); isString {
					m.tags = append(m.tags, s)
				} else {
					m.badTags = append(m.badTags, j)
				}
			}
			continue
		}
		m.v[i] = value{kind: kindOther, raw: raw}
	}
	slices.Sort(m.unknown)
	return m
}

// reasons collects the rules an event breaks. parseFast only needs to know whether one broke
// (quiet), so nothing is formatted on its path.
type reasons struct {
	quiet  bool
	broken int
	list   []string
}

func (r *reasons) fail(format string, args ...any) {
	r.broken++
	if !r.quiet {
		r.list = append(r.list, fmt.Sprintf(format, args...))
	}
}

func (r *reasons) failed() bool { return r.broken > 0 }

// validate applies the event rules (docs/flapjack-1x.md 1.2) to the members read, reporting each broken
// rule to r, and returns the normalised event (the zero Event when a rule broke): required
// members are non-blank strings and nothing unknown is present (checked first, alone); type and
// state are lower-cased and must pair; entity is trimmed and lower-cased and holds no ':';
// summary, details and perfdata are trimmed strings; time and the delays are integers or strings
// of digits, never negative; an acknowledgement's duration is positive.
func (m *eventMembers) validate(r *reasons) Event {
	for i := mType; i <= mCheck; i++ {
		switch v := &m.v[i]; {
		case v.kind == kindAbsent:
			r.fail("%s is required", memberNames[i])
		case v.kind != kindString:
			r.fail("%s must be a string", memberNames[i])
		case strings.TrimSpace(v.text) == "":
			r.fail("%s must not be empty", memberNames[i])
		}
	}
	if len(m.unknown) > 0 {
		r.fail("unknown fields: %s", strings.Join(m.unknown, ", "))
	}
	if r.failed() {
		return Event{}
	}

	var e Event
	e.Type = strings.ToLower(m.v[mType].text)
	e.State = strings.ToLower(m.v[mState].text)
	e.Entity = strings.ToLower(strings.TrimSpace(m.v[mEntity].text))
	e.Check = m.v[mCheck].text
	checkTypeAndState(r, e.Type, e.State)

	e.Summary = m.optionalText(mSummary, r)
	e.Details = m.optionalText(mDetails, r)
	e.Perfdata = m.optionalText(mPerfdata, r)
	e.Time, e.HasTime = m.optionalInt(mTime, r)
	e.Duration, e.HasDuration = m.optionalInt(mDuration, r)
	e.InitialFailureDelay, e.HasInitialDelay = m.optionalInt(mInitialDelay, r)
	e.RepeatFailureDelay, e.HasRepeatDelay = m.optionalInt(mRepeatDelay, r)
	e.AcknowledgementID = m.acknowledgementID(r)
	e.Tags = m.tagList(r)
	e.TTL, e.HasTTL = m.optionalInt(mTTL, r)
	e.Stale = m.optionalBool(mStale, r)
	if e.HasTTL && e.TTL > MaxTTL {
		r.fail("ttl must be at most %d seconds (a year), got %d", MaxTTL, e.TTL)
	}
	if (e.HasTTL || e.Stale) && e.Type == TypeAction {
		r.fail("ttl and stale apply to service events only, not to %s actions", e.State)
	}

	if e.HasDuration && e.Duration <= 0 && e.IsAcknowledgement() {
		r.fail("duration must be a positive number of seconds for an acknowledgement, got %d", e.Duration)
	}
	for _, d := range [...]struct {
		member int
		v      int64
		has    bool
	}{{mDuration, e.Duration, e.HasDuration}, {mInitialDelay, e.InitialFailureDelay, e.HasInitialDelay}, {mRepeatDelay, e.RepeatFailureDelay, e.HasRepeatDelay}, {mTime, e.Time, e.HasTime}, {mTTL, e.TTL, e.HasTTL}} {
		if d.has && d.v < 0 {
			r.fail("%s must not be negative, got %d", memberNames[d.member], d.v)
		}
	}
	if strings.ContainsRune(e.Entity, ':') {
		r.fail("entity must not contain ':' (it separates entity and check in check ids)")
	}
	if r.failed() {
		return Event{}
	}
	return e
}

func checkTypeAndState(r *reasons, typ, state string) {
	switch typ {
	case TypeService:
		if !serviceStates[state] {
			if actionStates[state] {
				r.fail("state %q needs type \"action\", not \"service\"", state)
			} else {
				r.fail("state %q is not one of ok, warning, critical, unknown", state)
			}
		}
	case TypeAction:
		if !actionStates[state] {
			if serviceStates[state] {
				r.fail("state %q needs type \"service\", not \"action\"", state)
			} else {
				r.fail("state %q is not one of acknowledgement, test_notifications", state)
			}
		}
	default:
		r.fail("type %q is not one of service, action", typ)
	}
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

func (m *eventMembers) optionalText(i int, r *reasons) string {
	switch v := &m.v[i]; v.kind {
	case kindAbsent:
		return ""
	case kindString:
		return strings.TrimSpace(v.text)
	}
	r.fail("%s must be a string", memberNames[i])
	return ""
}

// optionalInt accepts a JSON integer or a string of digits (docs/flapjack-1x.md 1.2).
func (m *eventMembers) optionalInt(i int, r *reasons) (int64, bool) {
	v := &m.v[i]
	switch v.kind {
	case kindAbsent:
		return 0, false
	case kindString:
		if v.text == "" || strings.TrimLeft(v.text, "0123456789") != "" {
			r.fail("%s must be an integer or a string of digits, got %q", memberNames[i], v.text)
			return 0, false
		}
		n, err := strconv.ParseInt(v.text, 10, 64)
		if err != nil {
			r.fail("%s is out of range: %q", memberNames[i], v.text)
			return 0, false
		}
		return n, true
	}
	n, err := strconv.ParseInt(string(v.raw), 10, 64)
	if err != nil {
		r.fail("%s must be an integer, got %s", memberNames[i], text.Truncate(string(v.raw), 40))
		return 0, false
	}
	return n, true
}

// optionalBool accepts JSON true or false.
func (m *eventMembers) optionalBool(i int, r *reasons) bool {
	switch v := &m.v[i]; {
	case v.kind == kindAbsent:
		return false
	case v.kind == kindOther && string(v.raw) == "true":
		return true
	case v.kind == kindOther && string(v.raw) == "false":
		return false
	}
	r.fail("%s must be true or false", memberNames[i])
	return false
}

func (m *eventMembers) acknowledgementID(r *reasons) string {
	switch v := &m.v[mAckID]; v.kind {
	case kindAbsent:
		return ""
	case kindString:
		return v.text
	case kindOther:
		if _, err := strconv.ParseInt(string(v.raw), 10, 64); err == nil {
			return string(v.raw)
		}
	}
	r.fail("acknowledgement_id must be a string or an integer")
	return ""
}

func (m *eventMembers) tagList(r *reasons) []string {
	switch m.v[mTags].kind {
	case kindAbsent:
		return nil
	case kindList:
		for _, i := range m.badTags {
			r.fail("tags[%d] must be a string", i)
		}
		return m.tags
	}
	r.fail("tags must be an array of strings")
	return nil
}

// MarshalJSON encodes the event in Flapjack's event format (absent optional fields omitted);
// see AppendJSON.
func (e Event) MarshalJSON() ([]byte, error) {
	return e.AppendJSON(nil), nil
}
