package notifier

import (
	"fmt"
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/schema"
	"github.com/flapjackgo/flapjack/timerestriction"
)

func TestRouteTable(t *testing.T) {
	t.Parallel()
	r := newRouter(timerestriction.NewCache(16))
	weekdays := `[{"start_time":"2013-02-01 08:00:00","end_time":"2013-02-01 18:00:00","rrules":[{"rule_type":"Weekly","interval":1,"validations":{"day":[1,2,3,4,5]}}]}]`
	monday10 := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)
	sunday10 := time.Date(2026, 1, 4, 10, 0, 0, 0, time.UTC)
	contact := func(rules ...roster.Rule) *roster.Contact {
		return &roster.Contact{ID: "c", Media: map[string]string{"sms": "1", "email": "e", "jabber": "j"}, Rules: rules}
	}
	n := func(sev string, tags ...string) *schema.Notification {
		return &schema.Notification{EventID: "web-01:HTTP", Severity: sev, Tags: tags}
	}
	cases := []struct {
		name   string
		c      *roster.Contact
		n      *schema.Notification
		at     time.Time
		media  string
		hole   bool
		errors int
	}{
		{"no rules: every medium, every severity", contact(), n("unknown"), monday10, "[email jabber sms]", false, 0},
		{"severity picks the media list", contact(roster.Rule{ID: "r", WarningMedia: []string{"email"}, CriticalMedia: []string{"sms"}}), n("critical"), monday10, "[sms]", false, 0},
		{"ok selects nothing", contact(roster.Rule{ID: "r", CriticalMedia: []string{"sms"}}), n("ok"), monday10, "[]", false, 0},
		{"time restriction active", contact(roster.Rule{ID: "r", CriticalMedia: []string{"sms"}, TimeRestrictions: weekdays}), n("critical"), monday10, "[sms]", false, 0},
		{"time restriction inactive", contact(roster.Rule{ID: "r", CriticalMedia: []string{"sms"}, TimeRestrictions: weekdays}), n("critical"), sunday10, "[]", false, 0},
		{"broken restriction counts as inactive", contact(roster.Rule{ID: "r", CriticalMedia: []string{"sms"}, TimeRestrictions: `[{"start_time":"x"}]`}), n("critical"), monday10, "[]", false, 1},
		{"specific overrides general", contact(roster.Rule{ID: "g", CriticalMedia: []string{"email"}}, roster.Rule{ID: "s", Entities: []string{"web-01"}, CriticalMedia: []string{"sms"}}), n("critical"), monday10, "[sms]", false, 0},
		{"inactive specific leaves general", contact(roster.Rule{ID: "g", CriticalMedia: []string{"email"}}, roster.Rule{ID: "s", Entities: []string{"web-01"}, CriticalMedia: []string{"sms"}, TimeRestrictions: weekdays}), n("critical"), sunday10, "[email]", false, 0},
		{"tags all required", contact(roster.Rule{ID: "s", Tags: []string{"prod", "web"}, CriticalMedia: []string{"sms"}}), n("critical", "prod"), monday10, "[]", false, 0},
		{"regex tags", contact(roster.Rule{ID: "s", RegexTags: []string{"^pr"}, CriticalMedia: []string{"sms"}}), n("critical", "prod"), monday10, "[sms]", false, 0},
		{"blackhole wins over other rules", contact(roster.Rule{ID: "a", CriticalMedia: []string{"sms"}}, roster.Rule{ID: "b", CriticalBlackhole: true}), n("critical"), monday10, "[]", true, 0},
		{"bad regex skips only its rule", contact(roster.Rule{ID: "bad", RegexEntities: []string{"("}, CriticalMedia: []string{"sms"}}, roster.Rule{ID: "ok", Entities: []string{"web-01"}, CriticalMedia: []string{"email"}}), n("critical"), monday10, "[email]", false, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := r.route(c.c, c.n, "web-01", c.at, time.UTC)
			if fmt.Sprint(got.media) != c.media || got.blackholed != c.hole || len(got.problems) != c.errors {
				t.Fatalf("media %v blackholed %v problems %v; want %s %v %d", got.media, got.blackholed, got.problems, c.media, c.hole, c.errors)
			}
		})
	}
}

// BenchmarkRoute is rule evaluation for one contact with five rules, one time-restricted.
func BenchmarkRoute(b *testing.B) {
	r := newRouter(timerestriction.NewCache(64))
	c := &roster.Contact{ID: "c", Media: map[string]string{"sms": "1", "email": "e"}, Rules: []roster.Rule{
		{ID: "1", Entities: []string{"db-01", "db-02"}, CriticalMedia: []string{"sms"}},
		{ID: "2", RegexEntities: []string{`^web-\d+`}, WarningMedia: []string{"email"}, CriticalMedia: []string{"email"}},
		{ID: "3", Tags: []string{"prod"}, CriticalMedia: []string{"sms"}},
		{ID: "4", RegexTags: []string{"^team-"}, UnknownMedia: []string{"email"}},
		{ID: "5", CriticalMedia: []string{"email"}, TimeRestrictions: `[{"start_time":"2013-02-01 08:00:00","end_time":"2013-02-01 18:00:00","rrules":[{"rule_type":"Weekly","interval":1,"validations":{"day":[1,2,3,4,5]}}]}]`},
	}}
	n := &schema.Notification{EventID: "web-07:HTTP", Severity: "critical", Tags: []string{"prod", "team-a", "web-07", "http"}}
	now := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	for b.Loop() {
		if got := r.route(c, n, "web-07", now, time.UTC); len(got.media) == 0 {
			b.Fatal("no media")
		}
	}
}
