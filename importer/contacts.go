package importer

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/notifier/timerestriction"
	"github.com/flapjackgo/flapjack/schema"
)

// Fields of a contact record, a medium object and a rule; "links" and "type" (Flapjack 1.x JSON
// API) are accepted and ignored on records and rules.
var (
	contactFields = set([]string{"id", "first_name", "last_name", "email", "timezone", "tags",
		"media", "notification_rules", "links", "type"})
	mediumFields    = set([]string{"address", "interval", "rollup_threshold"})
	pagerdutyFields = set([]string{"service_key", "address", "subdomain", "token", "username",
		"password", "interval", "rollup_threshold"})
	ruleFields = set([]string{"id", "contact_id", "entities", "regex_entities", "tags",
		"entity_tags", "regex_tags", "time_restrictions", "unknown_media", "warning_media",
		"critical_media", "unknown_blackhole", "warning_blackhole", "critical_blackhole",
		"links", "type"})
)

// pagerdutyMedium is the medium whose address is a PagerDuty service key and whose credentials
// go to contact_pagerduty:ID.
const pagerdutyMedium = "pagerduty"

// contact is a valid contact record, ready to be written.
type contact struct {
	index    int
	id       string
	info     []any // field, value pairs of contact:ID (non-empty fields only)
	timezone string
	tags     []string
	media    []medium // sorted by name
	rules    []rule
	notes    []string
}

type medium struct {
	name, address string
	interval      int64
	hasInterval   bool
	threshold     int64
	hasThreshold  bool
	credentials   []any // field, value pairs of contact_pagerduty:ID
}

type rule struct {
	field  string // "notification_rules[i]", for problems
	id     string
	fields []any // field, value pairs of notification_rule:ID
	media  map[string][]string
}

// Contacts imports a Flapjack 1.x contacts file (see the package comment for the format).
//
// It reads the current state first (each contact's rule ids, the owners of the rule ids it
// will write, its contact_tag memberships through SCAN), then writes everything in one atomic
// script. Race window: a contact, rule or tag written by someone else (the HTTP API, another
// import) between those reads and the write is not seen, so a rule or tag membership added in
// that moment to a contact of this file survives although the file does not list it. Imports are
// meant to be the one writer of the contacts they carry while they run.
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
		if prev, dup := byID[c.id]; dup {
			problems = append(problems, Problem{Index: i, ID: c.id, Field: "id", Reason: fmt.Sprintf("duplicate of record %d", prev.index)})
		} else {
			byID[c.id] = c
		}
		for _, r := range c.rules {
			if prev, dup := ruleAt[r.id]; dup {
				where := fmt.Sprintf("record %d", prev.index)
				if prev.index == i {
					where = prev.field
				}
				problems = append(problems, Problem{Index: i, ID: c.id, Field: r.field + ".id", Reason: fmt.Sprintf("rule id %q is also used by %s", r.id, where)})
				continue
			}
			ruleAt[r.id] = use{index: i, field: r.field}
		}
		return problems
	}, &rep, bad)

	st, problems, err := readContacts(ctx, conn, keys, valid)
	if err != nil {
		return Report{}, err
	}
	for _, p := range problems {
		rep.Problems = append(rep.Problems, p)
		bad[p.Index] = true
	}
	// A rule id that already belongs to another contact may only move if that contact is
	// re-imported by this file too (its rule set is then rewritten); otherwise importing would
	// take the rule away from it. Refusing one record can refuse a move another relied on, so
	// repeat until nothing changes.
	for changed := true; changed; {
		changed = false
		for _, c := range valid {
			if bad[c.index] {
				continue
			}
			for _, r := range c.rules {
				owner := st.ruleOwner[r.id]
				if owner == "" || owner == c.id {
					continue
				}
				if o, ok := byID[owner]; ok && !bad[o.index] {
					continue
				}
				rep.Problems = append(rep.Problems, Problem{Index: c.index, ID: c.id, Field: r.field + ".id",
					Reason: fmt.Sprintf("rule %q belongs to contact %q, which this file does not import", r.id, owner)})
				bad[c.index] = true
				changed = true
			}
		}
	}

	if err := outcome(&rep, len(raws), bad, opts); err != nil {
		return rep, err
	}
	var good []*contact
	for _, c := range valid {
		if !bad[c.index] {
			good = append(good, c)
			rep.Notes = append(rep.Notes, c.notes...)
		}
	}
	ops := planContacts(keys, good, st)
	err = write(ctx, conn, "contacts", ops, opts, &rep)
	return rep, err
}

