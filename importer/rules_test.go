package importer

import (
	"errors"
	"fmt"
	"testing"
)

const rulesContacts = `[
	{"id": "ada", "media": {"jabber": "ada@example.com"},
	 "notification_rules": [{"id": "ada-catch-all", "critical_media": ["jabber"]}]},
	{"id": "bob", "media": {"jabber": "bob@example.com"},
	 "notification_rules": [{"id": "bob-catch-all", "critical_media": ["jabber"]}]}
]`

// ruleSummary lists a contact's rules as "id entities critical_media", sorted.
func (e *env) ruleSummary(contactID string) []string {
	e.t.Helper()
	var out []string
	for _, r := range e.contacts(contactID)[contactID].Rules {
		out = append(out, fmt.Sprintf("%s %v %v", r.ID, r.Entities, r.CriticalMedia))
	}
	return sortedStrings(out...)
}

func TestRulesAddAndReplaceWithoutTouchingOtherRules(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	e.mustImport(Contacts, []byte(rulesContacts))

	file := []byte(`{"notification_rules": [
		{"id": "ada-web", "contact_id": "ada", "entities": ["WEB-01"], "critical_media": ["jabber"]},
		{"id": 7, "contact_id": "bob", "tags": ["db"], "warning_media": ["jabber"]}
	]}`)
	rep := e.mustImport(Rules, file)
	if rep.Imported != 2 || rep.Skipped != 0 {
		t.Fatalf("report %+v, want 2 imported", rep)
	}
	sameStrings(t, "ada's rules", e.ruleSummary("ada"), []string{"ada-catch-all [] [jabber]", "ada-web [web-01] [jabber]"})
	sameStrings(t, "bob's rules", e.ruleSummary("bob"), []string{"7 [] []", "bob-catch-all [] [jabber]"})

	before := e.db.Dump(t)
	e.mustImport(Rules, file)
	if after := e.db.Dump(t); fmt.Sprint(after) != fmt.Sprint(before) {
		diffDump(t, after, before)
	}

	// The same id again replaces the whole rule: fields the new record leaves out are gone.
	e.mustImport(Rules, []byte(`[{"id": "ada-web", "contact_id": "ada", "entities": ["web-02"]}]`))
	sameStrings(t, "ada's rules after the update", e.ruleSummary("ada"), []string{"ada-catch-all [] [jabber]", "ada-web [web-02] []"})
}

func TestRuleFileProblems(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	e.mustImport(Contacts, []byte(rulesContacts))
	before := e.db.Dump(t)

	file := []byte(`[
		{"id": "good", "contact_id": "ada", "critical_media": ["jabber"]},
		{"contact_id": "ada"},
		{"id": "orphan"},
		{"id": "ghost", "contact_id": "carol"},
		{"id": "bob-catch-all", "contact_id": "ada"},
		{"id": "good", "contact_id": "ada"},
		{"id": "typo", "contact_id": "ada", "critical_meda": ["jabber"]}
	]`)
	rep, err := e.run(Rules, file, Options{})
	if !errors.Is(err, ErrInvalid) || rep.Imported != 0 || rep.Skipped != 7 {
		t.Fatalf("err %v, report %+v: want ErrInvalid with every record skipped", err, rep)
	}
	sameStrings(t, "problems", problemStrings(rep.Problems), []string{
		`record 1: id: is required`,
		`record 2 (id "orphan"): contact_id: is required`,
		`record 3 (id "ghost"): contact_id: contact "carol" does not exist (import contacts first)`,
		`record 4 (id "bob-catch-all"): id: rule "bob-catch-all" belongs to contact "bob"`,
		`record 5 (id "good"): id: duplicate of record 0`,
		`record 6 (id "typo"): critical_meda: unknown field`,
	})
	if after := e.db.Dump(t); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatal("a refused rules file wrote to Redis")
	}

	rep, err = e.run(Rules, file, Options{Partial: true})
	if err != nil || rep.Imported != 1 || rep.Skipped != 6 {
		t.Fatalf("partial: err %v, report %+v: want the one good rule imported", err, rep)
	}
	sameStrings(t, "ada's rules", e.ruleSummary("ada"), []string{"ada-catch-all [] [jabber]", "good [] [jabber]"})
	sameStrings(t, "bob's rules", e.ruleSummary("bob"), []string{"bob-catch-all [] [jabber]"})
}
