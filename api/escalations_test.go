package api

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestEscalationPolicyRoutes(t *testing.T) {
	t.Parallel()
	srv, _ := apiServer(t, nil)
	expect(t, "contacts", call(t, srv, "POST", "/contacts", vndJSON, twoContacts), 201)
	expect(t, "entity", call(t, srv, "POST", "/entities", vndJSON, `{"entities":[{"id":"e1","name":"web-01"}]}`), 201)
	a := expect(t, "create", call(t, srv, "POST", "/escalation_policies", vndJSON,
		`{"escalation_policies":[{"id":"web-oncall","entities":["web-01"],"steps":[{"delay":"0 minutes","contacts":["abc"]},{"delay":"15 minutes","contacts":["872"],"media":["sms"]}],"repeat":"30 minutes"}]}`), 201)
	if !reflect.DeepEqual(a.json(t), []any{"web-oncall"}) || a.header.Get("Location") != "http://flapjack.example:3081/escalation_policies/web-oncall" {
		t.Fatalf("create: %s %v", a.body, a.header)
	}
	expectErrors(t, "unknown contact", call(t, srv, "POST", "/escalation_policies", vndJSON,
		`{"escalation_policies":[{"id":"x","steps":[{"delay":0,"contacts":["ghost"]}]}]}`), 422, `contact "ghost" does not exist`)
	expectErrors(t, "bad delay", call(t, srv, "POST", "/escalation_policies", vndJSON,
		`{"escalation_policies":[{"id":"x","steps":[{"delay":"soonish","contacts":["abc"]}]}]}`), 422, "steps[0].delay")
	var got struct {
		Policies []escalationPolicyJSON `json:"escalation_policies"`
	}
	a = expect(t, "GET", call(t, srv, "GET", "/escalation_policies/web-oncall", "", ""), 200)
	if err := json.Unmarshal(a.body, &got); err != nil {
		t.Fatal(err)
	}
	p := got.Policies[0]
	if len(got.Policies) != 1 || len(p.Steps) != 2 || p.Steps[1].Delay != 900 || p.Repeat != 1800 ||
		!reflect.DeepEqual(p.Links.Contacts, []string{"872", "abc"}) || !reflect.DeepEqual(p.Links.Entities, []string{"e1"}) {
		t.Fatalf("GET: %s", a.body)
	}
	expectErrors(t, "GET missing", call(t, srv, "GET", "/escalation_policies/ghost", "", ""), 404, "ghost")
	expectErrors(t, "DELETE missing", call(t, srv, "DELETE", "/escalation_policies/web-oncall,ghost", "", ""), 404, "ghost")
	expect(t, "DELETE", call(t, srv, "DELETE", "/escalation_policies/web-oncall", "", ""), 204)
	a = expect(t, "GET all", call(t, srv, "GET", "/escalation_policies", "", ""), 200)
	if string(a.body) != `{"escalation_policies":[]}`+"\n" && string(a.body) != `{"escalation_policies":[]}` {
		t.Fatalf("after DELETE: %q", a.body)
	}
}
