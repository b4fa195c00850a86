package roster

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/schema"
)

// Contact is a person (or team) with media and notification rules (docs/flapjack-1x.md 3.9).
type Contact struct {
	ID        string
	FirstName string
	LastName  string
	Email     string
	// Media maps a medium to the contact's address on it, e.g. "jabber" -> "ada@example.com".
	Media            map[string]string
	Intervals        map[string]int64 // medium -> seconds between repeats
	RollupThresholds map[string]int64 // medium -> failing checks before rollup
	Timezone         string           // "" = the notifier default
	Pagerduty        PagerdutyCredentials
	Rules            []Rule
	// RuleErrors lists rules that could not be read (they are skipped, the others apply).
	RuleErrors []error
	// Revision of the contact's alert state, read to guard the notifier's writes.
	Revision int64
	// SuppressedUntil maps a schema.DropField / schema.RollupDropField to the unix time the
	// suppression ends.
	SuppressedUntil map[string]int64
}

// PagerdutyCredentials are a contact's PagerDuty REST credentials (contact_pagerduty:ID).
type PagerdutyCredentials struct {
	Subdomain, Token, Username, Password string
}

// Present reports whether the credentials can be used to query PagerDuty.
func (p PagerdutyCredentials) Present() bool {
	return p.Subdomain != "" && (p.Token != "" || (p.Username != "" && p.Password != ""))
}

// Rule is a notification rule as stored in notification_rule:ID.
type Rule struct {
	ID                string
	ContactID         string
	Entities          []string
	RegexEntities     []string
	Tags              []string
	RegexTags         []string
	TimeRestrictions  string // raw JSON array, parsed by the notifier
	UnknownMedia      []string
	WarningMedia      []string
	CriticalMedia     []string
	UnknownBlackhole  bool
	WarningBlackhole  bool
	CriticalBlackhole bool
}

// EntityID finds an entity's id through Flapjack 1.6's all_entity_ids_by_name hash or the
// seed's entity_id:NAME key (docs/decisions.md D15); "" when the entity is unknown.
func EntityID(conn redis.Conn, keys schema.Keys, entity string) (string, error) {
	id, err := redis.String(conn.Do("HGET", keys.EntityIDsByName(), entity))
	if err == nil {
		return id, nil
	}
	if !errors.Is(err, redis.ErrNil) {
		return "", fmt.Errorf("look up id of entity %s: %w", entity, err)
	}
	id, err = redis.String(conn.Do("GET", keys.EntityID(entity)))
	if errors.Is(err, redis.ErrNil) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("look up id of entity %s: %w", entity, err)
	}
	return id, nil
}

// ContactIDsFor lists the contacts interested in entity:check, each once (docs/decisions.md D5), in
// Flapjack's order: contacts_for:ENTITY_ID, contacts_for:ALL, contacts_for:ENTITY_ID:CHECK.
func ContactIDsFor(conn redis.Conn, keys schema.Keys, entity, check string) ([]string, error) {
	entityID, err := EntityID(conn, keys, entity)
	if err != nil {
		return nil, err
	}
	sets := []string{keys.ContactsFor(schema.AllContactsID)}
	if entityID != "" {
		sets = []string{keys.ContactsFor(entityID), keys.ContactsFor(schema.AllContactsID), keys.ContactsForCheck(entityID, check)}
	}
	for _, s := range sets {
		conn.Send("SMEMBERS", s)
	}
	if err := conn.Flush(); err != nil {
		return nil, fmt.Errorf("contacts for %s:%s: %w", entity, check, err)
	}
	seen := map[string]bool{}
	var ids []string
	for range sets {
		members, err := redis.Strings(conn.Receive())
		if err != nil {
			return nil, fmt.Errorf("contacts for %s:%s: %w", entity, check, err)
		}
		// Sets have no order; sorting makes alert order deterministic run to run.
		sort.Strings(members)
		for _, m := range members {
			if !seen[m] {
				seen[m] = true
				ids = append(ids, m)
			}
		}
	}
	return ids, nil
}

// IsContactFor reports whether contactID is still interested in entity:check (rollup cleaning).
func IsContactFor(conn redis.Conn, keys schema.Keys, contactID, entity, check string) (bool, error) {
	ids, err := ContactIDsFor(conn, keys, entity, check)
	if err != nil {
		return false, err
	}
	for _, id := range ids {
		if id == contactID {
			return true, nil
		}
	}
	return false, nil
}

