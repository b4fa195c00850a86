package importer

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/schema"
)

// env is one test's Redis database and key builder.
type env struct {
	t    *testing.T
	db   *testredis.DB
	keys schema.Keys
}

func newEnv(t *testing.T, prefix string) *env {
	t.Helper()
	return &env{t: t, db: testredis.New(t), keys: schema.NewKeys(prefix)}
}

type importFunc func(context.Context, redis.Conn, schema.Keys, []byte, Options) (Report, error)

func (e *env) run(fn importFunc, data []byte, opts Options) (Report, error) {
	e.t.Helper()
	conn := e.db.Conn(e.t)
	defer conn.Close()
	return fn(context.Background(), conn, e.keys, data, opts)
}

// mustImport imports data and fails the test on any error or problem.
func (e *env) mustImport(fn importFunc, data []byte) Report {
	e.t.Helper()
	rep, err := e.run(fn, data, Options{})
	if err != nil {
		e.t.Fatalf("import: %v (problems %v)", err, rep.Problems)
	}
	if len(rep.Problems) > 0 {
		e.t.Fatalf("import: unexpected problems %v", rep.Problems)
	}
	return rep
}

func (e *env) contacts(ids ...string) map[string]roster.Contact {
	e.t.Helper()
	conn := e.db.Conn(e.t)
	defer conn.Close()
	cs, err := roster.LoadContacts(conn, e.keys, ids)
	if err != nil {
		e.t.Fatalf("load contacts: %v", err)
	}
	out := map[string]roster.Contact{}
	for _, c := range cs {
		out[c.ID] = normalize(c)
	}
	return out
}

// normalize drops the notifier's runtime state and makes empty maps and slices nil, so
// contacts compare with reflect.DeepEqual.
func normalize(c roster.Contact) roster.Contact {
	c.Revision, c.SuppressedUntil = 0, nil
	if len(c.Media) == 0 {
		c.Media = nil
	}
	if len(c.Intervals) == 0 {
		c.Intervals = nil
	}
	if len(c.RollupThresholds) == 0 {
		c.RollupThresholds = nil
	}
	if len(c.Rules) == 0 {
		c.Rules = nil
	}
	return c
}

func example(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile("../examples/" + name)
	if err != nil {
		t.Fatalf("read example: %v", err)
	}
	return data
}

func problemStrings(ps []Problem) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return out
}

func sameStrings(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n got  %q\n want %q", what, got, want)
	}
}

// exampleContacts is what examples/contacts.json says, as roster.LoadContacts reads it.
func exampleContacts() map[string]roster.Contact {
	const officeHours = `[{"start_time":"2013-02-01 09:00:00","end_time":"2013-02-01 17:00:00","rrules":[{"validations":{"day":[1,2,3,4,5]},"rule_type":"Weekly","interval":1,"week_start":0}],"exrules":[],"rtimes":[],"extimes":[]}]`
	const weekdays = `[{"start_time":"2013-02-01 09:00:00","end_time":"2013-02-01 17:00:00","rrule":"RRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR\nEXDATE:20131225T090000"}]`
	return map[string]roster.Contact{
		"ada": {
			ID: "ada", FirstName: "Ada", LastName: "Lovelace", Email: "ada@example.com",
			Media: map[string]string{
				"email":     "ada@example.com",
				"jabber":    "ada@jabber.example.com",
				"pagerduty": "e93facc04764012d7bfb002500d5d1a6",
			},
			Intervals:        map[string]int64{"jabber": 300},
			RollupThresholds: map[string]int64{"jabber": 5},
			Timezone:         "Europe/London",
			Pagerduty: roster.PagerdutyCredentials{Subdomain: "example", Token: "y_NbAkKc66ryYTWUXYEu",
				Username: "ada@example.com", Password: "correct-horse-battery-staple"},
			Rules: []roster.Rule{ // sorted by id, as LoadContacts returns them
				{
					ID: "ada-databases", ContactID: "ada",
					RegexEntities:    []string{`^db-\d+\.example\.com$`},
					TimeRestrictions: "[]",
					UnknownMedia:     []string{"email"},
					WarningMedia:     []string{"jabber"},
					CriticalMedia:    []string{"jabber", "pagerduty"},
				},
				{
					ID: "ada-office-hours", ContactID: "ada",
					TimeRestrictions: officeHours,
					WarningMedia:     []string{"email", "jabber"},
					CriticalMedia:    []string{"email", "jabber"},
				},
			},
		},
		"grace": {
			ID: "grace", FirstName: "Grace", LastName: "Hopper", Email: "grace@example.com",
			Media:    map[string]string{"email": "grace@example.com", "sms": "+15555550123"},
			Timezone: "America/New_York",
		},
		"alan": {
			ID: "alan", FirstName: "Alan", LastName: "Turing", Email: "alan@example.com",
			Media:     map[string]string{"email": "alan@example.com", "sms": "+61412345678"},
			Intervals: map[string]int64{"sms": 900},
			Timezone:  "Australia/Sydney",
			Rules: []roster.Rule{
				{
					ID: "alan-http-weekdays", ContactID: "alan",
					Tags:             []string{"http"},
					TimeRestrictions: weekdays,
					WarningMedia:     []string{"email"},
					CriticalMedia:    []string{"email", "sms"},
				},
				{
					ID: "alan-staging", ContactID: "alan",
					RegexEntities:     []string{"^staging-"},
					TimeRestrictions:  "[]",
					WarningMedia:      []string{"email"},
					CriticalBlackhole: true,
				},
			},
		},
	}
}

