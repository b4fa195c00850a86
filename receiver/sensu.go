package receiver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/flapjackgo/flapjack/internal/text"
	"github.com/flapjackgo/flapjack/schema"
)

// ParseSensuEvent converts one Sensu event, as a Sensu pipe handler receives it on stdin, into a
// Flapjack event. Both shapes are accepted:
//
//   - Sensu 1.x: {"client": {"name": ...}, "check": {"name": ..., "status": N, "output": ...,
//     "executed": TS, "issued": TS}, "action": ..., "occurrences": ...}
//   - Sensu Go: {"entity": {"metadata": {"name": ...}}, "check": {"metadata": {"name": ...},
//     "status": N, "output": ..., "executed": TS, "issued": TS}}
//
// Mapping: entity = client.name, or entity.metadata.name when there is no client; check =
// check.name, or check.metadata.name; state from check.status: 0 ok, 1 warning, 2 critical,
// anything else unknown (Sensu's "action", "occurrences" and history are not used: Flapjack
// keeps its own state and applies its own failure delays); summary = the first line of
// check.output up to a '|' and details = the rest; perfdata = the first line's text after '|'
// (Nagios plugin output, as the Nagios receiver reads it), followed by one `name=value` for each
// of Sensu Go's metrics.points; time = check.executed, or check.issued when executed is missing
// or 0 (a time of 0 would look older than every earlier event and be ignored, docs/decisions.md D11); type =
// service. Sensu Go keepalives arrive as the check "keepalive" and need nothing special.
//
// Tags, in this order without repeats: check.flapjack_tags (Sensu 1.x custom attribute, an
// array of strings); the label flapjack_tags (comma-separated) of entity.metadata.labels then
// check.metadata.labels; the annotation flapjack_tags (a JSON array of strings) of
// entity.metadata.annotations then check.metadata.annotations. Check tags and client/entity
// subscriptions are not added: they describe Sensu's routing, and turning them into Flapjack
// tags would silently change which notification rules match.
// check.duration (execution time) is not Flapjack's duration (acknowledgement length) and is
// ignored. Every other field is ignored.
//
// The result goes through schema.ParseEvent like any event. Errors are *schema.RejectError with
// every reason found.
func ParseSensuEvent(raw []byte) (schema.Event, error) {
	if !utf8.Valid(raw) {
		return schema.Event{}, rejectf("sensu event is not valid UTF-8")
	}
	top, reason := object(bytes.TrimSpace(raw), "sensu event")
	if reason != "" {
		return schema.Event{}, rejectf("%s", reason)
	}
	var reasons []string
	fail := func(format string, args ...any) { reasons = append(reasons, fmt.Sprintf(format, args...)) }

	var entity string
	switch {
	case present(top["client"]):
		entity = requiredString(top, fail, "", "client", "name")
	case present(top["entity"]):
		entity = requiredString(top, fail, "", "entity", "metadata", "name")
	default:
		fail("sensu event has neither client (Sensu 1.x) nor entity (Sensu Go)")
	}

	var check map[string]json.RawMessage
	if !present(top["check"]) {
		fail("sensu event has no check")
	} else if check, reason = object(top["check"], "check"); reason != "" {
		fail("%s", reason)
	}
	ev := map[string]any{"type": schema.TypeService, "entity": entity}
	var tags []string
	if check != nil {
		checkEvent(check, ev, fail)
		tags = flapjackTags(top, check, fail)
	}
	if len(tags) > 0 {
		ev["tags"] = tags
	}
	if points := metricPoints(top["metrics"], fail); points != "" {
		if p, _ := ev["perfdata"].(string); p != "" {
			points = p + " " + points
		}
		ev["perfdata"] = points
	}
	if len(reasons) > 0 {
		return schema.Event{}, &schema.RejectError{Reasons: reasons}
	}
	b, err := json.Marshal(ev)
	if err != nil {
		return schema.Event{}, rejectf("encoding event: %v", err)
	}
	return schema.ParseEvent(b)
}

// checkEvent fills ev's check, state, summary, details, time and tags from a Sensu check.
func checkEvent(check map[string]json.RawMessage, ev map[string]any, fail func(string, ...any)) {
	switch {
	case present(check["name"]):
		ev["check"] = requiredString(check, fail, "check.", "name")
	case present(check["metadata"]):
		ev["check"] = requiredString(check, fail, "check.", "metadata", "name")
	default:
		fail("check.name (Sensu 1.x) or check.metadata.name (Sensu Go) is required")
	}

	switch status, ok := integer(check["status"]); {
	case !present(check["status"]):
		fail("check.status is required")
	case !ok:
		fail("check.status must be an integer, got %s", text.Truncate(string(check["status"]), 40))
	case status == 0:
		ev["state"] = schema.StateOK
	case status == 1:
		ev["state"] = schema.StateWarning
	case status == 2:
		ev["state"] = schema.StateCritical
	default:
		ev["state"] = schema.StateUnknown
	}

	if v := check["output"]; present(v) {
		var output string
		if json.Unmarshal(v, &output) != nil {
			fail("check.output must be a string")
		} else {
			summary, details, _ := strings.Cut(output, "\n")
			if text, perfdata, ok := strings.Cut(summary, "|"); ok {
				summary = strings.TrimSpace(text)
				ev["perfdata"] = strings.TrimSpace(perfdata)
			}
			ev["summary"], ev["details"] = summary, details
		}
	}

	for _, name := range []string{"executed", "issued"} {
		v := check[name]
		if !present(v) {
			continue
		}
		ts, ok := integer(v)
		if !ok {
			fail("check.%s must be an integer Unix time, got %s", name, text.Truncate(string(v), 40))
			break
		}
		if ts != 0 {
			ev["time"] = ts
			break
		}
	}

}

