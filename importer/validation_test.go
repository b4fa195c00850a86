package importer

import (
	"errors"
	"testing"
)

// fieldReasons renders problems as "field: reason" after checking they all name record 0 with
// the given id.
func fieldReasons(t *testing.T, ps []Problem, id string) []string {
	t.Helper()
	out := make([]string, len(ps))
	for i, p := range ps {
		if p.Index != 0 || p.ID != id {
			t.Errorf("problem %v: want record 0 with id %q", p, id)
		}
		out[i] = p.Reason
		if p.Field != "" {
			out[i] = p.Field + ": " + p.Reason
		}
	}
	return out
}

type validationCase struct {
	name   string
	record string
	id     string   // id the problems carry ("" when the id itself is bad)
	want   []string // "field: reason"; none = the record is valid
}

func runValidation(t *testing.T, fn importFunc, cases []validationCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, "")
			rep, err := e.run(fn, []byte("["+tc.record+"]"), Options{})
			sameStrings(t, "problems", fieldReasons(t, rep.Problems, tc.id), tc.want)
			if len(tc.want) == 0 {
				if err != nil || rep.Imported != 1 {
					t.Fatalf("valid record refused: %v %+v", err, rep)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) || rep.Imported != 0 || rep.Skipped != 1 {
				t.Errorf("err %v report %+v, want ErrInvalid and the record skipped", err, rep)
			}
			if dump := e.db.Dump(t); len(dump) != 0 {
				t.Errorf("written: %v", dump)
			}
		})
	}
}

