package model

import (
	_ "embed"
	"fmt"
	"strings"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/schema"
)

var (
	//go:embed scripts/routing.lua
	routingSource string
	routingScript = redis.NewScript(0, routingSource)
)

// LoadRouting reads, in one round trip, the contacts interested in entity:check (each once, in
// Flapjack's order: contacts_for:ENTITY_ID, contacts_for:ALL, contacts_for:ENTITY_ID:CHECK)
// with their data, alert state and rules. Contacts with no data at all are left out. With
// escalations, the same round trip reads the escalation policies (raw, as HGETALL gives them) and
// the policies of the check's ladders (check_escalations), which routing a problem, recovery or
// acknowledgement needs as well.
func LoadRouting(conn redis.Conn, keys schema.Keys, entity, check string, escalations bool) (Routing, error) {
	rs, err := LoadRoutings(conn, keys, []RoutingRequest{{Entity: entity, Check: check, Escalations: escalations}})
	if err != nil {
		return Routing{}, err
	}
	return rs[0], nil
}

// RoutingRequest names a check whose routing LoadRoutings reads.
type RoutingRequest struct {
	Entity, Check string
	Escalations   bool // read the escalation policies and the check's ladders too
}

// LoadRoutings is LoadRouting for several checks in one round trip (the notifier routing a
// batch of notifications), each read as LoadRouting reads it. The reads are pipelined, not
// atomic together: another client's writes may fall between two of them.
func LoadRoutings(conn redis.Conn, keys schema.Keys, reqs []RoutingRequest) ([]Routing, error) {
	replies, noScript, err := runRoutings(conn, keys, reqs)
	if err == nil && noScript {
		// a restarted or flushed Redis: load the script once and read again
		if err = routingScript.Load(conn); err == nil {
			replies, _, err = runRoutings(conn, keys, reqs)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("load contacts: %w", err)
	}
	out := make([]Routing, len(reqs))
	for i, req := range reqs {
		if out[i], err = decodeRouting(replies[i], req.Entity, req.Check, req.Escalations); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// runRoutings sends the routing script for every request and returns the replies, an error
// reply in place of a reply (decodeRouting reports it), and whether Redis had not loaded the
// script.
func runRoutings(conn redis.Conn, keys schema.Keys, reqs []RoutingRequest) ([]any, bool, error) {
	for _, req := range reqs {
		policies, ladders := "", ""
		if req.Escalations {
			policies, ladders = keys.EscalationPolicies(), keys.CheckEscalations(schema.CheckID(req.Entity, req.Check))
		}
		if err := routingScript.SendHash(conn, req.Entity, req.Check,
			keys.EntityIDsByName(), keys.EntityID(""), keys.ContactsFor(""), schema.AllContactsID,
			keys.Contact(""), keys.ContactMedia(""), keys.ContactTimezone(""), keys.ContactMediaIntervals(""),
			keys.ContactRollupThresholds(""), keys.ContactPagerduty(""), keys.ContactRules(""),
			keys.ContactAlertState(""), keys.Rule(""), policies, ladders); err != nil {
			return nil, false, err
		}
	}
	if err := conn.Flush(); err != nil {
		return nil, false, err
	}
	replies := make([]any, len(reqs))
	noScript := false
	for i := range reqs {
		reply, err := conn.Receive()
		if replyErr, ok := err.(redis.Error); ok {
			noScript = noScript || isNoScript(replyErr)
			reply, err = replyErr, nil
		}
		if err != nil {
			return nil, false, err // the connection broke: the other replies will not come
		}
		replies[i] = reply
	}
	return replies, noScript, nil
}

// isNoScript reports whether err is Redis's answer to EVALSHA of a script it has not loaded.
func isNoScript(err error) bool {
	e, ok := err.(redis.Error)
	return ok && strings.HasPrefix(string(e), "NOSCRIPT ")
}

// decodeRouting reads one routing script reply.
func decodeRouting(raw any, entity, check string, escalations bool) (Routing, error) {
	reply, err := redis.Values(raw, nil)
	if err == nil && len(reply) < 3 {
		err = fmt.Errorf("%d values, want at least 3", len(reply))
	}
	if err != nil {
		return Routing{}, fmt.Errorf("load contacts of %s:%s: %w", entity, check, err)
	}
	var r Routing
	if escalations {
		if r.EscalationPolicies, err = redis.StringMap(reply[1], nil); err == nil {
			r.CheckEscalations, err = redis.Strings(reply[2], nil)
		}
		if err != nil {
			return Routing{}, fmt.Errorf("load escalations of %s:%s: %w", entity, check, err)
		}
	}
	for _, raw := range reply[3:] {
		parts, err := redis.Values(raw, nil)
		if err != nil || len(parts) != 9 {
			return Routing{}, fmt.Errorf("load contacts of %s:%s: malformed reply", entity, check)
		}
		id, _ := redis.String(parts[0], nil)
		rules, err := redis.Values(parts[8], nil)
		if err != nil {
			return Routing{}, fmt.Errorf("load rules of contact %s: %w", id, err)
		}
		ruleIDs := make([]string, 0, len(rules)/2)
		for i := 0; i+1 < len(rules); i += 2 {
			rid, _ := redis.String(rules[i], nil)
			ruleIDs = append(ruleIDs, rid)
		}
		// parts[7] is the alert state: decodeContact wants the same order as LoadContacts reads.
		c, _, ok := decodeContact(id, []any{parts[1], parts[2], parts[3], parts[4], parts[5], parts[6], toBulk(ruleIDs), parts[7]})
		if !ok {
			continue
		}
		for i := 0; i+1 < len(rules); i += 2 {
			rid, _ := redis.String(rules[i], nil)
			m, _ := redis.StringMap(rules[i+1], nil)
			if len(m) == 0 {
				c.RuleErrors = append(c.RuleErrors, fmt.Errorf("rule %s is listed for contact %s but has no data", rid, id))
				continue
			}
			rule, err := DecodeRule(rid, m)
			if err != nil {
				c.RuleErrors = append(c.RuleErrors, err)
				continue
			}
			c.Rules = append(c.Rules, rule)
		}
		r.Contacts = append(r.Contacts, c)
	}
	return r, nil
}

// Routing is what LoadRouting read.
type Routing struct {
	Contacts []Contact
	// EscalationPolicies is the escalation_policies hash (policy id -> JSON) and
	// CheckEscalations the check's check_escalations set, when asked for.
	EscalationPolicies map[string]string
	CheckEscalations   []string
}

func toBulk(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}
