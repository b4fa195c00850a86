package importer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/flapjackgo/flapjack/internal/jsonfield"
	"github.com/flapjackgo/flapjack/model/roster"
)

// check collects the problems of one record while its fields are read.
type check struct {
	index    int
	id       string
	problems []Problem
}

func (c *check) fail(field, format string, args ...any) {
	c.problems = append(c.problems, Problem{Index: c.index, ID: c.id, Field: field, Reason: fmt.Sprintf(format, args...)})
}

// check records reason (from package roster's checks) as a problem of field unless it is "",
// and reports whether the value was valid.
func (c *check) check(field, reason string) bool {
	if reason == "" {
		return true
	}
	c.fail(field, "%s", reason)
	return false
}

func (c *check) ok() bool { return len(c.problems) == 0 }

// object decodes a JSON object; anything else is a problem.
func (c *check) object(raw json.RawMessage, field string) (map[string]json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if jsonfield.First(raw) != '{' || json.Unmarshal(raw, &m) != nil {
		if field == "" {
			c.fail("", "must be a JSON object")
		} else {
			c.fail(field, "must be an object")
		}
		return nil, false
	}
	return m, true
}

// unknown reports the fields of obj that are neither known nor ignored, sorted.
func (c *check) unknown(obj map[string]json.RawMessage, prefix string, known map[string]bool) {
	var extra []string
	for k := range obj {
		if !known[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	for _, k := range extra {
		c.fail(jsonfield.Join(prefix, k), "unknown field")
	}
}

// str reads an optional string (null or absent = "").
func (c *check) str(raw json.RawMessage, field string) string {
	if jsonfield.IsNull(raw) {
		return ""
	}
	var s string
	if jsonfield.First(raw) != '"' || json.Unmarshal(raw, &s) != nil {
		c.fail(field, "must be a string")
		return ""
	}
	return s
}

// ident reads an id: a string, or an integer kept as its decimal text. ok is false when the
// value has the wrong type (a problem is recorded); "" with ok true means absent.
func (c *check) ident(raw json.RawMessage, field string) (string, bool) {
	if jsonfield.IsNull(raw) {
		return "", true
	}
	switch b := jsonfield.First(raw); {
	case b == '"':
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s, true
		}
	case b == '-' || (b >= '0' && b <= '9'):
		text := string(bytes.TrimSpace(raw))
		if n, err := strconv.ParseInt(text, 10, 64); err == nil {
			return strconv.FormatInt(n, 10), true
		}
	}
	c.fail(field, "must be a string or an integer")
	return "", false
}

// list calls each for every element of an optional array.
func (c *check) list(raw json.RawMessage, field, what string, each func(i int, raw json.RawMessage)) {
	if jsonfield.IsNull(raw) {
		return
	}
	var items []json.RawMessage
	if jsonfield.First(raw) != '[' || json.Unmarshal(raw, &items) != nil {
		c.fail(field, "must be an array of %s", what)
		return
	}
	for i, item := range items {
		each(i, item)
	}
}

// strings reads an optional array of non-empty strings.
func (c *check) strings(raw json.RawMessage, field string) []string {
	var out []string
	c.list(raw, field, "strings", func(i int, item json.RawMessage) {
		var s string
		if jsonfield.First(item) != '"' || json.Unmarshal(item, &s) != nil {
			c.fail(jsonfield.At(field, i), "must be a string")
			return
		}
		if c.check(jsonfield.At(field, i), roster.TagProblem(s)) {
			out = append(out, s)
		}
	})
	return out
}

// idents reads an optional array of ids (strings or integers).
func (c *check) idents(raw json.RawMessage, field string) []string {
	var out []string
	c.list(raw, field, "ids", func(i int, item json.RawMessage) {
		id, ok := c.ident(item, jsonfield.At(field, i))
		if !ok {
			return
		}
		if strings.TrimSpace(id) == "" {
			c.fail(jsonfield.At(field, i), "must not be empty")
			return
		}
		out = append(out, id)
	})
	return out
}

// boolean reads an optional JSON boolean (absent = false).
func (c *check) boolean(raw json.RawMessage, field string) bool {
	if jsonfield.IsNull(raw) {
		return false
	}
	switch string(bytes.TrimSpace(raw)) {
	case "true":
		return true
	case "false":
		return false
	}
	c.fail(field, "must be true or false")
	return false
}

// integer reads an optional integer; problem (from package roster) judges its value, and a value
// that is not an integer is refused as "must be an integer of at least min". nil when absent or
// refused.
func (c *check) integer(raw json.RawMessage, field string, min int64, problem func(int64) string) *int64 {
	if jsonfield.IsNull(raw) {
		return nil
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
	if err != nil {
		c.fail(field, "must be an integer of at least %d", min)
		return nil
	}
	if !c.check(field, problem(n)) {
		return nil
	}
	return &n
}

// regexes reads an optional array of patterns (Go RE2, docs/decisions.md D7).
func (c *check) regexes(raw json.RawMessage, field string) []string {
	var out []string
	c.list(raw, field, "strings", func(i int, item json.RawMessage) {
		var s string
		if jsonfield.First(item) != '"' || json.Unmarshal(item, &s) != nil {
			c.fail(jsonfield.At(field, i), "must be a string")
			return
		}
		if c.check(jsonfield.At(field, i), roster.PatternProblem(s)) {
			out = append(out, s)
		}
	})
	return out
}

// timeRestrictions reads a rule's time restrictions (their shape is checked by package roster)
// as compact JSON, "[]" when there are none.
func (c *check) timeRestrictions(raw json.RawMessage, field string) string {
	if jsonfield.IsNull(raw) {
		return "[]"
	}
	compact, problems := roster.TimeRestrictions(string(raw))
	for _, p := range problems {
		c.fail(field+p.Field, "%s", p.Reason)
	}
	return compact
}
