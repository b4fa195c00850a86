package views_test

import (
	"reflect"
	"testing"

	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/views"
	"github.com/flapjackgo/flapjack/schema"
)

func TestSortForTriage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   []views.TriageKey
		want []string
	}{
		{"severity before recency", []views.TriageKey{
			{"warning", 900, "a:warn-new"}, {"critical", 100, "b:crit-old"}, {"unknown", 1000, "c:unknown"}, {"critical", 500, "d:crit-new"},
		}, []string{"d:crit-new", "b:crit-old", "a:warn-new", "c:unknown"}},
		{"down counts as critical, other states last", []views.TriageKey{
			{"ok", 999, "a:ok"}, {"down", 10, "b:down"}, {"critical", 20, "c:crit"},
		}, []string{"c:crit", "b:down", "a:ok"}},
		{"ties broken by id", []views.TriageKey{
			{"warning", 5, "z:z"}, {"warning", 5, "a:a"},
		}, []string{"a:a", "z:z"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := append([]views.TriageKey(nil), tc.in...)
			views.SortForTriage(rows, func(k views.TriageKey) views.TriageKey { return k })
			var got []string
			for _, r := range rows {
				got = append(got, r.ID)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("order %v, want %v", got, tc.want)
			}
		})
	}
}

func TestLastAlerts(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	keys := schema.NewKeys("fj:")
	conn := db.Conn(t)
	defer conn.Close()
	// a:X: newest first — an executive decision, then a routing that alerted Ada by email and
	// sms (not Bob, whose rules dropped it), then an older one that alerted Bob.
	db.Do(t, "RPUSH", keys.Explain("a:X"),
		`{"time":300,"stage":"executive","type":"service","state":"critical","verdict":"notified","notification":"problem","severity":"critical"}`,
		`{"time":200,"stage":"notifier","type":"problem","severity":"critical","verdict":"routed","contacts":[`+
			`{"id":"ada","name":"Ada Lovelace","media":[{"medium":"email","alerted":true,"reason":"alerted"},{"medium":"sms","alerted":true,"reason":"alerted"}]},`+
			`{"id":"bob","name":"Bob","media":[{"medium":"email","alerted":false,"reason":"interval"}]}]}`,
		`{"time":100,"stage":"notifier","type":"problem","severity":"warning","verdict":"routed","contacts":[{"id":"bob","media":[{"medium":"email","alerted":true,"reason":"alerted"}]}]}`)
	// b:Y: routed, but nobody was alerted.
	db.Do(t, "RPUSH", keys.Explain("b:Y"),
		`{"time":50,"stage":"notifier","type":"problem","severity":"critical","verdict":"routed","contacts":[{"id":"bob","media":[{"medium":"email","alerted":false,"reason":"interval"}]}]}`)
	got, err := views.LastAlerts(conn, keys, []model.CheckRef{{Entity: "a", Check: "X"}, {Entity: "b", Check: "Y"}, {Entity: "c", Check: "none"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []views.LastAlert{
		{Time: 200, Type: "problem", Severity: "critical", Recipients: []views.Recipient{{ContactID: "ada", Name: "Ada Lovelace", Media: []string{"email", "sms"}}}},
		{}, {},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("LastAlerts = %+v, want %+v", got, want)
	}
}

func TestChecksAlerting(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	keys := schema.NewKeys("")
	conn := db.Conn(t)
	defer conn.Close()
	db.Do(t, "ZADD", keys.AlertingChecks("ada", "email"), 1, "web:HTTP", 2, "db:Disk")
	db.Do(t, "ZADD", keys.AlertingChecks("ada", "sms"), 1, "web:HTTP")
	db.Do(t, "ZADD", keys.AlertingChecks("bob", "email"), 1, "other:X")
	got, err := views.ChecksAlerting(conn, keys, "ada", []string{"email", "sms", "jabber"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"db:Disk", "web:HTTP"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ChecksAlerting = %v, want %v", got, want)
	}
}
