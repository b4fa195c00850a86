package jabber

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/internal/testing/testprosody"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/model/views"
	"github.com/flapjackgo/flapjack/schema"
)

// seedFailing adds, to seedChecks' data, failed_checks as the executive keeps it: app-01's HTTP
// and app-02's Disk fail; app-02's Old still fails but is disabled (not a current check).
func seedFailing(t *testing.T, db *testredis.DB, keys schema.Keys) {
	t.Helper()
	now := t0.Unix()
	db.Do(t, "ZADD", keys.FailedChecks(), now-3600, "app-01.example.com:HTTP", now-3600, "app-02.example.com:Disk",
		now-7200, "app-02.example.com:Old")
	db.Do(t, "HSET", keys.Check("app-02.example.com:Old"), "state", "critical", "last_change", now-7200)
}

func ackEvent(entity, check, summary string, seconds int64) schema.Event {
	return schema.Event{Entity: entity, Check: check, Type: "action", State: "acknowledgement", Summary: summary,
		Time: t0.Unix(), HasTime: true, Duration: seconds, HasDuration: true}
}

// windows lists a check's scheduled maintenance windows as "start+duration summary", sorted.
func windows(t *testing.T, db *testredis.DB, keys schema.Keys, id string) []string {
	t.Helper()
	conn := db.Conn(t)
	defer conn.Close()
	ws, err := checkstate.ListMaintenance(conn, keys, schema.Scheduled, id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, w := range ws {
		out = append(out, fmt.Sprintf("%s+%d %s", time.Unix(w.Start, 0).UTC().Format("15:04"), w.Duration, w.Summary))
	}
	slices.Sort(out)
	return out
}

func TestBotBulkCommands(t *testing.T) {
	t.Parallel()
	b, db, keys := newTestBot(t)
	seedFailing(t, db, keys)
	const who = "ada@example.com"
	tests := []struct {
		name   string
		text   string
		want   string
		events []schema.Event
	}{
		{"ack entities", "ack entities /^app/ deploying duration: 30 minutes", strings.Join([]string{
			"Ack list:", "app-01.example.com:HTTP", "app-02.example.com:Disk", "2 checks acknowledged for 30 minutes"}, "\n"),
			[]schema.Event{ackEvent("app-01.example.com", "HTTP", who+": deploying", 1800),
				ackEvent("app-02.example.com", "Disk", who+": deploying", 1800)}},
		{"ack entities without comment or duration", "ack entities /app-02/", strings.Join([]string{
			"Ack list:", "app-02.example.com:Disk", "1 check acknowledged for 1 hour"}, "\n"),
			[]schema.Event{ackEvent("app-02.example.com", "Disk", who+": Set via chatbot", 3600)}},
		{"ack entities without failing checks", "ack entities /^db/", "found no matching entities with failing checks", nil},
		{"ack entities none match", "ack entities /^web/ x", "found no entities matching /^web/", nil},
		{"ack entities bad regex", "ack entities /a(/ x", "that doesn't seem to be a valid pattern - error parsing regexp: missing closing ): `a(`", nil},
		{"ack entities bad duration", "ack entities /app/ x duration: fortnight",
			"ERROR - couldn't understand duration 'fortnight' (try '90 minutes', '2h' or '1 day') - nothing was acknowledged", nil},
		{"ack checks", "ack checks /^Disk$/ on /example/ full disk duration: 2h", strings.Join([]string{
			"Ack list:", "app-02.example.com:Disk", "1 check acknowledged for 2 hours"}, "\n"),
			[]schema.Event{ackEvent("app-02.example.com", "Disk", who+": full disk", 7200)}},
		{"ack checks across entities", "ack checks /./ on /app/", strings.Join([]string{
			"Ack list:", "app-01.example.com:HTTP", "app-02.example.com:Disk", "2 checks acknowledged for 1 hour"}, "\n"),
			[]schema.Event{ackEvent("app-01.example.com", "HTTP", who+": Set via chatbot", 3600),
				ackEvent("app-02.example.com", "Disk", who+": Set via chatbot", 3600)}},
		{"ack checks of an ok check", "ack checks /Ping/ on /app/", "found no matching failing checks", nil},
		{"ack checks disabled check", "ack checks /Old/ on /app-02/", "found no matching failing checks", nil},
		{"ack checks none match", "ack checks /HTTP/ on /^nope/", "found no entities matching /^nope/", nil},
		{"ack checks bad regex", "ack checks /HTTP/ on /[/", "that doesn't seem to be a valid pattern - error parsing regexp: missing closing ]: `[`", nil},
		{"ack checks missing on", "ack checks /HTTP/ x", usageAckChecks, nil},
		{"maint entities start-in", "maint entities /^app-01/ kernel upgrade start-in: 2 hours duration: 30 minutes", strings.Join([]string{
			"Maint list:", "app-01.example.com:HTTP", "app-01.example.com:Ping",
			"2 checks in scheduled maintenance from 2026-01-05 12:00:00 UTC for 30 minutes"}, "\n"), nil},
		{"maint entities start-at", "maint entities /app-02/ start-at: 22:00", strings.Join([]string{
			"Maint list:", "app-02.example.com:Disk", "1 check in scheduled maintenance from 2026-01-05 22:00:00 UTC for 1 hour"}, "\n"), nil},
		{"maint entities already over", "maint entities /app/ start-at: today 08:00",
			"ERROR - maintenance from 2026-01-05 08:00:00 UTC for 1 hour would already be over - nothing was scheduled", nil},
		{"maint entities without checks", "maint entities /^db/", "found no matching entities with active checks", nil},
		{"maint entities none match", "maint entities /^web/", "found no entities matching /^web/", nil},
		{"maint entities bad regex", "maint entities /*/", "that doesn't seem to be a valid pattern - error parsing regexp: missing argument to repetition operator: `*`", nil},
		{"maint entities bad start", "maint entities /app/ start-at: whenever",
			"ERROR - couldn't understand start-at 'whenever' (try '22:00', '10pm', 'tomorrow 06:30', '2026-01-06 22:00' or RFC 3339) - nothing was scheduled", nil},
	}
	for _, tc := range tests {
		got := b.execute(context.Background(), ParseCommand(tc.text), who)
		if got != tc.want {
			t.Errorf("%s: reply =\n%s\nwant\n%s", tc.name, got, tc.want)
		}
		events := popEvents(t, db, keys)
		if fmt.Sprintf("%+v", events) != fmt.Sprintf("%+v", tc.events) {
			t.Errorf("%s: events =\n%+v\nwant\n%+v", tc.name, events, tc.events)
		}
	}

	// The windows the maint commands created, next to the seeded one on Ping; nothing else.
	for id, want := range map[string][]string{
		"app-01.example.com:HTTP": {"12:00+1800 " + who + ": kernel upgrade"},
		"app-01.example.com:Ping": {"09:30+7200 kernel upgrade", "12:00+1800 " + who + ": kernel upgrade"},
		"app-02.example.com:Disk": {"22:00+3600 " + who + ": Set via chatbot"},
		"app-02.example.com:Old":  nil,
	} {
		if got := windows(t, db, keys, id); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("scheduled maintenance of %s = %q, want %q", id, got, want)
		}
	}

	// Maintenance from now is in force at once (the current-maintenance key included).
	got := b.execute(context.Background(), ParseCommand("maint entities /app-02/ patching duration: 90 minutes"), who)
	if want := "Maint list:\napp-02.example.com:Disk\n1 check in scheduled maintenance from 2026-01-05 10:00:00 UTC for 1 hour, 30 minutes"; got != want {
		t.Errorf("maint from now: %q, want %q", got, want)
	}
	conn := db.Conn(t)
	defer conn.Close()
	st, err := views.CheckStatusAt(conn, keys, "app-02.example.com", "Disk", t0)
	if err != nil || st.Scheduled != (checkstate.Window{Start: t0.Unix(), End: t0.Unix() + 5400}) || st.ScheduledSummary != who+": patching" {
		t.Errorf("status after maint = %+v, %v", st, err)
	}
	if n := db.Do(t, "EXISTS", keys.CurrentMaintenance(schema.Scheduled, "app-02.example.com:Disk")); n != int64(1) {
		t.Errorf("current scheduled maintenance key exists = %v", n)
	}
}

