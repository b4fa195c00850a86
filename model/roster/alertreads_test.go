package roster_test

import (
	"reflect"
	"testing"

	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/schema"
)

// TestAlertStateReads reads suppression keys and alerting sets as the notifier does: two
// notifications' reads sent together, then received in turn; and ExistingKeys over keys of
// which none, then some, exist.
func TestAlertStateReads(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	conn := db.Conn(t)
	k := schema.NewKeys("pfx:")
	held := k.DropAlerts("ada", "email", "web-01:HTTP", "critical")
	free := k.DropAlerts("bob", "email", "web-01:HTTP", "critical")
	db.Do(t, "ZADD", k.AlertingChecks("ada", "sms"), 1, "db-01:PING", 2, "web-01:HTTP")

	if found, err := roster.ExistingKeys(conn, []string{held, free}); err != nil || found != nil {
		t.Errorf("no key exists: %v %v", found, err)
	}
	db.Do(t, "SET", held, 1)
	first := roster.SendStateReads(conn, k, []string{held, free}, []roster.AlertingSet{{ContactID: "ada", Medium: "sms"}})
	second := roster.SendStateReads(conn, k, nil, []roster.AlertingSet{{ContactID: "bob", Medium: "sms"}})
	if err := conn.Flush(); err != nil {
		t.Fatal(err)
	}
	exists, members, err := first.Receive(conn)
	if err != nil || !reflect.DeepEqual(exists, []bool{true, false}) || !reflect.DeepEqual(members, [][]string{{"db-01:PING", "web-01:HTTP"}}) {
		t.Errorf("first notification's reads: %v %v %v", exists, members, err)
	}
	exists, members, err = second.Receive(conn)
	if err != nil || len(exists) != 0 || !reflect.DeepEqual(members, [][]string{{}}) {
		t.Errorf("second notification's reads: %v %v %v", exists, members, err)
	}

	found, err := roster.ExistingKeys(conn, []string{held, free})
	if want := map[string]bool{held: true, free: false}; err != nil || !reflect.DeepEqual(found, want) {
		t.Errorf("existing keys %v (%v), want %v", found, err, want)
	}
}
