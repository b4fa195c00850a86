package roster

import (
	_ "embed"
	"errors"
	"fmt"

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
// with their data, alert state and rules, and the entity's on-call schedules with every contact
// they name (who is on call is the notifier's decision, at its time). Contacts with no data at
// all are left out. With
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

// LoadRoutings is LoadRouting for several checks in one call (the notifier routing a batch of
// notifications), read together: a contact interested in several of them is read once, and
// the replies share its data (its SuppressedUntil map included).
func LoadRoutings(conn redis.Conn, keys schema.Keys, reqs []RoutingRequest) ([]Routing, error) {
	args := make([]any, 0, 17+4*len(reqs))
	args = append(args, keys.EntityIDsByName(), keys.EntityID(""), keys.ContactsFor(""), schema.AllContactsID,
		keys.Contact(""), keys.ContactMedia(""), keys.ContactTimezone(""), keys.ContactMediaIntervals(""),
		keys.ContactRollupThresholds(""), keys.ContactPagerduty(""), keys.ContactRules(""),
		keys.ContactAlertState(""), keys.Rule(""), "", keys.EntitySchedules(""), keys.Schedules(), len(reqs))
	for _, req := range reqs {
		ladders := ""
		checkID := schema.CheckID(req.Entity, req.Check)
		if req.Escalations {
			args[13] = keys.EscalationPolicies()
			ladders = keys.CheckEscalations(checkID)
		}
		args = append(args, req.Entity, req.Check, ladders, keys.ScheduleAlerted(checkID))
	}
	reply, err := redis.Values(routingScript.Do(conn, args...))
	if err == nil && len(reply) != len(reqs)+3 {
		err = fmt.Errorf("%d values for %d checks", len(reply), len(reqs))
	}
	if err != nil {
		return nil, fmt.Errorf("load contacts of %s: %w", describeRequests(reqs), err)
	}
	contacts, err := decodeRoutingContacts(reply[len(reqs)+1])
	if err != nil {
		return nil, err
	}
	schedules, err := redis.StringMap(reply[len(reqs)+2], nil)
	if err != nil {
		return nil, fmt.Errorf("load schedules: %w", err)
	}
	out := make([]Routing, len(reqs))
	for i, req := range reqs {
		if out[i], err = decodeRouting(reply[0], reply[i+1], req, contacts); err != nil {
			return nil, err
		}
		out[i].ScheduleDefs = schedules
	}
	return out, nil
}

// describeRequests names the checks of a routing read for an error message.
func describeRequests(reqs []RoutingRequest) string {
	if len(reqs) == 1 {
		return reqs[0].Entity + ":" + reqs[0].Check
	}
	return fmt.Sprintf("%d checks (%s:%s, ...)", len(reqs), reqs[0].Entity, reqs[0].Check)
}

// decodeRoutingContacts reads the contacts part of the routing script's reply, by id; contacts
// without any data are left out.
func decodeRoutingContacts(raw any) (map[string]*Contact, error) {
	list, err := redis.Values(raw, nil)
	if err != nil {
		return nil, fmt.Errorf("load contacts: %w", err)
	}
	out := make(map[string]*Contact, len(list))
	for _, raw := range list {
		parts, err := redis.Values(raw, nil)
		if err != nil || len(parts) != 9 {
			return nil, errors.New("load contacts: malformed reply")
		}
		id, _ := redis.String(parts[0], nil)
		rules, err := redis.Values(parts[8], nil)
		if err != nil {
			return nil, fmt.Errorf("load rules of contact %s: %w", id, err)
		}
		ruleIDs := make([]string, 0, len(rules)/2)
		for i := 0; i+1 < len(rules); i += 2 {
			rid, _ := redis.String(rules[i], nil)
			ruleIDs = append(ruleIDs, rid)
		}
		// parts[7] is the alert state: decodeContact wants the same order as LoadContacts reads.
		c, _, ok := decodeContact(id, []any{parts[1], parts[2], parts[3], parts[4], parts[5], parts[6], ToBulk(ruleIDs), parts[7]})
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
		out[id] = &c
	}
	return out, nil
}

// decodeRouting reads one check's part of the routing script's reply (policies is the
// escalation policies part).
func decodeRouting(policies, raw any, req RoutingRequest, contacts map[string]*Contact) (Routing, error) {
	part, err := redis.Values(raw, nil)
	if err == nil && len(part) < 5 {
		err = fmt.Errorf("%d values, want at least 5", len(part))
	}
	if err != nil {
		return Routing{}, fmt.Errorf("load contacts of %s:%s: %w", req.Entity, req.Check, err)
	}
	var r Routing
	if req.Escalations {
		if r.EscalationPolicies, err = redis.StringMap(policies, nil); err == nil {
			r.CheckEscalations, err = redis.Strings(part[1], nil)
		}
		if err != nil {
			return Routing{}, fmt.Errorf("load escalations of %s:%s: %w", req.Entity, req.Check, err)
		}
	}
	if err := decodeScheduled(&r, part[2:5], contacts); err != nil {
		return Routing{}, fmt.Errorf("load schedules of %s:%s: %w", req.Entity, req.Check, err)
	}
	for _, raw := range part[5:] {
		id, _ := redis.String(raw, nil)
		if c, ok := contacts[id]; ok {
			r.Contacts = append(r.Contacts, *c)
		}
	}
	return r, nil
}

// decodeScheduled reads a check's schedule_alerted hash, its entity's schedule ids and the
// contacts those name.
func decodeScheduled(r *Routing, part []any, contacts map[string]*Contact) error {
	var err error
	if r.ScheduleAlerted, err = redis.StringMap(part[0], nil); err != nil {
		return err
	}
	if r.Schedules, err = redis.Strings(part[1], nil); err != nil {
		return err
	}
	named, err := redis.Strings(part[2], nil)
	if err != nil {
		return err
	}
	for _, id := range named {
		if c, ok := contacts[id]; ok {
			if r.Scheduled == nil {
				r.Scheduled = make(map[string]Contact, len(named))
			}
			r.Scheduled[id] = *c
		}
	}
	return nil
}

// Routing is what LoadRouting read.
type Routing struct {
	Contacts []Contact
	// EscalationPolicies is the escalation_policies hash (policy id -> JSON) and
	// CheckEscalations the check's check_escalations set, when asked for.
	EscalationPolicies map[string]string
	CheckEscalations   []string
	// Schedules are the ids of the entity's on-call schedules (entity_schedules), sorted;
	// ScheduleDefs the stored JSON of every schedule the read named, by id (a schedule that
	// does not exist is absent); ScheduleAlerted the check's schedule_alerted hash (contact id ->
	// schedule id); Scheduled every existing contact those schedules and ScheduleAlerted name.
	Schedules       []string
	ScheduleDefs    map[string]string
	ScheduleAlerted map[string]string
	Scheduled       map[string]Contact
	// Ladders, when not nil, are the check's escalation ladders (by policy id) the notifier read
	// ahead for a whole batch: those of CheckEscalations and of every policy matching the check.
	Ladders map[string]Ladder
}

// ToBulk is ss as bulk strings, for a command's arguments or a reply's decoding.
func ToBulk(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}
