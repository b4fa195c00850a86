package views

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/schema"
)

// Reads and ordering for triage: the on-call list of failing checks, most urgent first, and
// who each check last alerted. Every surface that lists failing checks for a person to act on
// sorts with SortForTriage, so they agree.

// TriageKey is what a failing check is ordered by.
type TriageKey struct {
	State string
	Since int64 // when the check last changed state (unix seconds)
	ID    string
}

// SeverityRank orders states for triage: critical (and down) first, then warning, then unknown,
// then anything else.
func SeverityRank(state string) int {
	switch state {
	case schema.StateCritical, "down":
		return 0
	case schema.StateWarning:
		return 1
	case schema.StateUnknown:
		return 2
	}
	return 3
}

// CompareTriage orders a before b when a is more severe, or as severe and failed more
// recently; the check id breaks ties so the order is stable across reloads.
func CompareTriage(a, b TriageKey) int {
	return cmp.Or(cmp.Compare(SeverityRank(a.State), SeverityRank(b.State)), cmp.Compare(b.Since, a.Since),
		cmp.Compare(a.ID, b.ID))
}

// SortForTriage sorts rows in place by CompareTriage of key(row).
func SortForTriage[T any](rows []T, key func(T) TriageKey) {
	slices.SortStableFunc(rows, func(a, b T) int { return CompareTriage(key(a), key(b)) })
}

// Recipient is one contact a notification was sent to, on the media that sent it.
type Recipient struct {
	ContactID, Name string
	Media           []string
}

// LastAlert is the newest routing decision that sent a check's notification to somebody: when,
// which notification, and to whom. Sent means the notifier queued it for the media's gateways;
// whether a gateway delivered it is not recorded here.
type LastAlert struct {
	Time           int64 // 0: nobody alerted within the check's explain list
	Type, Severity string
	Recipients     []Recipient
}

// alertedMarker is how a routing decision that alerted somebody looks in its stored JSON; the
// entries without it (most: every executive decision) are skipped without decoding.
var alertedMarker = []byte(`"alerted":true`)

// LastAlerts reads, for each check, the newest decision in its explain list (schema.Keys
// Explain, capped by executive.explain_entries) that alerted a contact: one round trip per
// ListChunk checks.
func LastAlerts(conn redis.Conn, keys schema.Keys, refs []model.CheckRef) ([]LastAlert, error) {
	out := make([]LastAlert, len(refs))
	for start := 0; start < len(refs); start += checkstate.ListChunk {
		part := refs[start:min(start+checkstate.ListChunk, len(refs))]
		for _, r := range part {
			conn.Send("LRANGE", keys.Explain(r.ID()), 0, -1)
		}
		if err := conn.Flush(); err != nil {
			return nil, fmt.Errorf("read last alerts: %w", err)
		}
		var firstErr error
		for i, r := range part {
			entries, err := redis.ByteSlices(conn.Receive())
			if err != nil && firstErr == nil {
				firstErr = fmt.Errorf("read last alert of %s: %w", r.ID(), err)
			}
			out[start+i] = lastAlertOf(entries)
		}
		if firstErr != nil {
			return nil, firstErr
		}
	}
	return out, nil
}

// lastAlertOf finds the newest entry (entries are newest first) that alerted somebody.
func lastAlertOf(entries [][]byte) LastAlert {
	for _, raw := range entries {
		if !bytes.Contains(raw, alertedMarker) {
			continue
		}
		var e schema.ExplainEntry
		if json.Unmarshal(raw, &e) != nil {
			continue
		}
		a := LastAlert{Time: e.Time, Type: e.Type, Severity: e.Severity}
		for _, c := range e.Contacts {
			rc := Recipient{ContactID: c.ID, Name: c.Name}
			for _, m := range c.Media {
				if m.Alerted {
					rc.Media = append(rc.Media, m.Medium)
				}
			}
			if len(rc.Media) > 0 {
				a.Recipients = append(a.Recipients, rc)
			}
		}
		if len(a.Recipients) > 0 {
			return a
		}
	}
	return LastAlert{}
}

// ChecksAlerting lists the checks (ENTITY:CHECK, sorted, each once) currently alerting a contact
// on any of media: the members of contact_alerting_checks:CONTACT:media:MEDIA, which the notifier
// adds a check to when it alerts and removes it from on recovery or acknowledgement. One round
// trip.
func ChecksAlerting(conn redis.Conn, keys schema.Keys, contactID string, media []string) ([]string, error) {
	for _, m := range media {
		conn.Send("ZRANGE", keys.AlertingChecks(contactID, m), 0, -1)
	}
	if err := conn.Flush(); err != nil {
		return nil, fmt.Errorf("read checks alerting %s: %w", contactID, err)
	}
	var out []string
	var firstErr error
	for _, m := range media {
		ids, err := redis.Strings(conn.Receive())
		if err != nil && firstErr == nil {
			firstErr = fmt.Errorf("read checks alerting %s by %s: %w", contactID, m, err)
		}
		out = append(out, ids...)
	}
	if firstErr != nil {
		return nil, firstErr
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