// TagsKey is the Sensu Go label or annotation (and the Sensu 1.x check attribute) whose value
// becomes the event's tags.
const TagsKey = "flapjack_tags"

// flapjackTags collects the tags of a Sensu event (see ParseSensuEvent), without repeats.
func flapjackTags(top, check map[string]json.RawMessage, fail func(string, ...any)) []string {
	var tags []string
	add := func(ts ...string) {
		for _, t := range ts {
			if t = strings.TrimSpace(t); t != "" && !slices.Contains(tags, t) {
				tags = append(tags, t)
			}
		}
	}
	if v := check[TagsKey]; present(v) {
		var list []string
		if json.Unmarshal(v, &list) != nil {
			fail("check.flapjack_tags must be an array of strings")
		}
		add(list...)
	}
	entity, _ := object(top["entity"], "entity")
	owners := []struct {
		name string
		obj  map[string]json.RawMessage
	}{{"entity", entity}, {"check", check}}
	for _, kind := range []string{"labels", "annotations"} {
		for _, o := range owners {
			v, ok := metadataString(o.obj, kind, fail, o.name)
			if !ok {
				continue
			}
			where := fmt.Sprintf("%s.metadata.%s.%s", o.name, kind, TagsKey)
			if kind == "labels" {
				add(strings.Split(v, ",")...)
				continue
			}
			var list []string
			if json.Unmarshal([]byte(v), &list) != nil {
				fail("%s must be a JSON array of strings, got %q", where, text.Truncate(v, 40))
			}
			add(list...)
		}
	}
	return tags
}

// metadataString returns obj.metadata.<kind>.flapjack_tags when it is there.
func metadataString(obj map[string]json.RawMessage, kind string, fail func(string, ...any), name string) (string, bool) {
	if obj == nil {
		return "", false
	}
	meta, _ := object(obj["metadata"], "")
	if meta == nil || !present(meta[kind]) {
		return "", false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(meta[kind], &m) != nil || !present(m[TagsKey]) {
		return "", false
	}
	var s string
	if json.Unmarshal(m[TagsKey], &s) != nil {
		fail("%s.metadata.%s.%s must be a string", name, kind, TagsKey)
		return "", false
	}
	return s, true
}

// metricPoints turns Sensu Go's metrics.points (Graphite-style points: name, value, timestamp,
// tags) into Nagios perfdata, `name=value` each, space-separated; a name with a space, '=' or
// quote is quoted as perfdata labels are. The points' timestamps and tags are not kept.
func metricPoints(v json.RawMessage, fail func(string, ...any)) string {
	if !present(v) {
		return ""
	}
	var metrics struct {
		Points []struct {
			Name  string   `json:"name"`
			Value *float64 `json:"value"`
		} `json:"points"`
	}
	if json.Unmarshal(v, &metrics) != nil {
		fail("metrics.points must be an array of {name, value} objects")
		return ""
	}
	var parts []string
	for _, p := range metrics.Points {
		if strings.TrimSpace(p.Name) == "" || p.Value == nil {
			continue
		}
		name := p.Name
		if strings.ContainsAny(name, " ='") {
			name = "'" + strings.ReplaceAll(name, "'", "''") + "'"
		}
		parts = append(parts, name+"="+strconv.FormatFloat(*p.Value, 'f', -1, 64))
	}
	return strings.Join(parts, " ")
}

// present reports a field that exists and is not null.
func present(v json.RawMessage) bool { return len(v) > 0 && string(v) != "null" }

// object decodes a JSON object, or explains (using name) why v is not one.
func object(v json.RawMessage, name string) (map[string]json.RawMessage, string) {
	if len(v) == 0 || v[0] != '{' {
		return nil, name + " must be a JSON object"
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(v, &m); err != nil {
		return nil, name + " is not valid JSON: " + err.Error()
	}
	return m, ""
}

// requiredString returns the non-empty string at path under m, or records why there is none
// (naming the field prefix + path).
func requiredString(m map[string]json.RawMessage, fail func(string, ...any), prefix string, path ...string) string {
	name := prefix + strings.Join(path, ".")
	for i, step := range path {
		v := m[step]
		if !present(v) {
			fail("%s is required", name)
			return ""
		}
		if i == len(path)-1 {
			var s string
			if json.Unmarshal(v, &s) != nil {
				fail("%s must be a string", name)
				return ""
			}
			if strings.TrimSpace(s) == "" {
				fail("%s must not be empty", name)
			}
			return s
		}
		var reason string
		if m, reason = object(v, prefix+strings.Join(path[:i+1], ".")); reason != "" {
			fail("%s", reason)
			return ""
		}
	}
	return ""
}

// integer decodes a JSON integer (not a float, not a string).
func integer(v json.RawMessage) (int64, bool) {
	n, err := strconv.ParseInt(string(v), 10, 64)
	return n, err == nil
}
