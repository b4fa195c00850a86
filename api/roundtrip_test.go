package api

import (
	"context"
	"encoding/json"
	"os"
	"reflect"
	"sort"
	"testing"

	"github.com/flapjackgo/flapjack/importer"
	"github.com/flapjackgo/flapjack/schema"
)

// An imported contacts file reads back through the JSON API as it was written: the importer
// and the API share model/roster's one implementation of a contact.
func TestImportedContactsReadBackThroughTheAPI(t *testing.T) {
	t.Parallel()
	srv, db := apiServer(t, nil)
	data, err := os.ReadFile("../examples/contacts.json")
	if err != nil {
		t.Fatal(err)
	}
	conn := db.Conn(t)
	if _, err := importer.Contacts(context.Background(), conn, schema.NewKeys(""), data, importer.Options{}); err != nil {
		t.Fatal(err)
	}
	var file []struct {
		ID        string
		FirstName string `json:"first_name"`
		LastName  string `json:"last_name"`
		Email     string
		Timezone  string
		Media     map[string]json.RawMessage
		Rules     []map[string]json.RawMessage `json:"notification_rules"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	var contacts struct{ Contacts []contactJSON }
	json.Unmarshal(expect(t, "contacts", call(t, srv, "GET", "/contacts", "", ""), 200).body, &contacts)
	var media struct{ Media []mediumJSON }
	json.Unmarshal(expect(t, "media", call(t, srv, "GET", "/media", "", ""), 200).body, &media)
	var pd struct {
		Creds []pagerdutyJSON `json:"pagerduty_credentials"`
	}
	json.Unmarshal(expect(t, "pagerduty", call(t, srv, "GET", "/pagerduty_credentials", "", ""), 200).body, &pd)
	var rules struct {
		Rules []ruleJSON `json:"notification_rules"`
	}
	json.Unmarshal(expect(t, "rules", call(t, srv, "GET", "/notification_rules", "", ""), 200).body, &rules)

	byID := map[string]contactJSON{}
	for _, c := range contacts.Contacts {
		byID[c.ID] = c
	}
	mediumByID := map[string]mediumJSON{}
	for _, m := range media.Media {
		mediumByID[m.ID] = m
	}
	ruleByID := map[string]ruleJSON{}
	for _, r := range rules.Rules {
		ruleByID[r.ID] = r
	}
	if len(byID) != len(file) {
		t.Fatalf("%d contacts, file has %d", len(byID), len(file))
	}
	for _, fc := range file {
		c, ok := byID[fc.ID]
		if !ok || c.FirstName != fc.FirstName || c.LastName != fc.LastName || c.Email != fc.Email || c.Timezone == nil || *c.Timezone != fc.Timezone {
			t.Fatalf("contact %s: %+v", fc.ID, c)
		}
		var names []string
		for name, raw := range fc.Media {
			if name != "pagerduty" {
				names = append(names, fc.ID+"_"+name)
			}
			m := mediumByID[fc.ID+"_"+name]
			var obj map[string]any
			if json.Unmarshal(raw, &obj) != nil {
				var addr string
				json.Unmarshal(raw, &addr)
				obj = map[string]any{"address": addr}
			}
			if name == "pagerduty" {
				var p pagerdutyJSON
				for _, x := range pd.Creds {
					if x.ID == fc.ID {
						p = x
					}
				}
				if p.ServiceKey != obj["service_key"] || p.Subdomain != obj["subdomain"] || p.Token != obj["token"] ||
					p.Username != obj["username"] || p.Password != obj["password"] || m.ID != "" {
					// as in Flapjack 1.6, the service key is no medium of /media
					t.Fatalf("pagerduty of %s: %+v / %+v vs %v", fc.ID, p, m, obj)
				}
				continue
			}
			if m.Address != obj["address"] {
				t.Fatalf("medium %s_%s: %+v vs %v", fc.ID, name, m, obj)
			}
			for field, got := range map[string]*int64{"interval": m.Interval, "rollup_threshold": m.RollupThreshold} {
				want, set := obj[field].(float64)
				if set != (got != nil) || (set && float64(*got) != want) {
					t.Fatalf("medium %s_%s %s: %v vs %v", fc.ID, name, field, got, obj[field])
				}
			}
		}
		sort.Strings(names)
		if !reflect.DeepEqual(c.Links.Media, names) && len(names) > 0 {
			t.Fatalf("media links of %s: %v vs %v", fc.ID, c.Links.Media, names)
		}
		var ruleIDs []string
		for _, fr := range fc.Rules {
			var id string
			json.Unmarshal(fr["id"], &id)
			ruleIDs = append(ruleIDs, id)
			r := ruleByID[id]
			for _, field := range []string{"warning_media", "critical_media", "unknown_media", "regex_entities", "tags"} {
				var want []string
				json.Unmarshal(fr[field], &want)
				got := map[string][]string{"warning_media": r.WarningMedia, "critical_media": r.CriticalMedia,
					"unknown_media": r.UnknownMedia, "regex_entities": r.RegexEntities, "tags": r.Tags}[field]
				if len(want) != len(got) || (len(want) > 0 && !reflect.DeepEqual(want, got)) {
					t.Fatalf("rule %s %s: %v vs %v", id, field, got, want)
				}
			}
			var bh bool
			json.Unmarshal(fr["critical_blackhole"], &bh)
			if r.CriticalBlackhole != bh || r.Links.Contacts[0] != fc.ID {
				t.Fatalf("rule %s: %+v", id, r)
			}
			if tr, ok := fr["time_restrictions"]; ok {
				var want, got any
				json.Unmarshal(tr, &want)
				json.Unmarshal(r.TimeRestrictions, &got)
				if !reflect.DeepEqual(want, got) {
					t.Fatalf("rule %s time restrictions: %s vs %s", id, r.TimeRestrictions, tr)
				}
			}
		}
		sort.Strings(ruleIDs)
		if len(ruleIDs) > 0 && !reflect.DeepEqual(c.Links.NotificationRules, ruleIDs) {
			t.Fatalf("rule links of %s: %v vs %v", fc.ID, c.Links.NotificationRules, ruleIDs)
		}
	}
}
