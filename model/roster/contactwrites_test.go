package roster_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/testing/fj16"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/oncall"
	"github.com/flapjackgo/flapjack/schema"
)

func ptr(n int64) *int64 { return &n }

// raceConn is a connection on which another writer gets in just before a write commits: before
// is run once, at the first MULTI, so the write has read what before then changes. multis
// counts the attempts that reached their commit.
type raceConn struct {
	redis.Conn
	before func()
	multis int
}

func (c *raceConn) Send(cmd string, args ...any) error {
	if cmd == "MULTI" {
		c.multis++
		if f := c.before; f != nil {
			c.before = nil
			f()
		}
	}
	return c.Conn.Send(cmd, args...)
}

// op is a write under test; it runs on conn.
type op func(ctx context.Context, conn redis.Conn, keys schema.Keys) error

// writeCase is one case of a write: the error it must give (errors.Is, and a substring of the
// message naming the field), and the keys it leaves ("" = absent). unchanged asks for the
// database exactly as seeded. interfere, when set, is a concurrent writer that commits between
// op's reads and its commit; attempts is then how many commits op must have tried.
type writeCase struct {
	name      string
	op        op
	interfere op
	attempts  int
	wantErr   error
	wantMsg   string
	want      map[string]string
	unchanged bool
}

// ada and bob as ReplaceContacts writes them before each case.
func fixture() []roster.ContactData {
	return []roster.ContactData{
		{
			ID:          "ada",
			ContactInfo: roster.ContactInfo{FirstName: "Ada", LastName: "Lovelace", Email: "ada@example.com", Timezone: "Europe/London"},
			Tags:        []string{"ops"},
			Media: []roster.Medium{
				{Name: "email", Address: "ada@example.com"},
				{Name: "jabber", Address: "ada@jabber.example.com", Interval: ptr(300), RollupThreshold: ptr(5)},
				{Name: "pagerduty", Address: "service-key"},
			},
			Pagerduty: roster.PagerdutyCredentials{Subdomain: "example", Token: "t0ken"},
			Rules:     []roster.Rule{{ID: "ada-db", Entities: []string{"DB-01"}, CriticalMedia: []string{"jabber"}}},
		},
		{
			ID:          "bob",
			ContactInfo: roster.ContactInfo{FirstName: "Bob"},
			Tags:        []string{"ops", "web"},
			Media:       []roster.Medium{{Name: "sms", Address: "+15555550100"}},
			Rules:       []roster.Rule{{ID: "bob-all", WarningMedia: []string{"sms"}}},
		},
	}
}

func seedContacts(t *testing.T, db *testredis.DB, keys schema.Keys) {
	t.Helper()
	conn := db.Conn(t)
	defer conn.Close()
	res, err := roster.ReplaceContacts(context.Background(), conn, keys, fixture(), roster.ReplaceOptions{})
	if err != nil || len(res.Problems) > 0 {
		t.Fatalf("seed: %v %v", err, res.Problems)
	}
	// What the rest of the system adds: entity links and the notifier's state.
	db.Do(t, "SADD", keys.ContactsFor("1"), "ada", "bob")
	db.Do(t, "SADD", keys.ContactsForCheck("1", "HTTP"), "ada")
	db.Do(t, "SADD", keys.ContactsFor(schema.AllContactsID), "ada")
	db.Do(t, "HSET", keys.ContactAlertState("ada"), "revision", 3)
	db.Do(t, "ZADD", keys.AlertingChecks("ada", "jabber"), 1, "db-01:HTTP")
}

// seededDump is the fixture's layout.
var seededDump = map[string]string{
	"all_contacts":            "set{ada, bob}",
	"contact:ada":             "hash{email=ada@example.com, first_name=Ada, last_name=Lovelace}",
	"contact:bob":             "hash{first_name=Bob}",
	"contact_alert_state:ada": "hash{revision=3}",
	"contact_alerting_checks:ada:media:jabber": "zset[db-01:HTTP=1]",
	"contact_media:ada":                        "hash{email=ada@example.com, jabber=ada@jabber.example.com, pagerduty=service-key}",
	"contact_media:bob":                        "hash{sms=+15555550100}",
	"contact_media_intervals:ada":              "hash{jabber=300}",
	"contact_media_rollup_thresholds:ada":      "hash{jabber=5}",
	"contact_notification_rules:ada":           "set{ada-db}",
	"contact_notification_rules:bob":           "set{bob-all}",
	"contact_pagerduty:ada":                    "hash{subdomain=example, token=t0ken}",
	"contact_tag:ops":                          "set{ada, bob}",
	"contact_tag:web":                          "set{bob}",
	"contact_tz:ada":                           "Europe/London",
	"contacts_for:1":                           "set{ada, bob}",
	"contacts_for:1:HTTP":                      "set{ada}",
	"contacts_for:ALL":                         "set{ada}",
	"notification_rule:ada-db": `hash{contact_id=ada, critical_blackhole=false, critical_media=["jabber"], entities=["db-01"], id=ada-db, ` +
		`regex_entities=[], regex_tags=[], tags=[], time_restrictions=[], unknown_blackhole=false, unknown_media=[], warning_blackhole=false, warning_media=[]}`,
	"notification_rule:bob-all": `hash{contact_id=bob, critical_blackhole=false, critical_media=[], entities=[], id=bob-all, ` +
		`regex_entities=[], regex_tags=[], tags=[], time_restrictions=[], unknown_blackhole=false, unknown_media=[], warning_blackhole=false, warning_media=["sms"]}`,
}

