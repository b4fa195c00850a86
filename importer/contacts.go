package importer

import (
	"context"
	"crypto/sha1"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/jsonfield"
	"github.com/flapjackgo/flapjack/internal/strset"
	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/schema"
)

// Fields of a contact record, a medium object and a rule; "links" and "type" (Flapjack 1.x JSON
// API) are accepted and ignored on records and rules.
var (
	contactFields = strset.Of([]string{"id", "first_name", "last_name", "email", "timezone", "tags",
		"media", "notification_rules", "links", "type"})
	mediumFields    = strset.Of([]string{"address", "interval", "rollup_threshold"})
	pagerdutyFields = strset.Of([]string{"service_key", "address", "subdomain", "token", "username",
		"password", "interval", "rollup_threshold"})
	ruleFields = strset.Of([]string{"id", "contact_id", "entities", "regex_entities", "tags",
		"entity_tags", "regex_tags", "time_restrictions", "unknown_media", "warning_media",
		"critical_media", "unknown_blackhole", "warning_blackhole", "critical_blackhole",
		"links", "type"})
)

// contact is a well-formed contact record.
type contact struct {
	index int
	data  roster.ContactData
}

// Contacts imports a Flapjack 1.x contacts file (see the package comment for the format).
//
// The records are written by roster.ReplaceContacts: it reads the current state (each
// contact's rule ids, the owners of the rule ids it will write, its contact_tag memberships
// through SCAN) under WATCH and writes everything in one atomic step, which it redoes on the
// new state when another writer (the JSON API, another import) changed any of it in between.
func Contacts(ctx context.Context, conn redis.Conn, keys schema.Keys, data []byte, opts Options) (Report, error) {
	raws, err := records(data, "contacts")
	if err != nil {
		return Report{}, err
	}
	var rep Report
	bad := map[int]bool{}
	byID := map[string]*contact{}
	type use struct {
		index int
		field string
	}
	ruleAt := map[string]use{} // rule id -> its first use
	valid := parseRecords(raws, parseContact, func(i int, c *contact) []Problem {
		var problems []Problem
		if prev, dup := byID[c.data.ID]; dup {
			problems = append(problems, Problem{Index: i, ID: c.data.ID, Field: "id", Reason: fmt.Sprintf("duplicate of record %d", prev.index)})
		} else {
			byID[c.data.ID] = c
		}
		for k, r := range c.data.Rules {
			field := jsonfield.At("notification_rules", k)
			if prev, dup := ruleAt[r.ID]; dup {
				where := fmt.Sprintf("record %d", prev.index)
				if prev.index == i {
					where = prev.field
				}
				problems = append(problems, Problem{Index: i, ID: c.data.ID, Field: field + ".id", Reason: fmt.Sprintf("rule id %q is also used by %s", r.ID, where)})
				continue
			}
			ruleAt[r.ID] = use{index: i, field: field}
		}
		return problems
	}, &rep, bad)

	contacts := make([]roster.ContactData, len(valid))
	for i, c := range valid {
		contacts[i] = c.data
	}
	// With bad records and no Partial nothing is written, but the others are still checked
	// against Redis so that the report lists every problem.
	res, err := roster.ReplaceContacts(ctx, conn, keys, contacts,
		roster.ReplaceOptions{Partial: opts.Partial, DryRun: opts.DryRun || (len(bad) > 0 && !opts.Partial)})
	if err != nil {
		return Report{}, err
	}
	for _, p := range res.Problems {
		c := valid[p.Index]
		reason := p.Reason
		if errors.Is(p.Err, roster.ErrRuleTaken) {
			reason += ", which this file does not import"
		}
		rep.Problems = append(rep.Problems, Problem{Index: c.index, ID: c.data.ID, Field: p.Field, Reason: reason})
		bad[c.index] = true
	}
	if err := outcome(&rep, len(raws), bad, opts); err != nil {
		return rep, err
	}
	for _, c := range valid {
		if !bad[c.index] {
			rep.Notes = append(rep.Notes, roster.ContactWarnings(c.data)...)
		}
	}
	rep.Writes = res.Writes
	if !opts.DryRun {
		// Contacts Flapjack 1.6 wrote join our index as the import passes by.
		n, err := roster.RepairContactIndex(ctx, conn, keys)
		if err != nil {
			return rep, err
		}
		if n > 0 {
			rep.Notes = append(rep.Notes, fmt.Sprintf("all_contacts: %d contacts brought in line with their contact:ID hashes", n))
		}
	}
	return rep, nil
}

