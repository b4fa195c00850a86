package notifier_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/executive"
	"github.com/flapjackgo/flapjack/gateways/media"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/notifier"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/replay"
	"github.com/flapjackgo/flapjack/schema"
)

// T0 is Monday 2026-01-05 10:00:00 UTC.
const T0 = int64(1767607200)

// defaultNotifierConfig maps every medium to its default list, as `server` does.
func defaultNotifierConfig() notifier.Config {
	cfg := notifier.DefaultConfig()
	cfg.MediaQueues = media.DefaultQueues()
	return cfg
}

// world is a Redis with contacts and rules, driven by replay timelines.
type world struct {
	t    *testing.T
	db   *testredis.DB
	keys schema.Keys
	xcfg executive.Config
	ncfg notifier.Config
}

func newWorld(t *testing.T) *world {
	t.Helper()
	x := executive.DefaultConfig()
	x.InitialFailureDelay = 0 // notifier scenarios start alerting at the first failure
	return &world{t: t, db: testredis.New(t), keys: schema.NewKeys(""), xcfg: x, ncfg: defaultNotifierConfig()}
}

type contactOpt func(w *world, id string)

func interval(medium string, secs int) contactOpt {
	return func(w *world, id string) { w.db.Do(w.t, "HSET", w.keys.ContactMediaIntervals(id), medium, secs) }
}

func rollupAt(medium string, threshold int) contactOpt {
	return func(w *world, id string) {
		w.db.Do(w.t, "HSET", w.keys.ContactRollupThresholds(id), medium, threshold)
	}
}

func timezone(name string) contactOpt {
	return func(w *world, id string) { w.db.Do(w.t, "SET", w.keys.ContactTimezone(id), name) }
}

func noFirstName() contactOpt {
	return func(w *world, id string) { w.db.Do(w.t, "HDEL", w.keys.Contact(id), "first_name") }
}

// contact creates a contact with media "medium=address".
func (w *world) contact(id string, media []string, opts ...contactOpt) {
	w.db.Do(w.t, "HSET", w.keys.Contact(id), "first_name", strings.ToUpper(id[:1])+id[1:], "last_name", "Test")
	for _, m := range media {
		name, addr, _ := strings.Cut(m, "=")
		w.db.Do(w.t, "HSET", w.keys.ContactMedia(id), name, addr)
	}
	for _, o := range opts {
		o(w, id)
	}
}

// rule stores a notification rule; fields use the stored format (JSON lists, "true"/"false").
func (w *world) rule(contact, id string, fields ...string) {
	args := []any{w.keys.Rule(id), "id", id, "contact_id", contact}
	for _, f := range fields {
		k, v, _ := strings.Cut(f, "=")
		args = append(args, k, v)
	}
	w.db.Do(w.t, "HSET", args...)
	w.db.Do(w.t, "SADD", w.keys.ContactRules(contact), id)
}

// entity links contacts to an entity (id "id-<name>").
func (w *world) entity(name string, contacts ...string) {
	id := "id-" + name
	w.db.Do(w.t, "HSET", w.keys.EntityIDsByName(), name, id)
	w.db.Do(w.t, "SET", w.keys.EntityID(name), id)
	for _, c := range contacts {
		w.db.Do(w.t, "SADD", w.keys.ContactsFor(id), c)
	}
}

func (w *world) checkContacts(entity, check string, contacts ...string) {
	for _, c := range contacts {
		w.db.Do(w.t, "SADD", w.keys.ContactsForCheck("id-"+entity, check), c)
	}
}

// ev is a timeline line: a service or action event at T0+at.
func ev(at int64, entity, check, state string, extra ...string) string {
	typ := "service"
	if state == "acknowledgement" || state == "test_notifications" {
		typ = "action"
	}
	s := fmt.Sprintf(`{"entity":%q,"check":%q,"type":%q,"state":%q,"time":%d`, entity, check, typ, state, T0+at)
	for _, e := range extra {
		s += "," + e
	}
	return s + "}"
}