func TestContactValidation(t *testing.T) {
	t.Parallel()
	runValidation(t, Contacts, []validationCase{
		// records and ids
		{name: "not an object", record: `["ada"]`, want: []string{"must be a JSON object"}},
		{name: "null record", record: `null`, want: []string{"must be a JSON object"}},
		{name: "missing id", record: `{"first_name": "Ada"}`, want: []string{"id: is required"}},
		{name: "null id", record: `{"id": null}`, want: []string{"id: is required"}},
		{name: "empty id", record: `{"id": ""}`, want: []string{"id: must not be empty"}},
		{name: "spaced id", record: `{"id": " ada"}`, want: []string{"id: must not start or end with spaces"}},
		{name: "fractional id", record: `{"id": 1.5}`, want: []string{"id: must be a string or an integer"}},
		{name: "object id", record: `{"id": {"x": 1}}`, want: []string{"id: must be a string or an integer"}},
		{name: "integer id", record: `{"id": 21, "first_name": "Ada"}`},
		{name: "1.x API fields ignored", record: `{"id": "ada", "type": "contact", "links": {"entities": ["1"]}}`},
		{name: "nulls are absent", record: `{"id": "ada", "first_name": null, "timezone": null, "tags": null, "media": null, "notification_rules": null}`},
		{name: "unknown fields", record: `{"id": "ada", "phone": "1", "Email": "x"}`, id: "ada",
			want: []string{"Email: unknown field", "phone: unknown field"}},
		// plain fields
		{name: "number name", record: `{"id": "ada", "first_name": 7, "last_name": true, "email": []}`, id: "ada",
			want: []string{"first_name: must be a string", "last_name: must be a string", "email: must be a string"}},
		{name: "bad timezone", record: `{"id": "ada", "timezone": "Europe/Lndon"}`, id: "ada", want: []string{`timezone: unknown time zone "Europe/Lndon"`}},
		{name: "Local timezone", record: `{"id": "ada", "timezone": "Local"}`, id: "ada", want: []string{`timezone: unknown time zone "Local"`}},
		{name: "timezone not a string", record: `{"id": "ada", "timezone": 10}`, id: "ada", want: []string{"timezone: must be a string"}},
		{name: "tags not an array", record: `{"id": "ada", "tags": "ops"}`, id: "ada", want: []string{"tags: must be an array of strings"}},
		{name: "bad tag elements", record: `{"id": "ada", "tags": ["ops", 3, " "]}`, id: "ada",
			want: []string{"tags[1]: must be a string", "tags[2]: must not be empty"}},
		// media
		{name: "media not an object", record: `{"id": "ada", "media": ["email"]}`, id: "ada", want: []string{"media: must be an object"}},
		{name: "media number", record: `{"id": "ada", "media": {"sms": 61412345678}}`, id: "ada",
			want: []string{"media.sms: must be an address string or an object"}},
		{name: "media empty address", record: `{"id": "ada", "media": {"email": " "}}`, id: "ada",
			want: []string{"media.email: address must not be empty"}},
		{name: "medium name", record: `{"id": "ada", "media": {"E-mail": "a@example.com"}}`, id: "ada",
			want: []string{`media.E-mail: medium "E-mail": names are lower-case letters, digits and _`}},
		{name: "medium object without address", record: `{"id": "ada", "media": {"jabber": {"interval": 60}}}`, id: "ada",
			want: []string{"media.jabber.address: is required"}},
		{name: "medium object typo", record: `{"id": "ada", "media": {"jabber": {"address": "a@j", "intervall": 60}}}`, id: "ada",
			want: []string{"media.jabber.intervall: unknown field"}},
		{name: "medium interval", record: `{"id": "ada", "media": {"jabber": {"address": "a@j", "interval": 0, "rollup_threshold": -1}}}`, id: "ada",
			want: []string{"media.jabber.rollup_threshold: must be an integer of at least 0", "media.jabber.interval: must be an integer of at least 1"}},
		{name: "medium interval words", record: `{"id": "ada", "media": {"jabber": {"address": "a@j", "interval": "5 minutes", "rollup_threshold": 2.5}}}`, id: "ada",
			want: []string{"media.jabber.rollup_threshold: must be an integer of at least 0", "media.jabber.interval: must be an integer of at least 1"}},
		{name: "medium object ok", record: `{"id": "ada", "media": {"jabber": {"address": "a@j", "interval": 60, "rollup_threshold": 0}}}`},
		{name: "pagerduty string", record: `{"id": "ada", "media": {"pagerduty": "key"}}`},
		{name: "pagerduty address alias", record: `{"id": "ada", "media": {"pagerduty": {"address": "key", "interval": 600}}}`},
		{name: "pagerduty without key", record: `{"id": "ada", "media": {"pagerduty": {"subdomain": "x"}}}`, id: "ada",
			want: []string{"media.pagerduty.service_key: is required"}},
		{name: "medium address types", record: `{"id": "ada", "media": {"jabber": {"address": 5}, "sms": {"address": ""}, "pagerduty": {"address": []}}}`, id: "ada",
			want: []string{"media.jabber.address: must be a string", "media.pagerduty.address: must be a string", "media.sms.address: must not be empty"}},
		{name: "pagerduty key twice", record: `{"id": "ada", "media": {"pagerduty": {"service_key": "a", "address": "b"}}}`, id: "ada",
			want: []string{"media.pagerduty: give service_key or address, not both"}},
		{name: "pagerduty rollup", record: `{"id": "ada", "media": {"pagerduty": {"service_key": "a", "rollup_threshold": 3}}}`, id: "ada",
			want: []string{"media.pagerduty.rollup_threshold: pagerduty alerts are never rolled up"}},
		{name: "pagerduty credentials", record: `{"id": "ada", "media": {"pagerduty": {"service_key": "a", "subdomain": 5, "user": "x"}}}`, id: "ada",
			want: []string{"media.pagerduty.subdomain: must be a string", "media.pagerduty.user: unknown field"}},
		// rules
		{name: "rules not an array", record: `{"id": "ada", "notification_rules": {"id": "r"}}`, id: "ada",
			want: []string{"notification_rules: must be an array of rule objects"}},
		{name: "rule not an object", record: `{"id": "ada", "notification_rules": ["r"]}`, id: "ada",
			want: []string{"notification_rules[0]: must be an object"}},
		{name: "rule id", record: `{"id": "ada", "notification_rules": [{"id": ""}, {"id": true}]}`, id: "ada",
			want: []string{"notification_rules[0].id: must not be empty", "notification_rules[1].id: must be a string or an integer"}},
		{name: "rule of another contact", record: `{"id": "ada", "notification_rules": [{"contact_id": "bob"}]}`, id: "ada",
			want: []string{`notification_rules[0].contact_id: is "bob", not the id of this contact`}},
		{name: "rule 1.x API fields", record: `{"id": "ada", "notification_rules": [{"id": "r", "contact_id": "ada", "links": {}, "type": "rule"}]}`},
		{name: "rule typo", record: `{"id": "ada", "notification_rules": [{"entitys": ["a"], "critical_media": ["email"]}]}`, id: "ada",
			want: []string{"notification_rules[0].entitys: unknown field"}},
		{name: "rule lists", record: `{"id": "ada", "notification_rules": [{"entities": "a", "tags": [1], "entity_tags": [""]}]}`, id: "ada",
			want: []string{"notification_rules[0].entities: must be an array of strings", "notification_rules[0].tags[0]: must be a string",
				"notification_rules[0].entity_tags[0]: must not be empty"}},
		{name: "bad regexes", record: `{"id": "ada", "notification_rules": [{"regex_entities": ["ok", "(unclosed"], "regex_tags": ["a\\1", 5]}]}`, id: "ada",
			want: []string{
				"notification_rules[0].regex_entities[1]: pattern \"(unclosed\" does not compile as a Go RE2 regular expression: error parsing regexp: missing closing ): `(unclosed`",
				"notification_rules[0].regex_tags[0]: pattern \"a\\\\1\" does not compile as a Go RE2 regular expression: error parsing regexp: invalid escape sequence: `\\1`",
				"notification_rules[0].regex_tags[1]: must be a string",
			}},
		{name: "media lists", record: `{"id": "ada", "notification_rules": [{"unknown_media": "email", "warning_media": ["Email"], "critical_media": [null]}]}`, id: "ada",
			want: []string{"notification_rules[0].unknown_media: must be an array of medium names",
				`notification_rules[0].warning_media[0]: medium "Email": names are lower-case letters, digits and _`,
				"notification_rules[0].critical_media[0]: must be a string"}},
		{name: "blackholes", record: `{"id": "ada", "notification_rules": [{"unknown_blackhole": "true", "warning_blackhole": 1, "critical_blackhole": false}]}`, id: "ada",
			want: []string{"notification_rules[0].unknown_blackhole: must be true or false", "notification_rules[0].warning_blackhole: must be true or false"}},
		{name: "restrictions not an array", record: `{"id": "ada", "notification_rules": [{"time_restrictions": {"start_time": "2013-02-01 09:00:00"}}]}`, id: "ada",
			want: []string{"notification_rules[0].time_restrictions: must be an array of objects"}},
		{name: "restriction shape", record: `{"id": "ada", "notification_rules": [{"time_restrictions": ["weekdays", {"start_time": "2013-02-01 09:00:00"}, {"end_date": "2013-02-01 17:00:00"}]}]}`, id: "ada",
			want: []string{"notification_rules[0].time_restrictions[0]: must be an object",
				"notification_rules[0].time_restrictions[1].end_time: is required",
				"notification_rules[0].time_restrictions[2].start_time: is required"}},
		{name: "restriction with date aliases", record: `{"id": "ada", "notification_rules": [{"time_restrictions": [{"start_date": "2013-02-01 09:00:00", "end_date": "2013-02-01 17:00:00"}]}]}`},
		{name: "everything wrong at once", record: `{"id": 2.5, "tags": {}, "media": {"sms": false}, "extra": 1}`,
			want: []string{"id: must be a string or an integer", "tags: must be an array of strings", "media.sms: must be an address string or an object", "extra: unknown field"}},
	})
}