func parseContact(index int, raw json.RawMessage) (*contact, []Problem) {
	c := &check{index: index}
	obj, ok := c.object(raw, "")
	if !ok {
		return nil, c.problems
	}
	id := recordID(c, obj["id"])
	c.id = id
	rec := &contact{index: index, data: roster.ContactData{ID: id}}
	d := &rec.data
	d.FirstName = c.str(obj["first_name"], "first_name")
	d.LastName = c.str(obj["last_name"], "last_name")
	d.Email = c.str(obj["email"], "email")
	if d.Timezone = c.str(obj["timezone"], "timezone"); d.Timezone != "" {
		c.check("timezone", roster.TimezoneProblem(d.Timezone))
	}
	d.Tags = strset.Unique(c.strings(obj["tags"], "tags"))
	d.Media = parseMedia(c, obj["media"], &d.Pagerduty)
	c.list(obj["notification_rules"], "notification_rules", "rule objects", func(i int, raw json.RawMessage) {
		if r, ok := parseRule(c, jsonfield.At("notification_rules", i), id, i, raw); ok {
			d.Rules = append(d.Rules, r)
		}
	})
	c.unknown(obj, "", contactFields)
	if !c.ok() {
		return nil, c.problems
	}
	return rec, nil
}

// recordID reads a record's required id; problems are reported without an id.
func recordID(c *check, raw json.RawMessage) string {
	id, ok := c.ident(raw, "id")
	switch {
	case !ok:
		return ""
	case jsonfield.IsNull(raw):
		c.fail("id", "is required")
	case !c.check("id", roster.IDProblem(id)):
	default:
		return id
	}
	return ""
}

// ParseMedia reads the media member of a contact record (the JSON API's POST /contacts reads a
// created contact's media with it too, as Flapjack 1.6 took them there): the media and the
// PagerDuty REST credentials.
func ParseMedia(index int, raw json.RawMessage) ([]roster.Medium, roster.PagerdutyCredentials, []Problem) {
	c := &check{index: index}
	var creds roster.PagerdutyCredentials
	media := parseMedia(c, raw, &creds)
	return media, creds, c.problems
}

func parseMedia(c *check, raw json.RawMessage, creds *roster.PagerdutyCredentials) []roster.Medium {
	if jsonfield.IsNull(raw) {
		return nil
	}
	obj, ok := c.object(raw, "media")
	if !ok {
		return nil
	}
	var out []roster.Medium
	for _, name := range slices.Sorted(maps.Keys(obj)) {
		field := "media." + name
		value := obj[name]
		if !c.check(field, roster.MediumNameProblem(name)) || jsonfield.IsNull(value) {
			continue
		}
		m := roster.Medium{Name: name}
		switch jsonfield.First(value) {
		case '"':
			m.Address = c.str(value, field)
			if reason := roster.AddressProblem(m.Address); reason != "" {
				c.fail(field, "address %s", reason)
				continue
			}
		case '{':
			if !parseMediumObject(c, field, value, &m, creds) {
				continue
			}
		default:
			c.fail(field, "must be an address string or an object")
			continue
		}
		out = append(out, m)
	}
	return out
}

func parseMediumObject(c *check, field string, raw json.RawMessage, m *roster.Medium, creds *roster.PagerdutyCredentials) bool {
	before := len(c.problems)
	obj, _ := c.object(raw, field)
	known := mediumFields
	addressField := "address"
	if m.Name == roster.PagerdutyMedium {
		known = pagerdutyFields
		addressField = "service_key"
		switch key, addr := obj["service_key"], obj["address"]; {
		case !jsonfield.IsNull(key) && !jsonfield.IsNull(addr):
			c.fail(field, "give service_key or address, not both")
		case jsonfield.IsNull(key) && !jsonfield.IsNull(addr):
			addressField = "address"
		}
		creds.Subdomain = c.str(obj["subdomain"], jsonfield.Join(field, "subdomain"))
		creds.Token = c.str(obj["token"], jsonfield.Join(field, "token"))
		creds.Username = c.str(obj["username"], jsonfield.Join(field, "username"))
		creds.Password = c.str(obj["password"], jsonfield.Join(field, "password"))
		if !jsonfield.IsNull(obj["rollup_threshold"]) {
			c.check(jsonfield.Join(field, "rollup_threshold"), roster.RollupThresholdProblem(m.Name, 0))
		}
	} else {
		m.RollupThreshold = c.integer(obj["rollup_threshold"], jsonfield.Join(field, "rollup_threshold"), roster.MinRollupThreshold,
			func(n int64) string { return roster.RollupThresholdProblem(m.Name, n) })
	}
	switch address := obj[addressField]; {
	case jsonfield.IsNull(address):
		c.fail(jsonfield.Join(field, addressField), "is required")
	case jsonfield.First(address) != '"':
		c.fail(jsonfield.Join(field, addressField), "must be a string")
	default:
		m.Address = c.str(address, jsonfield.Join(field, addressField))
		c.check(jsonfield.Join(field, addressField), roster.AddressProblem(m.Address))
	}
	m.Interval = c.integer(obj["interval"], jsonfield.Join(field, "interval"), roster.MinInterval, roster.IntervalProblem)
	c.unknown(obj, field, known)
	return len(c.problems) == before
}