func runWriteCases(t *testing.T, cases []writeCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			db := testredis.New(t)
			keys := schema.NewKeys("")
			seedContacts(t, db, keys)
			if !tc.unchanged && tc.want == nil {
				t.Fatal("case checks nothing")
			}
			conn := &raceConn{Conn: db.Conn(t)}
			defer conn.Close()
			ctx := context.Background()
			if tc.interfere != nil {
				conn.before = func() {
					other := db.Conn(t)
					defer other.Close()
					if err := tc.interfere(ctx, other, keys); err != nil {
						t.Errorf("concurrent writer: %v", err)
					}
				}
			}
			err := tc.op(ctx, conn, keys)
			switch {
			case tc.wantErr == nil && err != nil:
				t.Fatalf("err = %v", err)
			case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			case tc.wantErr != nil && !strings.Contains(err.Error(), tc.wantMsg):
				t.Errorf("err = %q, want it to contain %q", err, tc.wantMsg)
			}
			if tc.interfere != nil && conn.before != nil {
				t.Error("the concurrent writer never ran")
			}
			if tc.attempts > 0 && conn.multis != tc.attempts {
				t.Errorf("%d commits tried, want %d", conn.multis, tc.attempts)
			}
			dump := db.Dump(t)
			if tc.unchanged {
				testredis.DiffDumps(t, dump, seededDump)
			}
			for k, want := range tc.want {
				if got := dump[k]; got != want {
					t.Errorf("%s:\n got  %q\n want %q", k, got, want)
				}
			}
			if err := danglingRules(dump); err != nil {
				t.Error(err)
			}
		})
	}
}

// danglingRules checks what a torn write would break: every listed rule exists and belongs to
// the contact listing it, and every rule is listed by its contact.
func danglingRules(dump map[string]string) error {
	listed := map[string]string{}
	for k, v := range dump {
		if contact, ok := strings.CutPrefix(k, "contact_notification_rules:"); ok {
			for _, r := range strings.Split(strings.TrimSuffix(strings.TrimPrefix(v, "set{"), "}"), ", ") {
				listed[r] = contact
				if !strings.Contains(dump["notification_rule:"+r], "contact_id="+contact+",") {
					return fmt.Errorf("rule %s is listed for %s but its hash is %q", r, contact, dump["notification_rule:"+r])
				}
			}
		}
	}
	for k, v := range dump {
		if r, ok := strings.CutPrefix(k, "notification_rule:"); ok && listed[r] == "" {
			return fmt.Errorf("rule %s (%s) is listed by no contact", r, v)
		}
	}
	return nil
}

func TestCreateContacts(t *testing.T) {
	t.Parallel()
	grace := roster.ContactData{ID: "grace", ContactInfo: roster.ContactInfo{FirstName: "Grace"},
		Media: []roster.Medium{{Name: "email", Address: "grace@example.com"}},
		Rules: []roster.Rule{{ID: "grace-web", Tags: []string{"web", "web"}, CriticalMedia: []string{"email"}}}}
	create := func(cs ...roster.ContactData) op {
		return func(ctx context.Context, conn redis.Conn, keys schema.Keys) error {
			return roster.CreateContacts(ctx, conn, keys, cs)
		}
	}
	runWriteCases(t, []writeCase{
		{name: "success", op: create(grace), want: map[string]string{
			"contact:grace":                    "hash{first_name=Grace}",
			"contact_media:grace":              "hash{email=grace@example.com}",
			"contact_notification_rules:grace": "set{grace-web}",
			"all_contacts":                     "set{ada, bob, grace}",
			"notification_rule:grace-web": `hash{contact_id=grace, critical_blackhole=false, critical_media=["email"], entities=[], id=grace-web, ` +
				`regex_entities=[], regex_tags=[], tags=["web"], time_restrictions=[], unknown_blackhole=false, unknown_media=[], warning_blackhole=false, warning_media=[]}`,
		}},
		{name: "invalid", op: create(grace, roster.ContactData{ID: "x", ContactInfo: roster.ContactInfo{Timezone: "Mars/Base"},
			Media: []roster.Medium{{Name: "sms", Address: "1", Interval: ptr(0)}}}),
			wantErr: roster.ErrInvalid, wantMsg: `contacts[1].timezone: unknown time zone "Mars/Base"; contacts[1].media.sms.interval: must be an integer of at least 1`,
			unchanged: true},
		{name: "exists", op: create(grace, roster.ContactData{ID: "ada"}), wantErr: roster.ErrExists, wantMsg: "contact already exists: ada", unchanged: true},
		{name: "rule of another contact", op: create(roster.ContactData{ID: "eve", Rules: []roster.Rule{{ID: "bob-all"}}}),
			wantErr: roster.ErrInvalid, wantMsg: `contacts[0].notification_rules[0].id: rule "bob-all" belongs to contact "bob"`, unchanged: true},
		{name: "created concurrently", op: create(grace),
			interfere: create(roster.ContactData{ID: "grace", ContactInfo: roster.ContactInfo{FirstName: "Other Grace"}}),
			attempts:  1, wantErr: roster.ErrExists, wantMsg: "grace",
			want: map[string]string{"contact:grace": "hash{first_name=Other Grace}", "contact_notification_rules:grace": ""}},
	})
}

