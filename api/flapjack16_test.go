package api

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/events"
	"github.com/flapjackgo/flapjack/internal/testing/fj16"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/schema"
)

// step16 is one request to the JSON API on the Flapjack 1.6 recording and the answer Flapjack
// 1.6 gave to it, worked out from its gateways/jsonapi code on the recorded data.
type step16 struct {
	name, method, path, ctype, body string
	status                          int
	// want is what the JSON body must hold (see contains; "" for no body), errors the exact
	// error messages of an error answer.
	want   string
	errors []string
	// check, when set, looks at what the request left in Redis.
	check func(t *testing.T, db *testredis.DB)
}

// fj16Server serves the JSON API on a fresh database holding the 1.6 recording.
func fj16Server(t *testing.T) (*httptest.Server, *testredis.DB) {
	t.Helper()
	// The API's clock stands five minutes after the recording: 1.6 timed the current maintenance
	// windows from its own clock then (they last hours; by the wall clock they would have ended
	// since), and the steps end one of them two minutes after the recording.
	at := time.Unix(fj16.Recorded(t).RecordedAt, 0).Add(5 * time.Minute)
	srv, db := apiServer(t, func(o *Options) {
		o.Events = events.NewPublisher(o.Pool, o.Keys, "events")
		o.Clock = clock.NewFake(at)
	})
	conn := db.Conn(t)
	defer conn.Close()
	fj16.Load(t, conn)
	return srv, db
}

// runSteps16 runs steps in order on one server.
func runSteps16(t *testing.T, srv *httptest.Server, db *testredis.DB, steps []step16) {
	t.Helper()
	for _, s := range steps {
		a := call(t, srv, s.method, s.path, s.ctype, s.body)
		if a.status != s.status {
			t.Fatalf("%s: %s %s answered %d, want %d: %s", s.name, s.method, s.path, a.status, s.status, a.body)
		}
		switch {
		case s.errors != nil:
			if got := a.errors(t); !reflect.DeepEqual(got, s.errors) {
				t.Fatalf("%s: errors %q, want %q", s.name, got, s.errors)
			}
		case s.want == "":
			if len(a.body) != 0 {
				t.Fatalf("%s: body %s, want none", s.name, a.body)
			}
		default:
			var want any
			if err := json.Unmarshal([]byte(s.want), &want); err != nil {
				t.Fatalf("%s: the test's want: %v", s.name, err)
			}
			if err := contains(a.json(t), want, "body"); err != nil {
				t.Fatalf("%s: %v\n%s", s.name, err, a.body)
			}
		}
		if len(a.body) > 0 && a.header.Get("Content-Type") != jsonAPIType {
			t.Fatalf("%s: Content-Type %q", s.name, a.header.Get("Content-Type"))
		}
		if s.check != nil {
			s.check(t, db)
		}
	}
}

// dumpHas checks one key of db's dump (testredis.DB.Dump's form; "" for no key).
func dumpHas(key, want string) func(t *testing.T, db *testredis.DB) {
	return func(t *testing.T, db *testredis.DB) {
		t.Helper()
		if got := db.Dump(t)[key]; got != want {
			t.Fatalf("%s = %q, want %q", key, got, want)
		}
	}
}

const (
	ada     = `{"id":"21","first_name":"Ada","last_name":"Lovelace","email":"ada@example.com","timezone":"Europe/London","links":{"entities":["5000","5001"],"media":["21_email","21_jabber","21_sms"],"notification_rules":["f42f90fa-405c-459b-b484-88d05be2c4d5","rule-ada-web"]}}`
	babbage = `{"id":"22","first_name":"Charles","last_name":"Babbage","email":"charles@example.com","timezone":null,"links":{"entities":["5001"],"media":["22_email"],"notification_rules":["d51400c1-4953-4360-91e9-bf9db7cf783e","rule-babbage-db"]}}`
	opsTeam = `{"id":"ops-team","first_name":"Ops","last_name":"Team","email":"ops@example.com","timezone":null,"links":{"entities":[],"media":[],"notification_rules":["610a492f-9964-4db2-9eb0-f3fb2ac43305"]}}`
	adaPD   = `{"service_key":"a1b2c3d4e5","subdomain":"analytical","token":"tok-21","username":"ada","password":"engine","links":{"contacts":["21"]}}`
	adaWeb  = `{"id":"rule-ada-web","tags":["web"],"regex_tags":[],"entities":["www.example.com"],"regex_entities":[],
		"time_restrictions":[{"start_time":"2013-02-01 09:00:00","end_time":"2013-02-01 17:00:00","rrules":[{"validations":{"day":[1,2,3,4,5]},"rule_type":"Weekly","interval":1,"week_start":0}],"exrules":[],"rtimes":[],"extimes":[]}],
		"unknown_media":[],"warning_media":["email"],"critical_media":["sms","email"],"unknown_blackhole":true,"warning_blackhole":false,"critical_blackhole":false,"links":{"contacts":["21"]}}`
	babbageDB = `{"id":"rule-babbage-db","tags":[],"regex_tags":["^d"],"entities":[],"regex_entities":["^db\\."],"unknown_media":["email"],"warning_media":["email"],"critical_media":["email"],"unknown_blackhole":false,"warning_blackhole":true,"critical_blackhole":false,"links":{"contacts":["22"]}}`
)