// exampleLayout is the complete Redis content after importing both example files: the
// documented layout, pinned key by key.
var exampleLayout = map[string]string{
	"all_contacts":                         "set{ada, alan, grace}",
	"all_entity_ids_by_name":               "hash{db-01.example.com=10001, db-02.example.com=10002, staging-web-01.example.com=10004, web-01.example.com=10003}",
	"all_entity_names_by_id":               "hash{10001=db-01.example.com, 10002=db-02.example.com, 10003=web-01.example.com, 10004=staging-web-01.example.com}",
	"contact:ada":                          "hash{email=ada@example.com, first_name=Ada, last_name=Lovelace}",
	"contact:alan":                         "hash{email=alan@example.com, first_name=Alan, last_name=Turing}",
	"contact:grace":                        "hash{email=grace@example.com, first_name=Grace, last_name=Hopper}",
	"contact_media:ada":                    "hash{email=ada@example.com, jabber=ada@jabber.example.com, pagerduty=e93facc04764012d7bfb002500d5d1a6}",
	"contact_media:alan":                   "hash{email=alan@example.com, sms=+61412345678}",
	"contact_media:grace":                  "hash{email=grace@example.com, sms=+15555550123}",
	"contact_media_intervals:ada":          "hash{jabber=300}",
	"contact_media_intervals:alan":         "hash{sms=900}",
	"contact_media_rollup_thresholds:ada":  "hash{jabber=5}",
	"contact_notification_rules:ada":       "set{ada-databases, ada-office-hours}",
	"contact_notification_rules:alan":      "set{alan-http-weekdays, alan-staging}",
	"contact_pagerduty:ada":                "hash{password=correct-horse-battery-staple, subdomain=example, token=y_NbAkKc66ryYTWUXYEu, username=ada@example.com}",
	"contact_tag:database":                 "set{ada}",
	"contact_tag:ops":                      "set{ada, grace}",
	"contact_tag:web":                      "set{alan}",
	"contact_tz:ada":                       "Europe/London",
	"contact_tz:alan":                      "Australia/Sydney",
	"contact_tz:grace":                     "America/New_York",
	"contacts_for:10001":                   "set{ada, grace}",
	"contacts_for:10002":                   "set{ada}",
	"contacts_for:10003":                   "set{alan, grace}",
	"contacts_for:10004":                   "set{alan}",
	"entity:10001":                         "hash{name=db-01.example.com}",
	"entity:10002":                         "hash{name=db-02.example.com}",
	"entity:10003":                         "hash{name=web-01.example.com}",
	"entity:10004":                         "hash{name=staging-web-01.example.com}",
	"entity_id:db-01.example.com":          "10001",
	"entity_id:db-02.example.com":          "10002",
	"entity_id:staging-web-01.example.com": "10004",
	"entity_id:web-01.example.com":         "10003",
	"entity_tag:database":                  "set{10001, 10002}",
	"entity_tag:production":                "set{10001, 10002, 10003}",
	"entity_tag:staging":                   "set{10004}",
	"entity_tag:web":                       "set{10003, 10004}",
	"known_tags:entity_tag":                "set{database, production, staging, web}",
	"notification_rule:ada-databases": `hash{contact_id=ada, critical_blackhole=false, critical_media=["jabber","pagerduty"], entities=[], id=ada-databases, ` +
		`regex_entities=["^db-\\d+\\.example\\.com$"], regex_tags=[], tags=[], time_restrictions=[], unknown_blackhole=false, unknown_media=["email"], warning_blackhole=false, warning_media=["jabber"]}`,
	"notification_rule:ada-office-hours": `hash{contact_id=ada, critical_blackhole=false, critical_media=["email","jabber"], entities=[], id=ada-office-hours, regex_entities=[], regex_tags=[], tags=[], ` +
		`time_restrictions=[{"start_time":"2013-02-01 09:00:00","end_time":"2013-02-01 17:00:00","rrules":[{"validations":{"day":[1,2,3,4,5]},"rule_type":"Weekly","interval":1,"week_start":0}],"exrules":[],"rtimes":[],"extimes":[]}], ` +
		`unknown_blackhole=false, unknown_media=[], warning_blackhole=false, warning_media=["email","jabber"]}`,
	"notification_rule:alan-http-weekdays": `hash{contact_id=alan, critical_blackhole=false, critical_media=["email","sms"], entities=[], id=alan-http-weekdays, regex_entities=[], regex_tags=[], tags=["http"], ` +
		`time_restrictions=[{"start_time":"2013-02-01 09:00:00","end_time":"2013-02-01 17:00:00","rrule":"RRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR\nEXDATE:20131225T090000"}], ` +
		`unknown_blackhole=false, unknown_media=[], warning_blackhole=false, warning_media=["email"]}`,
	"notification_rule:alan-staging": `hash{contact_id=alan, critical_blackhole=true, critical_media=[], entities=[], id=alan-staging, regex_entities=["^staging-"], regex_tags=[], tags=[], ` +
		`time_restrictions=[], unknown_blackhole=false, unknown_media=[], warning_blackhole=false, warning_media=["email"]}`,
}