// act is an admin action line at T0+at.
func act(at int64, action, entity, check string, extra ...string) string {
	s := fmt.Sprintf(`{"action":%q,"time":%d,"entity":%q,"check":%q`, action, T0+at, entity, check)
	for _, e := range extra {
		s += "," + e
	}
	return s + "}"
}

// run replays lines and returns the alerts as "contact:medium:type[:rollup]" strings.
func (w *world) run(lines ...string) []string {
	w.t.Helper()
	alerts := w.alerts(lines...)
	out := make([]string, len(alerts))
	for i, a := range alerts {
		out[i] = describe(a)
	}
	return out
}

func (w *world) alerts(lines ...string) []schema.Alert {
	w.t.Helper()
	var buf bytes.Buffer
	_, err := replay.Run(context.Background(), replay.Options{
		Pool: w.db.Pool, Keys: w.keys, Executive: w.xcfg, Notifier: w.ncfg,
		Identity: queue.Identity{Host: "replay", PID: 1}, Version: "test",
	}, strings.NewReader(strings.Join(lines, "\n")), &buf)
	if err != nil {
		w.t.Fatalf("replay: %v", err)
	}
	var alerts []schema.Alert
	dec := json.NewDecoder(&buf)
	for dec.More() {
		var a schema.Alert
		if err := dec.Decode(&a); err != nil {
			w.t.Fatal(err)
		}
		alerts = append(alerts, a)
	}
	return alerts
}

func describe(a schema.Alert) string {
	s := a.ContactID + ":" + a.Media + ":" + a.NotificationType
	if a.Rollup != nil {
		s += ":rollup_" + *a.Rollup
	}
	return s
}

func expect(t *testing.T, step string, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("%s:\n got %v\nwant %v", step, got, want)
	}
}

func TestSpecificRulesOverrideGeneral(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.contact("ada", []string{"sms=+100", "email=ada@example.com"})
	w.rule("ada", "general", `critical_media=["email"]`)
	w.rule("ada", "web", `entities=["web-01"]`, `critical_media=["sms"]`)
	w.entity("web-01", "ada")
	w.entity("db-01", "ada")
	expect(t, "web-01 matches the specific rule only", w.run(ev(0, "web-01", "HTTP", "critical")), "ada:sms:problem")
	expect(t, "db-01 falls back to the general rule", w.run(ev(1, "db-01", "MySQL", "critical")), "ada:email:problem")
}

func TestMatchingRulesAreAdditive(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.contact("ada", []string{"sms=+100", "email=ada@example.com", "jabber=ada@xmpp"})
	w.rule("ada", "by-entity", `entities=["web-01"]`, `critical_media=["sms"]`)
	w.rule("ada", "by-tag", `tags=["http"]`, `critical_media=["email"]`)
	w.rule("ada", "other", `entities=["db-01"]`, `critical_media=["jabber"]`)
	w.rule("bob", "g1", `warning_media=["sms"]`)
	w.rule("bob", "g2", `warning_media=["email"]`)
	w.contact("bob", []string{"sms=+200", "email=bob@example.com"})
	w.entity("web-01", "ada", "bob")
	expect(t, "two specific rules add up", w.run(ev(0, "web-01", "HTTP", "critical")), "ada:email:problem", "ada:sms:problem")
	expect(t, "two general rules add up", w.run(ev(100, "web-01", "Disk", "warning")), "bob:email:problem", "bob:sms:problem")
}

func TestBlackholeAlsoSuppressesTheRecovery(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.contact("ada", []string{"sms=+100"})
	w.rule("ada", "all", `warning_media=["sms"]`, `critical_media=["sms"]`)
	w.rule("ada", "quiet-web", `entities=["web-01"]`, `warning_media=["sms"]`, `critical_media=["sms"]`, `critical_blackhole=true`)
	w.entity("web-01", "ada")
	expect(t, "critical is blackholed", w.run(ev(0, "web-01", "HTTP", "critical")))
	expect(t, "its recovery inherits critical and is blackholed too", w.run(ev(10, "web-01", "HTTP", "ok")))
	expect(t, "warnings still get through", w.run(ev(20, "web-01", "HTTP", "warning")), "ada:sms:problem")
	expect(t, "and their recoveries", w.run(ev(30, "web-01", "HTTP", "ok")), "ada:sms:recovery")
}

