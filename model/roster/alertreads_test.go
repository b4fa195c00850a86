package roster_test

import (
	"reflect"
	"testing"

	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/schema"
)

// TestAlertStateReads reads suppression keys and alerting sets as the notifier does: two
// notifications' reads in one round trip; and ExistingKeys over keys of
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
	var none roster.StateReads
	none.Add(nil, nil)
	if replies, err := none.Run(conn, k); replies != nil || err != nil {
		t.Errorf("nothing to read: %v %v", replies, err)
	}
	var reads roster.StateReads
	reads.Add([]string{held, free}, []roster.AlertingSet{{ContactID: "ada", Medium: "sms"}})
	reads.Add(nil, []roster.AlertingSet{{ContactID: "bob", Medium: "sms"}})
	replies, err := reads.Run(conn, k)
	want := []roster.StateReply{
		{Exists: []bool{true, false}, Members: [][]string{{"db-01:PING", "web-01:HTTP"}}},
		{Exists: []bool{}, Members: [][]string{{}}},
	}
	if err != nil || !reflect.DeepEqual(replies, want) {
		t.Errorf("replies %+v (%v), want %+v", replies, err, want)
	}

	found, err := roster.ExistingKeys(conn, []string{held, free})
	if want := map[string]bool{held: true, free: false}; err != nil || !reflect.DeepEqual(found, want) {
		t.Errorf("existing keys %v (%v), want %v", found, err, want)
	}
}