// TestFlapjack16Database: every JSON API route on a database written by the real Flapjack 1.6
// data layer (internal/testing/fj16) answers as Flapjack 1.6 did on it: status, body shape and
// message. Where we deliberately answer otherwise, README's "Where we differ from Flapjack 1.x"
// says so and the step says why.
func TestFlapjack16Database(t *testing.T) {
	t.Parallel()
	for name, steps := range map[string][]step16{
		"reads":                 reads16,
		"contacts":              contacts16,
		"media and credentials": media16,
		"rules":                 rules16,
		"entities and checks":   entities16,
		"maintenance":           maintenance16,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv, db := fj16Server(t)
			runSteps16(t, srv, db, steps)
		})
	}
}

var reads16 = []step16{
	// 1.6 lists contacts by last name, then first name.
	{name: "every contact", method: "GET", path: "/contacts", status: 200, want: `{"contacts":[` + babbage + `,` + ada + `,` + opsTeam + `]}`},
	{name: "contacts by id, a missing one left out", method: "GET", path: "/contacts/21,ghost", status: 200, want: `{"contacts":[` + ada + `]}`},
	{name: "no contact found", method: "GET", path: "/contacts/ghost,nobody", status: 404, errors: []string{"could not find contacts 'ghost, nobody'"}},
	// The PagerDuty service key is no medium (1.6's media_list leaves it out).
	{name: "every medium", method: "GET", path: "/media", status: 200, want: `{"media":[
		{"id":"21_email","type":"email","address":"ada@example.com","interval":600,"rollup_threshold":5,"links":{"contacts":["21"]}},
		{"id":"21_jabber","type":"jabber","address":"ada@jabber.example.com","interval":null,"rollup_threshold":null,"links":{"contacts":["21"]}},
		{"id":"21_sms","type":"sms","address":"+447700900123","interval":300,"rollup_threshold":null,"links":{"contacts":["21"]}},
		{"id":"22_email","type":"email","address":"charles@example.com","interval":900,"rollup_threshold":null,"links":{"contacts":["22"]}}]}`},
	{name: "media by id, one the contact lacks left out", method: "GET", path: "/media/22_email,22_sms", status: 200, want: `{"media":[{"id":"22_email","address":"charles@example.com"}]}`},
	{name: "media of a missing contact", method: "GET", path: "/media/21_email,ghost_email", status: 404, errors: []string{"could not find contact 'ghost'"}},
	{name: "PagerDuty is no medium id", method: "GET", path: "/media/21_pagerduty", status: 422, errors: []string{"Could not get contact_id from media_id '21_pagerduty'"}},
	{name: "a medium id without a type", method: "GET", path: "/media/21", status: 422, errors: []string{"Could not get contact_id from media_id '21'"}},
	{name: "every set of PagerDuty credentials", method: "GET", path: "/pagerduty_credentials", status: 200, want: `{"pagerduty_credentials":[` + adaPD + `]}`},
	{name: "credentials of a contact without", method: "GET", path: "/pagerduty_credentials/22", status: 200, want: `{"pagerduty_credentials":[]}`},
	{name: "credentials of a missing contact", method: "GET", path: "/pagerduty_credentials/21,ghost", status: 404, errors: []string{"could not find contact 'ghost'"}},
	{name: "every rule", method: "GET", path: "/notification_rules", status: 200, want: `{"notification_rules":[
		{"id":"610a492f-9964-4db2-9eb0-f3fb2ac43305","links":{"contacts":["ops-team"]}},
		{"id":"d51400c1-4953-4360-91e9-bf9db7cf783e","links":{"contacts":["22"]}},
		{"id":"f42f90fa-405c-459b-b484-88d05be2c4d5","links":{"contacts":["21"]}},` + adaWeb + `,` + babbageDB + `]}`},
	{name: "rules by id", method: "GET", path: "/notification_rules/rule-babbage-db,nope", status: 200, want: `{"notification_rules":[` + babbageDB + `]}`},
	{name: "no rule found", method: "GET", path: "/notification_rules/nope,none", status: 404, errors: []string{"could not find notification rules 'nope, none'"}},
	// 1.6 lists entities by name.
	{name: "every entity", method: "GET", path: "/entities", status: 200, want: `{"entities":[
		{"id":"5001","name":"db.example.com","links":{"contacts":["21","22"],"checks":["db.example.com:Disk /var"]}},
		{"id":"5002","name":"spare.example.com","links":{"contacts":[],"checks":[]}},
		{"id":"5000","name":"www.example.com","links":{"contacts":["21"],"checks":["www.example.com:HTTP Port 80","www.example.com:SSH"]}}]}`},
	{name: "enabled entities", method: "GET", path: "/entities?enabled=yes", status: 200, want: `{"entities":[{"id":"5001"},{"id":"5000"}]}`},
	{name: "disabled entities", method: "GET", path: "/entities?enabled=0", status: 200, want: `{"entities":[{"id":"5002","name":"spare.example.com"}]}`},
	{name: "no entity found", method: "GET", path: "/entities/9998,9999", status: 404, errors: []string{"could not find entities: '9998', '9999'"}},
	{name: "every check", method: "GET", path: "/checks", status: 200, want: `{"checks":[
		{"id":"db.example.com:Disk /var","name":"Disk /var","entity_name":"db.example.com","enabled":true,"links":{"entities":["5001"]}},
		{"id":"www.example.com:HTTP Port 80","name":"HTTP Port 80","entity_name":"www.example.com","enabled":true,"links":{"entities":["5000"]}},
		{"id":"www.example.com:SSH","name":"SSH","entity_name":"www.example.com","enabled":true,"links":{"entities":["5000"]}}]}`},
	{name: "checks by id, names with spaces", method: "GET", path: "/checks/www.example.com:HTTP%20Port%2080", status: 200, want: `{"checks":[{"id":"www.example.com:HTTP Port 80"}]}`},
	// flapjack-diner escapes ids with Ruby's URI.escape, which leaves "/" as it is.
	{name: "a check name with a slash", method: "GET", path: "/checks/www.example.com:SSH,db.example.com:Disk%20/var", status: 200,
		want: `{"checks":[{"id":"www.example.com:SSH"},{"id":"db.example.com:Disk /var","name":"Disk /var","entity_name":"db.example.com"}]}`},
	{name: "its status report", method: "GET", path: "/status_report/checks/db.example.com:Disk%20/var", status: 200,
		want: `{"status_reports":[{"name":"Disk /var","state":"critical"}]}`},
	{name: "no check found", method: "GET", path: "/checks/nope.example.com:X", status: 404, errors: []string{"could not find entity checks: 'nope.example.com:X'"}},
	{name: "status report", method: "GET", path: "/status_report/entities/5000", status: 200, want: `{"status_reports":[
		{"name":"HTTP Port 80","state":"warning","summary":"HTTP WARNING: slow","enabled":true,"in_scheduled_maintenance":false,"in_unscheduled_maintenance":false,
		 "last_update":1700000400,"last_change":1700000400,"initial_failure_delay":30,"repeat_failure_delay":60,"links":{"entity":["5000"],"check":["www.example.com:HTTP Port 80"]}},
		{"name":"SSH","state":"ok","summary":"SSH OK","details":"port 22 open","in_scheduled_maintenance":true,"in_unscheduled_maintenance":false,
		 "last_update":1700000300,"last_change":1700000300,"links":{"entity":["5000"],"check":["www.example.com:SSH"]}}],
		"linked":{"entities":[{"id":"5000","name":"www.example.com"}],"checks":[{"id":"www.example.com:HTTP Port 80","name":"HTTP Port 80"},{"id":"www.example.com:SSH","name":"SSH"}]}}`},
	{name: "current unscheduled maintenance shows", method: "GET", path: "/status_report/checks/db.example.com:Disk%20%2Fvar", status: 200,
		want: `{"status_reports":[{"name":"Disk /var","state":"critical","in_unscheduled_maintenance":true,"in_scheduled_maintenance":false}]}`},
	{name: "scheduled maintenance report", method: "GET", path: "/scheduled_maintenance_report/checks/www.example.com:SSH", status: 200, want: `{"scheduled_maintenance_reports":[
		{"scheduled_maintenances":[{"start_time":1700001000,"end_time":1700004600,"duration":3600,"summary":"kernel upgrade"},{"start_time":"<any>","duration":7200,"summary":"datacentre move"}],
		 "links":{"entity":["5000"],"check":["www.example.com:SSH"]}}]}`},
	{name: "unscheduled maintenance report", method: "GET", path: "/unscheduled_maintenance_report/entities/5001", status: 200, want: `{"unscheduled_maintenance_reports":[
		{"unscheduled_maintenances":[{"start_time":1700000600,"end_time":1700001500,"duration":900,"summary":"looking into it"},{"start_time":"<any>","duration":14400,"summary":"disk being replaced"}]}]}`},
	{name: "outage report", method: "GET", path: "/outage_report/checks/www.example.com:SSH?start_time=2023-11-14T00:00:00Z&end_time=2023-11-15T00:00:00Z", status: 200,
		want: `{"outage_reports":[{"outages":[{"state":"critical","start_time":1700000060,"end_time":1700000300,"duration":240,"summary":"SSH CRITICAL: refused","details":"connection refused"}]}]}`},
	{name: "downtime report", method: "GET", path: "/downtime_report/checks/www.example.com:SSH?start_time=2023-11-14T00:00:00Z&end_time=2023-11-15T00:00:00Z", status: 200,
		want: `{"downtime_reports":[{"total_seconds":{"critical":240,"ok":86160},"downtime":[{"state":"critical","start_time":1700000060,"end_time":1700000300}]}]}`},
	{name: "entity metrics", method: "GET", path: "/metrics/entities", status: 200, want: `{"entities":{"all":3,"enabled":2,"failing":2}}`},
	{name: "check metrics", method: "GET", path: "/metrics/checks", status: 200, want: `{"checks":{"all":3,"failing":2}}`},
	// 1.6's checks were last updated long before the test runs.
	{name: "check freshness", method: "GET", path: "/metrics/check_freshness", status: 200,
		want: `{"check_freshness":{"from_0_to_60":0,"from_60_to_300":0,"from_300_to_900":0,"from_900_to_3600":0,"from_3600_to_∞":3}}`},
	{name: "event metrics", method: "GET", path: "/metrics/events", status: 200, want: `{"events":{"processed":"<any>","queue":{"length":0}}}`},
	{name: "all metrics", method: "GET", path: "/metrics?filter=entities,checks", status: 200,
		want: `{"entities":{"all":3,"enabled":2,"failing":2},"checks":{"all":3,"failing":2}}`},
}