func TestBotBulkListsAreBounded(t *testing.T) {
	t.Parallel()
	b, db, keys := newTestBot(t)
	for i := 0; i < 45; i++ {
		e := fmt.Sprintf("web-%02d.example.com", i)
		db.Do(t, "ZADD", keys.CurrentEntities(), t0.Unix(), e)
		for j := 0; j < 3; j++ {
			db.Do(t, "ZADD", keys.CurrentChecks(e), t0.Unix(), fmt.Sprintf("check-%d", j))
			db.Do(t, "ZADD", keys.FailedChecks(), t0.Unix(), schema.CheckID(e, fmt.Sprintf("check-%d", j)))
		}
	}
	for _, tc := range []struct{ text, header, footer string }{
		{"ack entities /^web/ outage", "Ack list:", "135 checks acknowledged for 1 hour"},
		{"ack checks /check/ on /^web/ outage", "Ack list:", "135 checks acknowledged for 1 hour"},
		{"maint entities /^web/ move", "Maint list:", "135 checks in scheduled maintenance from 2026-01-05 10:00:00 UTC for 1 hour"},
	} {
		got := b.execute(context.Background(), ParseCommand(tc.text), "ada")
		lines := strings.Split(got, "\n")
		if len(lines) != maxStatusLines+3 || lines[0] != tc.header || lines[1] != "web-00.example.com:check-0" ||
			lines[maxStatusLines+1] != "... and 35 more" || lines[maxStatusLines+2] != tc.footer {
			t.Errorf("%s: %d lines: %q ... %q", tc.text, len(lines), lines[:2], lines[len(lines)-2:])
		}
	}
	// Every matched check was acted on, not just the listed ones.
	if evs := popEvents(t, db, keys); len(evs) != 2*135 {
		t.Errorf("%d acknowledgements queued, want %d", len(evs), 2*135)
	}
	if got := windows(t, db, keys, "web-44.example.com:check-2"); len(got) != 1 {
		t.Errorf("last check's windows: %q", got)
	}
}