func parseContact(index int, raw json.RawMessage) (*contact, []Problem) {
	c := &check{index: index}
	obj, ok := c.object(raw, "")
	if !ok {
		return nil, c.problems
	}
	id := recordID(c, obj["id"])
	c.id = id
	rec := &contact{index: index, id: id}
	for _, f := range []string{"first_name", "last_name", "email"} {
		if v := c.str(obj[f], f); v != "" {
			rec.info = append(rec.info, f, v)
		}
	}
	rec.timezone = c.str(obj["timezone"], "timezone")
	loc := time.UTC
	if rec.timezone != "" {
		l, err := time.LoadLocation(rec.timezone)
		if err != nil || rec.timezone == "Local" {
			c.fail("timezone", "unknown time zone %q", rec.timezone)
		} else {
			loc = l
		}
	}
	rec.tags = unique(c.strings(obj["tags"], "tags"))
	rec.media = parseMedia(c, obj["media"])
	c.list(obj["notification_rules"], "notification_rules", "rule objects", func(i int, raw json.RawMessage) {
		if r, ok := parseRule(c, at("notification_rules", i), id, i, raw, loc, &rec.notes); ok {
			rec.rules = append(rec.rules, r)
		}
	})
	c.unknown(obj, "", contactFields)
	if !c.ok() {
		return nil, c.problems
	}
	addresses := map[string]bool{}
	for _, m := range rec.media {
		addresses[m.name] = true
	}
	for _, r := range rec.rules {
		for _, sev := range []string{"unknown_media", "warning_media", "critical_media"} {
			for _, m := range r.media[sev] {
				if !addresses[m] {
					rec.notes = append(rec.notes, fmt.Sprintf("contact %q: rule %q lists %q in %s, but the contact has no %s address", id, r.id, m, sev, m))
				}
			}
		}
	}
	return rec, nil
}

// recordID reads a record's required id; problems are reported without an id.
func recordID(c *check, raw json.RawMessage) string {
	id, ok := c.ident(raw, "id")
	switch {
	case !ok:
		return ""
	case isNull(raw):
		c.fail("id", "is required")
	case strings.TrimSpace(id) == "":
		c.fail("id", "must not be empty")
	case strings.TrimSpace(id) != id:
		c.fail("id", "must not start or end with spaces")
	default:
		return id
	}
	return ""
}

