package api

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestMediaRoutes(t *testing.T) {
	t.Parallel()
	srv, _ := apiServer(t, nil)
	expect(t, "contacts", call(t, srv, "POST", "/contacts", vndJSON, twoContacts), 201)
	a := expect(t, "create media", call(t, srv, "POST", "/contacts/abc/media", vndJSON,
		`{"media":[{"type":"email","address":"ada@example.com","interval":300,"rollup_threshold":5},{"type":"sms_twilio","address":"+4412345"}]}`), 201)
	if !reflect.DeepEqual(a.json(t), []any{"abc_email", "abc_sms_twilio"}) || a.header.Get("Location") != "http://flapjack.example:3081/media/abc_email,abc_sms_twilio" {
		t.Fatalf("create: %s %v", a.body, a.header)
	}
	expect(t, "bob's", call(t, srv, "POST", "/contacts/872/media", vndJSON, `{"media":[{"type":"jabber","address":"bob@jabber.example"}]}`), 201)
	expectErrors(t, "unknown contact", call(t, srv, "POST", "/contacts/ghost/media", vndJSON, `{"media":[{"type":"email","address":"x@y"}]}`), 422, "Contact id: 'ghost' could not be loaded")
	expectErrors(t, "no array", call(t, srv, "POST", "/contacts/abc/media", vndJSON, `{"media":{}}`), 422, "No valid media were submitted")
	expectErrors(t, "wrong id", call(t, srv, "POST", "/contacts/abc/media", vndJSON, `{"media":[{"id":"872_email","type":"email","address":"x@y"}]}`), 422, "media[0].id")
	expectErrors(t, "unknown field", call(t, srv, "POST", "/contacts/abc/media", vndJSON, `{"media":[{"type":"email","adress":"x@y"}]}`), 422, "media[0].adress: unknown field")
	expectErrors(t, "wrong content type", call(t, srv, "POST", "/contacts/abc/media", "text/xml", `<media/>`), 405, "Content-Type")

	var got struct{ Media []mediumJSON }
	a = expect(t, "GET all", call(t, srv, "GET", "/media", "", ""), 200)
	json.Unmarshal(a.body, &got)
	if len(got.Media) != 3 || got.Media[0].ID != "872_jabber" || got.Media[1].Interval == nil || *got.Media[1].Interval != 300 ||
		got.Media[2].Type != "sms_twilio" || got.Media[2].Interval != nil || got.Media[2].Links.Contacts[0] != "abc" {
		t.Fatalf("all: %s", a.body)
	}
	// As in Flapjack 1.6: a medium the contact lacks is left out, an unknown contact is a 404.
	a = expect(t, "GET several", call(t, srv, "GET", "/media/abc_email,abc_sms", "", ""), 200)
	json.Unmarshal(a.body, &got)
	if len(got.Media) != 1 || got.Media[0].Address != "ada@example.com" {
		t.Fatalf("several: %s", a.body)
	}
	expectErrors(t, "GET an unknown contact's", call(t, srv, "GET", "/media/abc_email,ghost_email", "", ""), 404, "could not find contact 'ghost'")
	expectErrors(t, "PATCH an unknown contact's", call(t, srv, "PATCH", "/media/ghost_email", patchJSON, `[{"op":"replace","path":"/media/0/interval","value":60}]`), 404, "could not find contact 'ghost'")
	expectErrors(t, "DELETE an unknown contact's", call(t, srv, "DELETE", "/media/ghost_email", "", ""), 404, "could not find contact 'ghost'")
	expectErrors(t, "GET unparsable", call(t, srv, "GET", "/media/nounderscore", "", ""), 422, "Could not get contact_id from media_id 'nounderscore'")

	expect(t, "PATCH", call(t, srv, "PATCH", "/media/abc_email,872_jabber", patchJSON, `[{"op":"replace","path":"/media/0/interval","value":600}]`), 204)
	a = expect(t, "after PATCH", call(t, srv, "GET", "/media/abc_email,872_jabber", "", ""), 200)
	json.Unmarshal(a.body, &got)
	if *got.Media[0].Interval != 600 || *got.Media[1].Interval != 600 || got.Media[0].Address != "bob@jabber.example" {
		t.Fatalf("patched: %s", a.body)
	}
	expectErrors(t, "PATCH a missing one", call(t, srv, "PATCH", "/media/abc_email,872_sms", patchJSON, `[{"op":"replace","path":"/media/0/interval","value":60}]`), 404, "872_sms")
	expectErrors(t, "PATCH bad value", call(t, srv, "PATCH", "/media/abc_email", patchJSON, `[{"op":"replace","path":"/media/0/interval","value":"soon"}]`), 422, "interval: must be an integer")
	expectErrors(t, "PATCH type", call(t, srv, "PATCH", "/media/abc_email", patchJSON, `[{"op":"replace","path":"/media/0/type","value":"sms"}]`), 422, "can replace only address")
	expectErrors(t, "PATCH links", call(t, srv, "PATCH", "/media/abc_email", patchJSON, `[{"op":"add","path":"/media/0/links/contacts","value":"872"}]`), 422, "media has no links")
	expectErrors(t, "DELETE a missing one", call(t, srv, "DELETE", "/media/abc_email,abc_jabber", "", ""), 404, "abc_jabber")
	expect(t, "DELETE", call(t, srv, "DELETE", "/media/abc_email,872_jabber", "", ""), 204)
	a = expect(t, "left", call(t, srv, "GET", "/media", "", ""), 200)
	json.Unmarshal(a.body, &got)
	if len(got.Media) != 1 {
		t.Fatalf("left: %s", a.body)
	}
}