const (
	newContact = `{"contacts":[{"id":"31","first_name":"Grace","last_name":"Hopper","email":"grace@example.com","timezone":"America/New_York","tags":["navy","cobol"]}]}`
	replaceLN  = `{"op":"replace","path":"/contacts/0/last_name","value":"Babbage-Smith"}`
)

var contacts16 = []step16{
	{name: "create with the id of a 1.6 contact", method: "POST", path: "/contacts", ctype: vndJSON, status: 409,
		body: `{"contacts":[{"id":"31","first_name":"X"},{"id":"22","first_name":"Y"}]}`, errors: []string{"Contacts already exist with the following IDs: 22"}},
	{name: "nothing of a refused create written", method: "GET", path: "/contacts/31", status: 404, errors: []string{"could not find contacts '31'"}},
	{name: "create, with diner's tags", method: "POST", path: "/contacts", ctype: vndJSON, body: newContact, status: 201, want: `["31"]`,
		check: dumpHas("contact_tag:cobol", "set{31}")},
	// What we create stays visible to Flapjack 1.6, which looks for a first_name field.
	{name: "created as 1.6 finds contacts", method: "GET", path: "/contacts/31", status: 200,
		want:  `{"contacts":[{"id":"31","first_name":"Grace","timezone":"America/New_York"}]}`,
		check: dumpHas("contact:31", "hash{email=grace@example.com, first_name=Grace, last_name=Hopper}")},
	// 1.6's Contact.add took media in the form of the import file.
	{name: "create with media", method: "POST", path: "/contacts", ctype: vndJSON, status: 201, want: `["32"]`,
		body: `{"contacts":[{"id":"32","first_name":"Mary","media":{"email":{"address":"mary@example.com","interval":120},
			"pagerduty":{"service_key":"k32","subdomain":"sub","token":"t","username":"u","password":"p"}}}]}`,
		check: dumpHas("contact_media:32", "hash{email=mary@example.com, pagerduty=k32}")},
	{name: "its media", method: "GET", path: "/media/32_email", status: 200, want: `{"media":[{"id":"32_email","interval":120}]}`,
		check: dumpHas("contact_pagerduty:32", "hash{password=p, subdomain=sub, token=t, username=u}")},
	{name: "create with a bad medium", method: "POST", path: "/contacts", ctype: vndJSON, status: 422,
		body: `{"contacts":[{"id":"33","first_name":"X","media":{"email":7}}]}`, errors: []string{"contacts[0].media.email: must be an address string or an object"}},
	{name: "create without a body array", method: "POST", path: "/contacts", ctype: "application/json", body: `{"contact":{}}`, status: 422,
		errors: []string{"No valid contacts were submitted", `unknown member "contact": the body is {"contacts": [...]}`}},
	{name: "change a 1.6 contact, link an entity with /-", method: "PATCH", path: "/contacts/22", ctype: patchJSON, status: 204,
		body: `[` + replaceLN + `,{"op":"add","path":"/contacts/0/links/entities/-","value":"5000"}]`, check: dumpHas("contacts_for:5000", "set{21, 22}")},
	{name: "changed", method: "GET", path: "/contacts/22", status: 200, want: `{"contacts":[{"id":"22","last_name":"Babbage-Smith","links":{"entities":["5000","5001"]}}]}`},
	{name: "unlink an entity", method: "PATCH", path: "/contacts/22", ctype: patchJSON, status: 204,
		body: `[{"op":"remove","path":"/contacts/0/links/entities/5000"}]`, check: dumpHas("contacts_for:5000", "set{21}")},
	{name: "take over another contact's rule", method: "PATCH", path: "/contacts/ops-team", ctype: patchJSON, status: 204,
		body:  `[{"op":"add","path":"/contacts/0/links/notification_rules/-","value":"rule-babbage-db"}]`,
		check: dumpHas("contact_notification_rules:22", "set{d51400c1-4953-4360-91e9-bf9db7cf783e}")},
	{name: "the rule moved", method: "GET", path: "/notification_rules/rule-babbage-db", status: 200, want: `{"notification_rules":[{"id":"rule-babbage-db","links":{"contacts":["ops-team"]}}]}`},
	{name: "take over a missing rule", method: "PATCH", path: "/contacts/ops-team", ctype: patchJSON, status: 404,
		body:   `[{"op":"replace","path":"/contacts/0/last_name","value":"Nobody"},{"op":"add","path":"/contacts/0/links/notification_rules/-","value":"nope"}]`,
		errors: []string{"could not find notification rule 'nope'"}, check: dumpHas("contact:ops-team", "hash{email=ops@example.com, first_name=Ops, last_name=Team}")},
	{name: "change with a missing contact", method: "PATCH", path: "/contacts/22,ghost", ctype: patchJSON, body: `[` + replaceLN + `]`, status: 404,
		errors: []string{"could not find contacts 'ghost'"}},
	{name: "JSON-Patch that is no array", method: "PATCH", path: "/contacts/22", ctype: patchJSON, body: `{"op":"replace"}`, status: 400,
		errors: []string{"Invalid JSON-Patch request"}},
	{name: "delete with a missing contact", method: "DELETE", path: "/contacts/22,ghost", status: 404, errors: []string{"could not find contacts 'ghost'"},
		check: dumpHas("contact:22", "hash{email=charles@example.com, first_name=Charles, last_name=Babbage-Smith}")},
	{name: "delete a 1.6 contact", method: "DELETE", path: "/contacts/22", status: 204, check: dumpHas("contact_media:22", "")},
	{name: "deleted", method: "GET", path: "/contacts/22", status: 404, errors: []string{"could not find contacts '22'"},
		check: dumpHas("contacts_for:5001", "set{21}")},
	{name: "the rest listed", method: "GET", path: "/contacts", status: 200, want: `{"contacts":[{"id":"32"},{"id":"31"},{"id":"21"},{"id":"ops-team"}]}`},
}

