package importer

import (
	"testing"

	"github.com/flapjackgo/flapjack/internal/testing/fj16"
	"github.com/flapjackgo/flapjack/schema"
)

// TestFlapjack16ContactsUpdatedInPlace: importing contacts that a database written by the real
// Flapjack 1.6 data layer already holds (found by their contact:ID hashes; 1.6 keeps no
// all_contacts index) replaces them in place: their old media and rules go, nothing is
// duplicated, the index is repaired, and entities may list them.
func TestFlapjack16ContactsUpdatedInPlace(t *testing.T) {
	t.Parallel()
	e := &env{t: t, db: fj16.NewDB(t), keys: schema.NewKeys("")}

	rep := e.mustImport(Contacts, []byte(`{"contacts":[
		{"id":"22","first_name":"Charles","last_name":"Babbage","email":"cb@example.com",
		 "media":{"sms":{"address":"+15555550199","interval":60}},
		 "notification_rules":[{"id":"cb-sms","critical_media":["sms"]}]}]}`))
	if rep.Imported != 1 {
		t.Fatalf("imported %d, want 1: %+v", rep.Imported, rep)
	}
	// 21 and ops-team join the index; 22 joined it with the import's own write.
	sameStrings(t, "notes", rep.Notes, []string{"all_contacts: 2 contacts brought in line with their contact:ID hashes"})
	dump := e.db.Dump(t)
	for key, want := range map[string]string{
		"contact:22":                        "hash{email=cb@example.com, first_name=Charles, last_name=Babbage}",
		"contact_media:22":                  "hash{sms=+15555550199}",
		"contact_media_intervals:22":        "hash{sms=60}",
		"contact_notification_rules:22":     "set{cb-sms}",
		"notification_rule:rule-babbage-db": "",
		"all_contacts":                      "set{21, 22, ops-team}",
		// 1.6's other contacts are left as they were
		"contact:21":       "hash{email=ada@example.com, first_name=Ada, last_name=Lovelace}",
		"contact_media:21": "hash{email=ada@example.com, jabber=ada@jabber.example.com, pagerduty=a1b2c3d4e5, sms=+447700900123}",
	} {
		if got := dump[key]; got != want {
			t.Errorf("%s = %q, want %q", key, got, want)
		}
	}

	// An entity file may list a 1.6 contact.
	rep = e.mustImport(Entities, []byte(`{"entities":[{"id":"5002","name":"spare.example.com","contacts":["ops-team"]}]}`))
	sameStrings(t, "entity notes", rep.Notes, nil)
	if got := e.db.Dump(t)["contacts_for:5002"]; got != "set{ops-team}" {
		t.Errorf("contacts_for:5002 = %q, want the 1.6 contact", got)
	}
}
