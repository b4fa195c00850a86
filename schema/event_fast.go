package schema

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// parseFast reads the common shape of a valid event — a flat object of known keys whose values
// are plain strings, integers, null or arrays of strings — without reflection, in one pass. It
// answers ok only for an event that is entirely valid; anything unusual (escapes other than the
// simple ones, floats, duplicate keys, nested values, any validation problem) returns !ok and
// ParseEvent falls back to the full parser, which reports every reason. FuzzParseEvent checks
// both paths agree.
func parseFast(raw []byte) (Event, bool) {
	s := fastScanner{b: raw}
	var e Event
	s.space()
	if !s.byte('{') {
		return e, false
	}
	var seen uint16
	var typ, state, entity string
	first := true
	for {
		s.space()
		if s.byte('}') {
			break
		}
		if !first && !s.byte(',') {
			return e, false
		}
		first = false
		s.space()
		key, ok := s.str()
		if !ok {
			return e, false
		}
		s.space()
		if !s.byte(':') {
			return e, false
		}
		s.space()
		bit, known := fastFields[key]
		if !known || seen&bit != 0 {
			return e, false
		}
		seen |= bit
		if s.null() {
			if bit&requiredBits != 0 {
				return e, false
			}
			continue
		}
		switch key {
		case "type", "state", "entity", "check", "summary", "details", "perfdata", "acknowledgement_id":
			v, ok := s.str()
			if !ok {
				return e, false
			}
			switch key {
			case "type":
				typ = v
			case "state":
				state = v
			case "entity":
				entity = v
			case "check":
				e.Check = v
			case "summary":
				e.Summary = strings.TrimSpace(v)
			case "details":
				e.Details = strings.TrimSpace(v)
			case "perfdata":
				e.Perfdata = strings.TrimSpace(v)
			case "acknowledgement_id":
				e.AcknowledgementID = v
			}
		case "time", "duration", "initial_failure_delay", "repeat_failure_delay":
			n, ok := s.int()
			if !ok || n < 0 {
				return e, false
			}
			switch key {
			case "time":
				e.Time, e.HasTime = n, true
			case "duration":
				e.Duration, e.HasDuration = n, true
			case "initial_failure_delay":
				e.InitialFailureDelay, e.HasInitialDelay = n, true
			case "repeat_failure_delay":
				e.RepeatFailureDelay, e.HasRepeatDelay = n, true
			}
		case "tags":
			tags, ok := s.strings()
			if !ok {
				return e, false
			}
			e.Tags = tags
		}
	}
	s.space()
	if s.i != len(s.b) || seen&requiredBits != requiredBits {
		return e, false
	}
	e.Type = strings.ToLower(typ)
	e.State = strings.ToLower(state)
	e.Entity = strings.ToLower(strings.TrimSpace(entity))
	switch {
	case e.Entity == "" || strings.TrimSpace(e.Check) == "" || strings.TrimSpace(typ) == "" || strings.TrimSpace(state) == "":
		return e, false
	case strings.IndexByte(e.Entity, ':') >= 0:
		return e, false
	case e.Type == TypeService && !serviceStates[e.State]:
		return e, false
	case e.Type == TypeAction && !actionStates[e.State]:
		return e, false
	case e.Type != TypeService && e.Type != TypeAction:
		return e, false
	case e.IsAcknowledgement() && e.HasDuration && e.Duration <= 0:
		return e, false
	}
	return e, true
}

const requiredBits = 1<<0 | 1<<1 | 1<<2 | 1<<3

var fastFields = map[string]uint16{
	"type": 1 << 0, "state": 1 << 1, "entity": 1 << 2, "check": 1 << 3,
	"summary": 1 << 4, "details": 1 << 5, "perfdata": 1 << 6, "acknowledgement_id": 1 << 7,
	"time": 1 << 8, "duration": 1 << 9, "initial_failure_delay": 1 << 10, "repeat_failure_delay": 1 << 11,
	"tags": 1 << 12,
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

// int reads a JSON integer or a string of digits (reference §1.2).
func (s *fastScanner) int() (int64, bool) {
	if s.i < len(s.b) && s.b[s.i] == '"' {
		v, ok := s.str()
		if !ok || v == "" || strings.TrimLeft(v, "0123456789") != "" {
			return 0, false
		}
		n, err := strconv.ParseInt(v, 10, 64)
		return n, err == nil
	}
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	digits := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	if s.i-digits > 1 && s.b[digits] == '0' {
		return 0, false // JSON forbids leading zeros
	}
	if s.i < len(s.b) {
		switch s.b[s.i] {
		case '.', 'e', 'E':
			return 0, false
		}
	}
	n, err := strconv.ParseInt(string(s.b[start:s.i]), 10, 64)
	return n, err == nil
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
