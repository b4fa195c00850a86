package api

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/model/roster"
)

// ruleJSON is a notification rule as Flapjack 1.x's JSON API shows it (docs/flapjack-1x.md A.5).
type ruleJSON struct {
	ID                string          `json:"id"`
	Tags              []string        `json:"tags"`
	RegexTags         []string        `json:"regex_tags"`
	Entities          []string        `json:"entities"`
	RegexEntities     []string        `json:"regex_entities"`
	TimeRestrictions  json.RawMessage `json:"time_restrictions"`
	UnknownMedia      []string        `json:"unknown_media"`
	WarningMedia      []string        `json:"warning_media"`
	CriticalMedia     []string        `json:"critical_media"`
	UnknownBlackhole  bool            `json:"unknown_blackhole"`
	WarningBlackhole  bool            `json:"warning_blackhole"`
	CriticalBlackhole bool            `json:"critical_blackhole"`
	Links             linksJSON       `json:"links"`
}

// ruleFieldNames are the eleven fields of a rule a client sets.
var ruleFieldNames = []string{"tags", "regex_tags", "entities", "regex_entities", "time_restrictions",
	"unknown_media", "warning_media", "critical_media", "unknown_blackhole", "warning_blackhole", "critical_blackhole"}

func sortedList(items []string) []string {
	out := append([]string{}, items...)
	sort.Strings(out)
	return out
}

func list(items []string) []string {
	if items == nil {
		return []string{}
	}
	return items
}

func toRuleJSON(r roster.Rule) ruleJSON {
	tr := json.RawMessage(r.TimeRestrictions)
	if !json.Valid(tr) {
		tr = json.RawMessage("[]")
	}
	return ruleJSON{ID: r.ID, Tags: sortedList(r.Tags), RegexTags: sortedList(r.RegexTags),
		Entities: list(r.Entities), RegexEntities: list(r.RegexEntities), TimeRestrictions: tr,
		UnknownMedia: list(r.UnknownMedia), WarningMedia: list(r.WarningMedia), CriticalMedia: list(r.CriticalMedia),
		UnknownBlackhole: r.UnknownBlackhole, WarningBlackhole: r.WarningBlackhole, CriticalBlackhole: r.CriticalBlackhole,
		Links: linksJSON{Contacts: []string{r.ContactID}}}
}

// setRuleField sets field of r from f (which holds it); problems are recorded in f.
func setRuleField(r *roster.Rule, f *fields, field string) {
	switch field {
	case "tags":
		r.Tags = f.strs(field)
	case "regex_tags":
		r.RegexTags = f.strs(field)
	case "entities":
		r.Entities = f.strs(field)
	case "regex_entities":
		r.RegexEntities = f.strs(field)
	case "time_restrictions":
		r.TimeRestrictions = f.raw(field)
	case "unknown_media":
		r.UnknownMedia = f.strs(field)
	case "warning_media":
		r.WarningMedia = f.strs(field)
	case "critical_media":
		r.CriticalMedia = f.strs(field)
	case "unknown_blackhole":
		r.UnknownBlackhole = f.boolean(field)
	case "warning_blackhole":
		r.WarningBlackhole = f.boolean(field)
	case "critical_blackhole":
		r.CriticalBlackhole = f.boolean(field)
	}
}

func (a *jsonAPI) ruleRoutes(route func(method, path, what string, h apiHandler)) {
	route("GET", "/notification_rules", "JSON API: every notification rule", a.getRules)
	route("GET", "/notification_rules/{ids}", "JSON API: notification rules by id (comma-separated)", a.getRules)
	route("POST", "/contacts/{id}/notification_rules", `JSON API: add rules to a contact {"notification_rules":[...]}, all or none`, a.postRules)
	route("PATCH", "/notification_rules/{ids}", "JSON API: change notification rules (JSON-Patch)", a.patchRules)
	route("DELETE", "/notification_rules/{ids}", "JSON API: delete notification rules", a.deleteRules)
}