func TestReplaceContacts(t *testing.T) {
	t.Parallel()
	replace := func(cs ...roster.ContactData) op {
		return func(ctx context.Context, conn redis.Conn, keys schema.Keys) error {
			res, err := roster.ReplaceContacts(ctx, conn, keys, cs, roster.ReplaceOptions{})
			if err == nil && len(res.Problems) > 0 {
				return &roster.ValidationError{Errors: []roster.FieldError{res.Problems[0].FieldError}}
			}
			return err
		}
	}
	adaOnly := roster.ContactData{ID: "ada", ContactInfo: roster.ContactInfo{FirstName: "Ada"},
		Media: []roster.Medium{{Name: "email", Address: "ada@example.com"}}}
	runWriteCases(t, []writeCase{
		{name: "replaces everything", op: replace(adaOnly), want: map[string]string{
			"contact:ada": "hash{first_name=Ada}", "contact_media:ada": "hash{email=ada@example.com}",
			"contact_media_intervals:ada": "", "contact_pagerduty:ada": "", "contact_tz:ada": "",
			"contact_notification_rules:ada": "", "notification_rule:ada-db": "",
			"contact_tag:ops": "set{bob}", "contact:bob": "hash{first_name=Bob}",
			// the notifier's alerting set of a medium the contact no longer has
			"contact_alerting_checks:ada:media:jabber": "",
		}},
		{name: "a medium kept keeps its alerting set", op: replace(roster.ContactData{ID: "ada",
			Media: []roster.Medium{{Name: "jabber", Address: "ada@jabber.example.com"}}}), want: map[string]string{
			"contact_media:ada": "hash{jabber=ada@jabber.example.com}", "contact_media_rollup_thresholds:ada": "",
			// first_name stays, empty, so Flapjack 1.6 still finds the contact
			"contact_pagerduty:ada": "", "contact_media_intervals:ada": "", "contact:ada": "hash{first_name=}", "contact_tz:ada": "",
			"contact_notification_rules:ada": "", "notification_rule:ada-db": "", "contact_tag:ops": "set{bob}",
		}},
		{name: "invalid", op: replace(roster.ContactData{ID: " ada"}), wantErr: roster.ErrInvalid,
			wantMsg: "id: must not start or end with spaces", unchanged: true},
		// The rule created between the replace's reads and its write is not left behind,
		// listed by nobody: the replace reads again and deletes it with ada's other rules.
		{name: "rule added concurrently", op: replace(adaOnly),
			interfere: func(ctx context.Context, conn redis.Conn, keys schema.Keys) error {
				_, err := roster.CreateRules(ctx, conn, keys, "ada", []roster.Rule{{ID: "ada-new"}})
				return err
			},
			attempts: 2, want: map[string]string{"notification_rule:ada-new": "", "contact_notification_rules:ada": ""}},
		{name: "tag added concurrently", op: replace(adaOnly),
			interfere: func(ctx context.Context, conn redis.Conn, keys schema.Keys) error {
				res, err := roster.ReplaceContacts(ctx, conn, keys, []roster.ContactData{{ID: "ada", Tags: []string{"ops", "db"}}}, roster.ReplaceOptions{})
				if err == nil && len(res.Problems) > 0 {
					err = fmt.Errorf("%v", res.Problems)
				}
				return err
			},
			attempts: 2, want: map[string]string{"contact_tag:db": "", "contact_tag:ops": "set{bob}", "contact:ada": "hash{first_name=Ada}"}},
	})
}

func TestUpdateContacts(t *testing.T) {
	t.Parallel()
	update := func(change func(*roster.ContactInfo), ids ...string) op {
		return func(ctx context.Context, conn redis.Conn, keys schema.Keys) error {
			return roster.UpdateContacts(ctx, conn, keys, ids, func(i *roster.ContactInfo) error { change(i); return nil })
		}
	}
	rename := func(i *roster.ContactInfo) { i.FirstName, i.Email, i.Timezone = "Augusta Ada", "", "Europe/Paris" }
	runWriteCases(t, []writeCase{
		{name: "success", op: update(rename, "ada", "bob"), want: map[string]string{
			"contact:ada": "hash{first_name=Augusta Ada, last_name=Lovelace}", "contact_tz:ada": "Europe/Paris",
			"contact:bob": "hash{first_name=Augusta Ada}", "contact_tz:bob": "Europe/Paris",
			"contact_media:ada": seededDump["contact_media:ada"], "contact_tag:ops": "set{ada, bob}",
		}},
		{name: "invalid", op: update(func(i *roster.ContactInfo) { i.Timezone = "Local" }, "ada"),
			wantErr: roster.ErrInvalid, wantMsg: `timezone: unknown time zone "Local"`, unchanged: true},
		{name: "not found", op: update(rename, "ada", "ghost"), wantErr: roster.ErrNotFound, wantMsg: "no such contact: ghost", unchanged: true},
		{name: "updated concurrently", op: update(func(i *roster.ContactInfo) { i.FirstName = "A." }, "ada"),
			interfere: update(func(i *roster.ContactInfo) { i.LastName = "King" }, "ada"),
			attempts:  2, want: map[string]string{"contact:ada": "hash{email=ada@example.com, first_name=A., last_name=King}"}},
	})
}

func TestDeleteContacts(t *testing.T) {
	t.Parallel()
	del := func(ids ...string) op {
		return func(ctx context.Context, conn redis.Conn, keys schema.Keys) error {
			return roster.DeleteContacts(ctx, conn, keys, ids)
		}
	}
	gone := map[string]string{}
	for k := range seededDump {
		if strings.Contains(k, "ada") {
			gone[k] = ""
		}
	}
	gone["all_contacts"] = "set{bob}"
	gone["contact_tag:ops"] = "set{bob}"
	gone["contacts_for:1"] = "set{bob}"
	gone["contacts_for:1:HTTP"] = ""
	gone["contacts_for:ALL"] = ""
	gone["contact:bob"] = seededDump["contact:bob"]
	withNew := map[string]string{"notification_rule:ada-new": ""}
	for k, v := range gone {
		withNew[k] = v
	}
	runWriteCases(t, []writeCase{
		{name: "success", op: del("ada"), want: gone},
		{name: "not found", op: del("ada", "ghost"), wantErr: roster.ErrNotFound, wantMsg: "no such contact: ghost", unchanged: true},
		{name: "rule added concurrently", op: del("ada"),
			interfere: func(ctx context.Context, conn redis.Conn, keys schema.Keys) error {
				_, err := roster.CreateRules(ctx, conn, keys, "ada", []roster.Rule{{ID: "ada-new"}})
				return err
			},
			attempts: 2, want: withNew},
		{name: "deleted concurrently", op: del("ada"), interfere: del("ada"),
			attempts: 1, wantErr: roster.ErrNotFound, wantMsg: "ada", want: gone},
	})
}

