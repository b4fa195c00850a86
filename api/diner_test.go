package api

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/flapjackgo/flapjack/internal/testing/testredis"
)

// What flapjack-diner 1.4 (the official Ruby client of Flapjack 1.x) sends for each of its
// methods, built the way its request helpers build them (lib/flapjack-diner/tools.rb and
// resources/*.rb at tag v1.4.0):
//   - ids are escaped one by one as Ruby's URI.escape does (a space becomes %20; ":" and "/"
//     stay as they are) and joined with ",", after the resource's path;
//   - creations POST {"<resource>": [<item>, ...]} (one item is sent as a list of one) with
//     Content-Type application/vnd.api+json;
//   - updates PATCH a JSON-Patch list with Content-Type application/json-patch+json: a field is
//     {"op":"replace","path":"/<type>/0/<field>","value":v}, a link added
//     {"op":"add","path":"/<type>/0/links/<linked>/-","value":id} and one removed
//     {"op":"remove","path":"/<type>/0/links/<linked>/<id>"};
//   - GET and DELETE send no body; their parameters (report windows, the start of a window to
//     delete) go in the query, times as Time#iso8601 escaped as form values;
//   - 200 and 201 answers are read as JSON (a GET returns the value under the resource's name),
//     204 is success, and any other status is an error whose {"errors":[...]} it hands back.

// dinerIDs escapes and joins ids as flapjack-diner does.
func dinerIDs(ids ...string) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		var b strings.Builder
		for _, c := range []byte(id) {
			if c < 0x80 && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
				strings.IndexByte("-_.!~*'();/?:@&=+$,[]", c) >= 0) {
				b.WriteByte(c)
			} else {
				fmt.Fprintf(&b, "%%%02X", c)
			}
		}
		out[i] = b.String()
	}
	return strings.Join(out, ",")
}

// dinerQuery is a query of times as flapjack-diner builds it (form-escaped ISO 8601).
func dinerQuery(pairs ...string) string {
	var parts []string
	for i := 0; i+1 < len(pairs); i += 2 {
		parts = append(parts, pairs[i]+"="+url.QueryEscape(pairs[i+1]))
	}
	return "?" + strings.Join(parts, "&")
}

func dinerCreate(path, resource string, items ...string) (string, string, string, string) {
	return "POST", path, vndJSON, `{"` + resource + `":[` + strings.Join(items, ",") + `]}`
}

func dinerPatch(path string, ops ...string) (string, string, string, string) {
	return "PATCH", path, patchJSON, "[" + strings.Join(ops, ",") + "]"
}

func dinerReplace(typ, field string, value any) string {
	v, _ := json.Marshal(value)
	return fmt.Sprintf(`{"op":"replace","path":"/%s/0/%s","value":%s}`, typ, field, v)
}

func dinerAdd(typ, linked, id string) string {
	return fmt.Sprintf(`{"op":"add","path":"/%s/0/links/%s/-","value":%q}`, typ, linked, id)
}

func dinerRemove(typ, linked, id string) string {
	return fmt.Sprintf(`{"op":"remove","path":"/%s/0/links/%s/%s"}`, typ, linked, id)
}

// dinerStep is what one flapjack-diner method sends and what it must get back.
func dinerStep(name string, req func() (string, string, string, string), status int, want string, errs ...string) step16 {
	method, path, ctype, body := req()
	return step16{name: name, method: method, path: path, ctype: ctype, body: body, status: status, want: want, errors: errs}
}

func get(path string) func() (string, string, string, string) {
	return func() (string, string, string, string) { return "GET", path, "", "" }
}

func del(path string) func() (string, string, string, string) {
	return func() (string, string, string, string) { return "DELETE", path, "", "" }
}

func req(method, path, ctype, body string) func() (string, string, string, string) {
	return func() (string, string, string, string) { return method, path, ctype, body }
}

// queued makes s also check that the events queue then holds n events.
func queued(s step16, n int64) step16 {
	s.check = func(t *testing.T, db *testredis.DB) {
		t.Helper()
		if got := db.Do(t, "LLEN", "events"); got != n {
			t.Fatalf("%s: %v events queued, want %d", s.name, got, n)
		}
	}
	return s
}

