package importer

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/schema"
)

func TestChangedEntities(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	e.mustImport(Contacts, example(t, "contacts.json"))
	e.mustImport(Entities, example(t, "entities.json"))

	changed := edit(t, example(t, "entities.json"), func(rs []map[string]json.RawMessage) {
		rs[1]["name"] = json.RawMessage(`"DB-02B.example.com"`) // renamed (and lower-cased)
		rs[1]["tags"] = json.RawMessage(`["production"]`)
		rs[3]["tags"] = json.RawMessage(`["web"]`) // the last "staging" entity
		rs[3]["contacts"] = json.RawMessage(`["grace"]`)
	})
	rep := e.mustImport(Entities, changed)
	sameStrings(t, "notes", rep.Notes, []string{
		`entity "10002": renamed from "db-02.example.com" to "db-02b.example.com" (check state and history stay under the old name)`,
	})
	want := maps.Clone(exampleLayout)
	want["all_entity_ids_by_name"] = "hash{db-01.example.com=10001, db-02b.example.com=10002, staging-web-01.example.com=10004, web-01.example.com=10003}"
	want["all_entity_names_by_id"] = "hash{10001=db-01.example.com, 10002=db-02b.example.com, 10003=web-01.example.com, 10004=staging-web-01.example.com}"
	want["entity:10002"] = "hash{name=db-02b.example.com}"
	delete(want, "entity_id:db-02.example.com")
	want["entity_id:db-02b.example.com"] = "10002"
	want["entity_tag:database"] = "set{10001}"
	delete(want, "entity_tag:staging")
	want["known_tags:entity_tag"] = "set{database, production, web}"
	want["contacts_for:10004"] = "set{grace}"
	diffDump(t, e.db.Dump(t), want)

	conn := e.db.Conn(t)
	defer conn.Close()
	for _, tc := range []struct {
		entity string
		want   []string
	}{
		{"db-02b.example.com", []string{"ada"}},
		{"db-02.example.com", nil},
		{"staging-web-01.example.com", []string{"grace"}},
	} {
		got, err := roster.ContactIDsFor(conn, e.keys, tc.entity, "PING")
		if err != nil {
			t.Fatal(err)
		}
		sameStrings(t, tc.entity, got, tc.want)
	}
}

func TestEntitiesSwapNames(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	e.mustImport(Entities, []byte(`[{"id": "1", "name": "a"}, {"id": "2", "name": "b"}]`))
	rep := e.mustImport(Entities, []byte(`[{"id": "1", "name": "b"}, {"id": "2", "name": "a"}]`))
	if len(rep.Notes) != 2 {
		t.Errorf("notes = %q, want the two renames only", rep.Notes)
	}
	diffDump(t, e.db.Dump(t), map[string]string{
		"all_entity_ids_by_name": "hash{a=2, b=1}",
		"all_entity_names_by_id": "hash{1=b, 2=a}",
		"entity:1":               "hash{name=b}",
		"entity:2":               "hash{name=a}",
		"entity_id:a":            "2",
		"entity_id:b":            "1",
	})
}

// An entity first seen in an event has a generated id; importing the same name with the
// file's id re-points the name, drops the generated id's reverse entries and says so.
func TestEntityNameTakenByAnotherID(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	const name = "web-01.example.com"
	auto := schema.NewEntityID(name)
	k := e.keys
	e.db.Do(t, "HSET", k.EntityIDsByName(), name, auto)
	e.db.Do(t, "HSET", k.EntityNamesByID(), auto, name)
	e.db.Do(t, "SET", k.EntityID(name), auto)
	e.db.Do(t, "HSET", k.Entity(auto), "name", name)
	e.db.Do(t, "SADD", k.ContactsFor(auto), "oncall")

	rep := e.mustImport(Entities, []byte(`[{"id": "10003", "name": "Web-01.example.com", "contacts": ["grace"]}]`))
	sameStrings(t, "notes", rep.Notes, []string{
		`entity "10003": the name "web-01.example.com" pointed to entity id "` + auto + `"; it now points to "10003" (contacts_for:` + auto + ` and that id's tags are left as they were)`,
		`entity "10003": contact "grace" is not known yet (import contacts first?)`,
	})
	diffDump(t, e.db.Dump(t), map[string]string{
		"all_entity_ids_by_name": "hash{web-01.example.com=10003}",
		"all_entity_names_by_id": "hash{10003=web-01.example.com}",
		"entity:10003":           "hash{name=web-01.example.com}",
		"entity_id:" + name:      "10003",
		"contacts_for:10003":     "set{grace}",
		"contacts_for:" + auto:   "set{oncall}",
	})
}

