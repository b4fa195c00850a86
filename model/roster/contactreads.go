package roster

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/redisread"
	"github.com/flapjackgo/flapjack/schema"
)

// Reads of contacts, media and rules as they are stored, for the JSON API and anything else
// that shows them. Each is a fixed number of round trips whatever the number of items.

// StoredContact is a contact as stored: what CreateContacts and ReplaceContacts wrote (Tags
// are not read), and the entities it is linked to.
type StoredContact struct {
	ContactData
	// Entities are the ids of the entities whose contacts_for:ENTITY_ID holds the contact; nil
	// unless asked for.
	Entities []string
}

// NewID is a new random (version 4) UUID, the id of a contact or rule created without one.
func NewID() string { return randomID() }

// ContactIDs lists every contact (the members of all_contacts), sorted.
func ContactIDs(conn redis.Conn, keys schema.Keys) ([]string, error) {
	ids, err := redis.Strings(conn.Do("SMEMBERS", keys.AllContacts()))
	if err != nil {
		return nil, fmt.Errorf("list contacts: %w", err)
	}
	sort.Strings(ids)
	return ids, nil
}

// ReadContacts reads the contacts ids that exist (members of all_contacts), in the order
// given, each once, with their media, PagerDuty credentials and rules (sorted by id); with
// withEntities also the entities linked to each (found by SCAN of contacts_for:*). Rules that
// cannot be decoded are left out.
func ReadContacts(ctx context.Context, conn redis.Conn, keys schema.Keys, ids []string, withEntities bool) ([]StoredContact, error) {
	ids = Unique(ids)
	if len(ids) == 0 {
		return nil, nil
	}
	var b redisread.Batch
	type reads struct{ member, info, tz, media, intervals, thresholds, pd, rules int }
	at := make([]reads, len(ids))
	for i, id := range ids {
		at[i] = reads{
			member:     b.Add("SISMEMBER", keys.AllContacts(), id),
			info:       b.Add("HGETALL", keys.Contact(id)),
			tz:         b.Add("GET", keys.ContactTimezone(id)),
			media:      b.Add("HGETALL", keys.ContactMedia(id)),
			intervals:  b.Add("HGETALL", keys.ContactMediaIntervals(id)),
			thresholds: b.Add("HGETALL", keys.ContactRollupThresholds(id)),
			pd:         b.Add("HGETALL", keys.ContactPagerduty(id)),
			rules:      b.Add("SMEMBERS", keys.ContactRules(id)),
		}
	}
	if err := b.Run(ctx, conn); err != nil {
		return nil, fmt.Errorf("read contacts: %w", err)
	}
	var out []StoredContact
	var ruleIDs [][]string
	for i, id := range ids {
		if b.Num(at[i].member) != 1 {
			continue
		}
		info, _ := redis.StringMap(b.Reply(at[i].info))
		media, _ := redis.StringMap(b.Reply(at[i].media))
		intervals, _ := redis.StringMap(b.Reply(at[i].intervals))
		thresholds, _ := redis.StringMap(b.Reply(at[i].thresholds))
		pd, _ := redis.StringMap(b.Reply(at[i].pd))
		c := StoredContact{ContactData: ContactData{ID: id,
			ContactInfo: ContactInfo{FirstName: info["first_name"], LastName: info["last_name"], Email: info["email"],
				Timezone: strings.TrimSpace(b.Str(at[i].tz))},
			Pagerduty: PagerdutyCredentials{Subdomain: pd["subdomain"], Token: pd["token"],
				Username: pd["username"], Password: pd["password"]}}}
		names := make([]string, 0, len(media))
		for name := range media {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			c.Media = append(c.Media, Medium{Name: name, Address: media[name],
				Interval: optInt(intervals[name]), RollupThreshold: optInt(thresholds[name])})
		}
		rules := b.Strs(at[i].rules)
		sort.Strings(rules)
		out = append(out, c)
		ruleIDs = append(ruleIDs, rules)
	}
	var all []string
	for _, r := range ruleIDs {
		all = append(all, r...)
	}
	rules, err := ReadRules(ctx, conn, keys, all)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]Rule, len(rules))
	for _, r := range rules {
		byID[r.ID] = r
	}
	for i, ids := range ruleIDs {
		for _, rid := range ids {
			if r, ok := byID[rid]; ok {
				out[i].Rules = append(out[i].Rules, r)
			}
		}
	}
	if withEntities && len(out) > 0 {
		if err := linkEntities(ctx, conn, keys, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// linkEntities fills in the entities of contacts: the contacts_for:ENTITY_ID sets holding them
// (contacts_for:ALL and the per-check sets contacts_for:ENTITY_ID:CHECK are not entities).
func linkEntities(ctx context.Context, conn redis.Conn, keys schema.Keys, contacts []StoredContact) error {
	names, err := redisread.ScanSets(ctx, conn, keys.ContactsFor(""))
	if err != nil {
		return err
	}
	var entityIDs, setKeys []string
	for _, n := range names {
		if n != schema.AllContactsID && !strings.Contains(n, ":") {
			entityIDs = append(entityIDs, n)
			setKeys = append(setKeys, keys.ContactsFor(n))
		}
	}
	ids := make([]string, len(contacts))
	for i, c := range contacts {
		ids[i] = c.ID
	}
	_, members, err := redisread.Memberships(ctx, conn, setKeys, ids)
	if err != nil {
		return err
	}
	for i := range contacts {
		contacts[i].Entities = []string{}
		for j, eid := range entityIDs {
			if members[j][contacts[i].ID] {
				contacts[i].Entities = append(contacts[i].Entities, eid)
			}
		}
		sort.Strings(contacts[i].Entities)
	}
	return nil
}

// ReadRules reads the notification rules ids that exist, in the order given, each once, in one
// round trip. Rules that cannot be decoded are left out.
func ReadRules(ctx context.Context, conn redis.Conn, keys schema.Keys, ids []string) ([]Rule, error) {
	ids = Unique(ids)
	if len(ids) == 0 {
		return nil, nil
	}
	var b redisread.Batch
	for _, id := range ids {
		b.Add("HGETALL", keys.Rule(id))
	}
	if err := b.Run(ctx, conn); err != nil {
		return nil, fmt.Errorf("read notification rules: %w", err)
	}
	var out []Rule
	for i, id := range ids {
		m, _ := redis.StringMap(b.Reply(i))
		if len(m) == 0 {
			continue
		}
		r, err := DecodeRule(id, m)
		if err != nil {
			continue
		}
		out = append(out, r)
	}
	return out, nil
}

// RuleIDs lists the rules of every contact (contact_notification_rules of each member of
// all_contacts), sorted, in two round trips.
func RuleIDs(ctx context.Context, conn redis.Conn, keys schema.Keys) ([]string, error) {
	contacts, err := ContactIDs(conn, keys)
	if err != nil {
		return nil, err
	}
	var b redisread.Batch
	for _, id := range contacts {
		b.Add("SMEMBERS", keys.ContactRules(id))
	}
	if err := b.Run(ctx, conn); err != nil {
		return nil, fmt.Errorf("list notification rules: %w", err)
	}
	var ids []string
	for i := range contacts {
		ids = append(ids, b.Strs(i)...)
	}
	ids = Unique(ids)
	sort.Strings(ids)
	return ids, nil
}
