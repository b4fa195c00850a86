package roster

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/schema"
)

// TestLoadRoutingMatchesTheStepByStepReads: the one-round-trip loader returns exactly what
// ContactIDsFor followed by LoadContacts return.
func TestLoadRoutingMatchesTheStepByStepReads(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	k := schema.NewKeys("pfx:")
	db.Do(t, "HSET", k.EntityIDsByName(), "web-01", "E1")
	db.Do(t, "SADD", k.ContactsFor("E1"), "bob", "ada")
	db.Do(t, "SADD", k.ContactsFor(schema.AllContactsID), "cyd", "ada")
	db.Do(t, "SADD", k.ContactsForCheck("E1", "HTTP: 80"), "dee", "bob")
	for _, c := range []string{"ada", "bob", "cyd", "dee"} {
		db.Do(t, "HSET", k.Contact(c), "first_name", c)
		db.Do(t, "HSET", k.ContactMedia(c), "sms", "+1", "email", c+"@example.com")
	}
	db.Do(t, "HDEL", k.Contact("dee"), "first_name")
	db.Do(t, "SET", k.ContactTimezone("ada"), "Europe/London")
	db.Do(t, "HSET", k.ContactMediaIntervals("ada"), "sms", 60)
	db.Do(t, "HSET", k.ContactRollupThresholds("bob"), "email", 3)
	db.Do(t, "HSET", k.ContactPagerduty("cyd"), "subdomain", "x", "token", "t")
	db.Do(t, "HSET", k.ContactAlertState("ada"), "revision", 7, "drop:sms:web-01:HTTP: 80:critical", 99)
	db.Do(t, "SADD", k.ContactRules("ada"), "r1", "r2", "missing")
	db.Do(t, "HSET", k.Rule("r1"), "entities", `["web-01"]`, "critical_media", `["sms"]`, "critical_blackhole", "false")
	db.Do(t, "HSET", k.Rule("r2"), "tags", `not json`)

	conn := db.Conn(t)
	defer conn.Close()
	routing, err := LoadRouting(conn, k, "web-01", "HTTP: 80", false)
	if err != nil {
		t.Fatal(err)
	}
	got := routing.Contacts
	if routing.EscalationPolicies != nil || routing.CheckEscalations != nil {
		t.Fatalf("escalations read unasked: %+v", routing)
	}
	ids, err := ContactIDsFor(conn, k, "web-01", "HTTP: 80")
	if err != nil {
		t.Fatal(err)
	}
	want, err := LoadContacts(conn, k, ids)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || !reflect.DeepEqual(got, want) {
		t.Fatalf("LoadRouting\n%+v\nstep by step\n%+v", got, want)
	}
	if got[0].ID != "ada" || got[0].Revision != 7 || got[0].SuppressedUntil["drop:sms:web-01:HTTP: 80:critical"] != 99 ||
		len(got[0].Rules) != 1 || len(got[0].RuleErrors) != 2 {
		t.Fatalf("ada %+v", got[0])
	}
	none, err := LoadRouting(conn, k, "unknown", "x", false)
	if err != nil || len(none.Contacts) != 2 || none.Contacts[0].ID != "ada" || none.Contacts[1].ID != "cyd" {
		t.Fatalf("an unknown entity still gets contacts_for:ALL: %+v %v", none, err)
	}

	// Asked for, the escalation policies and the check's ladder policies come in the same reply.
	db.Do(t, "HSET", k.EscalationPolicies(), "p1", `{"id":"p1"}`, "p2", `{"id":"p2"}`)
	db.Do(t, "SADD", k.CheckEscalations(schema.CheckID("web-01", "HTTP: 80")), "p2", "old")
	with, err := LoadRouting(conn, k, "web-01", "HTTP: 80", true)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(with.CheckEscalations)
	if !reflect.DeepEqual(with.Contacts, want) ||
		!reflect.DeepEqual(with.EscalationPolicies, map[string]string{"p1": `{"id":"p1"}`, "p2": `{"id":"p2"}`}) ||
		!reflect.DeepEqual(with.CheckEscalations, []string{"old", "p2"}) {
		t.Fatalf("with escalations: %+v", with)
	}
}

// TestLoadRoutingsReadsSeveralAsLoadRoutingDoes: several checks' routing in one call equals each
// read alone, after Redis forgot its scripts as well (the script is loaded again); a contact
// interested in several checks is read once and shared; a key of the wrong type is an error
// naming what was read.
func TestLoadRoutingsReadsSeveralAsLoadRoutingDoes(t *testing.T) {
	t.Parallel()
	db := testredis.StartServer(t).NewDB(t) // a server of its own: SCRIPT FLUSH is server-wide
	k := schema.NewKeys("")
	db.Do(t, "HSET", k.EntityIDsByName(), "web-01", "E1", "db-01", "E2")
	db.Do(t, "SADD", k.ContactsFor("E1"), "ada")
	db.Do(t, "SADD", k.ContactsFor("E2"), "bob", "ada")
	for _, c := range []string{"ada", "bob"} {
		db.Do(t, "HSET", k.Contact(c), "first_name", c)
		db.Do(t, "HSET", k.ContactMedia(c), "email", c+"@example.com")
	}
	db.Do(t, "HSET", k.ContactAlertState("bob"), "revision", 3)
	db.Do(t, "HSET", k.EscalationPolicies(), "p1", `{"id":"p1"}`)
	reqs := []RoutingRequest{{Entity: "web-01", Check: "HTTP"}, {Entity: "db-01", Check: "MySQL", Escalations: true},
		{Entity: "unknown", Check: "x"}}
	conn := db.Conn(t)
	defer conn.Close()
	db.Do(t, "SCRIPT", "FLUSH")
	got, err := LoadRoutings(conn, k, reqs)
	if err != nil {
		t.Fatal(err)
	}
	for i, req := range reqs {
		alone, err := LoadRouting(conn, k, req.Entity, req.Check, req.Escalations)
		if err != nil || !reflect.DeepEqual(got[i], alone) {
			t.Fatalf("%s:%s: together %+v, alone %+v (%v)", req.Entity, req.Check, got[i], alone, err)
		}
	}
	if len(got[1].Contacts) != 2 || got[1].Contacts[1].Revision != 3 || got[1].EscalationPolicies["p1"] == "" ||
		got[0].EscalationPolicies != nil {
		t.Fatalf("db-01:MySQL %+v, web-01:HTTP %+v", got[1], got[0])
	}
	if got[0].Contacts[0].ID != "ada" || got[1].Contacts[0].ID != "ada" {
		t.Fatalf("ada: %+v %+v", got[0].Contacts, got[1].Contacts)
	}
	got[0].Contacts[0].SuppressedUntil["x"] = 1
	if got[1].Contacts[0].SuppressedUntil["x"] != 1 {
		t.Fatal("ada read for two checks is not shared")
	}
	db.Do(t, "SET", k.ContactsFor("E2"), "not a set")
	if _, err := LoadRoutings(conn, k, reqs); err == nil || !strings.Contains(err.Error(), "3 checks (web-01:HTTP, ...)") {
		t.Fatalf("a contacts_for key of the wrong type: %v", err)
	}
}
