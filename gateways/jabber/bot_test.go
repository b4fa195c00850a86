package jabber

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/views"
	"github.com/flapjackgo/flapjack/oncall"
	"github.com/flapjackgo/flapjack/schema"
)

// t0 is the fake "now" of the bot tests: 2026-01-05 10:00:00 UTC.
var t0 = time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)

// seedChecks writes, on the documented layout, app-01 with HTTP critical (acknowledged 10 min
// ago for 4h) and Ping ok in scheduled maintenance, app-02 with Disk warning, and db-01 known
// but without checks.
func seedChecks(t *testing.T, db *testredis.DB, keys schema.Keys) {
	t.Helper()
	now := t0.Unix()
	for _, c := range []struct{ entity, check, state, summary string }{
		{"app-01.example.com", "HTTP", "critical", "HTTP 500"},
		{"app-01.example.com", "Ping", "ok", "PING OK"},
		{"app-02.example.com", "Disk", "warning", "91% used"},
	} {
		id := schema.CheckID(c.entity, c.check)
		db.Do(t, "HSET", keys.Check(id), "state", c.state, "summary", c.summary, "last_change", now-3600)
		db.Do(t, "ZADD", keys.CurrentChecks(c.entity), now, c.check)
		db.Do(t, "ZADD", keys.CurrentEntities(), now, c.entity)
		db.Do(t, "HSET", keys.ChecksByHash(), schema.AckHash(id), id)
	}
	db.Do(t, "HSET", keys.EntityIDsByName(), "db-01.example.com", "7")
	http := "app-01.example.com:HTTP"
	db.Do(t, "ZADD", keys.Maintenances(schema.Unscheduled, http), 4*3600, now-600)
	db.Do(t, "ZADD", keys.SortedMaintenanceTimestamps(schema.Unscheduled, http), now-600, now-600)
	db.Do(t, "SET", keys.MaintenanceSummary(schema.Unscheduled, http, now-600), "ada: fixing it")
	ping := "app-01.example.com:Ping"
	db.Do(t, "ZADD", keys.Maintenances(schema.Scheduled, ping), 2*3600, now-1800)
	db.Do(t, "SET", keys.MaintenanceSummary(schema.Scheduled, ping, now-1800), "kernel upgrade")
}

func newTestBot(t *testing.T) (*bot, *testredis.DB, schema.Keys) {
	t.Helper()
	db := testredis.New(t)
	keys := schema.NewKeys("")
	seedChecks(t, db, keys)
	cfg := Config{JabberID: "flapjack@example.com", Password: "pw", Identifiers: []string{"fj"}}.withDefaults()
	b := newBot(cfg, RedisStore{Pool: db.Pool, Keys: keys}, clock.NewFake(t0), zap.NewNop(), "1.2.3")
	return b, db, keys
}