const readsPerContact = 8

// LoadContacts reads contacts with their media, settings and rules in two round trips. Ids with
// no data at all are left out.
func LoadContacts(conn redis.Conn, keys schema.Keys, ids []string) ([]Contact, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	for _, id := range ids {
		conn.Send("HGETALL", keys.Contact(id))
		conn.Send("HGETALL", keys.ContactMedia(id))
		conn.Send("GET", keys.ContactTimezone(id))
		conn.Send("HGETALL", keys.ContactMediaIntervals(id))
		conn.Send("HGETALL", keys.ContactRollupThresholds(id))
		conn.Send("HGETALL", keys.ContactPagerduty(id))
		conn.Send("SMEMBERS", keys.ContactRules(id))
		conn.Send("HGETALL", keys.ContactAlertState(id))
	}
	if err := conn.Flush(); err != nil {
		return nil, fmt.Errorf("load contacts: %w", err)
	}
	replies := make([]any, 0, readsPerContact*len(ids))
	for range readsPerContact * len(ids) {
		r, err := conn.Receive()
		if err != nil && !errors.Is(err, redis.ErrNil) {
			return nil, fmt.Errorf("load contacts: %w", err)
		}
		replies = append(replies, r)
	}
	contacts := make([]Contact, 0, len(ids))
	var ruleIDs [][]string
	for i, id := range ids {
		r := replies[i*readsPerContact : (i+1)*readsPerContact]
		c, rules, ok := decodeContact(id, r)
		if !ok {
			continue
		}
		contacts = append(contacts, c)
		ruleIDs = append(ruleIDs, rules)
	}
	if err := loadRules(conn, keys, contacts, ruleIDs); err != nil {
		return nil, err
	}
	return contacts, nil
}

func decodeContact(id string, r []any) (Contact, []string, bool) {
	info, _ := redis.StringMap(r[0], nil)
	media, _ := redis.StringMap(r[1], nil)
	tz, _ := redis.String(r[2], nil)
	intervals, _ := redis.StringMap(r[3], nil)
	thresholds, _ := redis.StringMap(r[4], nil)
	pd, _ := redis.StringMap(r[5], nil)
	rules, _ := redis.Strings(r[6], nil)
	state, _ := redis.StringMap(r[7], nil)
	if len(info) == 0 && len(media) == 0 && len(rules) == 0 {
		return Contact{}, nil, false
	}
	suppressed := numbers(state)
	revision := suppressed["revision"]
	delete(suppressed, "revision")
	sort.Strings(rules)
	c := Contact{
		ID: id, FirstName: info["first_name"], LastName: info["last_name"], Email: info["email"],
		Media: media, Timezone: strings.TrimSpace(tz),
		Intervals: numbers(intervals), RollupThresholds: numbers(thresholds),
		Pagerduty: PagerdutyCredentials{Subdomain: pd["subdomain"], Token: pd["token"],
			Username: pd["username"], Password: pd["password"]},
		Revision: revision, SuppressedUntil: suppressed,
	}
	// Flapjack 1.x stores the PagerDuty service key as the "pagerduty" medium; a service key in
	// contact_pagerduty counts too.
	if c.Media == nil {
		c.Media = map[string]string{}
	}
	if _, ok := c.Media["pagerduty"]; !ok && pd["service_key"] != "" {
		c.Media["pagerduty"] = pd["service_key"]
	}
	return c, rules, true
}

func numbers(m map[string]string) map[string]int64 {
	out := make(map[string]int64, len(m))
	for k, v := range m {
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			out[k] = n
		}
	}
	return out
}

func loadRules(conn redis.Conn, keys schema.Keys, contacts []Contact, ruleIDs [][]string) error {
	n := 0
	for _, ids := range ruleIDs {
		for _, id := range ids {
			conn.Send("HGETALL", keys.Rule(id))
			n++
		}
	}
	if n == 0 {
		return nil
	}
	if err := conn.Flush(); err != nil {
		return fmt.Errorf("load rules: %w", err)
	}
	for i, ids := range ruleIDs {
		for _, id := range ids {
			m, err := redis.StringMap(conn.Receive())
			if err != nil {
				return fmt.Errorf("load rule %s: %w", id, err)
			}
			if len(m) == 0 {
				contacts[i].RuleErrors = append(contacts[i].RuleErrors, fmt.Errorf("rule %s is listed for contact %s but has no data", id, contacts[i].ID))
				continue
			}
			rule, err := DecodeRule(id, m)
			if err != nil {
				contacts[i].RuleErrors = append(contacts[i].RuleErrors, err)
				continue
			}
			contacts[i].Rules = append(contacts[i].Rules, rule)
		}
	}
	return nil
}

