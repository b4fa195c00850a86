package oncall

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/flapjackgo/flapjack/internal/jsonfield"
)

// Parse reads a schedules file: a JSON array of schedules, or {"schedules": [...]}. It returns
// the schedules without problems, in file order, and every problem found, by position in the
// file; two schedules with one id are both kept out. When known is not nil, every contact a
// schedule names must be in it (see CheckContacts). err is set only when the file as a whole
// cannot be read.
func Parse(data []byte, known map[string]bool) ([]*Schedule, []Problem, error) {
	raws, err := records(data)
	if err != nil {
		return nil, nil, err
	}
	parsed := make([]*Schedule, len(raws))
	bad := make([]bool, len(raws))
	var problems []Problem
	for i, raw := range raws {
		s, ps := ParseSchedule(i, raw)
		if len(ps) == 0 && known != nil {
			ps = s.CheckContacts(i, known)
		}
		parsed[i], bad[i] = s, len(ps) > 0
		problems = append(problems, ps...)
	}
	problems = append(problems, duplicates(parsed, bad)...)
	var valid []*Schedule
	for i, s := range parsed {
		if !bad[i] {
			valid = append(valid, s)
		}
	}
	sort.SliceStable(problems, func(a, b int) bool { return problems[a].Index < problems[b].Index })
	return valid, problems, nil
}

// duplicates reports every schedule sharing its id with another, and marks them bad.
func duplicates(parsed []*Schedule, bad []bool) []Problem {
	var problems []Problem
	firstAt := map[string]int{}
	for i, s := range parsed {
		j, dup := firstAt[s.ID]
		switch {
		case s.ID == "":
		case !dup:
			firstAt[s.ID] = i
		default:
			if !slices.ContainsFunc(problems, func(p Problem) bool { return p.Index == j }) {
				problems = append(problems, Problem{Index: j, ID: s.ID, Field: "id", Reason: fmt.Sprintf("schedule %d has the same id", i)})
			}
			problems = append(problems, Problem{Index: i, ID: s.ID, Field: "id", Reason: fmt.Sprintf("duplicates schedule %d's id", j)})
			bad[i], bad[j] = true, true
		}
	}
	return problems
}

func records(data []byte) ([]json.RawMessage, error) {
	var raws []json.RawMessage
	switch jsonfield.First(data) {
	case '[':
		if err := json.Unmarshal(data, &raws); err != nil {
			return nil, fmt.Errorf("read schedules: %w", err)
		}
	case '{':
		var wrapper map[string]json.RawMessage
		if err := json.Unmarshal(data, &wrapper); err != nil {
			return nil, fmt.Errorf("read schedules: %w", err)
		}
		list, ok := wrapper["schedules"]
		if !ok || len(wrapper) != 1 || jsonfield.First(list) != '[' {
			return nil, errors.New(`read schedules: an object must have exactly one field, "schedules", an array`)
		}
		if err := json.Unmarshal(list, &raws); err != nil {
			return nil, fmt.Errorf("read schedules: %w", err)
		}
	default:
		return nil, errors.New(`read schedules: want a JSON array of schedules or {"schedules": [...]}`)
	}
	return raws, nil
}

var (
	scheduleFields    = []string{"id", "name", "timezone", "layers", "overrides", "fallback"}
	layerFields       = []string{"name", "start", "turn", "members", "restrictions"}
	restrictionFields = []string{"days", "from", "to"}
	overrideFields    = []string{"contact", "start", "end"}
)

// ParseSchedule reads one schedule record (index is its position in the file, for problems):
// its JSON shape first (types, required and unknown fields), then its values as New checks them.
func ParseSchedule(index int, raw json.RawMessage) (*Schedule, []Problem) {
	r := &reader{index: index}
	s := &Schedule{}
	obj, ok := r.object(raw, "")
	if !ok {
		return s, r.problems
	}
	s.ID = r.contact(obj["id"], "id")
	r.id = s.ID
	r.unknown(obj, "", scheduleFields)
	s.Name = r.str(obj["name"], "name")
	s.Timezone = r.str(obj["timezone"], "timezone")
	for i, lr := range r.array(obj["layers"], "layers") {
		s.Layers = append(s.Layers, r.layer(lr, jsonfield.At("layers", i)))
	}
	for i, or := range r.array(obj["overrides"], "overrides") {
		s.Overrides = append(s.Overrides, r.override(or, jsonfield.At("overrides", i)))
	}
	s.Fallback = r.contacts(obj["fallback"], "fallback")
	if len(r.problems) > 0 {
		return s, r.problems
	}
	return s, s.prepare(index)
}