var media16 = []step16{
	{name: "add a medium to a 1.6 contact", method: "POST", path: "/contacts/ops-team/media", ctype: vndJSON, status: 201, want: `["ops-team_sms"]`,
		body: `{"media":[{"type":"sms","address":"+15555550100","interval":120,"rollup_threshold":3}]}`},
	{name: "shown among its links", method: "GET", path: "/contacts/ops-team", status: 200, want: `{"contacts":[{"id":"ops-team","links":{"media":["ops-team_sms"]}}]}`},
	{name: "media of a missing contact", method: "POST", path: "/contacts/ghost/media", ctype: vndJSON, status: 422,
		body: `{"media":[{"type":"sms","address":"+1","interval":1,"rollup_threshold":1}]}`, errors: []string{"Contact id: 'ghost' could not be loaded"}},
	{name: "change a 1.6 medium", method: "PATCH", path: "/media/21_email,22_email", ctype: patchJSON, status: 204,
		body: `[{"op":"replace","path":"/media/0/interval","value":1200}]`, check: dumpHas("contact_media_intervals:22", "hash{email=1200}")},
	{name: "changed", method: "GET", path: "/media/21_email", status: 200, want: `{"media":[{"id":"21_email","interval":1200,"rollup_threshold":5}]}`},
	{name: "change a missing contact's", method: "PATCH", path: "/media/ghost_email", ctype: patchJSON, status: 404,
		body: `[{"op":"replace","path":"/media/0/interval","value":1}]`, errors: []string{"could not find contact 'ghost'"}},
	{name: "delete a 1.6 medium", method: "DELETE", path: "/media/21_jabber", status: 204, check: dumpHas("contact_media:21",
		"hash{email=ada@example.com, pagerduty=a1b2c3d4e5, sms=+447700900123}")},
	{name: "delete a missing contact's", method: "DELETE", path: "/media/ghost_sms", status: 404, errors: []string{"could not find contact 'ghost'"}},
	{name: "credentials for a 1.6 contact", method: "POST", path: "/contacts/22/pagerduty_credentials", ctype: vndJSON, status: 201, want: `["22"]`,
		body:  `{"pagerduty_credentials":[{"service_key":"k22","subdomain":"engines","token":"t22","username":"cb","password":"diff"}]}`,
		check: dumpHas("contact_pagerduty:22", "hash{password=diff, subdomain=engines, token=t22, username=cb}")},
	{name: "credentials for a missing contact", method: "POST", path: "/contacts/ghost/pagerduty_credentials", ctype: vndJSON, status: 422,
		body: `{"pagerduty_credentials":[{"service_key":"k"}]}`, errors: []string{"Contact id: 'ghost' could not be loaded"}},
	{name: "change 1.6 credentials", method: "PATCH", path: "/pagerduty_credentials/21", ctype: patchJSON, status: 204,
		body: `[{"op":"replace","path":"/pagerduty_credentials/0/token","value":"tok-new"}]`},
	{name: "changed credentials", method: "GET", path: "/pagerduty_credentials/21,22", status: 200,
		want: `{"pagerduty_credentials":[{"service_key":"a1b2c3d4e5","token":"tok-new","links":{"contacts":["21"]}},{"service_key":"k22","links":{"contacts":["22"]}}]}`},
	{name: "change a missing contact's credentials", method: "PATCH", path: "/pagerduty_credentials/ghost", ctype: patchJSON, status: 404,
		body: `[{"op":"replace","path":"/pagerduty_credentials/0/token","value":"x"}]`, errors: []string{"could not find contact 'ghost'"}},
	{name: "delete 1.6 credentials", method: "DELETE", path: "/pagerduty_credentials/21", status: 204, check: dumpHas("contact_pagerduty:21", "")},
	{name: "delete a missing contact's credentials", method: "DELETE", path: "/pagerduty_credentials/ghost", status: 404, errors: []string{"could not find contact 'ghost'"}},
}

