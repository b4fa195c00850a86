package web

import (
	"net/http"
	"testing"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/internal/testing/fj16"
	"github.com/flapjackgo/flapjack/schema"
)

// TestFlapjack16ContactPages: the contacts of a database written by the real Flapjack 1.6 data
// layer (found by their contact:ID hashes; 1.6 keeps no index of them) are listed and shown
// with their media, PagerDuty credentials, rules and entities, and the checks they are
// notified about show them.
func TestFlapjack16ContactPages(t *testing.T) {
	t.Parallel()
	db := fj16.NewDB(t)
	f := &fixture{db: db, keys: schema.NewKeys("")}
	f.srv = f.serve(t, Options{Addr: "127.0.0.1:0", Pool: db.Pool, Keys: f.keys, Clock: clock.NewFake(t0)})
	c := f.client(t, false)

	list := c.get("/contacts")
	contains(t, list, "/contacts", "Lovelace", "Babbage", "Team", `/contacts/21"`, `/contacts/22"`, `/contacts/ops-team"`)
	ada := c.get("/contacts/21")
	contains(t, ada, "/contacts/21", "Ada", "ada@example.com", "447700900123", "ada@jabber.example.com", "10 minutes",
		"analytical", "rule-ada-web", "www.example.com", "db.example.com", "Europe/London")
	contains(t, c.get("/contacts/ops-team"), "/contacts/ops-team", "Ops", "Team")
	if code, _, _ := c.do("GET", "/contacts/ghost", nil); code != http.StatusNotFound {
		t.Errorf("GET /contacts/ghost: %d, want 404", code)
	}
	contains(t, c.get("/check?entity=db.example.com&check=Disk+%2Fvar"), "the Disk /var check", "Lovelace", "Babbage")
}
