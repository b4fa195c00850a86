package schema

import (
	"strconv"
	"unicode/utf8"
)

// AppendJSON appends the event in Flapjack's event format to dst: the bytes MarshalJSON
// returns (members in name order, absent optional members omitted, strings escaped as
// encoding/json escapes them), written without reflection or a map, so a receiver can encode a
// batch of events into one buffer.
func (e *Event) AppendJSON(dst []byte) []byte {
	dst = append(dst, '{')
	if e.AcknowledgementID != "" {
		dst = appendStringMember(dst, `"acknowledgement_id":`, e.AcknowledgementID)
	}
	dst = appendStringMember(dst, `"check":`, e.Check)
	if e.Details != "" {
		dst = appendStringMember(dst, `"details":`, e.Details)
	}
	if e.HasDuration {
		dst = appendIntMember(dst, `"duration":`, e.Duration)
	}
	dst = appendStringMember(dst, `"entity":`, e.Entity)
	if e.HasInitialDelay {
		dst = appendIntMember(dst, `"initial_failure_delay":`, e.InitialFailureDelay)
	}
	if e.Perfdata != "" {
		dst = appendStringMember(dst, `"perfdata":`, e.Perfdata)
	}
	if e.HasRepeatDelay {
		dst = appendIntMember(dst, `"repeat_failure_delay":`, e.RepeatFailureDelay)
	}
	if e.Stale {
		dst = append(dst, `,"stale":true`...)
	}
	dst = appendStringMember(dst, `"state":`, e.State)
	if e.Summary != "" {
		dst = appendStringMember(dst, `"summary":`, e.Summary)
	}
	if len(e.Tags) > 0 {
		dst = append(dst, `,"tags":[`...)
		for i, t := range e.Tags {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, t)
		}
		dst = append(dst, ']')
	}
	if e.HasTime {
		dst = appendIntMember(dst, `"time":`, e.Time)
	}
	if e.HasTTL {
		dst = appendIntMember(dst, `"ttl":`, e.TTL)
	}
	dst = appendStringMember(dst, `"type":`, e.Type)
	return append(dst, '}')
}

// appendStringMember appends `,name:"value"`, without the comma when it is the first member.
func appendStringMember(dst []byte, name, value string) []byte {
	if dst[len(dst)-1] != '{' {
		dst = append(dst, ',')
	}
	dst = append(dst, name...)
	return appendJSONString(dst, value)
}

func appendIntMember(dst []byte, name string, value int64) []byte {
	if dst[len(dst)-1] != '{' {
		dst = append(dst, ',')
	}
	dst = append(dst, name...)
	return strconv.AppendInt(dst, value, 10)
}

const hexDigits = "0123456789abcdef"

// appendJSONString quotes s as encoding/json does with HTML escaping (its default): <, > and &
// as \u003c, \u003e and \u0026, control characters other than \b \f \n \r \t as \u00XX,
// U+2028 and U+2029 escaped, and invalid UTF-8 replaced by \ufffd.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case c == '\u2028' || c == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