func diffDump(t *testing.T, got, want map[string]string) {
	t.Helper()
	keys := map[string]bool{}
	for k := range got {
		keys[k] = true
	}
	for k := range want {
		keys[k] = true
	}
	var names []string
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		g, gok := got[k]
		w, wok := want[k]
		switch {
		case !gok:
			t.Errorf("key %s missing, want %s", k, w)
		case !wok:
			t.Errorf("unexpected key %s = %s", k, g)
		case g != w:
			t.Errorf("key %s:\n got  %s\n want %s", k, g, w)
		}
	}
}

func TestExamplesRoundTrip(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	rep := e.mustImport(Contacts, example(t, "contacts.json"))
	if rep.Imported != 3 || rep.Skipped != 0 || len(rep.Notes) != 0 {
		t.Errorf("contacts report = %+v, want 3 imported, no notes", rep)
	}
	rep = e.mustImport(Entities, example(t, "entities.json"))
	if rep.Imported != 4 || rep.Skipped != 0 || len(rep.Notes) != 0 {
		t.Errorf("entities report = %+v, want 4 imported, no notes", rep)
	}

	t.Run("contacts read back", func(t *testing.T) {
		got := e.contacts("ada", "grace", "alan")
		for id, want := range exampleContacts() {
			if !reflect.DeepEqual(got[id], want) {
				t.Errorf("contact %s:\n got  %+v\n want %+v", id, got[id], want)
			}
		}
	})

	t.Run("contacts for entities", func(t *testing.T) {
		conn := e.db.Conn(t)
		defer conn.Close()
		for _, tc := range []struct {
			entity string
			want   []string
		}{
			{"db-01.example.com", []string{"ada", "grace"}},
			{"db-02.example.com", []string{"ada"}},
			{"web-01.example.com", []string{"alan", "grace"}},
			{"staging-web-01.example.com", []string{"alan"}},
			{"unknown.example.com", nil},
		} {
			got, err := roster.ContactIDsFor(conn, e.keys, tc.entity, "HTTP")
			if err != nil {
				t.Fatal(err)
			}
			sameStrings(t, tc.entity, got, tc.want)
		}
	})

	t.Run("layout", func(t *testing.T) {
		diffDump(t, e.db.Dump(t), exampleLayout)
	})

	t.Run("reimport is idempotent", func(t *testing.T) {
		before := e.db.Dump(t)
		e.mustImport(Contacts, example(t, "contacts.json"))
		e.mustImport(Entities, example(t, "entities.json"))
		diffDump(t, e.db.Dump(t), before)
	})
}