func TestMedia(t *testing.T) {
	t.Parallel()
	set := func(id string, media ...roster.Medium) op {
		return func(ctx context.Context, conn redis.Conn, keys schema.Keys) error {
			return roster.SetMedia(ctx, conn, keys, id, media)
		}
	}
	update := func(change func(*roster.Medium), refs ...roster.MediumRef) op {
		return func(ctx context.Context, conn redis.Conn, keys schema.Keys) error {
			return roster.UpdateMedia(ctx, conn, keys, refs, func(m *roster.Medium) error { change(m); return nil })
		}
	}
	del := func(refs ...roster.MediumRef) op {
		return func(ctx context.Context, conn redis.Conn, keys schema.Keys) error {
			return roster.DeleteMedia(ctx, conn, keys, refs)
		}
	}
	jabber := roster.MediumRef{ContactID: "ada", Name: "jabber"}
	runWriteCases(t, []writeCase{
		{name: "set", op: set("ada", roster.Medium{Name: "jabber", Address: "a@j"}, roster.Medium{Name: "sms", Address: "+1", Interval: ptr(60), RollupThreshold: ptr(0)}),
			want: map[string]string{
				"contact_media:ada":                   "hash{email=ada@example.com, jabber=a@j, pagerduty=service-key, sms=+1}",
				"contact_media_intervals:ada":         "hash{sms=60}",
				"contact_media_rollup_thresholds:ada": "hash{sms=0}",
			}},
		{name: "set invalid", op: set("ada", roster.Medium{Name: "pagerduty", Address: "k", RollupThreshold: ptr(2)}, roster.Medium{Name: "SMS", Address: ""}),
			wantErr: roster.ErrInvalid, wantMsg: `media.pagerduty.rollup_threshold: pagerduty alerts are never rolled up; media.SMS: medium "SMS": names are lower-case letters, digits and _`,
			unchanged: true},
		{name: "set empty address", op: set("ada", roster.Medium{Name: "sms", Address: " "}),
			wantErr: roster.ErrInvalid, wantMsg: "media.sms.address: must not be empty", unchanged: true},
		{name: "set not found", op: set("ghost", roster.Medium{Name: "sms", Address: "+1"}), wantErr: roster.ErrNotFound, wantMsg: "no such contact: ghost", unchanged: true},
		{name: "set on a contact deleted concurrently", op: set("ada", roster.Medium{Name: "sms", Address: "+1"}),
			interfere: func(ctx context.Context, conn redis.Conn, keys schema.Keys) error {
				return roster.DeleteContacts(ctx, conn, keys, []string{"ada"})
			},
			attempts: 1, wantErr: roster.ErrNotFound, want: map[string]string{"contact_media:ada": ""}},
		{name: "update", op: update(func(m *roster.Medium) { m.Interval, m.Address, m.Name = nil, "ada@chat", "renamed" }, jabber),
			want: map[string]string{
				"contact_media:ada":                   "hash{email=ada@example.com, jabber=ada@chat, pagerduty=service-key}",
				"contact_media_intervals:ada":         "",
				"contact_media_rollup_thresholds:ada": "hash{jabber=5}",
			}},
		{name: "update invalid", op: update(func(m *roster.Medium) { m.RollupThreshold = ptr(-1) }, jabber),
			wantErr: roster.ErrInvalid, wantMsg: "media.jabber.rollup_threshold: must be an integer of at least 0", unchanged: true},
		{name: "update not found", op: update(func(*roster.Medium) {}, jabber, roster.MediumRef{ContactID: "ada", Name: "sms"}),
			wantErr: roster.ErrNotFound, wantMsg: "no such medium: ada_sms", unchanged: true},
		{name: "updated concurrently", op: update(func(m *roster.Medium) { m.Interval = ptr(*m.Interval * 2) }, jabber),
			interfere: update(func(m *roster.Medium) { m.Interval = ptr(100) }, jabber),
			attempts:  2, want: map[string]string{"contact_media_intervals:ada": "hash{jabber=200}"}},
		{name: "delete", op: del(jabber, roster.MediumRef{ContactID: "ada", Name: "pagerduty"}),
			want: map[string]string{
				"contact_media:ada": "hash{email=ada@example.com}", "contact_media_intervals:ada": "",
				"contact_media_rollup_thresholds:ada": "", "contact_pagerduty:ada": "",
				"contact_alerting_checks:ada:media:jabber": "",
			}},
		{name: "delete not found", op: del(roster.MediumRef{ContactID: "bob", Name: "email"}), wantErr: roster.ErrNotFound, wantMsg: "bob_email", unchanged: true},
		{name: "deleted concurrently", op: del(jabber), interfere: del(jabber), attempts: 1,
			wantErr: roster.ErrNotFound, want: map[string]string{"contact_media_intervals:ada": ""}},
	})
}