func (a *jsonAPI) getRules(w http.ResponseWriter, r *http.Request) error {
	var ids []string
	if r.PathValue("ids") != "" {
		var err error
		if ids, err = pathIDs(r, 1); err != nil {
			return err
		}
	}
	var rules []roster.Rule
	err := a.conn(r, func(c redis.Conn) error {
		var err error
		if ids == nil {
			if ids, err = roster.RuleIDs(r.Context(), c, a.o.Keys); err != nil {
				return err
			}
		}
		rules, err = roster.ReadRules(r.Context(), c, a.o.Keys, ids)
		return err
	})
	if err != nil {
		return err
	}
	if len(rules) == 0 && r.PathValue("ids") != "" {
		return failWith(http.StatusNotFound, "could not find notification rules '%s'", strings.Join(ids, ", "))
	}
	out := make([]ruleJSON, len(rules))
	for i, rule := range rules {
		out[i] = toRuleJSON(rule)
	}
	writeAPI(w, http.StatusOK, map[string]any{"notification_rules": out})
	return nil
}

func (a *jsonAPI) postRules(w http.ResponseWriter, r *http.Request) error {
	contactID := r.PathValue("id")
	items, err := a.createItems(w, r, "notification_rules", "No valid notification rules were submitted")
	if err != nil {
		return err
	}
	rules := make([]roster.Rule, len(items))
	all := make([]*fields, len(items))
	for i, item := range items {
		f := newFields(index("notification_rules", i), item, append([]string{"id", "entity_tags"}, ruleFieldNames...)...)
		all[i] = f
		rules[i].ID = f.str("id")
		for _, field := range ruleFieldNames {
			setRuleField(&rules[i], f, field)
		}
		// entity_tags is the 1.x name of tags (the importer takes both too).
		rules[i].Tags = append(rules[i].Tags, f.strs("entity_tags")...)
	}
	var ids []string
	err = a.conn(r, func(c redis.Conn) error {
		// Flapjack 1.6 looks the contact up before it validates the rules.
		found, err := roster.ReadContacts(r.Context(), c, a.o.Keys, []string{contactID}, false)
		if err == nil {
			err = firstMissing([]string{contactID}, found)
		}
		if err == nil {
			err = itemsErr(all)
		}
		if err == nil {
			ids, err = roster.CreateRules(r.Context(), c, a.o.Keys, contactID, rules)
		}
		return err
	})
	if err != nil {
		return oneContact(err)
	}
	a.created(w, r, "notification_rules", ids)
	return nil
}

func (a *jsonAPI) patchRules(w http.ResponseWriter, r *http.Request) error {
	ids, err := pathIDs(r, 1)
	if err != nil {
		return err
	}
	ops, err := a.readPatch(w, r, "notification_rules", ruleFieldNames, nil)
	if err != nil {
		return err
	}
	var changed roster.Rule
	var set []string
	for _, op := range ops {
		f := replaced(op)
		setRuleField(&changed, f, op.Field)
		if err := itemsErr([]*fields{f}); err != nil {
			return err
		}
		set = append(set, op.Field)
	}
	err = a.conn(r, func(c redis.Conn) error {
		return roster.UpdateRules(r.Context(), c, a.o.Keys, ids, func(rule *roster.Rule) error {
			for _, field := range set {
				copyRuleField(rule, changed, field)
			}
			return nil
		})
	})
	if err != nil {
		return err
	}
	noContent(w)
	return nil
}

// copyRuleField copies field from src to dst.
func copyRuleField(dst *roster.Rule, src roster.Rule, field string) {
	switch field {
	case "tags":
		dst.Tags = src.Tags
	case "regex_tags":
		dst.RegexTags = src.RegexTags
	case "entities":
		dst.Entities = src.Entities
	case "regex_entities":
		dst.RegexEntities = src.RegexEntities
	case "time_restrictions":
		dst.TimeRestrictions = src.TimeRestrictions
	case "unknown_media":
		dst.UnknownMedia = src.UnknownMedia
	case "warning_media":
		dst.WarningMedia = src.WarningMedia
	case "critical_media":
		dst.CriticalMedia = src.CriticalMedia
	case "unknown_blackhole":
		dst.UnknownBlackhole = src.UnknownBlackhole
	case "warning_blackhole":
		dst.WarningBlackhole = src.WarningBlackhole
	case "critical_blackhole":
		dst.CriticalBlackhole = src.CriticalBlackhole
	}
}

func (a *jsonAPI) deleteRules(w http.ResponseWriter, r *http.Request) error {
	ids, err := pathIDs(r, 1)
	if err != nil {
		return err
	}
	if err := a.conn(r, func(c redis.Conn) error { return roster.DeleteRules(r.Context(), c, a.o.Keys, ids) }); err != nil {
		return err
	}
	noContent(w)
	return nil
}