func TestEntityValidation(t *testing.T) {
	t.Parallel()
	runValidation(t, Entities, []validationCase{
		{name: "valid", record: `{"id": "1", "name": "web-01", "contacts": ["ada", 21], "tags": ["web"]}`},
		{name: "integer id, 1.x fields", record: `{"id": 1, "name": "web-01", "type": "entity", "links": {"checks": []}}`},
		{name: "not an object", record: `"web-01"`, want: []string{"must be a JSON object"}},
		{name: "missing id and name", record: `{}`, want: []string{"id: is required", "name: is required"}},
		{name: "reserved id", record: `{"id": "ALL", "name": "web-01"}`, id: "ALL",
			want: []string{`id: "ALL" is reserved (contacts_for:ALL lists the contacts of every entity)`}},
		{name: "colon in id", record: `{"id": "a:b", "name": "web-01"}`, id: "a:b",
			want: []string{"id: must not contain ':' (contacts_for:ENTITY_ID:CHECK would be ambiguous)"}},
		{name: "empty name", record: `{"id": "1", "name": "  "}`, id: "1", want: []string{"name: must not be empty"}},
		{name: "name not a string", record: `{"id": "1", "name": 5}`, id: "1", want: []string{"name: must be a string"}},
		{name: "colon in name", record: `{"id": "1", "name": "web:01"}`, id: "1",
			want: []string{"name: must not contain ':' (check ids are ENTITY:CHECK)"}},
		{name: "contacts", record: `{"id": "1", "name": "a", "contacts": ["ada", 1.5, ""]}`, id: "1",
			want: []string{"contacts[1]: must be a string or an integer", "contacts[2]: must not be empty"}},
		{name: "contacts not an array", record: `{"id": "1", "name": "a", "contacts": "ada"}`, id: "1",
			want: []string{"contacts: must be an array of ids"}},
		{name: "tags", record: `{"id": "1", "name": "a", "tags": [["web"]]}`, id: "1", want: []string{"tags[0]: must be a string"}},
		{name: "typo", record: `{"id": "1", "name": "a", "contact": ["ada"]}`, id: "1", want: []string{"contact: unknown field"}},
	})
}