func (r *reader) layer(raw json.RawMessage, field string) Layer {
	var l Layer
	obj, ok := r.object(raw, field)
	if !ok {
		return l
	}
	r.unknown(obj, field, layerFields)
	l.Name = r.str(obj["name"], field+".name")
	l.Start = r.str(obj["start"], field+".start")
	l.Turn = r.str(obj["turn"], field+".turn")
	l.Members = r.contacts(obj["members"], field+".members")
	for i, rr := range r.array(obj["restrictions"], field+".restrictions") {
		l.Restrictions = append(l.Restrictions, r.restriction(rr, jsonfield.At(field+".restrictions", i)))
	}
	return l
}

func (r *reader) restriction(raw json.RawMessage, field string) Restriction {
	var x Restriction
	obj, ok := r.object(raw, field)
	if !ok {
		return x
	}
	r.unknown(obj, field, restrictionFields)
	x.Days = r.str(obj["days"], field+".days")
	if d, given := obj["days"]; given && !jsonfield.IsNull(d) && strings.TrimSpace(x.Days) == "" {
		r.fail(field+".days", `must name days, e.g. "mon-fri" (leave it out for every day)`)
	}
	x.From = r.str(obj["from"], field+".from")
	x.To = r.str(obj["to"], field+".to")
	return x
}

func (r *reader) override(raw json.RawMessage, field string) Override {
	var o Override
	obj, ok := r.object(raw, field)
	if !ok {
		return o
	}
	r.unknown(obj, field, overrideFields)
	o.Contact = r.contact(obj["contact"], field+".contact")
	o.Start = r.instant(obj["start"], field+".start")
	o.End = r.instant(obj["end"], field+".end")
	return o
}

// reader collects the problems of one schedule record while its fields are read.
type reader struct {
	index    int
	id       string
	problems []Problem
}

func (r *reader) fail(field, format string, args ...any) {
	r.problems = append(r.problems, Problem{Index: r.index, ID: r.id, Field: field, Reason: fmt.Sprintf(format, args...)})
}

func (r *reader) object(raw json.RawMessage, field string) (map[string]json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if jsonfield.First(raw) != '{' || json.Unmarshal(raw, &m) != nil {
		r.fail(field, "must be a JSON object")
		return nil, false
	}
	return m, true
}

// unknown reports the fields of obj that are not known, sorted.
func (r *reader) unknown(obj map[string]json.RawMessage, prefix string, known []string) {
	var extra []string
	for k := range obj {
		if !slices.Contains(known, k) {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	for _, k := range extra {
		r.fail(jsonfield.Join(prefix, k), "unknown field (known: %s)", strings.Join(known, ", "))
	}
}

// str reads an optional string (absent or null: "").
func (r *reader) str(raw json.RawMessage, field string) string {
	if jsonfield.IsNull(raw) {
		return ""
	}
	var s string
	if jsonfield.First(raw) != '"' || json.Unmarshal(raw, &s) != nil {
		r.fail(field, "must be a string")
	}
	return s
}

// contact reads a contact or schedule id: a string, or an integer kept as its decimal text (as
// contact ids may be in Flapjack's imports).
func (r *reader) contact(raw json.RawMessage, field string) string {
	if jsonfield.IsNull(raw) {
		return ""
	}
	if jsonfield.First(raw) == '"' {
		return r.str(raw, field)
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
	if err != nil {
		r.fail(field, "must be a string or an integer")
		return ""
	}
	return strconv.FormatInt(n, 10)
}

func (r *reader) contacts(raw json.RawMessage, field string) []string {
	var out []string
	for i, item := range r.array(raw, field) {
		out = append(out, r.contact(item, jsonfield.At(field, i)))
	}
	return out
}

// array reads an optional array (absent or null: none).
func (r *reader) array(raw json.RawMessage, field string) []json.RawMessage {
	if jsonfield.IsNull(raw) {
		return nil
	}
	var items []json.RawMessage
	if jsonfield.First(raw) != '[' || json.Unmarshal(raw, &items) != nil {
		r.fail(field, "must be an array")
	}
	return items
}

// instant reads an RFC 3339 time ("2026-04-01T12:00:00Z"); absent is the zero time, which the
// value checks report.
func (r *reader) instant(raw json.RawMessage, field string) time.Time {
	s := r.str(raw, field)
	if s == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		r.fail(field, "cannot read time %q: want RFC 3339 with a zone, e.g. \"2026-04-01T12:00:00Z\"", s)
	}
	return t
}