// edit decodes an example file, lets fn change its records and encodes it again; values are
// kept as raw JSON so untouched fields keep their key order.
func edit(t *testing.T, data []byte, fn func(records []map[string]json.RawMessage)) []byte {
	t.Helper()
	var records []map[string]json.RawMessage
	if err := json.Unmarshal(data, &records); err != nil {
		t.Fatal(err)
	}
	fn(records)
	out, err := json.Marshal(records)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// rework decodes raw into a value of type T, lets fn change it and encodes it again.
func rework[T any](t *testing.T, raw json.RawMessage, fn func(T) T) json.RawMessage {
	t.Helper()
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(fn(v))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestChangedContactReplacesItsData(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	e.mustImport(Contacts, example(t, "contacts.json"))
	e.mustImport(Entities, example(t, "entities.json"))

	changed := edit(t, example(t, "contacts.json"), func(rs []map[string]json.RawMessage) {
		ada := rs[0]
		delete(ada, "email")
		ada["media"] = rework(t, ada["media"], func(m map[string]json.RawMessage) map[string]json.RawMessage {
			delete(m, "jabber")
			return m
		})
		ada["tags"] = json.RawMessage(`["ops"]`)
		ada["notification_rules"] = rework(t, ada["notification_rules"], func(rules []json.RawMessage) []json.RawMessage {
			return rules[:1] // drop ada-databases
		})
		alan := rs[2]
		delete(alan, "timezone")
		delete(alan, "notification_rules")
	})
	rep := e.mustImport(Contacts, changed)
	sameStrings(t, "notes", rep.Notes, []string{
		`contact "ada": rule "ada-office-hours" lists "jabber" in warning_media, but the contact has no jabber address`,
		`contact "ada": rule "ada-office-hours" lists "jabber" in critical_media, but the contact has no jabber address`,
	})

	want := maps.Clone(exampleLayout)
	want["contact:ada"] = "hash{first_name=Ada, last_name=Lovelace}"
	want["contact_media:ada"] = "hash{email=ada@example.com, pagerduty=e93facc04764012d7bfb002500d5d1a6}"
	delete(want, "contact_media_intervals:ada")
	delete(want, "contact_media_rollup_thresholds:ada")
	want["contact_notification_rules:ada"] = "set{ada-office-hours}"
	delete(want, "notification_rule:ada-databases")
	delete(want, "contact_tag:database")
	delete(want, "contact_tz:alan")
	delete(want, "contact_notification_rules:alan")
	delete(want, "notification_rule:alan-http-weekdays")
	delete(want, "notification_rule:alan-staging")
	diffDump(t, e.db.Dump(t), want)

	got := e.contacts("ada", "alan")
	if n := len(got["ada"].Rules); n != 1 || got["ada"].Rules[0].ID != "ada-office-hours" {
		t.Errorf("ada's rules = %+v, want only ada-office-hours", got["ada"].Rules)
	}
	if _, ok := got["ada"].Media["jabber"]; ok {
		t.Errorf("ada still has jabber: %v", got["ada"].Media)
	}
	if got["alan"].Rules != nil || got["alan"].Timezone != "" {
		t.Errorf("alan = %+v, want no rules and no timezone", got["alan"])
	}

	// Importing the original again restores the original layout exactly.
	e.mustImport(Contacts, example(t, "contacts.json"))
	diffDump(t, e.db.Dump(t), exampleLayout)
}

func TestBrokenExample(t *testing.T) {
	t.Parallel()
	want := []string{
		`record 0: id: is required`,
		`record 1 (id "bob"): media.sms: must be an address string or an object`,
		"record 2 (id \"carol\"): notification_rules[0].regex_entities[0]: pattern \"(?<!staging-)db\" does not compile as a Go RE2 regular expression: error parsing regexp: invalid named capture: `(?<!staging-)db`",
		`record 3 (id "dave"): emial: unknown field`,
		`record 4 (id "erin"): timezone: unknown time zone "Mars/Olympus_Mons"`,
		`record 6 (id "gina"): tags: must be an array of strings`,
		`record 6 (id "gina"): media.jabber.interval: must be an integer of at least 1`,
		`record 6 (id "gina"): notification_rules[0].time_restrictions[0].end_time: is required`,
		`record 6 (id "gina"): notification_rules[0].critical_blackhole: must be true or false`,
	}
	data := example(t, "contacts-broken.json")
	for _, tc := range []struct {
		name    string
		opts    Options
		wantErr string
		imp     int
		skip    int
		written string // all_contacts afterwards
	}{
		{name: "all or nothing", wantErr: "invalid import file: 6 of 7 records have problems; nothing written", skip: 7},
		{name: "dry run", opts: Options{DryRun: true}, wantErr: "invalid import file: 6 of 7 records have problems; nothing written", skip: 7},
		{name: "partial dry run", opts: Options{Partial: true, DryRun: true}, imp: 1, skip: 6},
		{name: "partial", opts: Options{Partial: true}, imp: 1, skip: 6, written: "set{frank}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, "")
			rep, err := e.run(Contacts, data, tc.opts)
			if tc.wantErr == "" && err != nil {
				t.Fatalf("err = %v", err)
			}
			if tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr || !errors.Is(err, ErrInvalid)) {
				t.Fatalf("err = %v, want %q (ErrInvalid)", err, tc.wantErr)
			}
			sameStrings(t, "problems", problemStrings(rep.Problems), want)
			if rep.Imported != tc.imp || rep.Skipped != tc.skip {
				t.Errorf("imported %d skipped %d, want %d and %d", rep.Imported, rep.Skipped, tc.imp, tc.skip)
			}
			dump := e.db.Dump(t)
			if tc.written == "" {
				if len(dump) != 0 {
					t.Errorf("Redis written: %v", dump)
				}
				return
			}
			if dump["all_contacts"] != tc.written {
				t.Errorf("all_contacts = %q, want %q", dump["all_contacts"], tc.written)
			}
			if dump["contact:frank"] != "hash{first_name=Frank}" || dump["contact_media:frank"] != "hash{email=frank@example.com}" || len(dump) != 3 {
				t.Errorf("dump = %v, want only frank's contact, media and all_contacts", dump)
			}
		})
	}
}

func TestDryRunWritesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	for _, tc := range []struct {
		fn   importFunc
		file string
		n    int
	}{{Contacts, "contacts.json", 3}, {Entities, "entities.json", 4}} {
		rep, err := e.run(tc.fn, example(t, tc.file), Options{DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Imported != tc.n || rep.Writes == 0 {
			t.Errorf("%s: report %+v, want %d imported and planned writes", tc.file, rep, tc.n)
		}
	}
	if dump := e.db.Dump(t); len(dump) != 0 {
		t.Errorf("dry run wrote %v", dump)
	}
}

func TestKeyPrefix(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "site1:")
	e.mustImport(Contacts, example(t, "contacts.json"))
	e.mustImport(Entities, example(t, "entities.json"))
	want := map[string]string{}
	for k, v := range exampleLayout {
		want["site1:"+k] = v
	}
	diffDump(t, e.db.Dump(t), want)
	got := e.contacts("ada", "grace", "alan")
	for id, c := range exampleContacts() {
		if !reflect.DeepEqual(got[id], c) {
			t.Errorf("contact %s under a prefix:\n got  %+v\n want %+v", id, got[id], c)
		}
	}
	// A second import under the prefix still finds the old tag memberships (SCAN under the
	// prefix) and replaces them.
	changed := edit(t, example(t, "contacts.json"), func(rs []map[string]json.RawMessage) { rs[1]["tags"] = json.RawMessage(`["dev"]`) })
	e.mustImport(Contacts, changed)
	dump := e.db.Dump(t)
	if dump["site1:contact_tag:ops"] != "set{ada}" || dump["site1:contact_tag:dev"] != "set{grace}" {
		t.Errorf("tags after change: ops %q dev %q", dump["site1:contact_tag:ops"], dump["site1:contact_tag:dev"])
	}
	// Files of one contact against tag sets bigger than the file (read with SMISMEMBER).
	e.mustImport(Contacts, []byte(`[{"id": "ada", "tags": ["dev"], "media": {"email": "ada@example.com"}}]`))
	dump = e.db.Dump(t)
	if _, ok := dump["site1:contact_tag:ops"]; ok || dump["site1:contact_tag:dev"] != "set{ada, grace}" || dump["site1:contact_tag:database"] != "" {
		t.Errorf("tags after ada changed: ops %q dev %q database %q", dump["site1:contact_tag:ops"], dump["site1:contact_tag:dev"], dump["site1:contact_tag:database"])
	}
	e.mustImport(Contacts, []byte(`[{"id": "grace", "media": {"email": "grace@example.com"}}]`))
	if got := e.db.Dump(t)["site1:contact_tag:dev"]; got != "set{ada}" {
		t.Errorf("dev after grace dropped it = %q", got)
	}
}