// parseRule reads the rule at field (the record itself when field is ""); a rule without an id
// gets generatedRuleID(contactID, i).
func parseRule(c *check, field, contactID string, i int, raw json.RawMessage) (roster.Rule, bool) {
	before := len(c.problems)
	obj, ok := c.object(raw, field)
	if !ok {
		return roster.Rule{}, false
	}
	r := roster.Rule{ContactID: contactID}
	id, idOK := c.ident(obj["id"], jsonfield.Join(field, "id"))
	switch {
	case !idOK:
	case !jsonfield.IsNull(obj["id"]) && !c.check(jsonfield.Join(field, "id"), roster.RuleIDProblem(id)):
	case id != "":
		r.ID = id
	default:
		r.ID = generatedRuleID(contactID, i)
	}
	if owner, ok := c.ident(obj["contact_id"], jsonfield.Join(field, "contact_id")); ok {
		c.check(jsonfield.Join(field, "contact_id"), roster.RuleContactProblem(owner, contactID))
	}
	r.Entities = c.strings(obj["entities"], jsonfield.Join(field, "entities"))
	r.RegexEntities = c.regexes(obj["regex_entities"], jsonfield.Join(field, "regex_entities"))
	r.Tags = c.strings(obj["tags"], jsonfield.Join(field, "tags"))
	r.Tags = append(r.Tags, c.strings(obj["entity_tags"], jsonfield.Join(field, "entity_tags"))...)
	r.RegexTags = c.regexes(obj["regex_tags"], jsonfield.Join(field, "regex_tags"))
	r.TimeRestrictions = c.timeRestrictions(obj["time_restrictions"], jsonfield.Join(field, "time_restrictions"))
	r.UnknownMedia = mediaList(c, obj["unknown_media"], jsonfield.Join(field, "unknown_media"))
	r.WarningMedia = mediaList(c, obj["warning_media"], jsonfield.Join(field, "warning_media"))
	r.CriticalMedia = mediaList(c, obj["critical_media"], jsonfield.Join(field, "critical_media"))
	r.UnknownBlackhole = c.boolean(obj["unknown_blackhole"], jsonfield.Join(field, "unknown_blackhole"))
	r.WarningBlackhole = c.boolean(obj["warning_blackhole"], jsonfield.Join(field, "warning_blackhole"))
	r.CriticalBlackhole = c.boolean(obj["critical_blackhole"], jsonfield.Join(field, "critical_blackhole"))
	c.unknown(obj, field, ruleFields)
	if len(c.problems) > before {
		return roster.Rule{}, false
	}
	return r, true
}

func mediaList(c *check, raw json.RawMessage, field string) []string {
	var out []string
	c.list(raw, field, "medium names", func(i int, item json.RawMessage) {
		var s string
		if jsonfield.First(item) != '"' || json.Unmarshal(item, &s) != nil {
			c.fail(jsonfield.At(field, i), "must be a string")
			return
		}
		if c.check(jsonfield.At(field, i), roster.MediumNameProblem(s)) {
			out = append(out, s)
		}
	})
	return out
}

// ruleNamespace is the UUID namespace of rule ids generated for rules imported without one (a
// random constant).
var ruleNamespace = [16]byte{0x2f, 0x9c, 0x41, 0x7a, 0xd0, 0x63, 0x4b, 0x88, 0xa5, 0x1e, 0x6c, 0x37, 0xf2, 0x0b, 0x94, 0x5d}

// generatedRuleID is a name-based (version 5) UUID of the contact id and the rule's position, so
// re-importing the same file gives the same rule ids.
func generatedRuleID(contactID string, index int) string {
	h := sha1.New()
	h.Write(ruleNamespace[:])
	h.Write([]byte(contactID))
	h.Write([]byte{0})
	h.Write([]byte(strconv.Itoa(index)))
	u := h.Sum(nil)[:16]
	u[6] = (u[6] & 0x0f) | 0x50
	u[8] = (u[8] & 0x3f) | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}