var rules16 = []step16{
	{name: "a rule with entity_tags", method: "POST", path: "/contacts/ops-team/notification_rules", ctype: vndJSON, status: 201, want: `["ops-rule"]`,
		body: `{"notification_rules":[{"id":"ops-rule","entity_tags":["db"],"warning_media":["email"],"critical_media":["email"]}]}`},
	{name: "entity_tags are the rule's tags", method: "GET", path: "/notification_rules/ops-rule", status: 200,
		want: `{"notification_rules":[{"id":"ops-rule","tags":["db"],"warning_blackhole":false,"links":{"contacts":["ops-team"]}}]}`},
	// 1.6 looks the contact up before it validates the rules.
	{name: "rules for a missing contact", method: "POST", path: "/contacts/ghost/notification_rules", ctype: vndJSON, status: 404,
		body: `{"notification_rules":[{"entity_tags":["db"],"critical_meda":[]}]}`, errors: []string{"could not find contact 'ghost'"}},
	{name: "rules without an array", method: "POST", path: "/contacts/ghost/notification_rules", ctype: vndJSON, status: 422,
		body: `{}`, errors: []string{"No valid notification rules were submitted"}},
	{name: "change 1.6 rules", method: "PATCH", path: "/notification_rules/rule-ada-web,rule-babbage-db", ctype: patchJSON, status: 204,
		body: `[{"op":"replace","path":"/notification_rules/0/critical_blackhole","value":true}]`},
	{name: "changed rules", method: "GET", path: "/notification_rules/rule-ada-web,rule-babbage-db", status: 200,
		want: `{"notification_rules":[{"id":"rule-ada-web","critical_blackhole":true,"tags":["web"]},{"id":"rule-babbage-db","critical_blackhole":true,"regex_tags":["^d"]}]}`},
	{name: "change with a missing rule", method: "PATCH", path: "/notification_rules/rule-ada-web,nope", ctype: patchJSON, status: 404,
		body: `[{"op":"replace","path":"/notification_rules/0/critical_blackhole","value":false}]`, errors: []string{"could not find notification rule 'nope'"}},
	{name: "delete a 1.6 rule", method: "DELETE", path: "/notification_rules/rule-babbage-db", status: 204,
		check: dumpHas("contact_notification_rules:22", "set{d51400c1-4953-4360-91e9-bf9db7cf783e}")},
	{name: "delete a missing rule", method: "DELETE", path: "/notification_rules/nope", status: 404, errors: []string{"could not find notification rule 'nope'"}},
}