func popEvents(t *testing.T, db *testredis.DB, keys schema.Keys) []schema.Event {
	t.Helper()
	raw, err := redis.Strings(db.Do(t, "LRANGE", keys.Events(), 0, -1), nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Do(t, "DEL", keys.Events())
	var out []schema.Event
	for i := len(raw) - 1; i >= 0; i-- { // LPUSHed: oldest last
		ev, err := schema.ParseEvent([]byte(raw[i]))
		if err != nil {
			t.Fatalf("queued event %s is invalid: %v", raw[i], err)
		}
		out = append(out, ev)
	}
	return out
}

func TestBotReplies(t *testing.T) {
	t.Parallel()
	b, db, keys := newTestBot(t)
	httpHash := schema.AckHash("app-01.example.com:HTTP")
	diskHash := schema.AckHash("app-02.example.com:Disk")
	pingHash := schema.AckHash("app-01.example.com:Ping")
	tests := []struct {
		name   string
		text   string
		want   string
		events []schema.Event
	}{
		{"ack", fmt.Sprintf("ACKID %s fixing it duration: 2h", strings.ToUpper(diskHash)),
			fmt.Sprintf("ACKing Disk on app-02.example.com (%s)", diskHash),
			[]schema.Event{{Entity: "app-02.example.com", Check: "Disk", Type: "action", State: "acknowledgement",
				Summary: "ada@example.com: fixing it", Time: t0.Unix(), HasTime: true, Duration: 7200, HasDuration: true,
				AcknowledgementID: diskHash}}},
		{"ack while acknowledged changes the ack", fmt.Sprintf("ACKID %s still on it", httpHash),
			fmt.Sprintf("Changing ACK for HTTP on app-01.example.com (%s)", httpHash),
			[]schema.Event{{Entity: "app-01.example.com", Check: "HTTP", Type: "action", State: "acknowledgement",
				Summary: "ada@example.com: still on it", Time: t0.Unix(), HasTime: true, Duration: 4 * 3600, HasDuration: true,
				AcknowledgementID: httpHash}}},
		{"ack with unusable duration takes the default", fmt.Sprintf("ACKID %s on it duration: whenever", diskHash),
			fmt.Sprintf("ACKing Disk on app-02.example.com (%s) - couldn't understand duration 'whenever', so it lasts 4 hours (the default)", diskHash),
			[]schema.Event{{Entity: "app-02.example.com", Check: "Disk", Type: "action", State: "acknowledgement",
				Summary: "ada@example.com: on it", Time: t0.Unix(), HasTime: true, Duration: 4 * 3600, HasDuration: true,
				AcknowledgementID: diskHash}}},
		{"ack of an ok check says it has no effect", fmt.Sprintf("ACKID %s hmm", pingHash),
			fmt.Sprintf("ACKing Ping on app-01.example.com (%s) - note: the check is OK at the moment; an acknowledgement only applies while it fails", pingHash),
			[]schema.Event{{Entity: "app-01.example.com", Check: "Ping", Type: "action", State: "acknowledgement",
				Summary: "ada@example.com: hmm", Time: t0.Unix(), HasTime: true, Duration: 4 * 3600, HasDuration: true,
				AcknowledgementID: pingHash}}},
		{"unknown hash", "ACKID DEADBEEF fixing it", "ERROR - couldn't ACK deadbeef - not found", nil},
		{"missing comment", fmt.Sprintf("ACKID %s", diskHash),
			fmt.Sprintf(`ERROR - couldn't ACK %s - please provide a comment, eg "flapjack: ACKID %s AL looking"`, diskHash, diskHash), nil},
		{"missing comment with duration", fmt.Sprintf("ACKID %s duration: 1h", diskHash),
			fmt.Sprintf(`ERROR - couldn't ACK %s - please provide a comment, eg "flapjack: ACKID %s AL looking"`, diskHash, diskHash), nil},
		{"test notifications", "test notifications for APP-02.example.com",
			"Testing notifications to all contacts interested in entity: app-02.example.com, check: test",
			[]schema.Event{{Entity: "app-02.example.com", Check: "test", Type: "action", State: "test_notifications",
				Summary: "Testing notifications to all contacts interested in entity: app-02.example.com, check: test",
				Details: "requested by ada@example.com over Jabber", Time: t0.Unix(), HasTime: true}}},
		{"test notifications of an entity without checks", "test notifications for db-01.example.com:Backup",
			"Testing notifications to all contacts interested in entity: db-01.example.com, check: Backup",
			[]schema.Event{{Entity: "db-01.example.com", Check: "Backup", Type: "action", State: "test_notifications",
				Summary: "Testing notifications to all contacts interested in entity: db-01.example.com, check: Backup",
				Details: "requested by ada@example.com over Jabber", Time: t0.Unix(), HasTime: true}}},
		{"test notifications for an unknown entity", "test notifications for nope", "I can't see an entity called 'nope'", nil},
		{"tell me about", "tell me about app-01.example.com", strings.Join([]string{
			"Entity: app-01.example.com",
			"HTTP: Critical since 2026-01-05 09:00:00 UTC",
			"  scheduled maintenance: none",
			"  unscheduled maintenance: 2026-01-05 09:50:00 UTC → 2026-01-05 13:50:00 UTC (3 hours, 50 minutes remaining): ada: fixing it",
			"Ping: OK since 2026-01-05 09:00:00 UTC",
			"  scheduled maintenance: 2026-01-05 09:30:00 UTC → 2026-01-05 11:30:00 UTC (1 hour, 30 minutes remaining): kernel upgrade",
			"  unscheduled maintenance: none",
		}, "\n"), nil},
		{"tell me about one check", "tell me about app-02.example.com:Disk", strings.Join([]string{
			"Entity: app-02.example.com, check: Disk",
			"Disk: Warning since 2026-01-05 09:00:00 UTC",
			"  scheduled maintenance: none",
			"  unscheduled maintenance: none",
		}, "\n"), nil},
		{"tell me about an entity without checks", "tell me about db-01.example.com", "Entity: db-01.example.com has no current checks", nil},
		{"tell me about an unknown entity", "tell me about nope", "I can't see an entity called 'nope'", nil},
		{"find entities", "find entities matching /^app/", "Entities matching /^app/ (2): app-01.example.com, app-02.example.com", nil},
		{"find entities none", "find entities matching /^web/", "No entities match /^web/", nil},
		{"find checks", "find checks on app-01.example.com", "Checks on app-01.example.com: HTTP, Ping", nil},
		{"find checks matching", "find checks matching /^H/ on app-01.example.com", "Checks matching /^H/ on app-01.example.com: HTTP", nil},
		{"find checks none", "find checks on db-01.example.com", "db-01.example.com has no checks", nil},
		{"find checks unknown entity", "find checks on nope", "I can't see an entity called 'nope'", nil},
		{"find checks on entities", "find checks on entities matching /example/", strings.Join([]string{
			"Checks on app-01.example.com: HTTP, Ping",
			"Checks on app-02.example.com: Disk",
			"db-01.example.com has no checks",
		}, "\n"), nil},
		{"status entities", "status entities /^app/", strings.Join([]string{
			"app-01.example.com:HTTP: critical",
			"app-01.example.com:Ping: ok",
			"app-02.example.com:Disk: warning",
		}, "\n"), nil},
		{"status checks", "status checks /^(HTTP|Disk)$/", "app-01.example.com:HTTP: critical\napp-02.example.com:Disk: warning", nil},
		{"status checks on", "status checks /.*/ on /app-02/", "app-02.example.com:Disk: warning", nil},
		{"status checks none", "status checks /nothing/", "No current checks matching /nothing/ on entities matching /.*/", nil},
		{"bad regex", "status entities /(/", "that doesn't seem to be a valid pattern - error parsing regexp: missing closing ): `(`", nil},
		{"unknown command", "make me a sandwich", "what do you mean, 'make me a sandwich'? Type 'help' for a list of acceptable commands.", nil},
	}
	// Sequential: the cases share one database and the events list.
	for _, tc := range tests {
		got := b.execute(context.Background(), ParseCommand(tc.text), "ada@example.com")
		if got != tc.want {
			t.Errorf("%s: reply =\n%s\nwant\n%s", tc.name, got, tc.want)
		}
		events := popEvents(t, db, keys)
		if fmt.Sprintf("%+v", events) != fmt.Sprintf("%+v", tc.events) {
			t.Errorf("%s: events =\n%+v\nwant\n%+v", tc.name, events, tc.events)
		}
	}
}

func TestBotListsAreBounded(t *testing.T) {
	t.Parallel()
	b, db, keys := newTestBot(t)
	for i := 0; i < 45; i++ {
		e := fmt.Sprintf("web-%02d.example.com", i)
		db.Do(t, "ZADD", keys.CurrentEntities(), t0.Unix(), e)
		for j := 0; j < 3; j++ {
			db.Do(t, "ZADD", keys.CurrentChecks(e), t0.Unix(), fmt.Sprintf("check-%d", j))
		}
	}
	got := b.execute(context.Background(), ParseCommand("find entities matching /^web/"), "ada")
	if !strings.HasPrefix(got, "Entities matching /^web/ (45, showing the first 30): web-00.example.com, ") ||
		!strings.HasSuffix(got, "web-29.example.com") {
		t.Errorf("find entities = %q", got)
	}
	got = b.execute(context.Background(), ParseCommand("status entities /^web/"), "ada")
	lines := strings.Split(got, "\n")
	if len(lines) != maxStatusLines+1 || lines[maxStatusLines] != "... and 35 more (narrow the patterns to see them)" {
		t.Errorf("status entities: %d lines, last %q", len(lines), lines[len(lines)-1])
	}
}

func TestBotHelpAndIdentify(t *testing.T) {
	t.Parallel()
	b, _, _ := newTestBot(t)
	help := b.execute(context.Background(), Help{}, "ada")
	for _, want := range []string{"ACKID <hash> <comment> [duration: <time>]", "test notifications for <entity>[:<check>]",
		"tell me about <entity>[:<check>]", "find entities matching /<regex>/", "status checks /<regex>/ [on /<regex>/]", "identify"} {
		if !strings.Contains(help, want) {
			t.Errorf("help lacks %q:\n%s", want, help)
		}
	}
	b.clock.(*clock.Fake).Advance(26 * time.Hour)
	id := b.execute(context.Background(), Identify{}, "ada")
	for _, want := range []string{"flapjack 1.2.3", fmt.Sprintf("pid %d on %s", b.pid, b.host), "I answer to flapjack, fj",
		"booted at 2026-01-05 10:00:00 UTC, up 1 day, 2 hours"} {
		if !strings.Contains(id, want) {
			t.Errorf("identify lacks %q: %s", want, id)
		}
	}
}

// failingStore fails or panics on every call.
type failingStore struct{ panics bool }

func (f failingStore) fail() error {
	if f.panics {
		panic("boom")
	}
	return errors.New("redis: connection refused")
}
func (f failingStore) CheckByHash(context.Context, string) (model.CheckRef, bool, error) {
	return model.CheckRef{}, false, f.fail()
}
func (f failingStore) EntityNames(context.Context) ([]string, error)      { return nil, f.fail() }
func (f failingStore) EntityExists(context.Context, string) (bool, error) { return false, f.fail() }
func (f failingStore) Enqueue(context.Context, ...schema.Event) error     { return f.fail() }
func (f failingStore) FailingChecks(context.Context) (map[string][]string, error) {
	return nil, f.fail()
}
func (f failingStore) CreateScheduledMaintenance(context.Context, []model.CheckRef, time.Time, time.Duration, string, time.Time) (int, error) {
	return 0, f.fail()
}
func (f failingStore) CurrentChecks(context.Context, []string) (map[string][]string, error) {
	return nil, f.fail()
}
func (f failingStore) CheckStatuses(context.Context, time.Time, []model.CheckRef) ([]views.CheckStatus, error) {
	return nil, f.fail()
}
func (f failingStore) Schedules(context.Context) ([]*oncall.Schedule, error) { return nil, f.fail() }

func TestBotInternalErrorsNeverCrash(t *testing.T) {
	t.Parallel()
	for _, panics := range []bool{false, true} {
		cfg := DefaultConfig()
		b := newBot(cfg, failingStore{panics: panics}, clock.NewFake(t0), zap.NewNop(), "x")
		for _, text := range []string{"ACKID 8f4a2b1c x", "test notifications for a", "tell me about a",
			"find entities matching /a/", "find checks on a", "status entities /a/", "status checks /a/",
			"ack entities /a/ x", "ack checks /a/ on /b/", "maint entities /a/ x", "oncall"} {
			if got := b.execute(context.Background(), ParseCommand(text), "ada"); !strings.HasPrefix(got, "Oops, something went wrong") {
				t.Errorf("panics=%v %q: reply %q", panics, text, got)
			}
		}
	}
}