// DecodeRule reads a notification_rule hash: list fields are JSON arrays (null allowed),
// blackholes "true"/"false".
func DecodeRule(id string, m map[string]string) (Rule, error) {
	r := Rule{ID: id, ContactID: m["contact_id"], TimeRestrictions: m["time_restrictions"]}
	lists := []struct {
		field string
		dst   *[]string
	}{
		{"entities", &r.Entities}, {"regex_entities", &r.RegexEntities},
		{"tags", &r.Tags}, {"regex_tags", &r.RegexTags}, {"entity_tags", &r.Tags},
		{"unknown_media", &r.UnknownMedia}, {"warning_media", &r.WarningMedia}, {"critical_media", &r.CriticalMedia},
	}
	for _, l := range lists {
		v, err := jsonList(m[l.field])
		if err != nil {
			return Rule{}, fmt.Errorf("rule %s: %s: %w", id, l.field, err)
		}
		*l.dst = append(*l.dst, v...)
	}
	r.UnknownBlackhole = m["unknown_blackhole"] == "true"
	r.WarningBlackhole = m["warning_blackhole"] == "true"
	r.CriticalBlackhole = m["critical_blackhole"] == "true"
	return r, nil
}

func jsonList(v string) ([]string, error) {
	v = strings.TrimSpace(v)
	if v == "" || v == "null" {
		return nil, nil
	}
	var out []string
	if err := json.Unmarshal([]byte(v), &out); err != nil {
		return nil, fmt.Errorf("not a JSON array of strings: %.60q", v)
	}
	return out, nil
}

// ContactIDsForFacts is ContactIDsFor for many checks read in ModeAlerting, whose facts carry
// their entity's id, in one round trip (rollup cleaning).
func ContactIDsForFacts(conn redis.Conn, keys schema.Keys, facts []checkstate.CheckFacts) (map[string][]string, error) {
	checks := make([]checkOfEntity, len(facts))
	for i, f := range facts {
		checks[i] = checkOfEntity{entity: f.Entity, check: f.Check, entityID: f.EntityID}
	}
	return contactIDsForChecks(conn, keys, checks)
}

// checkOfEntity is a check with its entity's id ("" for an entity without one).
type checkOfEntity struct{ entity, check, entityID string }

// contactIDsForChecks reads the contacts of checks whose entity ids are known, by check id.
func contactIDsForChecks(conn redis.Conn, keys schema.Keys, checks []checkOfEntity) (map[string][]string, error) {
	// The sets of ALL and of an entity are shared by many checks: each distinct set is read once
	// (a contact's alerting set holds many checks of few entities).
	type query struct {
		id   string
		sets []string
	}
	queries := make([]query, 0, len(checks))
	members := map[string][]string{}
	var setOrder []string
	for _, p := range checks {
		sets := []string{keys.ContactsFor(schema.AllContactsID)}
		if p.entityID != "" {
			sets = append(sets, keys.ContactsFor(p.entityID), keys.ContactsForCheck(p.entityID, p.check))
		}
		for _, s := range sets {
			if _, seen := members[s]; !seen {
				members[s] = nil
				setOrder = append(setOrder, s)
				conn.Send("SMEMBERS", s)
			}
		}
		queries = append(queries, query{id: schema.CheckID(p.entity, p.check), sets: sets})
	}
	if err := conn.Flush(); err != nil {
		return nil, fmt.Errorf("contacts for checks: %w", err)
	}
	for _, s := range setOrder {
		m, err := redis.Strings(conn.Receive())
		if err != nil {
			return nil, fmt.Errorf("contacts in %s: %w", s, err)
		}
		members[s] = m
	}
	out := make(map[string][]string, len(checks))
	for _, q := range queries {
		seen := map[string]bool{}
		for _, s := range q.sets {
			for _, m := range members[s] {
				if !seen[m] {
					seen[m] = true
					out[q.id] = append(out[q.id], m)
				}
			}
		}
	}
	return out, nil
}
