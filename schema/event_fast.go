package schema

import (
	"strings"
	"unicode/utf8"
)

// parseFast reads the common shape of an event — a flat object of known, distinct members whose
// values are plain strings, integers, booleans, null, or for tags an array of strings — in one
// pass without reflection, then applies the same rules as parseFull (eventMembers.validate). It
// answers ok only for a valid event; anything it does not read (escapes other than the simple
// ones, floats, nested values, unknown or repeated members) or any broken rule returns !ok, and
// ParseEvent falls back to parseFull, which words every reason. FuzzParseEvent checks both paths agree.
func parseFast(raw []byte) (Event, bool) {
	var m eventMembers
	if !m.scan(raw) {
		return Event{}, false
	}
	r := reasons{quiet: true}
	e := m.validate(&r)
	return e, !r.failed()
}

// scan tokenises raw into m, or returns false for a shape it does not read.
func (m *eventMembers) scan(raw []byte) bool {
	s := fastScanner{b: raw}
	s.space()
	if !s.byte('{') {
		return false
	}
	var seen uint16
	for first := true; ; first = false {
		s.space()
		if s.byte('}') {
			break
		}
		if !first && !s.byte(',') {
			return false
		}
		s.space()
		name, ok := s.name()
		if !ok {
			return false
		}
		s.space()
		if !s.byte(':') {
			return false
		}
		s.space()
		i, known := memberIndex[string(name)]
		if !known || seen&(1<<i) != 0 {
			return false
		}
		seen |= 1 << i
		if !s.value(m, i) {
			return false
		}
	}
	s.space()
	return s.i == len(s.b)
}

type fastScanner struct {
	b []byte
	i int
}

func (s *fastScanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *fastScanner) byte(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *fastScanner) null() bool {
	if len(s.b)-s.i >= 4 && string(s.b[s.i:s.i+4]) == "null" {
		s.i += 4
		return true
	}
	return false
}

// str reads a JSON string with only the simple escapes (\" \\ \/ \b \f \n \r \t); \u escapes and
// control characters make it give up.
func (s *fastScanner) str() (string, bool) {
	if !s.byte('"') {
		return "", false
	}
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			v := string(s.b[start:s.i])
			s.i++
			return v, true
		case c == '\\':
			return s.escaped(start)
		case c < 0x20:
			return "", false
		}
		s.i++
	}
	return "", false
}

func (s *fastScanner) escaped(start int) (string, bool) {
	var out strings.Builder
	out.Write(s.b[start:s.i])
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return out.String(), true
		case c < 0x20:
			return "", false
		case c == '\\':
			if s.i+1 >= len(s.b) {
				return "", false
			}
			r, ok := simpleEscapes[s.b[s.i+1]]
			if !ok {
				return "", false
			}
			out.WriteByte(r)
			s.i += 2
		default:
			_, size := utf8.DecodeRune(s.b[s.i:])
			out.Write(s.b[s.i : s.i+size])
			s.i += size
		}
	}
	return "", false
}

var simpleEscapes = map[byte]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// value reads member i's value into m.
func (s *fastScanner) value(m *eventMembers, i int) bool {
	if s.i == len(s.b) {
		return false
	}
	v := &m.v[i]
	switch c := s.b[s.i]; {
	case c == 'n':
		return s.null() // leaves v absent
	case c == '"':
		text, ok := s.str()
		v.kind, v.text = kindString, text
		return ok
	case c == '[' && i == mTags:
		tags, ok := s.strings()
		v.kind, m.tags = kindList, tags
		return ok
	case c == '-' || '0' <= c && c <= '9':
		raw, ok := s.integer()
		v.kind, v.raw = kindOther, raw
		return ok
	case c == 't' || c == 'f':
		raw, ok := s.boolean()
		v.kind, v.raw = kindOther, raw
		return ok
	}
	return false
}

// boolean reads true or false, as its text.
func (s *fastScanner) boolean() ([]byte, bool) {
	for _, word := range [...]string{"true", "false"} {
		if len(s.b)-s.i >= len(word) && string(s.b[s.i:s.i+len(word)]) == word {
			s.i += len(word)
			return s.b[s.i-len(word) : s.i], true
		}
	}
	return nil, false
}

// name reads a member name. Names with escapes are left to parseFull: no member's name needs one.
func (s *fastScanner) name() ([]byte, bool) {
	if !s.byte('"') {
		return nil, false
	}
	start := s.i
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return s.b[start : s.i-1], true
		case c == '\\' || c < 0x20:
			return nil, false
		}
		s.i++
	}
	return nil, false
}

// integer reads a JSON number that is an integer, as its text; fractions and exponents are left
// to parseFull.
func (s *fastScanner) integer() ([]byte, bool) {
	start := s.i
	s.byte('-')
	digits := s.i
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
	}
	switch {
	case s.i == digits:
		return nil, false
	case s.i-digits > 1 && s.b[digits] == '0':
		return nil, false // JSON forbids leading zeros
	}
	if s.i < len(s.b) {
		switch s.b[s.i] {
		case '.', 'e', 'E':
			return nil, false
		}
	}
	return s.b[start:s.i], true
}

func (s *fastScanner) strings() ([]string, bool) {
	if !s.byte('[') {
		return nil, false
	}
	out := []string{}
	for first := true; ; first = false {
		s.space()
		if s.byte(']') {
			return out, true
		}
		if !first && !s.byte(',') {
			return nil, false
		}
		s.space()
		v, ok := s.str()
		if !ok {
			return nil, false
		}
		out = append(out, v)
	}
}