var entities16 = []step16{
	{name: "create an entity", method: "POST", path: "/entities", ctype: vndJSON, status: 201, want: `["5003"]`,
		body: `{"entities":[{"id":"5003","name":"new.example.com"}]}`, check: dumpHas("all_entity_names_by_id",
			"hash{5000=www.example.com, 5001=db.example.com, 5002=spare.example.com, 5003=new.example.com}")},
	{name: "create an entity with a 1.6 contact and tags", method: "POST", path: "/entities", ctype: vndJSON, status: 201, want: `["5004"]`,
		body:  `{"entities":[{"id":"5004","name":"mail.example.com","contacts":["22","ops-team"],"tags":["mail"]}]}`,
		check: dumpHas("contacts_for:5004", "set{22, ops-team}")},
	{name: "its tags", method: "GET", path: "/entities/5004", status: 200, want: `{"entities":[{"id":"5004","links":{"contacts":["22","ops-team"]}}]}`,
		check: dumpHas("entity_tag:mail", "set{5004}")},
	// 1.6's Entity.add replaced the entity's contacts with those listed.
	{name: "again with other contacts", method: "POST", path: "/entities", ctype: vndJSON, status: 201, want: `["5004"]`,
		body: `{"entities":[{"id":"5004","name":"mail.example.com","contacts":["21"]}]}`, check: dumpHas("contacts_for:5004", "set{21}")},
	// 1.6 skipped a contact it could not find; we say so and write nothing.
	{name: "an entity with a missing contact", method: "POST", path: "/entities", ctype: vndJSON, status: 422,
		body:   `{"entities":[{"id":"5005","name":"x.example.com","contacts":["21","ghost"]}]}`,
		errors: []string{"entities[0].contacts[1]: contact 'ghost' does not exist"}},
	{name: "not created", method: "GET", path: "/entities/5005", status: 404, errors: []string{"could not find entities: '5005'"}},
	{name: "an entity without id", method: "POST", path: "/entities", ctype: vndJSON, status: 403, body: `{"entities":[{"name":"x.example.com"}]}`,
		errors: []string{"Entity with a nil id detected"}},
	{name: "link a 1.6 contact and a tag with /-", method: "PATCH", path: "/entities/5002", ctype: patchJSON, status: 204,
		body:  `[{"op":"add","path":"/entities/0/links/contacts/-","value":"ops-team"},{"op":"add","path":"/entities/0/links/tags/-","value":"spare"}]`,
		check: dumpHas("contacts_for:5002", "set{ops-team}")},
	{name: "linked", method: "GET", path: "/entities/5002", status: 200, want: `{"entities":[{"id":"5002","links":{"contacts":["ops-team"]}}]}`,
		check: dumpHas("entity_tag:spare", "set{5002}")},
	{name: "unlink a 1.6 tag", method: "PATCH", path: "/entities/5000", ctype: patchJSON, status: 204,
		body: `[{"op":"remove","path":"/entities/0/links/tags/prod"}]`, check: dumpHas("entity_tag:prod", "")},
	{name: "change a missing entity", method: "PATCH", path: "/entities/9999", ctype: patchJSON, status: 404,
		body: `[{"op":"add","path":"/entities/0/links/tags/-","value":"x"}]`, errors: []string{"could not find entity '9999'"}},
	{name: "create a check", method: "POST", path: "/checks", ctype: vndJSON, status: 201, want: `["spare.example.com:PING"]`,
		body: `{"checks":[{"entity_id":"5002","name":"PING","tags":["net"]}]}`},
	{name: "disable a 1.6 check and tag it with /-", method: "PATCH", path: "/checks/www.example.com:SSH", ctype: patchJSON, status: 204,
		body: `[{"op":"replace","path":"/checks/0/enabled","value":false},{"op":"add","path":"/checks/0/links/tags/-","value":"bastion"}]`},
	{name: "disabled and tagged", method: "GET", path: "/checks/www.example.com:SSH", status: 200,
		want: `{"checks":[{"id":"www.example.com:SSH","enabled":false,"tags":["bastion"]}]}`},
	{name: "a check of a missing entity", method: "PATCH", path: "/checks/nope.example.com:SSH", ctype: patchJSON, status: 404,
		body: `[{"op":"replace","path":"/checks/0/enabled","value":true}]`, errors: []string{"could not find entity 'nope.example.com'"}},
	{name: "a missing check", method: "PATCH", path: "/checks/www.example.com:FTP", ctype: patchJSON, status: 404,
		body: `[{"op":"replace","path":"/checks/0/enabled","value":true}]`, errors: []string{"could not find entity check 'FTP'"}},
}