func TestSeverityEscalationChoosesMedia(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.contact("ada", []string{"sms=+100", "email=ada@example.com"})
	w.rule("ada", "r", `warning_media=["email"]`, `critical_media=["sms"]`)
	w.entity("web-01", "ada")
	expect(t, "warning", w.run(ev(0, "web-01", "HTTP", "warning")), "ada:email:problem")
	expect(t, "critical", w.run(ev(10, "web-01", "HTTP", "critical")), "ada:sms:problem")
	expect(t, "back to warning: still critical severity since the last recovery", w.run(ev(20, "web-01", "HTTP", "warning")), "ada:sms:problem")
	expect(t, "recovery inherits critical", w.run(ev(30, "web-01", "HTTP", "ok")), "ada:sms:recovery")
	expect(t, "after the recovery a warning is a warning again, and the recovery (sent by sms) reset the email interval too",
		w.run(ev(40, "web-01", "HTTP", "warning")), "ada:email:problem")
}

func TestIntervalsSuppressRepeatsButNotTheProblemAfterARecovery(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.contact("ada", []string{"sms=+100", "email=ada@example.com"}, interval("sms", 300))
	w.entity("web-01", "ada")
	c := func(at int64) string { return ev(at, "web-01", "HTTP", "critical") }
	expect(t, "first problem", w.run(c(0)), "ada:email:problem", "ada:sms:problem")
	expect(t, "repeat at 60 s: email (default 900 s) and sms (300 s) both suppressed", w.run(c(60)))
	expect(t, "repeat at 240 s", w.run(c(240)))
	expect(t, "repeat at 300 s: the sms interval is over", w.run(c(300)), "ada:sms:problem")
	expect(t, "recovery bypasses intervals", w.run(ev(310, "web-01", "HTTP", "ok")), "ada:email:recovery", "ada:sms:recovery")
	expect(t, "the problem right after a recovery goes out at once", w.run(c(320)), "ada:email:problem", "ada:sms:problem")
	expect(t, "and its repeat is suppressed again", w.run(c(380)))
	expect(t, "a different failing state is not suppressed", w.run(ev(390, "web-01", "HTTP", "warning")), "ada:email:problem", "ada:sms:problem")
}

func TestUnknownOnlyMedia(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.contact("ada", []string{"sms=+100"})
	w.rule("ada", "r", `unknown_media=["sms"]`, `warning_media=null`, `critical_media=[]`)
	w.contact("norules", []string{"email=n@example.com"})
	w.entity("web-01", "ada", "norules")
	expect(t, "unknown goes to sms; a contact without rules gets unknown too", w.run(ev(0, "web-01", "HTTP", "unknown")),
		"ada:sms:problem", "norules:email:problem")
	expect(t, "critical has no media for ada", w.run(ev(10, "web-01", "Disk", "critical")), "norules:email:problem")
}