func TestUpdatePagerduty(t *testing.T) {
	t.Parallel()
	update := func(change func(*roster.PagerdutySettings), ids ...string) op {
		return func(ctx context.Context, conn redis.Conn, keys schema.Keys) error {
			return roster.UpdatePagerduty(ctx, conn, keys, ids, func(p *roster.PagerdutySettings) error { change(p); return nil })
		}
	}
	runWriteCases(t, []writeCase{
		{name: "success", op: update(func(p *roster.PagerdutySettings) {
			p.ServiceKey = "bobs-key"
			p.Token = ""
			p.Username, p.Password = "u", "p"
		}, "ada", "bob"), want: map[string]string{
			"contact_media:ada":     "hash{email=ada@example.com, jabber=ada@jabber.example.com, pagerduty=bobs-key}",
			"contact_pagerduty:ada": "hash{password=p, subdomain=example, username=u}",
			"contact_media:bob":     "hash{pagerduty=bobs-key, sms=+15555550100}",
			"contact_pagerduty:bob": "hash{password=p, username=u}",
		}},
		{name: "invalid", op: update(func(p *roster.PagerdutySettings) { p.ServiceKey = "" }, "ada"),
			wantErr: roster.ErrInvalid, wantMsg: "service_key: must not be empty", unchanged: true},
		{name: "not found", op: update(func(p *roster.PagerdutySettings) { p.ServiceKey = "k" }, "ghost"),
			wantErr: roster.ErrNotFound, wantMsg: "ghost", unchanged: true},
		{name: "updated concurrently", op: update(func(p *roster.PagerdutySettings) { p.Token += "+" }, "ada"),
			interfere: update(func(p *roster.PagerdutySettings) { p.Subdomain = "other" }, "ada"),
			attempts:  2, want: map[string]string{"contact_pagerduty:ada": "hash{subdomain=other, token=t0ken+}"}},
	})
}

func TestRules(t *testing.T) {
	t.Parallel()
	create := func(contactID string, rules ...roster.Rule) op {
		return func(ctx context.Context, conn redis.Conn, keys schema.Keys) error {
			_, err := roster.CreateRules(ctx, conn, keys, contactID, rules)
			return err
		}
	}
	update := func(change func(*roster.Rule), ids ...string) op {
		return func(ctx context.Context, conn redis.Conn, keys schema.Keys) error {
			return roster.UpdateRules(ctx, conn, keys, ids, func(r *roster.Rule) error { change(r); return nil })
		}
	}
	del := func(ids ...string) op {
		return func(ctx context.Context, conn redis.Conn, keys schema.Keys) error {
			return roster.DeleteRules(ctx, conn, keys, ids)
		}
	}
	const weekdays = `[ {"start_time": "2013-02-01 09:00:00", "end_time": "2013-02-01 17:00:00", "rrule": "FREQ=WEEKLY;BYDAY=MO"} ]`
	runWriteCases(t, []writeCase{
		{name: "create", op: create("ada", roster.Rule{ID: "ada-web", ContactID: "bob", RegexTags: []string{`^web\d$`}, TimeRestrictions: weekdays, CriticalBlackhole: true}),
			want: map[string]string{
				"contact_notification_rules:ada": "set{ada-db, ada-web}",
				"notification_rule:ada-web": `hash{contact_id=ada, critical_blackhole=true, critical_media=[], entities=[], id=ada-web, regex_entities=[], regex_tags=["^web\\d$"], tags=[], ` +
					`time_restrictions=[{"start_time":"2013-02-01 09:00:00","end_time":"2013-02-01 17:00:00","rrule":"FREQ=WEEKLY;BYDAY=MO"}], unknown_blackhole=false, unknown_media=[], warning_blackhole=false, warning_media=[]}`,
			}},
		{name: "create invalid", op: create("ada", roster.Rule{ID: "ok"}, roster.Rule{RegexEntities: []string{"(?<!x)"}, TimeRestrictions: `[{"start_time": "x"}]`, WarningMedia: []string{"E-mail"}}),
			wantErr: roster.ErrInvalid,
			wantMsg: "notification_rules[1].regex_entities[0]: pattern \"(?<!x)\" does not compile as a Go RE2 regular expression: error parsing regexp: invalid named capture: `(?<!x)`; " +
				"notification_rules[1].time_restrictions[0].end_time: is required; " +
				`notification_rules[1].warning_media[0]: medium "E-mail": names are lower-case letters, digits and _`,
			unchanged: true},
		{name: "create not found", op: create("ghost", roster.Rule{ID: "r"}), wantErr: roster.ErrNotFound, wantMsg: "no such contact: ghost", unchanged: true},
		{name: "create exists", op: create("ada", roster.Rule{ID: "bob-all"}), wantErr: roster.ErrExists, wantMsg: "notification rule already exists: bob-all", unchanged: true},
		{name: "create on a contact replaced concurrently", op: create("ada", roster.Rule{ID: "ada-web"}),
			interfere: func(ctx context.Context, conn redis.Conn, keys schema.Keys) error {
				_, err := roster.ReplaceContacts(ctx, conn, keys, []roster.ContactData{{ID: "ada"}}, roster.ReplaceOptions{})
				return err
			},
			attempts: 2, want: map[string]string{"contact_notification_rules:ada": "set{ada-web}", "notification_rule:ada-db": ""}},
		{name: "update", op: update(func(r *roster.Rule) {
			r.ID, r.ContactID = "moved", "bob"
			r.Tags = []string{"db", "db"}
			r.CriticalMedia = append(r.CriticalMedia, "email")
		}, "ada-db"), want: map[string]string{
			"contact_notification_rules:ada": "set{ada-db}",
			"notification_rule:ada-db": `hash{contact_id=ada, critical_blackhole=false, critical_media=["jabber","email"], entities=["db-01"], id=ada-db, ` +
				`regex_entities=[], regex_tags=[], tags=["db"], time_restrictions=[], unknown_blackhole=false, unknown_media=[], warning_blackhole=false, warning_media=[]}`,
		}},
		{name: "update invalid", op: update(func(r *roster.Rule) { r.TimeRestrictions = `{"start_time": "09:00"}` }, "ada-db"),
			wantErr: roster.ErrInvalid, wantMsg: "time_restrictions: must be an array of objects", unchanged: true},
		{name: "update not found", op: update(func(*roster.Rule) {}, "ada-db", "nope"), wantErr: roster.ErrNotFound, wantMsg: "no such notification rule: nope", unchanged: true},
		{name: "updated concurrently", op: update(func(r *roster.Rule) { r.WarningMedia = append(r.WarningMedia, "email") }, "ada-db"),
			interfere: update(func(r *roster.Rule) { r.WarningMedia = []string{"jabber"} }, "ada-db"),
			attempts:  2, want: map[string]string{"notification_rule:ada-db": `hash{contact_id=ada, critical_blackhole=false, critical_media=["jabber"], entities=["db-01"], id=ada-db, ` +
				`regex_entities=[], regex_tags=[], tags=[], time_restrictions=[], unknown_blackhole=false, unknown_media=[], warning_blackhole=false, warning_media=["jabber","email"]}`}},
		{name: "delete", op: del("ada-db", "bob-all"), want: map[string]string{
			"notification_rule:ada-db": "", "notification_rule:bob-all": "", "contact_notification_rules:ada": "", "contact_notification_rules:bob": "",
		}},
		{name: "delete not found", op: del("ada-db", "nope"), wantErr: roster.ErrNotFound, wantMsg: "nope", unchanged: true},
		{name: "deleted concurrently", op: del("ada-db"), interfere: del("ada-db"), attempts: 1,
			wantErr: roster.ErrNotFound, want: map[string]string{"notification_rule:ada-db": ""}},
	})
}

