package receiver

import (
	"bytes"
	"encoding/json"
	"fmt"
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
// check.output and details = the rest; time = check.executed, or check.issued when executed is
// missing or 0 (a time of 0 would look older than every earlier event and be ignored, SPEC 4.11);
// type = service.
//
// Tags: only check.flapjack_tags (an array of strings), if present, become the event's tags.
// Check tags and client/entity subscriptions are not added: they describe Sensu's routing, and
// turning them into Flapjack tags would silently change which notification rules match.
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
	if check != nil {
		checkEvent(check, ev, fail)
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

	if v := check["flapjack_tags"]; present(v) {
		var tags []string
		if json.Unmarshal(v, &tags) != nil {
			fail("check.flapjack_tags must be an array of strings")
		} else {
			ev["tags"] = tags
		}
	}
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