func TestTagAndRegexMatching(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.contact("ada", []string{"sms=+100"})
	w.rule("ada", "check-words", `tags=["http","port"]`, `critical_media=["sms"]`)
	w.contact("bob", []string{"sms=+200"})
	w.rule("bob", "prod", `regex_tags=["^prod"]`, `critical_media=["sms"]`)
	w.contact("cyd", []string{"sms=+300"})
	w.rule("cyd", "webs", `regex_entities=["^web-\\d+$", "example"]`, `critical_media=["sms"]`)
	w.contact("dee", []string{"sms=+400", "email=dee@example.com"})
	w.rule("dee", "broken", `regex_entities=["(unclosed"]`, `critical_media=["sms"]`)
	w.rule("dee", "fine", `entities=["web-01"]`, `critical_media=["email"]`)
	for _, e := range []string{"web-01", "web-01.example.com", "db-01"} {
		w.entity(e, "ada", "bob", "cyd", "dee")
	}
	expect(t, "check name words are tags; the broken regex skips only its rule",
		w.run(ev(0, "web-01", "HTTP Port 80", "critical")), "ada:sms:problem", "dee:email:problem")
	expect(t, "event tags match regex_tags; every regex_entities pattern must match",
		w.run(ev(10, "web-01.example.com", "Disk", "critical", `"tags":["production"]`)), "bob:sms:problem")
	expect(t, "nothing matches", w.run(ev(20, "db-01", "Disk", "critical")))
}

func TestContactsAreNotifiedOnceAndNeedNoFirstName(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.contact("ada", []string{"sms=+100"}, noFirstName())
	w.entity("web-01", "ada")
	w.checkContacts("web-01", "HTTP", "ada")
	w.db.Do(t, "SADD", w.keys.ContactsFor(schema.AllContactsID), "ada")
	expect(t, "one alert", w.run(ev(0, "web-01", "HTTP", "critical")), "ada:sms:problem")
}

func TestMediumWithoutQueueSkipsOnlyThatMessage(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	delete(w.ncfg.MediaQueues, "sms")
	w.contact("ada", []string{"sms=+100", "email=ada@example.com"})
	w.entity("web-01", "ada")
	expect(t, "email still goes out", w.run(ev(0, "web-01", "HTTP", "critical")), "ada:email:problem")
}

func TestAcknowledgementEndedByHandThenNewFailureAndSecondAck(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.contact("ada", []string{"sms=+100"})
	w.entity("web-01", "ada")
	expect(t, "problem", w.run(ev(0, "web-01", "HTTP", "critical")), "ada:sms:problem")
	expect(t, "ack", w.run(ev(10, "web-01", "HTTP", "acknowledgement", `"summary":"on it"`)), "ada:sms:acknowledgement")
	expect(t, "silenced", w.run(ev(100, "web-01", "HTTP", "critical")))
	expect(t, "ended by hand", w.run(act(150, "end_unscheduled_maintenance", "web-01", "HTTP")))
	expect(t, "the next failure alerts again (the ack reset the interval)", w.run(ev(200, "web-01", "HTTP", "critical")), "ada:sms:problem")
	expect(t, "second ack", w.run(ev(210, "web-01", "HTTP", "acknowledgement", `"duration":600`)), "ada:sms:acknowledgement")
	expect(t, "silenced again", w.run(ev(300, "web-01", "HTTP", "critical")))
}

func TestTestNotificationsReachEveryoneAndAreRateLimited(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.contact("ada", []string{"sms=+100"})
	w.rule("ada", "warn-only", `warning_media=["sms"]`)
	w.contact("bob", []string{"email=bob@example.com"})
	w.entity("web-01", "ada", "bob")
	expect(t, "a test counts as critical: ada's rule has no critical media", w.run(ev(0, "web-01", "HTTP", "test_notifications")), "bob:email:test")
	expect(t, "a second test within the interval is dropped", w.run(ev(10, "web-01", "HTTP", "test_notifications")))
}

func TestNoContactsNoAlerts(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	expect(t, "nobody cares", w.run(ev(0, "web-01", "HTTP", "critical")))
}