func TestTopLevelShapes(t *testing.T) {
	t.Parallel()
	const one = `{"id": "ada", "media": {"email": "ada@example.com"}}`
	for _, tc := range []struct {
		name    string
		fn      importFunc
		data    string
		wantErr string // "" = imports one record (or none for an empty array)
		n       int
	}{
		{name: "array", fn: Contacts, data: "[" + one + "]", n: 1},
		{name: "wrapped", fn: Contacts, data: `{"contacts": [` + one + `], "meta": {}}`, n: 1},
		{name: "empty array", fn: Contacts, data: " [ ] ", n: 0},
		{name: "wrapped entities", fn: Entities, data: `{"entities": [{"id": "1", "name": "a"}]}`, n: 1},
		{name: "wrong wrapper", fn: Entities, data: `{"contacts": []}`, wantErr: `invalid import file: unknown top-level field "contacts" (expected an array, or {"entities": [...]})`},
		{name: "wrapper not an array", fn: Contacts, data: `{"contacts": {"id": "ada"}}`, wantErr: `invalid import file: "contacts" must be an array`},
		{name: "no wrapper", fn: Contacts, data: `{"links": {}}`, wantErr: `invalid import file: no "contacts" array in the top-level object`},
		{name: "scalar", fn: Contacts, data: `"ada"`, wantErr: `invalid import file: expected a JSON array of contacts (or {"contacts": [...]})`},
		{name: "empty file", fn: Contacts, data: "\n", wantErr: `invalid import file: the file is empty`},
		{name: "syntax error", fn: Contacts, data: "[\n  {\"id\": \"ada\",}\n]", wantErr: `invalid import file: line 2, column 16: invalid character '}' looking for beginning of object key string`},
		{name: "invalid utf-8", fn: Contacts, data: "[{\"id\": \"\xff\"}]", wantErr: `invalid import file: the file is not valid UTF-8`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, "")
			rep, err := e.run(tc.fn, []byte(tc.data), Options{})
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr || !errors.Is(err, ErrInvalid) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				if dump := e.db.Dump(t); len(dump) != 0 {
					t.Errorf("written: %v", dump)
				}
				return
			}
			if err != nil || rep.Imported != tc.n {
				t.Fatalf("report %+v, err %v; want %d imported", rep, err, tc.n)
			}
		})
	}
}

func TestProblemString(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		p    Problem
		want string
	}{
		{Problem{Index: 3, ID: "ada", Field: "media.sms", Reason: "must be a string"}, `record 3 (id "ada"): media.sms: must be a string`},
		{Problem{Index: 0, Field: "id", Reason: "is required"}, `record 0: id: is required`},
		{Problem{Index: 7, Reason: "must be a JSON object"}, `record 7: must be a JSON object`},
	} {
		if got := tc.p.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
}

func TestGeneratedRuleIDsAreStable(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	data := []byte(`[{"id": "ada", "media": {"email": "a@example.com"},
		"notification_rules": [{"critical_media": ["email"]}, {"id": "mine", "warning_media": ["email"]}]}]`)
	e.mustImport(Contacts, data)
	first := e.db.Dump(t)
	gen := generatedRuleID("ada", 0)
	if first["contact_notification_rules:ada"] != "set{"+strings.Join(sortedStrings(gen, "mine"), ", ")+"}" {
		t.Errorf("rules = %s, want %s and mine", first["contact_notification_rules:ada"], gen)
	}
	if !strings.Contains(first["notification_rule:"+gen], "id="+gen) {
		t.Errorf("generated rule hash = %s", first["notification_rule:"+gen])
	}
	if gen != generatedRuleID("ada", 0) || gen == generatedRuleID("ada", 1) || gen == generatedRuleID("bob", 0) {
		t.Errorf("generated ids are not a function of contact and position")
	}
	if len(gen) != 36 || gen[14] != '5' {
		t.Errorf("generated id %s is not a version 5 UUID", gen)
	}
	e.mustImport(Contacts, data)
	diffDump(t, e.db.Dump(t), first)
}

func sortedStrings(s ...string) []string {
	sort.Strings(s)
	return s
}