func TestRuleEntitiesAreLowerCased(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	e.mustImport(Contacts, []byte(`[{"id": "ada", "media": {"email": "a@example.com"},
		"notification_rules": [{"id": "r", "entities": ["Web-01.Example.com"], "critical_media": ["email"]}]}]`))
	c := e.contacts("ada")["ada"]
	if len(c.Rules) != 1 || len(c.Rules[0].Entities) != 1 || c.Rules[0].Entities[0] != "web-01.example.com" {
		t.Errorf("rules = %+v, want entities [web-01.example.com]", c.Rules)
	}
}

func TestDuplicatesInOneFile(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		fn   importFunc
		data string
		want []string
	}{
		{name: "contact id", fn: Contacts, data: `[{"id": "ada"}, {"id": "bob"}, {"id": "ada"}]`,
			want: []string{`record 2 (id "ada"): id: duplicate of record 0`}},
		{name: "rule id across contacts", fn: Contacts,
			data: `[{"id": "ada", "notification_rules": [{"id": "r1"}]}, {"id": "bob", "notification_rules": [{"id": "r2"}, {"id": "r1"}]}]`,
			want: []string{`record 1 (id "bob"): notification_rules[1].id: rule id "r1" is also used by record 0`}},
		{name: "rule id within a contact", fn: Contacts, data: `[{"id": "ada", "notification_rules": [{"id": 7}, {"id": "7"}]}]`,
			want: []string{`record 0 (id "ada"): notification_rules[1].id: rule id "7" is also used by notification_rules[0]`}},
		{name: "entity id", fn: Entities, data: `[{"id": "1", "name": "a"}, {"id": 1, "name": "b"}]`,
			want: []string{`record 1 (id "1"): id: duplicate of record 0`}},
		{name: "entity name", fn: Entities, data: `[{"id": "1", "name": "a"}, {"id": "2", "name": " A "}]`,
			want: []string{`record 1 (id "2"): name: "a" is also the name of record 0`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, "")
			rep, err := e.run(tc.fn, []byte(tc.data), Options{})
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("err = %v, want ErrInvalid", err)
			}
			sameStrings(t, "problems", problemStrings(rep.Problems), tc.want)
			if dump := e.db.Dump(t); len(dump) != 0 {
				t.Errorf("written: %v", dump)
			}
		})
	}
}

func TestRuleOwnership(t *testing.T) {
	t.Parallel()
	const bob = `{"id": "bob", "media": {"email": "bob@example.com"}, "notification_rules": [{"id": "r1", "critical_media": ["email"]}]}`
	const adaTakesR1 = `{"id": "ada", "media": {"email": "ada@example.com"}, "notification_rules": [{"id": "r1", "warning_media": ["email"]}]}`

	t.Run("refused when the owner is not in the file", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, "")
		e.mustImport(Contacts, []byte("["+bob+"]"))
		before := e.db.Dump(t)
		rep, err := e.run(Contacts, []byte("["+adaTakesR1+"]"), Options{})
		if !errors.Is(err, ErrInvalid) {
			t.Fatalf("err = %v", err)
		}
		sameStrings(t, "problems", problemStrings(rep.Problems), []string{
			`record 0 (id "ada"): notification_rules[0].id: rule "r1" belongs to contact "bob", which this file does not import`,
		})
		diffDump(t, e.db.Dump(t), before)
	})

	t.Run("moves when the owner gives it up in the same file", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, "")
		e.mustImport(Contacts, []byte("["+bob+"]"))
		e.mustImport(Contacts, []byte("["+adaTakesR1+`, {"id": "bob", "media": {"email": "bob@example.com"}}]`))
		got := e.contacts("ada", "bob")
		if len(got["ada"].Rules) != 1 || got["ada"].Rules[0].ContactID != "ada" || got["ada"].Rules[0].WarningMedia[0] != "email" {
			t.Errorf("ada's rules = %+v", got["ada"].Rules)
		}
		if len(got["bob"].Rules) != 0 {
			t.Errorf("bob's rules = %+v, want none", got["bob"].Rules)
		}
	})

	t.Run("partial: a skipped owner blocks the move", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, "")
		e.mustImport(Contacts, []byte("["+bob+"]"))
		before := e.db.Dump(t)
		rep, err := e.run(Contacts, []byte("["+adaTakesR1+`, {"id": "bob", "media": {"email": 1}}]`), Options{Partial: true})
		if err != nil {
			t.Fatal(err)
		}
		sameStrings(t, "problems", problemStrings(rep.Problems), []string{
			`record 0 (id "ada"): notification_rules[0].id: rule "r1" belongs to contact "bob", which this file does not import`,
			`record 1 (id "bob"): media.email: must be an address string or an object`,
		})
		if rep.Imported != 0 || rep.Skipped != 2 {
			t.Errorf("report %+v", rep)
		}
		diffDump(t, e.db.Dump(t), before)
	})
}