// TestDinerMethods plays, for every method of flapjack-diner 1.4, the request it sends, on a
// database written by Flapjack 1.6 (what a migrating user's scripts meet), and checks the
// answer the client reads: the status it treats as success or error, the resource it returns
// and the error texts it hands on.
func TestDinerMethods(t *testing.T) {
	t.Parallel()
	const (
		ssh   = "www.example.com:SSH"
		disk  = "db.example.com:Disk /var"
		start = "2035-04-08T15:50:36-07:00"
	)
	window := dinerQuery("start_time", "2023-11-14T00:00:00+00:00", "end_time", "2023-11-15T00:00:00+00:00")
	steps := []step16{
		dinerStep("create_contacts", req(dinerCreate("/contacts", "contacts",
			`{"id":"41","first_name":"Alan","last_name":"Turing","email":"alan@example.com","timezone":"Europe/London","tags":["bletchley"]}`)), 201, `["41"]`),
		dinerStep("create_contacts of an existing 1.6 contact", req(dinerCreate("/contacts", "contacts",
			`{"id":"21","first_name":"Ada","last_name":"L","email":"a@example.com"}`)), 409, "", "Contacts already exist with the following IDs: 21"),
		dinerStep("contacts", get("/contacts"), 200, `{"contacts":[{"id":"22"},{"id":"21"},{"id":"ops-team"},{"id":"41"}]}`),
		dinerStep("contacts(ids)", get("/contacts/"+dinerIDs("21", "41")), 200, `{"contacts":[{"id":"21","first_name":"Ada"},{"id":"41","first_name":"Alan"}]}`),
		dinerStep("contacts(missing)", get("/contacts/"+dinerIDs("nobody")), 404, "", "could not find contacts 'nobody'"),
		dinerStep("update_contacts(first_name:, add_entity:)", req(dinerPatch("/contacts/"+dinerIDs("41"),
			dinerReplace("contacts", "first_name", "Alan M."), dinerAdd("contacts", "entities", "5002"))), 204, ""),
		dinerStep("update_contacts(remove_entity:)", req(dinerPatch("/contacts/"+dinerIDs("21"), dinerRemove("contacts", "entities", "5000"))), 204, ""),
		dinerStep("update_contacts(add_notification_rule:)", req(dinerPatch("/contacts/"+dinerIDs("41"),
			dinerAdd("contacts", "notification_rules", "rule-babbage-db"))), 204, ""),
		dinerStep("updated contacts", get("/contacts/"+dinerIDs("41", "21")), 200, `{"contacts":[
			{"id":"41","first_name":"Alan M.","links":{"entities":["5002"],"notification_rules":["rule-babbage-db"]}},
			{"id":"21","links":{"entities":["5001"]}}]}`),
		dinerStep("update_contacts(remove_notification_rule:)", req(dinerPatch("/contacts/"+dinerIDs("41"),
			dinerRemove("contacts", "notification_rules", "rule-babbage-db"))), 204, ""),
		dinerStep("update_contacts(missing)", req(dinerPatch("/contacts/"+dinerIDs("nobody"), dinerReplace("contacts", "email", "x@example.com"))),
			404, "", "could not find contacts 'nobody'"),

		dinerStep("create_contact_media", req(dinerCreate("/contacts/"+dinerIDs("41")+"/media", "media",
			`{"type":"email","address":"alan@example.com","interval":300,"rollup_threshold":2}`,
			`{"type":"sms","address":"+441234567890","interval":600,"rollup_threshold":4}`)), 201, `["41_email","41_sms"]`),
		dinerStep("create_contact_media(missing)", req(dinerCreate("/contacts/"+dinerIDs("nobody")+"/media", "media",
			`{"type":"email","address":"x@example.com","interval":1,"rollup_threshold":1}`)), 422, "", "Contact id: 'nobody' could not be loaded"),
		dinerStep("media", get("/media"), 200, `{"media":[{"id":"21_email"},{"id":"21_jabber"},{"id":"21_sms"},{"id":"22_email"},{"id":"41_email"},{"id":"41_sms"}]}`),
		dinerStep("media(ids)", get("/media/"+dinerIDs("41_sms", "21_sms")), 200,
			`{"media":[{"id":"21_sms","type":"sms","address":"+447700900123","interval":300,"links":{"contacts":["21"]}},{"id":"41_sms","interval":600,"rollup_threshold":4}]}`),
		dinerStep("media(missing contact)", get("/media/"+dinerIDs("nobody_sms")), 404, "", "could not find contact 'nobody'"),
		dinerStep("update_media", req(dinerPatch("/media/"+dinerIDs("21_sms", "41_sms"),
			dinerReplace("media", "address", "+15555550123"), dinerReplace("media", "interval", 900), dinerReplace("media", "rollup_threshold", 1))), 204, ""),
		dinerStep("updated media", get("/media/"+dinerIDs("21_sms")), 200, `{"media":[{"id":"21_sms","address":"+15555550123","interval":900,"rollup_threshold":1}]}`),
		dinerStep("delete_media", del("/media/"+dinerIDs("41_sms", "21_jabber")), 204, ""),
		dinerStep("delete_media(missing contact)", del("/media/"+dinerIDs("nobody_email")), 404, "", "could not find contact 'nobody'"),

		dinerStep("create_contact_pagerduty_credentials", req(dinerCreate("/contacts/"+dinerIDs("41")+"/pagerduty_credentials", "pagerduty_credentials",
			`{"service_key":"enigma","subdomain":"bletchley","token":"bombe","username":"alan","password":"colossus"}`)), 201, `["41"]`),
		dinerStep("pagerduty_credentials", get("/pagerduty_credentials"), 200,
			`{"pagerduty_credentials":[{"service_key":"a1b2c3d4e5","links":{"contacts":["21"]}},{"service_key":"enigma","links":{"contacts":["41"]}}]}`),
		dinerStep("pagerduty_credentials(ids)", get("/pagerduty_credentials/"+dinerIDs("41")), 200, `{"pagerduty_credentials":[{"service_key":"enigma","subdomain":"bletchley","token":"bombe"}]}`),
		dinerStep("pagerduty_credentials(missing)", get("/pagerduty_credentials/"+dinerIDs("nobody")), 404, "", "could not find contact 'nobody'"),
		dinerStep("update_pagerduty_credentials", req(dinerPatch("/pagerduty_credentials/"+dinerIDs("21", "41"),
			dinerReplace("pagerduty_credentials", "service_key", "shared"), dinerReplace("pagerduty_credentials", "subdomain", "one"),
			dinerReplace("pagerduty_credentials", "token", "t"))), 204, ""),
		dinerStep("updated credentials", get("/pagerduty_credentials/"+dinerIDs("21", "41")), 200,
			`{"pagerduty_credentials":[{"service_key":"shared","subdomain":"one","username":"ada"},{"service_key":"shared","subdomain":"one","username":"alan"}]}`),
		dinerStep("delete_pagerduty_credentials", del("/pagerduty_credentials/"+dinerIDs("41")), 204, ""),
		dinerStep("delete_pagerduty_credentials(missing)", del("/pagerduty_credentials/"+dinerIDs("nobody")), 404, "", "could not find contact 'nobody'"),

		dinerStep("create_contact_notification_rules", req(dinerCreate("/contacts/"+dinerIDs("41")+"/notification_rules", "notification_rules",
			`{"id":"alan-db","entities":["db.example.com"],"regex_entities":[],"tags":["database"],"regex_tags":[],"unknown_media":[],
			  "warning_media":["email"],"critical_media":["email","sms"],"unknown_blackhole":false,"warning_blackhole":false,"critical_blackhole":false,
			  "time_restrictions":[]}`)), 201, `["alan-db"]`),
		dinerStep("create_contact_notification_rules(missing)", req(dinerCreate("/contacts/"+dinerIDs("nobody")+"/notification_rules", "notification_rules",
			`{"entities":["db.example.com"]}`)), 404, "", "could not find contact 'nobody'"),
		dinerStep("notification_rules", get("/notification_rules"), 200, `{"notification_rules":[{"id":"610a492f-9964-4db2-9eb0-f3fb2ac43305"},
			{"id":"alan-db","tags":["database"],"entities":["db.example.com"],"critical_media":["email","sms"],"links":{"contacts":["41"]}},
			{"id":"d51400c1-4953-4360-91e9-bf9db7cf783e"},{"id":"f42f90fa-405c-459b-b484-88d05be2c4d5"},{"id":"rule-ada-web"}]}`),
		dinerStep("notification_rules(ids)", get("/notification_rules/"+dinerIDs("rule-ada-web")), 200, `{"notification_rules":[{"id":"rule-ada-web","unknown_blackhole":true}]}`),
		dinerStep("notification_rules(missing)", get("/notification_rules/"+dinerIDs("nope")), 404, "", "could not find notification rules 'nope'"),
		dinerStep("update_notification_rules", req(dinerPatch("/notification_rules/"+dinerIDs("rule-ada-web", "alan-db"),
			dinerReplace("notification_rules", "regex_tags", []string{"^web"}), dinerReplace("notification_rules", "warning_blackhole", true),
			dinerReplace("notification_rules", "time_restrictions", []any{}))), 204, ""),
		dinerStep("updated rules", get("/notification_rules/"+dinerIDs("rule-ada-web", "alan-db")), 200,
			`{"notification_rules":[{"id":"rule-ada-web","regex_tags":["^web"],"warning_blackhole":true,"time_restrictions":[]},{"id":"alan-db","regex_tags":["^web"],"warning_blackhole":true}]}`),
		dinerStep("update_notification_rules(missing)", req(dinerPatch("/notification_rules/"+dinerIDs("nope"), dinerReplace("notification_rules", "tags", []string{"x"}))),
			404, "", "could not find notification rule 'nope'"),
		dinerStep("delete_notification_rules", del("/notification_rules/"+dinerIDs("alan-db")), 204, ""),
		dinerStep("delete_notification_rules(missing)", del("/notification_rules/"+dinerIDs("nope")), 404, "", "could not find notification rule 'nope'"),

		dinerStep("create_entities", req(dinerCreate("/entities", "entities", `{"id":"5004","name":"mail.example.com"}`)), 201, `["5004"]`),
		dinerStep("entities", get("/entities"), 200, `{"entities":[{"name":"db.example.com"},{"name":"mail.example.com"},{"name":"spare.example.com"},{"name":"www.example.com"}]}`),
		dinerStep("entities(ids)", get("/entities/"+dinerIDs("5000", "5004")), 200, `{"entities":[{"id":"5000","name":"www.example.com"},{"id":"5004","name":"mail.example.com"}]}`),
		dinerStep("entities(missing)", get("/entities/"+dinerIDs("9999")), 404, "", "could not find entities: '9999'"),
		dinerStep("update_entities(name:, add_contact:, add_tag:)", req(dinerPatch("/entities/"+dinerIDs("5004"), dinerReplace("entities", "name", "smtp.example.com"),
			dinerAdd("entities", "contacts", "41"), dinerAdd("entities", "tags", "mail"))), 204, ""),
		dinerStep("update_entities(remove_contact:, remove_tag:)", req(dinerPatch("/entities/"+dinerIDs("5001"),
			dinerRemove("entities", "contacts", "22"), dinerRemove("entities", "tags", "db"))), 204, ""),
		dinerStep("updated entities", get("/entities/"+dinerIDs("5004", "5001")), 200,
			`{"entities":[{"id":"5004","name":"smtp.example.com","links":{"contacts":["41"]}},{"id":"5001","links":{"contacts":["21"]}}]}`),
		dinerStep("update_entities(missing)", req(dinerPatch("/entities/"+dinerIDs("9999"), dinerAdd("entities", "tags", "x"))), 404, "", "could not find entity '9999'"),

		dinerStep("create_checks", req(dinerCreate("/checks", "checks", `{"entity_id":"5004","name":"SMTP","tags":["mail"]}`)), 201, `["smtp.example.com:SMTP"]`),
		dinerStep("checks", get("/checks"), 200, `{"checks":[{"id":"db.example.com:Disk /var"},{"id":"smtp.example.com:SMTP"},{"id":"www.example.com:HTTP Port 80"},{"id":"www.example.com:SSH"}]}`),
		dinerStep("checks(ids)", get("/checks/"+dinerIDs(disk, ssh)), 200, `{"checks":[{"id":"db.example.com:Disk /var","enabled":true},{"id":"www.example.com:SSH"}]}`),
		dinerStep("checks(missing)", get("/checks/"+dinerIDs("www.example.com:FTP")), 404, "", "could not find entity checks: 'www.example.com:FTP'"),
		dinerStep("update_checks(enabled:, add_tag:)", req(dinerPatch("/checks/"+dinerIDs(disk), dinerReplace("checks", "enabled", false), dinerAdd("checks", "tags", "storage"))), 204, ""),
		dinerStep("update_checks(remove_tag:)", req(dinerPatch("/checks/"+dinerIDs("smtp.example.com:SMTP"), dinerRemove("checks", "tags", "mail"))), 204, ""),
		dinerStep("updated checks", get("/checks/"+dinerIDs(disk, "smtp.example.com:SMTP")), 200,
			`{"checks":[{"id":"db.example.com:Disk /var","enabled":false,"tags":["storage"]},{"id":"smtp.example.com:SMTP","tags":[]}]}`),
		dinerStep("update_checks(missing)", req(dinerPatch("/checks/"+dinerIDs("www.example.com:FTP"), dinerReplace("checks", "enabled", true))),
			404, "", "could not find entity check 'FTP'"),

		dinerStep("create_scheduled_maintenances_checks", req(dinerCreate("/scheduled_maintenances/checks/"+dinerIDs(ssh, disk), "scheduled_maintenances",
			`{"start_time":"`+start+`","duration":3600,"summary":"upgrade"}`)), 204, ""),
		dinerStep("create_scheduled_maintenances_entities", req(dinerCreate("/scheduled_maintenances/entities/"+dinerIDs("5004"), "scheduled_maintenances",
			`{"start_time":"`+start+`","duration":600,"summary":"mail move"}`)), 204, ""),
		dinerStep("scheduled_maintenance_report_checks", get("/scheduled_maintenance_report/checks/"+dinerIDs(disk)+dinerQuery("start_time", "2035-04-08T00:00:00-07:00")), 200,
			`{"scheduled_maintenance_reports":[{"scheduled_maintenances":[{"start_time":2059685436,"duration":3600,"summary":"upgrade"}],"links":{"check":["db.example.com:Disk /var"]}}]}`),
		dinerStep("delete_scheduled_maintenances_checks", del("/scheduled_maintenances/checks/"+dinerIDs(ssh, disk)+dinerQuery("start_time", start)), 204, ""),
		dinerStep("delete_scheduled_maintenances_entities", del("/scheduled_maintenances/entities/"+dinerIDs("5004")+dinerQuery("start_time", start)), 204, ""),
		dinerStep("scheduled_maintenance_report_entities", get("/scheduled_maintenance_report/entities/"+dinerIDs("5004")+dinerQuery("start_time", "2035-04-08T00:00:00-07:00")), 200,
			`{"scheduled_maintenance_reports":[{"scheduled_maintenances":[]}]}`),
		// Acknowledgements are events for the executive: one per check.
		queued(dinerStep("create_unscheduled_maintenances_checks", req(dinerCreate("/unscheduled_maintenances/checks/"+dinerIDs(ssh), "unscheduled_maintenances",
			`{"duration":3600,"summary":"looking"}`)), 204, ""), 1),
		queued(dinerStep("create_unscheduled_maintenances_entities", req(dinerCreate("/unscheduled_maintenances/entities/"+dinerIDs("5000"), "unscheduled_maintenances",
			`{"duration":600,"summary":"looking"}`)), 204, ""), 3),
		dinerStep("update_unscheduled_maintenances_checks", req(dinerPatch("/unscheduled_maintenances/checks/"+dinerIDs(disk),
			dinerReplace("unscheduled_maintenances", "end_time", "2026-11-28T18:41:24+00:00"))), 204, ""),
		dinerStep("update_unscheduled_maintenances_entities", req(dinerPatch("/unscheduled_maintenances/entities/"+dinerIDs("5000", "5001"),
			dinerReplace("unscheduled_maintenances", "end_time", "2026-11-28T18:41:24+00:00"))), 204, ""),
		queued(dinerStep("create_test_notifications_checks", req(dinerCreate("/test_notifications/checks/"+dinerIDs(ssh), "test_notifications", `{"summary":"hello"}`)), 204, ""), 4),
		queued(dinerStep("create_test_notifications_entities", req(dinerCreate("/test_notifications/entities/"+dinerIDs("5000"), "test_notifications", `{"summary":"hello"}`)), 204, ""), 6),

		dinerStep("status_report_entities", get("/status_report/entities"), 200, `{"status_reports":[{"name":"SMTP"},{"name":"HTTP Port 80"},{"name":"SSH"}]}`),
		// A disabled check is no current check: 1.6 reports an entity's current checks.
		dinerStep("status_report_entities(ids)", get("/status_report/entities/"+dinerIDs("5001", "5000")), 200,
			`{"status_reports":[{"name":"HTTP Port 80","state":"warning","links":{"entity":["5000"],"check":["www.example.com:HTTP Port 80"]}},{"name":"SSH"}]}`),
		dinerStep("status_report_checks", get("/status_report/checks"), 200, `{"status_reports":["<any>","<any>","<any>"]}`),
		dinerStep("status_report_checks(ids)", get("/status_report/checks/"+dinerIDs(ssh)), 200, `{"status_reports":[{"name":"SSH","state":"ok"}]}`),
		dinerStep("outage_report_checks", get("/outage_report/checks/"+dinerIDs(ssh)+window), 200,
			`{"outage_reports":[{"outages":[{"state":"critical","start_time":1700000060,"end_time":1700000300,"duration":240}]}]}`),
		dinerStep("outage_report_entities", get("/outage_report/entities/"+dinerIDs("5000")+window), 200,
			`{"outage_reports":[{"outages":[{"state":"warning","start_time":1700000400,"summary":"HTTP WARNING: slow"}],"links":{"check":["www.example.com:HTTP Port 80"]}},
			{"outages":[{"state":"critical","start_time":1700000060}],"links":{"check":["www.example.com:SSH"]}}]}`),
		dinerStep("downtime_report_checks", get("/downtime_report/checks/"+dinerIDs(ssh)+window), 200, `{"downtime_reports":[{"total_seconds":{"critical":240}}]}`),
		dinerStep("downtime_report_entities", get("/downtime_report/entities/"+dinerIDs("5000")+window), 200, `{"downtime_reports":["<any>","<any>"]}`),
		dinerStep("unscheduled_maintenance_report_checks", get("/unscheduled_maintenance_report/checks/"+dinerIDs(disk)+window), 200,
			`{"unscheduled_maintenance_reports":[{"unscheduled_maintenances":[{"start_time":1700000600,"duration":900,"summary":"looking into it"}]}]}`),
		// The acknowledgements above are events the executive has not processed here.
		dinerStep("unscheduled_maintenance_report_entities", get("/unscheduled_maintenance_report/entities/"+dinerIDs("5000")+window), 200,
			`{"unscheduled_maintenance_reports":[{"unscheduled_maintenances":[]},{"unscheduled_maintenances":[]}]}`),
		dinerStep("scheduled_maintenance_report_checks(window)", get("/scheduled_maintenance_report/checks/"+dinerIDs(ssh)+window), 200,
			`{"scheduled_maintenance_reports":[{"scheduled_maintenances":[{"start_time":1700001000,"duration":3600,"summary":"kernel upgrade"}]}]}`),

		dinerStep("delete_contacts", del("/contacts/"+dinerIDs("41", "ops-team")), 204, ""),
		dinerStep("delete_contacts(missing)", del("/contacts/"+dinerIDs("41")), 404, "", "could not find contacts '41'"),
	}
	srv, db := fj16Server(t)
	runSteps16(t, srv, db, steps)
}