func TestAlertContent(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.contact("ada", []string{"jabber=ada@example.com"})
	w.entity("web-01", "ada")
	alerts := w.alerts(ev(0, "web-01", "HTTP", "critical", `"summary":"down"`, `"details":"500"`, `"tags":["prod"]`))
	if len(alerts) != 1 {
		t.Fatalf("%d alerts", len(alerts))
	}
	a := alerts[0]
	if a.Media != "jabber" || a.Address != "ada@example.com" || a.ContactID != "ada" ||
		schema.Deref(a.ContactFirstName) != "Ada" || schema.Deref(a.ContactLastName) != "Test" ||
		a.EventID != "web-01:HTTP" || schema.Deref(a.EventHash) != schema.AckHash("web-01:HTTP") ||
		a.State != "critical" || schema.Deref(a.Summary) != "down" || schema.Deref(a.Details) != "500" ||
		a.NotificationType != "problem" || a.Rollup != nil || a.Time == nil || *a.Time != T0 ||
		strings.Join(a.Tags, ",") != "prod,web-01,http" || a.EventCount != 1 {
		t.Fatalf("alert %+v", a)
	}
	if !strings.HasSuffix(a.ID, fmt.Sprintf("-%d.000000", T0)) {
		t.Fatalf("alert id %q", a.ID)
	}
	raw, _ := json.Marshal(a)
	for _, field := range []string{`"rollup":null`, `"last_state":null`, `"duration":null`} {
		if !bytes.Contains(raw, []byte(field)) {
			t.Errorf("alert JSON lacks %s: %s", field, raw)
		}
	}
}

// TestTimeRestrictionsInTwoTimezonesAcrossDST: "weekdays 09:00-17:00" is evaluated in each
// contact's own timezone, and stays 09:00 local when New York moves to summer time (Sunday
// 8 March 2026): the same UTC hour is outside the window on the Friday before and inside on the
// Monday after.
func TestTimeRestrictionsInTwoTimezonesAcrossDST(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	officeHours := `[{"start_time":"2013-02-01 09:00:00","end_time":"2013-02-01 17:00:00",` +
		`"rrules":[{"rule_type":"Weekly","interval":1,"validations":{"day":[1,2,3,4,5]}}]}]`
	rfcHours := `[{"start_time":"2013-02-01 09:00:00","end_time":"2013-02-01 17:00:00",` +
		`"rrule":"RRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR\nEXDATE:20260309T090000"}]`
	w.contact("nyc", []string{"sms=+1"}, timezone("America/New_York"))
	w.rule("nyc", "nyc-office", `critical_media=["sms"]`, "time_restrictions="+officeHours)
	w.contact("syd", []string{"sms=+61"}, timezone("Australia/Sydney"))
	w.rule("syd", "syd-office", `critical_media=["sms"]`, "time_restrictions="+officeHours)
	w.contact("ldn", []string{"sms=+44"}, timezone("Europe/London"))
	w.rule("ldn", "ldn-office", `critical_media=["sms"]`, "time_restrictions="+rfcHours)
	w.entity("web-01", "nyc", "syd", "ldn")
	at := func(utc string) int64 {
		ts, err := time.Parse("2006-01-02 15:04", utc)
		if err != nil {
			t.Fatal(err)
		}
		return ts.Unix() - T0
	}
	// each step fails a different check, so no interval or delay interferes
	expect(t, "Fri 6 Mar 13:30 UTC: 08:30 EST (closed), 00:30 Sat in Sydney (closed), 13:30 London (open)",
		w.run(ev(at("2026-03-06 13:30"), "web-01", "c1", "critical")), "ldn:sms:problem")
	expect(t, "Mon 9 Mar 13:30 UTC: 09:30 EDT (open), 00:30 Tue Sydney (closed), London's EXDATE removes 9 Mar",
		w.run(ev(at("2026-03-09 13:30"), "web-01", "c2", "critical")), "nyc:sms:problem")
	expect(t, "Mon 9 Mar 23:30 UTC: 19:30 EDT (closed), 10:30 Tue in Sydney (open)",
		w.run(ev(at("2026-03-09 23:30"), "web-01", "c3", "critical")), "syd:sms:problem")
	expect(t, "Tue 10 Mar 13:30 UTC: New York and London open",
		w.run(ev(at("2026-03-10 13:30"), "web-01", "c4", "critical")), "ldn:sms:problem", "nyc:sms:problem")
}
