package main

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/flapjackgo/flapjack/internal/testing/fj16"
)

// TestStatusCountsFlapjack16Contacts: `flapjack status` counts the contacts of a database
// written by the real Flapjack 1.6 data layer, which are found by their contact:ID hashes (1.6
// keeps no all_contacts index).
func TestStatusCountsFlapjack16Contacts(t *testing.T) {
	t.Parallel()
	db := fj16.NewDB(t)
	env := []string{"FLAPJACK_REDIS_URL=" + db.URL()}
	out, _, _ := flapjack(t, env, "", "status", "--json")
	var s struct {
		Contacts int `json:"contacts"`
		Failing  int `json:"failing_checks"`
	}
	if err := json.Unmarshal([]byte(out), &s); err != nil || s.Contacts != 3 || s.Failing != 2 {
		t.Fatalf("status --json: %v %s", err, out)
	}
	text, _, _ := flapjack(t, env, "", "status")
	if !regexp.MustCompile(`(?m)^contacts\s+3$`).MatchString(text) {
		t.Fatalf("status does not count the three 1.6 contacts:\n%s", text)
	}
}