var maintenance16 = []step16{
	{name: "schedule maintenance of a 1.6 check", method: "POST", path: "/scheduled_maintenances/checks/www.example.com:HTTP%20Port%2080", ctype: vndJSON, status: 204,
		body:  `{"scheduled_maintenances":[{"start_time":"2030-01-01T10:00:00Z","duration":3600,"summary":"move"}]}`,
		check: dumpHas("www.example.com:HTTP Port 80:1893492000:scheduled_maintenance:summary", "move")},
	{name: "without a start time", method: "POST", path: "/scheduled_maintenances/checks/www.example.com:SSH", ctype: vndJSON, status: 403,
		body: `{"scheduled_maintenances":[{"duration":3600}]}`, errors: []string{"start time must be provided"}},
	// A window that is over is history: 1.6 leaves it as it is.
	{name: "end 1.6's past window", method: "DELETE", path: "/scheduled_maintenances/checks/www.example.com:SSH?start_time=2023-11-14T22:30:00Z", status: 204,
		check: dumpHas("www.example.com:SSH:1700001000:scheduled_maintenance:summary", "kernel upgrade")},
	{name: "end a window to come", method: "DELETE", path: "/scheduled_maintenances/checks/www.example.com:HTTP%20Port%2080?start_time=2030-01-01T10:00:00Z", status: 204,
		check: dumpHas("www.example.com:HTTP Port 80:1893492000:scheduled_maintenance:summary", "")},
	{name: "end without a start time", method: "DELETE", path: "/scheduled_maintenances/checks/www.example.com:SSH", status: 403,
		errors: []string{"start time must be provided"}},
	{name: "acknowledge a 1.6 entity's checks", method: "POST", path: "/unscheduled_maintenances/entities/5001", ctype: vndJSON, status: 204,
		body: `{"unscheduled_maintenances":[{"duration":600,"summary":"on it"}]}`},
	{name: "end 1.6's current unscheduled maintenance", method: "PATCH", path: "/unscheduled_maintenances/checks/db.example.com:Disk%20%2Fvar", ctype: patchJSON, status: 204,
		// two minutes after it began (1.6 timed its start from its own clock, at the recording)
		body:  `[{"op":"replace","path":"/unscheduled_maintenances/0/end_time","value":"2026-11-28T18:41:24+00:00"}]`,
		check: dumpHas("db.example.com:Disk /var:unscheduled_maintenances", "zset[1795891164=120, 1700000600=900]")},
	{name: "ended", method: "GET", path: "/status_report/checks/db.example.com:Disk%20%2Fvar", status: 200,
		want: `{"status_reports":[{"name":"Disk /var","in_unscheduled_maintenance":false}]}`},
	{name: "test notifications", method: "POST", path: "/test_notifications/entities/5000", ctype: vndJSON, status: 204,
		body: `{"test_notifications":[{"summary":"testing"}]}`},
	{name: "test notifications of a missing entity", method: "POST", path: "/test_notifications/checks/nope.example.com:X", ctype: vndJSON, status: 404,
		body: `{"test_notifications":[{"summary":"testing"}]}`, errors: []string{"could not find entity 'nope.example.com'"}},
}

// TestServeRepairsTheContactIndex: the JSON API, starting on a database Flapjack 1.6 wrote (no
// all_contacts), adds 1.6's contacts to our index before it serves.
func TestServeRepairsTheContactIndex(t *testing.T) {
	t.Parallel()
	db := fj16.NewDB(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, Options{Addr: "127.0.0.1:0", Pool: db.Pool, Keys: schema.NewKeys(""), JSONAPI: true, Log: zap.NewNop()})
	}()
	deadline := time.Now().Add(10 * time.Second)
	for db.Dump(t)["all_contacts"] != "set{21, 22, ops-team}" {
		if time.Now().After(deadline) {
			t.Fatalf("all_contacts = %q after 10s, want 1.6's three contacts", db.Dump(t)["all_contacts"])
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
}
