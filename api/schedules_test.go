package api

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/importer"
	"github.com/flapjackgo/flapjack/oncall"
	"github.com/flapjackgo/flapjack/schema"
)

func TestScheduleRoutes(t *testing.T) {
	t.Parallel()
	// during the override of 872 in web-primary; quiet has nobody but its fallback
	at := time.Date(2026, 4, 1, 13, 0, 0, 0, time.UTC)
	srv, db := apiServer(t, func(o *Options) { o.Clock = clock.NewFake(at) })
	expect(t, "contacts", call(t, srv, "POST", "/contacts", vndJSON, twoContacts), 201)
	a := expect(t, "GET none", call(t, srv, "GET", "/schedules", "", ""), 200)
	if string(a.body) != `{"schedules":[]}`+"\n" && string(a.body) != `{"schedules":[]}` {
		t.Fatalf("no schedules: %q", a.body)
	}
	conn := db.Conn(t)
	defer conn.Close()
	keys := schema.NewKeys("")
	for _, imp := range []struct {
		f    func(context.Context, redis.Conn, schema.Keys, []byte, importer.Options) (importer.Report, error)
		data string
	}{
		{importer.Schedules, `[{"id": "web-primary", "name": "Web primary", "timezone": "Europe/London",
		  "layers": [{"name": "weekly", "start": "2026-03-23T09:00:00", "turn": "1 week", "members": ["abc", "872"]}],
		  "overrides": [{"contact": "872", "start": "2026-04-01T12:00:00Z", "end": "2026-04-01T14:00:00Z"}]},
		  {"id": "quiet", "timezone": "UTC", "fallback": ["abc"]}]`},
		{importer.Entities, `[{"id": "e1", "name": "web-01", "schedules": ["web-primary"]}]`},
	} {
		if rep, err := imp.f(context.Background(), conn, keys, []byte(imp.data), importer.Options{}); err != nil {
			t.Fatalf("import: %v %v", err, rep.Problems)
		}
	}
	a = expect(t, "GET one", call(t, srv, "GET", "/schedules/web-primary", "", ""), 200)
	var got struct {
		Schedules []struct {
			ID, Name, Timezone string
			Layers             []struct{ Members []string }
			Overrides          []struct{ Contact, Start string }
			OnCall             oncall.OnCall `json:"on_call"`
			Links              scheduleLinks
		}
	}
	if err := json.Unmarshal(a.body, &got); err != nil {
		t.Fatal(err)
	}
	s := got.Schedules[0]
	if len(got.Schedules) != 1 || s.ID != "web-primary" || s.Name != "Web primary" || s.Timezone != "Europe/London" ||
		!reflect.DeepEqual(s.Layers[0].Members, []string{"abc", "872"}) || s.Overrides[0].Start != "2026-04-01T12:00:00Z" ||
		!reflect.DeepEqual(s.Links, scheduleLinks{Contacts: []string{"872", "abc"}, Entities: []string{"e1"}}) {
		t.Fatalf("GET one: %s", a.body)
	}
	if want := (oncall.OnCall{Contacts: []string{"872"}, Source: oncall.FromOverride, Index: 0}); !reflect.DeepEqual(s.OnCall, want) {
		t.Errorf("on call in web-primary: %+v, want %+v", s.OnCall, want)
	}
	a = expect(t, "GET all", call(t, srv, "GET", "/schedules", "", ""), 200)
	got.Schedules = nil // decoding into the elements read before would keep their fields the answer leaves out
	if err := json.Unmarshal(a.body, &got); err != nil || len(got.Schedules) != 2 || got.Schedules[0].ID != "quiet" ||
		!reflect.DeepEqual(got.Schedules[0].Links, scheduleLinks{Contacts: []string{"abc"}, Entities: []string{}}) {
		t.Fatalf("GET all: %v %s", err, a.body)
	}
	if want := (oncall.OnCall{Contacts: []string{"abc"}, Source: oncall.FromFallback, Index: -1}); !reflect.DeepEqual(got.Schedules[0].OnCall, want) {
		t.Errorf("on call in quiet: %+v, want %+v", got.Schedules[0].OnCall, want)
	}
	expectErrors(t, "GET missing", call(t, srv, "GET", "/schedules/web-primary,ghost", "", ""), 404, "ghost")

	expectErrors(t, "a step naming an unknown schedule", call(t, srv, "POST", "/escalation_policies", vndJSON,
		`{"escalation_policies":[{"id":"p","steps":[{"delay":0,"schedules":["ghost"]}]}]}`), 422, `schedule "ghost" does not exist`)
	expect(t, "a step naming a schedule", call(t, srv, "POST", "/escalation_policies", vndJSON,
		`{"escalation_policies":[{"id":"p","steps":[{"delay":0,"schedules":["web-primary"]}]}]}`), 201)
	a = expect(t, "GET policy", call(t, srv, "GET", "/escalation_policies/p", "", ""), 200)
	var policies struct {
		Policies []escalationPolicyJSON `json:"escalation_policies"`
	}
	if err := json.Unmarshal(a.body, &policies); err != nil || !reflect.DeepEqual(policies.Policies[0].Steps[0].Schedules, []string{"web-primary"}) {
		t.Fatalf("GET policy: %v %s", err, a.body)
	}
}
