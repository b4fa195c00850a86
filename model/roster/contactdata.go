package roster

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/schema"
)

// ContactData is everything stored for one contact (seed: Contacts, Notification Rules): what
// CreateContacts and ReplaceContacts write, and what an import file's contact record says.
type ContactData struct {
	ID string
	ContactInfo
	Tags  []string // contact_tag:TAG memberships
	Media []Medium
	// Pagerduty are the REST credentials (contact_pagerduty:ID); the service key is the
	// address of the pagerduty medium.
	Pagerduty PagerdutyCredentials
	Rules     []Rule // ContactID "" means this contact
}

// ContactInfo is a contact's own fields (contact:ID and contact_tz:ID); empty ones are not
// stored.
type ContactInfo struct {
	FirstName, LastName, Email string
	Timezone                   string // IANA name; "" = the notifier's default
}

// Medium is one of a contact's addresses with its settings.
type Medium struct {
	Name    string // "email", "sms", "jabber", PagerdutyMedium...
	Address string // for PagerdutyMedium, the service key
	// Interval is the seconds between repeated alerts (contact_media_intervals); nil = not set.
	Interval *int64
	// RollupThreshold is the failing checks before alerts roll up, 0 = never
	// (contact_media_rollup_thresholds); nil = not set. Never set for PagerdutyMedium.
	RollupThreshold *int64
}

// MediumRef names one medium of one contact.
type MediumRef struct{ ContactID, Name string }

// String is the medium's id in Flapjack's JSON API: CONTACT_MEDIUM.
func (r MediumRef) String() string { return r.ContactID + "_" + r.Name }

// PagerdutySettings are what Flapjack's JSON API calls a contact's pagerduty_credentials: the
// service key (the pagerduty medium's address) and the REST credentials.
type PagerdutySettings struct {
	ServiceKey string
	PagerdutyCredentials
}

// normalized is c as stored: tags without repeats, media sorted by name, rules normalized and
// owned by c.
func (c ContactData) normalized() ContactData {
	c.Tags = Unique(c.Tags)
	c.Media = append([]Medium(nil), c.Media...)
	sort.SliceStable(c.Media, func(i, j int) bool { return c.Media[i].Name < c.Media[j].Name })
	rules := make([]Rule, len(c.Rules))
	for i, r := range c.Rules {
		r.ContactID = c.ID
		rules[i] = r.normalized()
	}
	c.Rules = rules
	return c
}

// normalized is r as stored: entity names trimmed and lower-cased (SPEC 4.14), tags and media
// lists without repeats, time restrictions as compact JSON ("[]" for none).
func (r Rule) normalized() Rule {
	entities := make([]string, len(r.Entities))
	for i, e := range r.Entities {
		entities[i] = NormalizeEntityName(e)
	}
	r.Entities = entities
	r.Tags = Unique(r.Tags)
	r.UnknownMedia = Unique(r.UnknownMedia)
	r.WarningMedia = Unique(r.WarningMedia)
	r.CriticalMedia = Unique(r.CriticalMedia)
	if compact, problems := TimeRestrictions(r.TimeRestrictions); len(problems) == 0 {
		r.TimeRestrictions = compact
	}
	return r
}

// ruleFields are the fields of notification_rule:ID for r (normalized).
func ruleFields(r Rule) []any {
	return []any{
		"id", r.ID,
		"contact_id", r.ContactID,
		"entities", encodeList(r.Entities),
		"regex_entities", encodeList(r.RegexEntities),
		"tags", encodeList(r.Tags),
		"regex_tags", encodeList(r.RegexTags),
		"time_restrictions", r.TimeRestrictions,
		"unknown_media", encodeList(r.UnknownMedia),
		"warning_media", encodeList(r.WarningMedia),
		"critical_media", encodeList(r.CriticalMedia),
		"unknown_blackhole", strconv.FormatBool(r.UnknownBlackhole),
		"warning_blackhole", strconv.FormatBool(r.WarningBlackhole),
		"critical_blackhole", strconv.FormatBool(r.CriticalBlackhole),
	}
}

