package schema

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strings"
)

// AckHash is a check's acknowledgement hash: the first 8 hex characters of the SHA-1 of its id
// (docs/flapjack-1x.md 2.7), used in notifications and by the Jabber ACKID command.
func AckHash(id string) string {
	sum := sha1.Sum([]byte(id))
	return hex.EncodeToString(sum[:4])
}

// entityNamespace is the UUID namespace of entity ids we create (a random constant).
var entityNamespace = [16]byte{0x6b, 0x0e, 0x3f, 0x1c, 0x8a, 0x52, 0x4d, 0x21, 0x9f, 0x4e, 0x0b, 0x77, 0x2a, 0x61, 0xd3, 0x58}

// NewEntityID is the id given to an entity first seen in an event: a name-based (version 5)
// UUID, so executives racing on a new entity, and replays, agree on it. Imported entities keep
// the ids of their import file.
func NewEntityID(name string) string {
	h := sha1.New()
	h.Write(entityNamespace[:])
	h.Write([]byte(name))
	u := h.Sum(nil)[:16]
	u[6] = (u[6] & 0x0f) | 0x50
	u[8] = (u[8] & 0x3f) | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

// TagSet is the tag set an event carries for rule matching (docs/flapjack-1x.md 1.5), in order and
// without repeats: the event's own tags, the check's tags, the entity name split at the first
// dot, and the check name split on spaces (both lower-cased).
func TagSet(ev *Event, checkTags []string) []string {
	seen := make(map[string]bool, len(ev.Tags)+len(checkTags)+4)
	out := make([]string, 0, len(ev.Tags)+len(checkTags)+4)
	add := func(t string) {
		if t != "" && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	for _, t := range ev.Tags {
		add(t)
	}
	for _, t := range checkTags {
		add(t)
	}
	first, rest, found := strings.Cut(strings.ToLower(ev.Entity), ".")
	add(first)
	if found {
		add(rest)
	}
	for _, part := range strings.Fields(ev.Check) {
		add(strings.ToLower(part))
	}
	return out
}