func TestPutRules(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	keys := schema.NewKeys("")
	seedContacts(t, db, keys)
	conn := db.Conn(t)
	defer conn.Close()
	ctx := context.Background()
	rules := []roster.Rule{
		{ID: "ada-db", ContactID: "ada", Entities: []string{"db-02"}},
		{ID: "bob-all", ContactID: "ada"},
		{ID: "ghost-1", ContactID: "ghost"},
		{ID: "", ContactID: "ada"},
		{ID: "ada-db", ContactID: "ada"},
	}
	want := []roster.Problem{
		{Index: 1, FieldError: roster.FieldError{Field: "id", Reason: `rule "bob-all" belongs to contact "bob"`, Err: roster.ErrRuleTaken}},
		{Index: 2, FieldError: roster.FieldError{Field: "contact_id", Reason: `contact "ghost" does not exist`, Err: roster.ErrNotFound}},
		{Index: 3, FieldError: roster.FieldError{Field: "id", Reason: "must not be empty"}},
		{Index: 4, FieldError: roster.FieldError{Field: "id", Reason: "duplicate of rule 0"}},
	}
	res, err := roster.PutRules(ctx, conn, keys, rules, roster.ReplaceOptions{})
	if err != nil || !reflect.DeepEqual(res.Problems, want) || res.Writes != 0 {
		t.Fatalf("PutRules = %+v, %v; want problems %+v", res, err, want)
	}
	testredis.DiffDumps(t, db.Dump(t), seededDump)
	res, err = roster.PutRules(ctx, conn, keys, rules, roster.ReplaceOptions{Partial: true})
	if err != nil || !reflect.DeepEqual(res.Refused, []bool{false, true, true, true, true}) {
		t.Fatalf("partial PutRules = %+v, %v", res, err)
	}
	if got := db.Dump(t)["notification_rule:ada-db"]; !strings.Contains(got, `entities=["db-02"]`) {
		t.Errorf("ada-db = %s", got)
	}
}

func TestSeedContact(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	keys := schema.NewKeys("")
	conn := db.Conn(t)
	defer conn.Close()
	operator := roster.ContactData{ID: "operator", ContactInfo: roster.ContactInfo{FirstName: "Operator", LastName: "(demo)"},
		Media: []roster.Medium{{Name: "log", Address: "stdout"}}}
	// What the server's demo seeding wrote with its own MULTI before.
	want := map[string]string{
		"all_contacts":           "set{operator}",
		"contact:operator":       "hash{first_name=Operator, last_name=(demo)}",
		"contact_media:operator": "hash{log=stdout}",
		"contacts_for:ALL":       "set{operator}",
	}
	for i, wantCreated := range []bool{true, false} {
		created, err := roster.SeedContact(context.Background(), conn, keys, operator, true)
		if err != nil || created != wantCreated {
			t.Fatalf("seed %d: created %v, err %v; want %v", i, created, err, wantCreated)
		}
		testredis.DiffDumps(t, db.Dump(t), want)
		// An operator's edits survive the next start.
		db.Do(t, "HSET", keys.ContactMedia("operator"), "log", "stderr")
		want["contact_media:operator"] = "hash{log=stderr}"
	}
	if _, err := roster.SeedContact(context.Background(), conn, keys, roster.ContactData{ID: ""}, true); !errors.Is(err, roster.ErrInvalid) {
		t.Errorf("seeding an invalid contact: err = %v", err)
	}
}