// encodeList encodes a list for a rule hash field: a JSON array, "[]" when empty, without HTML
// escaping so regexes stay readable to other tools.
func encodeList(v []string) string {
	if v == nil {
		v = []string{}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // a []string always encodes
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// ---- the writes; every writer of a contact, medium or rule builds its ops with these ----

// ownKeys are the keys holding one contact's own data.
func ownKeys(keys schema.Keys, id string) []string {
	return []string{keys.Contact(id), keys.ContactMedia(id), keys.ContactMediaIntervals(id),
		keys.ContactRollupThresholds(id), keys.ContactPagerduty(id), keys.ContactTimezone(id),
		keys.ContactRules(id)}
}

// writeInfo writes a contact's own fields. fresh means its keys were just deleted, so empty
// fields need no removal.
func writeInfo(ops *model.Ops, keys schema.Keys, id string, info ContactInfo, fresh bool) {
	var set, unset []any
	for _, f := range []struct{ name, value string }{
		{"first_name", info.FirstName}, {"last_name", info.LastName}, {"email", info.Email},
	} {
		if f.value != "" {
			set = append(set, f.name, f.value)
		} else {
			unset = append(unset, f.name)
		}
	}
	if len(set) > 0 {
		ops.HSet(keys.Contact(id), set...)
	}
	if !fresh && len(unset) > 0 {
		ops.HDel(keys.Contact(id), unset...)
	}
	switch {
	case info.Timezone != "":
		ops.Set(keys.ContactTimezone(id), info.Timezone)
	case !fresh:
		ops.Del(keys.ContactTimezone(id))
	}
}

// writeMedia writes media of a contact (each replacing the medium of its name). fresh as for
// writeInfo.
func writeMedia(ops *model.Ops, keys schema.Keys, id string, media []Medium, fresh bool) {
	var addresses, intervals, thresholds, noInterval, noThreshold []any
	for _, m := range media {
		addresses = append(addresses, m.Name, m.Address)
		if m.Interval != nil {
			intervals = append(intervals, m.Name, strconv.FormatInt(*m.Interval, 10))
		} else {
			noInterval = append(noInterval, m.Name)
		}
		if m.RollupThreshold != nil {
			thresholds = append(thresholds, m.Name, strconv.FormatInt(*m.RollupThreshold, 10))
		} else {
			noThreshold = append(noThreshold, m.Name)
		}
	}
	if len(addresses) > 0 {
		ops.HSet(keys.ContactMedia(id), addresses...)
	}
	if len(intervals) > 0 {
		ops.HSet(keys.ContactMediaIntervals(id), intervals...)
	}
	if len(thresholds) > 0 {
		ops.HSet(keys.ContactRollupThresholds(id), thresholds...)
	}
	if !fresh && len(noInterval) > 0 {
		ops.HDel(keys.ContactMediaIntervals(id), noInterval...)
	}
	if !fresh && len(noThreshold) > 0 {
		ops.HDel(keys.ContactRollupThresholds(id), noThreshold...)
	}
}

// writeCredentials replaces a contact's PagerDuty REST credentials (empty fields are not
// stored). fresh as for writeInfo.
func writeCredentials(ops *model.Ops, keys schema.Keys, id string, p PagerdutyCredentials, fresh bool) {
	if !fresh {
		ops.Del(keys.ContactPagerduty(id))
	}
	var set []any
	for _, f := range []struct{ name, value string }{
		{"subdomain", p.Subdomain}, {"token", p.Token}, {"username", p.Username}, {"password", p.Password},
	} {
		if f.value != "" {
			set = append(set, f.name, f.value)
		}
	}
	if len(set) > 0 {
		ops.HSet(keys.ContactPagerduty(id), set...)
	}
}

// writeRule replaces notification_rule:ID (fields a new version leaves out are gone).
func writeRule(ops *model.Ops, keys schema.Keys, r Rule) {
	ops.Del(keys.Rule(r.ID))
	ops.HSet(keys.Rule(r.ID), ruleFields(r)...)
}

// clearContact deletes what is stored for a contact before it is rewritten or deleted: its own
// keys, the rules it owns, and its contact_tag memberships other than keep.
func clearContact(ops *model.Ops, keys schema.Keys, id string, st *contactState, keep map[string]bool) {
	own := ownKeys(keys, id)
	args := make([]any, len(own))
	for i, k := range own {
		args[i] = k
	}
	ops.Del(args...)
	for _, rid := range st.oldRules[id] {
		// A stale listing of a rule that now belongs to someone else leaves that rule alone.
		if owner := st.ruleOwner[rid]; owner == "" || owner == id {
			ops.Del(keys.Rule(rid))
		}
	}
	for _, t := range st.oldTags[id] {
		if !keep[t] {
			ops.SRem(keys.ContactTag(t), id)
		}
	}
}

// writeContact writes everything c says (normalized) onto keys clearContact emptied.
func writeContact(ops *model.Ops, keys schema.Keys, c ContactData) {
	id := c.ID
	writeInfo(ops, keys, id, c.ContactInfo, true)
	writeCredentials(ops, keys, id, c.Pagerduty, true)
	writeMedia(ops, keys, id, c.Media, true)
	for _, t := range c.Tags {
		ops.SAdd(keys.ContactTag(t), id)
	}
	if len(c.Rules) > 0 {
		ids := make([]any, len(c.Rules))
		for i, r := range c.Rules {
			ids[i] = r.ID
		}
		ops.SAdd(keys.ContactRules(id), ids...)
	}
	for _, r := range c.Rules {
		writeRule(ops, keys, r)
	}
	ops.SAdd(keys.AllContacts(), id)
}