func TestKeysOfAnotherType(t *testing.T) {
	t.Parallel()
	const contact = `[{"id": "ada", "tags": ["ops"], "media": {"email": "a@example.com"}}]`
	const entity = `[{"id": "1", "name": "a", "tags": ["web"]}]`
	for _, tc := range []struct {
		name    string
		key     func(schema.Keys) string
		fn      importFunc
		data    string
		problem string // "" = a plain error (not ErrInvalid)
		err     string
	}{
		{name: "contact tag", key: func(k schema.Keys) string { return k.ContactTag("ops") }, fn: Contacts, data: contact,
			problem: `record 0 (id "ada"): tags[0]: key contact_tag:ops holds a string, not a set`},
		{name: "all contacts", key: func(k schema.Keys) string { return k.AllContacts() }, fn: Contacts, data: contact,
			err: "key all_contacts holds a string, not a set: fix or delete it; nothing written"},
		{name: "entity hash", key: func(k schema.Keys) string { return k.Entity("1") }, fn: Entities, data: entity,
			problem: `record 0 (id "1"): id: key entity:1 holds a string, not a hash`},
		{name: "entity tag", key: func(k schema.Keys) string { return k.EntityTag("web") }, fn: Entities, data: entity,
			problem: `record 0 (id "1"): tags[0]: key entity_tag:web holds a string, not a set`},
		{name: "names hash", key: func(k schema.Keys) string { return k.EntityIDsByName() }, fn: Entities, data: entity,
			err: "key all_entity_ids_by_name holds a string, not a hash: fix or delete it; nothing written"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, "")
			e.db.Do(t, "SET", tc.key(e.keys), "x")
			before := e.db.Dump(t)
			rep, err := e.run(tc.fn, []byte(tc.data), Options{})
			if tc.problem != "" {
				if !errors.Is(err, ErrInvalid) {
					t.Errorf("err = %v, want ErrInvalid", err)
				}
				sameStrings(t, "problems", problemStrings(rep.Problems), []string{tc.problem})
			} else if err == nil || err.Error() != tc.err || errors.Is(err, ErrInvalid) {
				t.Errorf("err = %v, want %q", err, tc.err)
			}
			diffDump(t, e.db.Dump(t), before)
		})
	}
}

func TestUnreadableTimeRestrictionIsANote(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	rep := e.mustImport(Contacts, []byte(`[{"id": "ada", "media": {"email": "a@example.com"}, "notification_rules": [{"id": "r",
		"critical_media": ["email"],
		"time_restrictions": [{"start_time": "2013-02-01 09:00:00", "end_time": "2013-02-01 17:00:00",
			"rrule": "FREQ=DAILY", "rrules": [{"rule_type": "Daily", "interval": 1}]}]}]}]`))
	if len(rep.Notes) != 1 || !strings.Contains(rep.Notes[0], `contact "ada": rule "r": the notifier will treat a time restriction as never active`) ||
		!strings.Contains(rep.Notes[0], "both rrule and rrules") {
		t.Errorf("notes = %q", rep.Notes)
	}
}

// Big files: one write never carries more members than the apply script can unpack.
func TestLargeFile(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	var b strings.Builder
	b.WriteString(`[{"id": "big", "name": "big", "tags": ["shared"], "contacts": [`)
	for i := range 9000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"c%d"`, i)
	}
	b.WriteString("]}")
	for i := range 3000 {
		fmt.Fprintf(&b, `, {"id": "e%d", "name": "host-%d", "tags": ["shared", "t%d"]}`, i, i, i)
	}
	b.WriteString("]")
	rep, err := e.run(Entities, []byte(b.String()), Options{})
	if err != nil || rep.Imported != 3001 {
		t.Fatalf("report %d imported, err %v", rep.Imported, err)
	}
	if n := e.db.Do(t, "SCARD", e.keys.ContactsFor("big")); n != int64(9000) {
		t.Errorf("contacts_for:big has %v members", n)
	}
	if n := e.db.Do(t, "SCARD", e.keys.KnownEntityTags()); n != int64(3001) {
		t.Errorf("known_tags:entity_tag has %v members", n)
	}
	if n := e.db.Do(t, "SCARD", e.keys.EntityTag("shared")); n != int64(3001) {
		t.Errorf("entity_tag:shared has %v members", n)
	}
	before := e.db.Dump(t)
	e.mustImport(Entities, []byte(b.String()))
	diffDump(t, e.db.Dump(t), before)

	// One entity leaving a big tag set (read with SMISMEMBER rather than in full).
	e.mustImport(Entities, []byte(`[{"id": "e5", "name": "host-5", "tags": ["t5"]}]`))
	if n := e.db.Do(t, "SISMEMBER", e.keys.EntityTag("shared"), "e5"); n != int64(0) {
		t.Errorf("e5 still tagged shared")
	}
	if n := e.db.Do(t, "SCARD", e.keys.EntityTag("shared")); n != int64(3000) {
		t.Errorf("entity_tag:shared has %v members, want 3000", n)
	}
}