// A write whose keys change under every attempt gives up rather than loop.
func TestContended(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	keys := schema.NewKeys("")
	seedContacts(t, db, keys)
	conn := db.Conn(t)
	defer conn.Close()
	calls := 0
	err := roster.UpdateContacts(context.Background(), conn, keys, []string{"ada"}, func(i *roster.ContactInfo) error {
		calls++
		db.Do(t, "HSET", keys.Contact("ada"), "last_name", fmt.Sprint("L", calls))
		return nil
	})
	if !errors.Is(err, roster.ErrContended) || calls != 20 {
		t.Errorf("err %v after %d attempts, want ErrContended after 20", err, calls)
	}
	if _, err := conn.Do("MULTI"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Do("EXEC"); err != nil {
		t.Errorf("the connection is left watching: %v", err)
	}
}

// Many writers at once on one contact (API calls, imports, several servers) leave a contact
// whose rules and tags are whole, and lose none of the updates that did not replace it.
func TestConcurrentWriters(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	keys := schema.NewKeys("")
	seedContacts(t, db, keys)
	ctx := context.Background()
	const rounds = 15
	var wg sync.WaitGroup
	errs := make(chan error, 8*rounds)
	run := func(f func(conn redis.Conn, i int) error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn := db.Pool.Get()
			defer conn.Close()
			for i := range rounds {
				if err := f(conn, i); err != nil {
					errs <- err
				}
			}
		}()
	}
	run(func(conn redis.Conn, i int) error {
		res, err := roster.ReplaceContacts(ctx, conn, keys, fixture()[:1], roster.ReplaceOptions{})
		if err == nil && len(res.Problems) > 0 {
			err = fmt.Errorf("replace: %v", res.Problems)
		}
		return err
	})
	run(func(conn redis.Conn, i int) error {
		_, err := roster.CreateRules(ctx, conn, keys, "ada", []roster.Rule{{ID: fmt.Sprint("r", i), Tags: []string{"x"}}})
		return err
	})
	run(func(conn redis.Conn, i int) error {
		err := roster.DeleteRules(ctx, conn, keys, []string{fmt.Sprint("r", i)})
		if errors.Is(err, roster.ErrNotFound) {
			return nil // the replace got there first
		}
		return err
	})
	run(func(conn redis.Conn, i int) error {
		return roster.UpdateContacts(ctx, conn, keys, []string{"bob"}, func(c *roster.ContactInfo) error {
			c.LastName += "+"
			return nil
		})
	})
	run(func(conn redis.Conn, i int) error {
		return roster.UpdateMedia(ctx, conn, keys, []roster.MediumRef{{ContactID: "bob", Name: "sms"}}, func(m *roster.Medium) error {
			n := int64(0)
			if m.Interval != nil {
				n = *m.Interval
			}
			m.Interval = ptr(n + 1)
			return nil
		})
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	dump := db.Dump(t)
	if err := danglingRules(dump); err != nil {
		t.Error(err)
	}
	if got, want := dump["contact:bob"], "hash{first_name=Bob, last_name="+strings.Repeat("+", rounds)+"}"; got != want {
		t.Errorf("bob = %s, want %s (an update was lost)", got, want)
	}
	if got, want := dump["contact_media_intervals:bob"], fmt.Sprintf("hash{sms=%d}", rounds); got != want {
		t.Errorf("bob's intervals = %s, want %s (an update was lost)", got, want)
	}
	if got := dump["contact_tag:ops"]; got != "set{ada, bob}" {
		t.Errorf("contact_tag:ops = %s", got)
	}
}

// ReplaceContacts then LoadContacts reads back what was written.
func TestReplaceContactsRoundTrip(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	keys := schema.NewKeys("fj:")
	conn := db.Conn(t)
	defer conn.Close()
	if res, err := roster.ReplaceContacts(context.Background(), conn, keys, fixture(), roster.ReplaceOptions{}); err != nil || len(res.Problems) > 0 {
		t.Fatalf("replace: %v %v", err, res.Problems)
	}
	got, err := roster.LoadContacts(conn, keys, []string{"ada", "bob"})
	if err != nil || len(got) != 2 {
		t.Fatalf("load: %v %v", got, err)
	}
	ada := got[0]
	want := roster.Contact{
		ID: "ada", FirstName: "Ada", LastName: "Lovelace", Email: "ada@example.com", Timezone: "Europe/London",
		Media:            map[string]string{"email": "ada@example.com", "jabber": "ada@jabber.example.com", "pagerduty": "service-key"},
		Intervals:        map[string]int64{"jabber": 300},
		RollupThresholds: map[string]int64{"jabber": 5},
		Pagerduty:        roster.PagerdutyCredentials{Subdomain: "example", Token: "t0ken"},
		Rules: []roster.Rule{{ID: "ada-db", ContactID: "ada", Entities: []string{"db-01"}, TimeRestrictions: "[]",
			CriticalMedia: []string{"jabber"}}},
		SuppressedUntil: map[string]int64{},
	}
	ada.Rules[0].RegexEntities, ada.Rules[0].Tags, ada.Rules[0].RegexTags = nil, nil, nil
	ada.Rules[0].UnknownMedia, ada.Rules[0].WarningMedia = nil, nil
	if !reflect.DeepEqual(ada, want) {
		t.Errorf("ada:\n got  %+v\n want %+v", ada, want)
	}
}

// TestFlapjack16Contacts: contacts written by the real Flapjack 1.6 data layer, which keeps no
// all_contacts index, are found, read, changed and deleted by every writer, and the index is
// repaired from their hashes.
func TestFlapjack16Contacts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	keys := schema.Keys{}
	load := func(t *testing.T) (*testredis.DB, redis.Conn) {
		db := fj16.NewDB(t)
		conn := db.Conn(t)
		t.Cleanup(func() { conn.Close() })
		return db, conn
	}
	t.Run("listed and read", func(t *testing.T) {
		_, conn := load(t)
		ids, err := roster.ContactIDs(ctx, conn, keys)
		if err != nil || !reflect.DeepEqual(ids, []string{"21", "22", "ops-team"}) {
			t.Fatalf("ContactIDs = %v, %v; want the three contacts 1.6 wrote", ids, err)
		}
		got, err := roster.ReadContacts(ctx, conn, keys, []string{"21"}, true)
		if err != nil || len(got) != 1 {
			t.Fatalf("ReadContacts(21) = %v, %v", got, err)
		}
		ada := got[0]
		if ada.FirstName != "Ada" || ada.Timezone != "Europe/London" || len(ada.Media) != 4 || len(ada.Rules) != 2 ||
			ada.Pagerduty.Subdomain != "analytical" || !reflect.DeepEqual(ada.Entities, []string{"5000", "5001"}) {
			t.Fatalf("contact 21 read as %+v", ada)
		}
	})
	t.Run("writers find them", func(t *testing.T) {
		db, conn := load(t)
		err := roster.CreateContacts(ctx, conn, keys, []roster.ContactData{{ID: "22", ContactInfo: roster.ContactInfo{FirstName: "X"}}})
		if !errors.Is(err, roster.ErrExists) {
			t.Fatalf("creating 1.6's contact 22 again: %v, want ErrExists", err)
		}
		if err := roster.UpdateContacts(ctx, conn, keys, []string{"ops-team"}, func(i *roster.ContactInfo) error {
			i.LastName = "Crew"
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := roster.SetMedia(ctx, conn, keys, "ops-team", []roster.Medium{{Name: "email", Address: "crew@example.com"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := roster.CreateRules(ctx, conn, keys, "ops-team", []roster.Rule{{ID: "crew-rule"}}); err != nil {
			t.Fatal(err)
		}
		if err := roster.DeleteContacts(ctx, conn, keys, []string{"22"}); err != nil {
			t.Fatal(err)
		}
		dump := db.Dump(t)
		for key, want := range map[string]string{
			"contact:ops-team":       "hash{email=ops@example.com, first_name=Ops, last_name=Crew}",
			"contact_media:ops-team": "hash{email=crew@example.com}",
			"contact:22":             "", "contact_media:22": "", "contact_notification_rules:22": "", "notification_rule:rule-babbage-db": "",
			"contacts_for:5001": "set{21}",
		} {
			if got := dump[key]; got != want {
				t.Errorf("%s = %q, want %q", key, got, want)
			}
		}
		if n, _ := redis.Int(conn.Do("SISMEMBER", "contact_notification_rules:ops-team", "crew-rule")); n != 1 {
			t.Error("the new rule is not listed under ops-team")
		}
	})
	t.Run("schedules name them", func(t *testing.T) {
		_, conn := load(t)
		// "gone" is in our index only: a Flapjack 1.6 tool deleted its hash
		if _, err := conn.Do("SADD", keys.AllContacts(), "gone"); err != nil {
			t.Fatal(err)
		}
		rota := func(id string, members ...string) *oncall.Schedule {
			s, err := oncall.New(oncall.Schedule{ID: id, Timezone: "UTC",
				Layers: []oncall.Layer{{Name: "weekly", Start: "2026-01-05T09:00:00", Turn: "1 week", Members: members}}})
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
		res, err := roster.PutSchedules(ctx, conn, keys, []*oncall.Schedule{rota("ops", "21", "ops-team"), rota("ghost", "21", "gone")},
			roster.ReplaceOptions{Partial: true})
		if err != nil || len(res.Problems) != 1 || res.Refused[0] || !res.Refused[1] || res.Problems[0].Reason != `contact "gone" does not exist` {
			t.Fatalf("PutSchedules = %+v, %v; want ops stored, ghost refused for gone", res, err)
		}
		window := oncall.Override{Start: time.Date(2026, 1, 6, 12, 0, 0, 0, time.UTC), End: time.Date(2026, 1, 6, 14, 0, 0, 0, time.UTC)}
		window.Contact = "22"
		if err := roster.AddOverride(ctx, conn, keys, "ops", window); err != nil {
			t.Fatalf("an override for 1.6's contact 22: %v", err)
		}
		window.Contact = "gone"
		var nf *roster.NotFoundError
		if err := roster.AddOverride(ctx, conn, keys, "ops", window); !errors.As(err, &nf) {
			t.Fatalf("an override for the deleted contact: %v, want not found", err)
		}
	})
	t.Run("index repaired from the hashes", func(t *testing.T) {
		db, conn := load(t)
		// A contact an earlier version of ours wrote with every own field empty (no hash, but
		// media), and one a Flapjack 1.6 tool deleted (nothing left but our index's member).
		for _, cmd := range [][]any{{"SADD", keys.AllContacts(), "old", "gone"}, {"HSET", keys.ContactMedia("old"), "sms", "+1555"}} {
			if _, err := conn.Do(cmd[0].(string), cmd[1:]...); err != nil {
				t.Fatal(err)
			}
		}
		if ids, _ := roster.ContactIDs(ctx, conn, keys); !reflect.DeepEqual(ids, []string{"21", "22", "ops-team"}) {
			t.Fatalf("before the repair ContactIDs = %v: only hashes make contacts", ids)
		}
		n, err := roster.RepairContactIndex(ctx, conn, keys)
		if err != nil || n != 5 {
			t.Fatalf("RepairContactIndex = %d, %v; want 5 changed", n, err)
		}
		dump := db.Dump(t)
		if got := dump["all_contacts"]; got != "set{21, 22, old, ops-team}" {
			t.Errorf("all_contacts = %s", got)
		}
		if got := dump["contact:old"]; got != "hash{first_name=}" {
			t.Errorf("contact:old = %s, want a hash Flapjack 1.6 finds", got)
		}
		if got := dump["contact:gone"]; got != "" {
			t.Errorf("contact:gone = %s, want none: it was deleted", got)
		}
		if n, err := roster.RepairContactIndex(ctx, conn, keys); err != nil || n != 0 {
			t.Errorf("second repair = %d, %v; want nothing left to change", n, err)
		}
	})
}