func TestPagerdutyRoutes(t *testing.T) {
	t.Parallel()
	srv, db := apiServer(t, nil)
	expect(t, "contacts", call(t, srv, "POST", "/contacts", vndJSON, twoContacts), 201)
	a := expect(t, "create", call(t, srv, "POST", "/contacts/abc/pagerduty_credentials", vndJSON,
		`{"pagerduty_credentials":[{"service_key":"old"},{"service_key":"key1","subdomain":"example","username":"ada","password":"pw"}]}`), 201)
	if !reflect.DeepEqual(a.json(t), []any{"abc"}) || a.header.Get("Location") != "http://flapjack.example:3081/pagerduty_credentials/abc" {
		t.Fatalf("create: %s %v", a.body, a.header)
	}
	if v, _ := db.Do(t, "HGET", "contact_media:abc", "pagerduty").([]byte); string(v) != "key1" {
		t.Fatalf("service key not the medium's address: %q", v)
	}
	expectErrors(t, "incorrect fields", call(t, srv, "POST", "/contacts/abc/pagerduty_credentials", vndJSON, `{"pagerduty_credentials":[{"service_key":"k","api_key":"x"}]}`), 422,
		"Pagerduty credential data has incorrect fields", "api_key")
	expectErrors(t, "unknown contact", call(t, srv, "POST", "/contacts/ghost/pagerduty_credentials", vndJSON, `{"pagerduty_credentials":[{"service_key":"k"}]}`), 422, "Contact id: 'ghost' could not be loaded")

	var got struct {
		Creds []pagerdutyJSON `json:"pagerduty_credentials"`
	}
	a = expect(t, "GET all", call(t, srv, "GET", "/pagerduty_credentials", "", ""), 200)
	json.Unmarshal(a.body, &got)
	if len(got.Creds) != 1 || got.Creds[0].ServiceKey != "key1" || got.Creds[0].Password != "pw" || got.Creds[0].Links.Contacts[0] != "abc" {
		t.Fatalf("all: %s", a.body)
	}
	expect(t, "GET several", call(t, srv, "GET", "/pagerduty_credentials/abc,872", "", ""), 200)
	a = expect(t, "GET a contact without", call(t, srv, "GET", "/pagerduty_credentials/872", "", ""), 200)
	if strings.TrimSpace(string(a.body)) != `{"pagerduty_credentials":[]}` {
		t.Fatalf("without: %s", a.body)
	}
	expectErrors(t, "GET an unknown contact's", call(t, srv, "GET", "/pagerduty_credentials/abc,ghost", "", ""), 404, "could not find contact 'ghost'")
	expectErrors(t, "PATCH an unknown contact's", call(t, srv, "PATCH", "/pagerduty_credentials/ghost", patchJSON, `[{"op":"replace","path":"/pagerduty_credentials/0/token","value":"t"}]`), 404, "could not find contact 'ghost'")
	expectErrors(t, "DELETE an unknown contact's", call(t, srv, "DELETE", "/pagerduty_credentials/ghost", "", ""), 404, "could not find contact 'ghost'")

	expect(t, "PATCH", call(t, srv, "PATCH", "/pagerduty_credentials/abc", patchJSON, `[{"op":"replace","path":"/pagerduty_credentials/0/subdomain","value":"other"}]`), 204)
	a = expect(t, "after PATCH", call(t, srv, "GET", "/pagerduty_credentials/abc", "", ""), 200)
	json.Unmarshal(a.body, &got)
	if got.Creds[0].Subdomain != "other" || got.Creds[0].ServiceKey != "key1" {
		t.Fatalf("patched: %s", a.body)
	}
	expectErrors(t, "PATCH one without", call(t, srv, "PATCH", "/pagerduty_credentials/abc,872", patchJSON, `[{"op":"replace","path":"/pagerduty_credentials/0/token","value":"t"}]`), 404, "could not find pagerduty credentials '872'")
	expectErrors(t, "PATCH wrong content type", call(t, srv, "PATCH", "/pagerduty_credentials/abc", "application/json", `[]`), 405, "json-patch")
	expectErrors(t, "DELETE one without", call(t, srv, "DELETE", "/pagerduty_credentials/abc,872", "", ""), 404, "could not find pagerduty credentials '872'")
	expect(t, "DELETE", call(t, srv, "DELETE", "/pagerduty_credentials/abc", "", ""), 204)
	if n := db.Do(t, "EXISTS", "contact_pagerduty:abc"); n.(int64) != 0 {
		t.Fatal("credentials left")
	}
}

