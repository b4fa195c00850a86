package web

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/flapjackgo/flapjack/model/roster"
)

// storedContact reads a contact back through the roster, as the notifier would.
func (f *fixture) storedContact(t *testing.T, id string) (roster.StoredContact, bool) {
	t.Helper()
	conn := f.db.Conn(t)
	defer conn.Close()
	found, err := roster.ReadContacts(context.Background(), conn, f.keys, []string{id}, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) == 0 {
		return roster.StoredContact{}, false
	}
	return found[0], true
}

// rosterMessage is what the roster's validation says of a value: the web must say the same.
func rosterMessage(t *testing.T, err error) string {
	t.Helper()
	if err == nil {
		t.Fatal("the roster accepts the value the test means to be refused")
	}
	return html.EscapeString(err.Error())
}

// TestContactEditing: contacts, media and rules are created, changed and deleted through the
// roster's writes; invalid values are refused with the roster's (the JSON API's) messages and
// nothing is written; every write needs a login and the CSRF token.
func TestContactEditing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	anon := f.client(t, false)
	if code, _, _ := anon.do("POST", "/contacts", url.Values{"csrf_token": {anon.token("/contacts")}, "id": {"grace"}}); code != http.StatusUnauthorized {
		t.Errorf("logged out: %d, want 401", code)
	}
	c := f.client(t, true)
	if code, _, _ := c.do("POST", "/contacts", url.Values{"id": {"grace"}}); code != http.StatusForbidden {
		t.Errorf("no token: %d, want 403", code)
	}
	if _, ok := f.storedContact(t, "grace"); ok {
		t.Fatal("a refused request created the contact")
	}
	token := c.token("/contacts")
	post := func(path string, form url.Values) (int, string, string) {
		t.Helper()
		form.Set("csrf_token", token)
		code, body, h := c.do("POST", path, form)
		return code, body, h.Get("Location")
	}

	badTZ := rosterMessage(t, roster.ValidateContact(roster.ContactData{ID: "grace", ContactInfo: roster.ContactInfo{Timezone: "Mars/Olympus"}}))
	if code, body, _ := post("/contacts", url.Values{"id": {"grace"}, "timezone": {"Mars/Olympus"}}); code != http.StatusUnprocessableEntity || !strings.Contains(body, badTZ) {
		t.Errorf("bad timezone: %d, want 422 with %q\n%s", code, badTZ, body)
	}
	if _, ok := f.storedContact(t, "grace"); ok {
		t.Fatal("an invalid contact was written")
	}
	code, _, loc := post("/contacts", url.Values{"id": {"grace"}, "first_name": {"Grace"}, "last_name": {"Hopper"}, "email": {"grace@example.com"}, "timezone": {"America/New_York"}})
	if code != http.StatusSeeOther || loc != "/contacts/grace" {
		t.Fatalf("create: %d to %q", code, loc)
	}
	contains(t, c.get("/contacts/grace"), "/contacts/grace", "Contact grace created.", "Grace Hopper", "America/New_York")
	if code, _, _ := post("/contacts", url.Values{"id": {"grace"}}); code != http.StatusConflict {
		t.Errorf("same id again: %d, want 409", code)
	}
	if code, _, _ := post("/contacts/grace", url.Values{"first_name": {"Grace B."}, "last_name": {"Hopper"}, "timezone": {"UTC"}}); code != http.StatusSeeOther {
		t.Errorf("edit: %d", code)
	}
	if got, _ := f.storedContact(t, "grace"); got.FirstName != "Grace B." || got.Timezone != "UTC" || got.Email != "" {
		t.Errorf("after edit: %+v", got.ContactInfo)
	}

	// Media.
	tooShort := int64(roster.MinInterval - 1)
	badInterval := rosterMessage(t, roster.ValidateMedium(roster.Medium{Name: "sms", Address: "+15550100", Interval: &tooShort}))
	for _, tc := range []struct {
		form url.Values
		want string
	}{
		{url.Values{"name": {"sms"}, "address": {"+15550100"}, "interval": {itoa(tooShort)}}, badInterval},
		{url.Values{"name": {"sms"}, "address": {"+15550100"}, "interval": {"soon"}}, "interval: &#34;soon&#34; is not a whole number"},
	} {
		if code, body, _ := post("/contacts/grace/media", tc.form); code != http.StatusUnprocessableEntity || !strings.Contains(body, tc.want) {
			t.Errorf("medium %v: %d, want 422 with %q\n%s", tc.form, code, tc.want, body)
		}
	}
	if code, _, _ := post("/contacts/grace/media", url.Values{"name": {"sms"}, "address": {"+15550100"}, "interval": {"600"}}); code != http.StatusSeeOther {
		t.Errorf("set medium: %d", code)
	}
	got, _ := f.storedContact(t, "grace")
	if len(got.Media) != 1 || got.Media[0].Name != "sms" || got.Media[0].Address != "+15550100" || got.Media[0].Interval == nil || *got.Media[0].Interval != 600 {
		t.Errorf("media after set: %+v", got.Media)
	}

	// Rules.
	// CreateRules puts a rule's fields under notification_rules[i], as the JSON API reports them.
	badRule := "notification_rules[0]." + rosterMessage(t, roster.ValidateRule(roster.Rule{ID: "r1", ContactID: "grace", TimeRestrictions: "{"}))
	if code, body, _ := post("/contacts/grace/notification_rules", url.Values{"critical_media": {"sms"}, "time_restrictions": {"{"}}); code != http.StatusUnprocessableEntity || !strings.Contains(body, badRule) {
		t.Errorf("bad rule: %d, want 422 with %q\n%s", code, badRule, body)
	}
	if code, _, _ := post("/contacts/grace/notification_rules", url.Values{"entities": {"Web-01.example.com"}, "critical_media": {"sms, email"}, "warning_blackhole": {"1"}}); code != http.StatusSeeOther {
		t.Fatalf("add rule: %d", code)
	}
	got, _ = f.storedContact(t, "grace")
	if len(got.Rules) != 1 || !slices.Equal(got.Rules[0].Entities, []string{"web-01.example.com"}) || !slices.Equal(got.Rules[0].CriticalMedia, []string{"sms", "email"}) || !got.Rules[0].WarningBlackhole {
		t.Fatalf("rules after add: %+v", got.Rules)
	}
	rule := got.Rules[0].ID
	if code, _, loc := post("/notification_rules/"+rule, url.Values{"contact_id": {"grace"}, "critical_media": {"sms"}}); code != http.StatusSeeOther || loc != "/contacts/grace" {
		t.Errorf("edit rule: %d to %q", code, loc)
	}
	got, _ = f.storedContact(t, "grace")
	if len(got.Rules) != 1 || !slices.Equal(got.Rules[0].CriticalMedia, []string{"sms"}) || got.Rules[0].WarningBlackhole || len(got.Rules[0].Entities) != 0 {
		t.Errorf("rule after edit: %+v", got.Rules)
	}
	contains(t, c.get("/contacts/grace"), "/contacts/grace", "Rule "+rule+" saved.", "Edit rule "+rule)

	// Deletes.
	if code, _, _ := post("/notification_rules/"+rule, url.Values{"contact_id": {"grace"}, "_method": {"delete"}}); code != http.StatusSeeOther {
		t.Errorf("delete rule: %d", code)
	}
	if code, _, _ := post("/contacts/grace/media", url.Values{"name": {"sms"}, "_method": {"delete"}}); code != http.StatusSeeOther {
		t.Errorf("delete medium: %d", code)
	}
	if got, _ := f.storedContact(t, "grace"); len(got.Rules) != 0 || len(got.Media) != 0 {
		t.Errorf("after deleting the rule and the medium: %+v %+v", got.Rules, got.Media)
	}
	if code, _, _ := post("/contacts/grace/media", url.Values{"name": {"sms"}, "_method": {"delete"}}); code != http.StatusNotFound {
		t.Errorf("deleting a missing medium: %d, want 404", code)
	}
	if code, _, loc := post("/contacts/grace", url.Values{"_method": {"delete"}}); code != http.StatusSeeOther || loc != "/contacts" {
		t.Errorf("delete contact: %d to %q", code, loc)
	}
	if _, ok := f.storedContact(t, "grace"); ok {
		t.Error("contact still stored after delete")
	}
}