// stopsMaintStore is a RedisStore whose maintenance writes fail after the first check.
type stopsMaintStore struct{ RedisStore }

func (s stopsMaintStore) CreateScheduledMaintenance(ctx context.Context, refs []model.CheckRef, start time.Time,
	d time.Duration, summary string, now time.Time) (int, error) {
	n, err := s.RedisStore.CreateScheduledMaintenance(ctx, refs[:1], start, d, summary, now)
	if err != nil {
		return n, err
	}
	return n, errors.New("redis: connection reset")
}

func TestBotMaintPartialFailure(t *testing.T) {
	t.Parallel()
	b, db, keys := newTestBot(t)
	b.store = stopsMaintStore{b.store.(RedisStore)}
	got := b.execute(context.Background(), ParseCommand("maint entities /app-01/ x"), "ada")
	want := oops + "; scheduled maintenance was created on the first 1 of the 2 checks (in the order of 'find checks on entities matching /app-01/') before it"
	if got != want {
		t.Errorf("reply %q, want %q", got, want)
	}
	if w := windows(t, db, keys, "app-01.example.com:HTTP"); len(w) != 1 {
		t.Errorf("HTTP windows %q", w)
	}
}

// TestBulkCommandsEndToEnd: checks fail and pass through the real executive; a person in the
// room and in direct chat acknowledges the failing ones in bulk and schedules maintenance; the
// executive takes the acknowledgements, and the windows are stored.
func TestBulkCommandsEndToEnd(t *testing.T) {
	t.Parallel()
	e := startEnv(t, TLSStartTLS)
	alice := testprosody.Connect(t, e.xmpp, "alice", alicePassword)
	alice.Join(e.room, "alice")
	p := newPipeline(t, e)
	for _, ev := range []struct{ entity, check, state string }{
		{"app-01.example.com", "HTTP", "critical"},
		{"app-01.example.com", "Ping", "ok"},
		{"app-02.example.com", "HTTP", "warning"},
		{"app-02.example.com", "Disk", "critical"},
		{"db-01.example.com", "Disk", "unknown"},
	} {
		p.event(fmt.Sprintf(`{"entity":%q,"check":%q,"type":"service","state":%q,"summary":"x"}`, ev.entity, ev.check, ev.state))
	}

	// In the room: every failing check of the app entities.
	alice.Say(e.room, "groupchat", "fj: ack entities /^app-/ deploying duration: 30 minutes")
	alice.ExpectText("groupchat", e.room+"/flapjack", strings.Join([]string{"Ack list:",
		"app-01.example.com:HTTP", "app-02.example.com:Disk", "app-02.example.com:HTTP", "3 checks acknowledged for 30 minutes"}, "\n"))
	evs := e.events()
	if got := fmt.Sprint(ackIDs(evs)); got != "[app-01.example.com:HTTP alice: deploying 1800 app-02.example.com:Disk alice: deploying 1800 app-02.example.com:HTTP alice: deploying 1800]" {
		t.Fatalf("room acknowledgements: %s", got)
	}
	e.clk.Advance(time.Second)
	p.process()
	conn := e.db.Conn(t)
	defer conn.Close()
	for _, id := range []string{"app-01.example.com:HTTP", "app-02.example.com:Disk", "app-02.example.com:HTTP", "db-01.example.com:Disk", "app-01.example.com:Ping"} {
		entity, check, _ := schema.SplitCheckID(id)
		st, err := views.CheckStatusAt(conn, e.keys, entity, check, e.clk.Now())
		if err != nil {
			t.Fatal(err)
		}
		if want := strings.HasPrefix(id, "app-") && check != "Ping"; st.InUnscheduledMaintenance() != want {
			t.Errorf("%s acknowledged = %v, want %v", id, !want, want)
		}
	}

	// In direct chat: failing Disk checks anywhere.
	alice.Say(e.bot, "chat", "ack checks /^Disk$/ on /.*/ replacing disks")
	alice.ExpectText("chat", e.bot, "Ack list:\napp-02.example.com:Disk\ndb-01.example.com:Disk\n2 checks acknowledged for 1 hour")
	if got := fmt.Sprint(ackIDs(e.events())); got != "[app-02.example.com:Disk "+e.alice+": replacing disks 3600 db-01.example.com:Disk "+e.alice+": replacing disks 3600]" {
		t.Fatalf("chat acknowledgements: %s", got)
	}
	e.db.Do(t, "DEL", e.keys.Events())

	// Scheduled maintenance on every check of app-01, from 22:00 for 2 hours.
	alice.Say(e.bot, "chat", "maint entities /^app-01/ switch swap start-at: 22:00 duration: 2h")
	alice.ExpectText("chat", e.bot, "Maint list:\napp-01.example.com:HTTP\napp-01.example.com:Ping\n2 checks in scheduled maintenance from 2026-01-05 22:00:00 UTC for 2 hours")
	for _, id := range []string{"app-01.example.com:HTTP", "app-01.example.com:Ping"} {
		if got := windows(t, e.db, e.keys, id); fmt.Sprint(got) != "[22:00+7200 "+e.alice+": switch swap]" {
			t.Errorf("%s windows: %q", id, got)
		}
	}
	if got := windows(t, e.db, e.keys, "app-02.example.com:Disk"); len(got) != 0 {
		t.Errorf("app-02 got windows: %q", got)
	}

	// Mistakes get clear answers and change nothing.
	for _, tc := range []struct{ say, reply string }{
		{"ack entities /(/ x", "that doesn't seem to be a valid pattern - error parsing regexp: missing closing ): `(`"},
		{"ack checks /HTTP/ on app-01.example.com", usageAckChecks},
		{"maint entities /app/ start-at: teatime",
			"ERROR - couldn't understand start-at 'teatime' (try '22:00', '10pm', 'tomorrow 06:30', '2026-01-06 22:00' or RFC 3339) - nothing was scheduled"},
		{"ack entities /^web/", "found no entities matching /^web/"},
	} {
		alice.Say(e.bot, "chat", tc.say)
		alice.ExpectText("chat", e.bot, tc.reply)
	}
	if evs := e.events(); len(evs) != 0 {
		t.Errorf("events after the mistakes: %+v", evs)
	}
}

// ackIDs renders acknowledgement events as "ID summary duration".
func ackIDs(evs []schema.Event) []string {
	var out []string
	for _, ev := range evs {
		if !ev.IsAcknowledgement() || ev.AcknowledgementID != "" {
			out = append(out, fmt.Sprintf("unexpected %+v", ev))
			continue
		}
		out = append(out, fmt.Sprintf("%s %s %d", ev.ID(), ev.Summary, ev.Duration))
	}
	return out
}