func parseMedia(c *check, raw json.RawMessage) []medium {
	if isNull(raw) {
		return nil
	}
	obj, ok := c.object(raw, "media")
	if !ok {
		return nil
	}
	var out []medium
	for _, name := range slices.Sorted(maps.Keys(obj)) {
		field := "media." + name
		value := obj[name]
		if !c.medium(name, field) || isNull(value) {
			continue
		}
		m := medium{name: name}
		switch first(value) {
		case '"':
			m.address = c.str(value, field)
			if strings.TrimSpace(m.address) == "" {
				c.fail(field, "address must not be empty")
				continue
			}
		case '{':
			if !parseMediumObject(c, field, value, &m) {
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

func parseMediumObject(c *check, field string, raw json.RawMessage, m *medium) bool {
	before := len(c.problems)
	obj, _ := c.object(raw, field)
	known := mediumFields
	addressField := "address"
	if m.name == pagerdutyMedium {
		known = pagerdutyFields
		addressField = "service_key"
		switch key, addr := obj["service_key"], obj["address"]; {
		case !isNull(key) && !isNull(addr):
			c.fail(field, "give service_key or address, not both")
		case isNull(key) && !isNull(addr):
			addressField = "address"
		}
		for _, f := range []string{"subdomain", "token", "username", "password"} {
			if v := c.str(obj[f], join(field, f)); v != "" {
				m.credentials = append(m.credentials, f, v)
			}
		}
		if !isNull(obj["rollup_threshold"]) {
			c.fail(join(field, "rollup_threshold"), "pagerduty alerts are never rolled up")
		}
	} else {
		m.threshold, m.hasThreshold = c.integer(obj["rollup_threshold"], join(field, "rollup_threshold"), 0)
	}
	switch address := obj[addressField]; {
	case isNull(address):
		c.fail(join(field, addressField), "is required")
	case first(address) != '"':
		c.fail(join(field, addressField), "must be a string")
	default:
		if m.address = c.str(address, join(field, addressField)); strings.TrimSpace(m.address) == "" {
			c.fail(join(field, addressField), "must not be empty")
		}
	}
	m.interval, m.hasInterval = c.integer(obj["interval"], join(field, "interval"), 1)
	c.unknown(obj, field, known)
	return len(c.problems) == before
}

// parseRule reads the rule at field (the record itself when field is ""); a rule without an id
// gets generatedRuleID(contactID, i).
func parseRule(c *check, field, contactID string, i int, raw json.RawMessage, loc *time.Location, notes *[]string) (rule, bool) {
	before := len(c.problems)
	obj, ok := c.object(raw, field)
	if !ok {
		return rule{}, false
	}
	r := rule{field: field, media: map[string][]string{}}
	id, idOK := c.ident(obj["id"], join(field, "id"))
	switch {
	case !idOK:
	case !isNull(obj["id"]) && strings.TrimSpace(id) == "":
		c.fail(join(field, "id"), "must not be empty")
	case id != "":
		r.id = id
	default:
		r.id = generatedRuleID(contactID, i)
	}
	if owner, ok := c.ident(obj["contact_id"], join(field, "contact_id")); ok && owner != "" && owner != contactID {
		c.fail(join(field, "contact_id"), "is %q, not the id of this contact", owner)
	}
	entities := c.strings(obj["entities"], join(field, "entities"))
	for k, e := range entities {
		entities[k] = strings.ToLower(strings.TrimSpace(e)) // SPEC 4.14
	}
	regexEntities := c.regexes(obj["regex_entities"], join(field, "regex_entities"))
	tags := c.strings(obj["tags"], join(field, "tags"))
	tags = unique(append(tags, c.strings(obj["entity_tags"], join(field, "entity_tags"))...))
	regexTags := c.regexes(obj["regex_tags"], join(field, "regex_tags"))
	restrictions := timeRestrictions(c, obj["time_restrictions"], join(field, "time_restrictions"))
	for _, sev := range []string{"unknown_media", "warning_media", "critical_media"} {
		r.media[sev] = mediaList(c, obj[sev], join(field, sev))
	}
	var blackholes [3]bool
	for k, sev := range []string{"unknown", "warning", "critical"} {
		blackholes[k] = c.boolean(obj[sev+"_blackhole"], join(field, sev+"_blackhole"))
	}
	c.unknown(obj, field, ruleFields)
	if len(c.problems) > before {
		return rule{}, false
	}
	r.fields = []any{
		"id", r.id,
		"contact_id", contactID,
		"entities", jsonList(entities),
		"regex_entities", jsonList(regexEntities),
		"tags", jsonList(tags),
		"regex_tags", jsonList(regexTags),
		"time_restrictions", restrictions,
		"unknown_media", jsonList(r.media["unknown_media"]),
		"warning_media", jsonList(r.media["warning_media"]),
		"critical_media", jsonList(r.media["critical_media"]),
		"unknown_blackhole", strconv.FormatBool(blackholes[0]),
		"warning_blackhole", strconv.FormatBool(blackholes[1]),
		"critical_blackhole", strconv.FormatBool(blackholes[2]),
	}
	// The notifier reads restrictions when it evaluates the rule and treats one it cannot read as
	// never active (SPEC 4.9); say so now rather than let the rule go quiet.
	_, errs := timerestriction.ParseList(restrictions, loc)
	for _, err := range errs {
		*notes = append(*notes, fmt.Sprintf("contact %q: rule %q: the notifier will treat a time restriction as never active: %v", contactID, r.id, err))
	}
	return r, true
}

func mediaList(c *check, raw json.RawMessage, field string) []string {
	var out []string
	c.list(raw, field, "medium names", func(i int, item json.RawMessage) {
		var s string
		if first(item) != '"' || json.Unmarshal(item, &s) != nil {
			c.fail(at(field, i), "must be a string")
			return
		}
		if c.medium(s, at(field, i)) {
			out = append(out, s)
		}
	})
	return unique(out)
}

// timeRestrictions checks the shape of a rule's restrictions (an array of objects, each with a
// start and an end) and returns the array as compact JSON, "[]" when there is none. The notifier
// parses the restrictions themselves when it evaluates the rule.
func timeRestrictions(c *check, raw json.RawMessage, field string) string {
	if isNull(raw) {
		return "[]"
	}
	before := len(c.problems)
	c.list(raw, field, "objects", func(i int, item json.RawMessage) {
		obj, ok := c.object(item, at(field, i))
		if !ok {
			return
		}
		if isNull(obj["start_time"]) && isNull(obj["start_date"]) {
			c.fail(join(at(field, i), "start_time"), "is required")
		}
		if isNull(obj["end_time"]) && isNull(obj["end_date"]) {
			c.fail(join(at(field, i), "end_time"), "is required")
		}
	})
	if len(c.problems) > before {
		return ""
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		c.fail(field, "%v", err)
		return ""
	}
	return b.String()
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

// contactState is what Redis holds now for the contacts of a file.
type contactState struct {
	oldRules  map[string][]string // contact id -> members of contact_notification_rules:ID
	ruleOwner map[string]string   // rule id -> contact_id of notification_rule:ID
	oldTags   map[string][]string // contact id -> tags whose contact_tag:TAG holds it
}

// readContacts reads the state the import replaces, and refuses records whose keys hold
// another type (a write to them would fail inside the script and leave the import half done).
func readContacts(ctx context.Context, conn redis.Conn, keys schema.Keys, recs []*contact) (*contactState, []Problem, error) {
	st := &contactState{oldRules: map[string][]string{}, ruleOwner: map[string]string{}, oldTags: map[string][]string{}}
	if len(recs) == 0 {
		return st, nil, nil
	}
	var b batch
	allType := b.add("TYPE", keys.AllContacts())
	rulesAt := make([]int, len(recs))
	for i, c := range recs {
		rulesAt[i] = b.add("SMEMBERS", keys.ContactRules(c.id))
	}
	ownerAt := map[string]int{}
	for _, c := range recs {
		for _, r := range c.rules {
			ownerAt[r.id] = b.add("HGET", keys.Rule(r.id), "contact_id")
		}
	}
	tagTypeAt := map[string]int{}
	for _, c := range recs {
		for _, t := range c.tags {
			if _, seen := tagTypeAt[t]; !seen {
				tagTypeAt[t] = b.add("TYPE", keys.ContactTag(t))
			}
		}
	}
	if err := b.run(ctx, conn); err != nil {
		return nil, nil, err
	}
	if t, ok := b.typeOK(allType, "set"); !ok {
		return nil, nil, fmt.Errorf("key %s holds a %s, not a set: fix or delete it; nothing written", keys.AllContacts(), t)
	}
	var problems []Problem
	for _, c := range recs {
		for k, tag := range c.tags {
			if t, ok := b.typeOK(tagTypeAt[tag], "set"); !ok {
				problems = append(problems, Problem{Index: c.index, ID: c.id, Field: at("tags", k),
					Reason: fmt.Sprintf("key %s holds a %s, not a set", keys.ContactTag(tag), t)})
			}
		}
	}
	for i, c := range recs {
		st.oldRules[c.id] = b.strs(rulesAt[i])
	}
	for id, i := range ownerAt {
		st.ruleOwner[id] = b.str(i)
	}

	// contact_tag:TAG sets have no per-contact index: find them by SCAN, as Flapjack 1.x did
	// with KEYS, then see which of our contacts each holds.
	tags, err := scanSets(ctx, conn, keys.ContactTag(""))
	if err != nil {
		return nil, nil, err
	}
	ids := make([]string, len(recs))
	for i, c := range recs {
		ids[i] = c.id
	}
	tagKeys := make([]string, len(tags))
	for i, t := range tags {
		tagKeys[i] = keys.ContactTag(t)
	}
	_, members, err := memberships(ctx, conn, tagKeys, ids)
	if err != nil {
		return nil, nil, err
	}
	for i, t := range tags {
		for id := range members[i] {
			st.oldTags[id] = append(st.oldTags[id], t)
		}
	}
	var b2 batch
	for _, c := range recs {
		for _, rid := range st.oldRules[c.id] {
			if _, seen := ownerAt[rid]; !seen {
				ownerAt[rid] = b2.add("HGET", keys.Rule(rid), "contact_id")
			}
		}
	}
	if err := b2.run(ctx, conn); err != nil {
		return nil, nil, err
	}
	for id, i := range ownerAt {
		if _, done := st.ruleOwner[id]; !done {
			st.ruleOwner[id] = b2.str(i)
		}
	}
	return st, problems, nil
}

// planContacts lists the writes: first every deletion (what the records replace), then every
// write, so records of one file never undo each other (a rule or tag moving between contacts).
func planContacts(keys schema.Keys, recs []*contact, st *contactState) model.Ops {
	var ops model.Ops
	for _, c := range recs {
		id := c.id
		ops.Del(keys.Contact(id), keys.ContactMedia(id), keys.ContactMediaIntervals(id),
			keys.ContactRollupThresholds(id), keys.ContactPagerduty(id), keys.ContactTimezone(id),
			keys.ContactRules(id))
		for _, rid := range st.oldRules[id] {
			// A stale listing of a rule that now belongs to someone else leaves that rule alone.
			if owner := st.ruleOwner[rid]; owner == "" || owner == id {
				ops.Del(keys.Rule(rid))
			}
		}
		keep := set(c.tags)
		for _, t := range st.oldTags[id] {
			if !keep[t] {
				ops.SRem(keys.ContactTag(t), id)
			}
		}
	}
	for _, c := range recs {
		id := c.id
		if len(c.info) > 0 {
			ops.HSet(keys.Contact(id), c.info...)
		}
		var media, intervals, thresholds []any
		for _, m := range c.media {
			media = append(media, m.name, m.address)
			if m.hasInterval {
				intervals = append(intervals, m.name, strconv.FormatInt(m.interval, 10))
			}
			if m.hasThreshold {
				thresholds = append(thresholds, m.name, strconv.FormatInt(m.threshold, 10))
			}
			if len(m.credentials) > 0 {
				ops.HSet(keys.ContactPagerduty(id), m.credentials...)
			}
		}
		if len(media) > 0 {
			ops.HSet(keys.ContactMedia(id), media...)
		}
		if len(intervals) > 0 {
			ops.HSet(keys.ContactMediaIntervals(id), intervals...)
		}
		if len(thresholds) > 0 {
			ops.HSet(keys.ContactRollupThresholds(id), thresholds...)
		}
		if c.timezone != "" {
			ops.Set(keys.ContactTimezone(id), c.timezone)
		}
		for _, t := range c.tags {
			ops.SAdd(keys.ContactTag(t), id)
		}
		if len(c.rules) > 0 {
			ids := make([]any, len(c.rules))
			for i, r := range c.rules {
				ids[i] = r.id
			}
			chunked(ids, func(part ...any) { ops.SAdd(keys.ContactRules(id), part...) })
		}
		for _, r := range c.rules {
			ops.Del(keys.Rule(r.id))
			ops.HSet(keys.Rule(r.id), r.fields...)
		}
		ops.SAdd(keys.AllContacts(), id)
	}
	return ops
}
