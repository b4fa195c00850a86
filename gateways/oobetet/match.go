package oobetet

import (
	"strings"
	"unicode"
)

// Kind is what a room message says about the watched check.
type Kind int

// Kinds of message.
const (
	// None: not an alert of the watched check.
	None Kind = iota
	Problem
	Recovery
	Acknowledgement
)

func (k Kind) String() string {
	switch k {
	case Problem:
		return "problem"
	case Recovery:
		return "recovery"
	case Acknowledgement:
		return "acknowledgement"
	}
	return "none"
}

// Match reads a room message: which alert of check on entity it is, in the Jabber gateway's
// wording (gateways.AlertText), or None.
//
//	Problem: flapjack: ACKID 8f4a2b1c, "HTTP" on app-01 is Critical, HTTP 500   → Problem
//	Recovery: "HTTP" on app-01 is OK, HTTP 200                                   → Recovery
//	Acknowledgement: "HTTP" on app-01 has been acknowledged, …                  → Acknowledgement
//
// As in Flapjack, the first word names the kind (any case); then the first quoted name must be
// the check (exactly), followed by " on " and the entity (any case) ending the text or followed
// by a space or comma. Test notifications, rollup summaries, other checks, entities that only
// start with the watched one and mentions of the check in another alert's summary are None.
func Match(text, entity, check string) Kind {
	text = strings.TrimSpace(text)
	end := strings.IndexFunc(text, func(r rune) bool { return !unicode.IsLetter(r) })
	if end < 0 {
		end = len(text)
	}
	var kind Kind
	switch strings.ToLower(text[:end]) {
	case "problem":
		kind = Problem
	case "recovery":
		kind = Recovery
	case "acknowledgement":
		kind = Acknowledgement
	default:
		return None
	}
	q := strings.IndexByte(text, '"')
	if q < 0 || check == "" || entity == "" {
		return None
	}
	rest, ok := strings.CutPrefix(text[q:], `"`+check+`" on `)
	if !ok || len(rest) < len(entity) || !strings.EqualFold(rest[:len(entity)], entity) {
		return None
	}
	if after := rest[len(entity):]; after != "" && after[0] != ' ' && after[0] != ',' {
		return None
	}
	return kind
}
