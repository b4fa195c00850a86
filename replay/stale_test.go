package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/executive"
	"github.com/flapjackgo/flapjack/importer"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/notifier"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/schema"
)

// TestStaleCheckTimeline (docs/decisions.md D19, examples/stale.jsonl): a check with ttl 300 that stops reporting turns unknown
// at +300 s and alerts its contact, again every ttl while the silence lasts, and recovers with
// its next ok; the delays apply to stale results as to any failure (the second check, with the
// default 30 s initial_failure_delay, first alerts at its second stale result), a result
// refreshes the deadline, and a check without ttl never goes stale.
func TestStaleCheckTimeline(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	keys := schema.NewKeys("")
	db.Do(t, "HSET", "contact:ada", "first_name", "Ada")
	db.Do(t, "HSET", "contact_media:ada", "log", "stdout")
	db.Do(t, "HSET", "contact_media_intervals:ada", "log", 60)
	db.Do(t, "SADD", "contacts_for:ALL", "ada")
	const t0 = 1767607200
	// The README's worked example.
	timeline, err := os.ReadFile("../examples/stale.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	ncfg := notifier.DefaultConfig()
	ncfg.MediaQueues["log"] = "log_notifications"
	var out bytes.Buffer
	sum, err := Run(context.Background(), Options{Pool: db.Pool, Keys: keys, Executive: executive.DefaultConfig(),
		Notifier: ncfg, Identity: queue.Identity{Host: "replay-stale", PID: 1}},
		bytes.NewReader(timeline), &out)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var a schema.Alert
		if err := json.Unmarshal([]byte(line), &a); err != nil {
			t.Fatalf("alert %q: %v", line, err)
		}
		summary := ""
		if a.Summary != nil {
			summary = *a.Summary
		}
		got = append(got, fmt.Sprintf("%s %s %s %q", a.EventID, a.NotificationType, a.State, summary))
		if a.EventID == "web-01:HTTP" && a.NotificationType == "problem" && !slices.Contains(a.Tags, "team-web") {
			t.Errorf("alert of web-01:HTTP without the tag of its last real result: %v", a.Tags)
		}
	}
	want := []string{
		`web-01:HTTP problem unknown "stale: no result for 5 minutes (ttl 300 s)"`,
		`web-01:HTTP problem unknown "stale: no result for 10 minutes (ttl 300 s)"`,
		`db-01:DISK problem unknown "stale: no result for 10 minutes (ttl 300 s)"`,
		`web-01:HTTP problem unknown "stale: no result for 15 minutes (ttl 300 s)"`,
		`web-01:HTTP recovery ok ""`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("alerts:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if sum.Alerts != len(want) {
		t.Errorf("summary counts %d alerts, want %d", sum.Alerts, len(want))
	}

	conn := db.Conn(t)
	defer conn.Close()
	for id, states := range map[string][]int64{
		"web-01:HTTP": {t0, t0 + 300, t0 + 1000},
		"db-01:DISK":  {t0, t0 + 550},
		"web-01:PING": {t0},
	} {
		at, err := redis.Int64s(conn.Do("LRANGE", keys.States(id), 0, -1))
		if err != nil || !slices.Equal(at, states) {
			t.Errorf("%s state changes at %v (%v), want %v", id, at, err, states)
		}
	}
	// Stale results are not news from the check: last_update and current_checks keep the last
	// real result, so freshness still shows the silence.
	if lu, _ := redis.Int64(conn.Do("HGET", keys.Check("db-01:DISK"), "last_update")); lu != t0+250 {
		t.Errorf("db-01:DISK last_update %d, want %d", lu, t0+250)
	}
	if score, _ := redis.Int64(conn.Do("ZSCORE", keys.CurrentChecks("db-01"), "DISK")); score != t0+250 {
		t.Errorf("db-01:DISK current_checks score %d, want %d", score, t0+250)
	}
	if st, _ := redis.String(conn.Do("HGET", keys.Check("db-01:DISK"), "state")); st != "unknown" {
		t.Errorf("db-01:DISK state %q, want unknown", st)
	}
	deadlines, _ := redis.StringMap(conn.Do("ZRANGE", keys.StaleDeadlines(), 0, -1, "WITHSCORES"))
	wantDeadlines := map[string]string{"web-01:HTTP": fmt.Sprint(t0 + 1300), "db-01:DISK": fmt.Sprint(t0 + 1150)}
	if fmt.Sprint(deadlines) != fmt.Sprint(wantDeadlines) {
		t.Errorf("deadlines %v, want %v", deadlines, wantDeadlines)
	}
}

// TestStepDueBeforeADeadlineFiresAtItsTime: between two lines, an escalation step due at +480 s
// and another check's stale deadline at +500 s fall due; the step fires at +480 s, not when the
// clock has moved on to the deadline (whatif's groups of checks rely on every tick happening
// at its own instant).
func TestStepDueBeforeADeadlineFiresAtItsTime(t *testing.T) {
	t.Parallel()
	const t0 = 1767607200
	lines := []string{
		fmt.Sprintf(`{"time":%d,"entity":"quiet","check":"PING","type":"service","state":"ok","ttl":500}`, t0),
		fmt.Sprintf(`{"time":%d,"entity":"h1","check":"PING","type":"service","state":"critical"}`, t0),
		fmt.Sprintf(`{"time":%d,"entity":"h1","check":"PING","type":"service","state":"critical"}`, t0+60),
		fmt.Sprintf(`{"time":%d,"entity":"h1","check":"PING","type":"service","state":"critical"}`, t0+900),
	}
	for _, private := range []bool{false, true} {
		db := testredis.New(t)
		keys := schema.NewKeys("")
		conn := db.Conn(t)
		for _, id := range []string{"ops", "lead"} {
			conn.Do("HSET", keys.Contact(id), "first_name", id)
			conn.Do("SADD", keys.AllContacts(), id)
			conn.Do("HSET", keys.ContactMedia(id), "email", id+"@example.com")
		}
		conn.Do("SADD", keys.ContactsFor(schema.AllContactsID), "ops")
		if _, err := importer.Escalations(context.Background(), conn, keys, []byte(`[{"id": "ladder", "entities": ["h1"],
			"steps": [{"delay": "0 minutes", "contacts": ["ops"]}, {"delay": "7 minutes", "contacts": ["lead"]}]}]`), importer.Options{}); err != nil {
			t.Fatal(err)
		}
		conn.Close()
		ncfg := notifier.DefaultConfig()
		ncfg.MediaQueues = map[string]string{"email": "email_notifications"}
		var out bytes.Buffer
		if _, err := Run(context.Background(), Options{Pool: db.Pool, Keys: keys, Executive: executive.DefaultConfig(),
			Notifier: ncfg, Identity: queue.Identity{Host: "replay-test", PID: 1}, SecondBatches: private, Private: private},
			strings.NewReader(strings.Join(lines, "\n")), &out); err != nil {
			t.Fatal(err)
		}
		var leads []int64
		for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			var a schema.Alert
			if err := json.Unmarshal([]byte(l), &a); err != nil {
				t.Fatal(err)
			}
			// the alert's time is its event's; the id carries when it was sent
			if _, sent, _ := strings.Cut(a.ID, "-"); a.ContactID == "lead" {
				secs, _ := strconv.ParseFloat(sent, 64)
				leads = append(leads, int64(secs)-t0)
			}
		}
		if !slices.Equal(leads, []int64{480}) {
			t.Errorf("private %v: lead alerted at %v s, want once at 480 s (step 2, 7 minutes after the first page at 60 s):\n%s", private, leads, out.String())
		}
	}
}