func TestRuleRoutes(t *testing.T) {
	t.Parallel()
	srv, _ := apiServer(t, nil)
	expect(t, "contacts", call(t, srv, "POST", "/contacts", vndJSON, twoContacts), 201)
	a := expect(t, "create", call(t, srv, "POST", "/contacts/abc/notification_rules", vndJSON, `{"notification_rules":[
		{"id":"r1","tags":["web","db"],"entities":["Web-01"],"time_restrictions":[{"start_time":"2013-02-01 09:00:00","end_time":"2013-02-01 17:00:00","rrules":[{"validations":{"day":[1,2,3,4,5]},"rule_type":"Weekly","interval":1,"week_start":0}],"exrules":[],"rtimes":[],"extimes":[]}],"critical_media":["email"],"critical_blackhole":true},
		{"warning_media":["sms"]}]}`), 201)
	ids := a.json(t).([]any)
	if len(ids) != 2 || ids[0] != "r1" || len(ids[1].(string)) != 36 || a.header.Get("Location") != "http://flapjack.example:3081/notification_rules/r1,"+ids[1].(string) {
		t.Fatalf("create: %s %v", a.body, a.header)
	}
	expectErrors(t, "every invalid rule", call(t, srv, "POST", "/contacts/abc/notification_rules", vndJSON,
		`{"notification_rules":[{"regex_tags":["("]},{"time_restrictions":[{"start_time":"never"}]}]}`), 422, "notification_rules[0].regex_tags[0]", "notification_rules[1].time_restrictions")
	expectErrors(t, "unknown contact", call(t, srv, "POST", "/contacts/ghost/notification_rules", vndJSON, `{"notification_rules":[{"critical_meda":[]}]}`), 404, "could not find contact 'ghost'")
	expectErrors(t, "existing id", call(t, srv, "POST", "/contacts/872/notification_rules", vndJSON, `{"notification_rules":[{"id":"r1"}]}`), 409, "r1")
	expectErrors(t, "unknown field", call(t, srv, "POST", "/contacts/abc/notification_rules", vndJSON, `{"notification_rules":[{"critical_meda":["email"]}]}`), 422, "critical_meda: unknown field")
	expectErrors(t, "no array", call(t, srv, "POST", "/contacts/abc/notification_rules", vndJSON, `{}`), 422, "No valid notification rules were submitted")

	var got struct {
		Rules []ruleJSON `json:"notification_rules"`
	}
	a = expect(t, "GET all", call(t, srv, "GET", "/notification_rules", "", ""), 200)
	json.Unmarshal(a.body, &got)
	if len(got.Rules) != 2 {
		t.Fatalf("all: %s", a.body)
	}
	a = expect(t, "GET one of two", call(t, srv, "GET", "/notification_rules/r1,nope", "", ""), 200)
	json.Unmarshal(a.body, &got)
	r := got.Rules[0]
	if len(got.Rules) != 1 || !reflect.DeepEqual(r.Tags, []string{"db", "web"}) || r.Entities[0] != "web-01" || !r.CriticalBlackhole || r.WarningBlackhole ||
		r.Links.Contacts[0] != "abc" || r.RegexTags == nil || !json.Valid(r.TimeRestrictions) || string(r.TimeRestrictions) == "[]" {
		t.Fatalf("one: %s", a.body)
	}
	expectErrors(t, "GET none", call(t, srv, "GET", "/notification_rules/x", "", ""), 404, "could not find notification rules 'x'")

	expect(t, "PATCH", call(t, srv, "PATCH", "/notification_rules/r1,"+ids[1].(string), patchJSON,
		`[{"op":"replace","path":"/notification_rules/0/warning_blackhole","value":true},{"op":"replace","path":"/notification_rules/0/time_restrictions","value":[]}]`), 204)
	a = expect(t, "after PATCH", call(t, srv, "GET", "/notification_rules/r1,"+ids[1].(string), "", ""), 200)
	json.Unmarshal(a.body, &got)
	for _, r := range got.Rules {
		if !r.WarningBlackhole || string(r.TimeRestrictions) != "[]" {
			t.Fatalf("patched: %s", a.body)
		}
	}
	if !reflect.DeepEqual(got.Rules[0].Tags, []string{"db", "web"}) {
		t.Fatalf("PATCH changed another field: %s", a.body)
	}
	expectErrors(t, "PATCH a missing one", call(t, srv, "PATCH", "/notification_rules/r1,nope", patchJSON, `[{"op":"replace","path":"/notification_rules/0/tags","value":["x"]}]`), 404, "could not find notification rule 'nope'")
	expectErrors(t, "PATCH invalid", call(t, srv, "PATCH", "/notification_rules/r1", patchJSON, `[{"op":"replace","path":"/notification_rules/0/regex_entities","value":["("]}]`), 422, "regex_entities[0]")
	expectErrors(t, "PATCH test op", call(t, srv, "PATCH", "/notification_rules/r1", patchJSON, `[{"op":"test","path":"/notification_rules/0/tags","value":[]}]`), 422, `"test"`)
	expectErrors(t, "DELETE a missing one", call(t, srv, "DELETE", "/notification_rules/r1,nope", "", ""), 404, "could not find notification rule 'nope'")
	expect(t, "DELETE", call(t, srv, "DELETE", "/notification_rules/r1", "", ""), 204)
	a = expect(t, "contact's links", call(t, srv, "GET", "/contacts/abc", "", ""), 200)
	var c struct{ Contacts []contactJSON }
	json.Unmarshal(a.body, &c)
	if !reflect.DeepEqual(c.Contacts[0].Links.NotificationRules, []string{ids[1].(string)}) {
		t.Fatalf("links after delete: %s", a.body)
	}
}
