package checkstate_test

import (
	"context"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/schema"
)

// TestReadFacts seeds, on the documented layout, a check that has every fact set, an ok check,
// and checks never seen, then reads them in every mode and compares each whole CheckFacts.
func TestReadFacts(t *testing.T) {
	t.Parallel()
	for _, prefix := range []string{"", "fj:"} {
		t.Run("prefix="+prefix, func(t *testing.T) {
			t.Parallel()
			db := testredis.New(t)
			keys := schema.NewKeys(prefix)
			now := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)
			n := now.Unix()

			const app, db1, legacy = "app-01.example.com", "db-01.example.com", "legacy-01.example.com"
			http := schema.CheckID(app, "HTTP")
			db.Do(t, "HSET", keys.Check(http), "state", "critical", "last_change", n-600, "revision", 7,
				"last_event_time", n-30, "last_sequence", 41, "initial_failure_delay", 30,
				"repeat_failure_delay", 60, "summary", "HTTP 500", "details", "body: oops",
				"last_notification_kind", "critical", "notified_severity", "critical")
			db.Do(t, "ZADD", keys.CurrentChecks(app), n, "HTTP")
			// Two scheduled windows cover now; the one ending last wins. A future one is ignored.
			db.Do(t, "ZADD", keys.Maintenances(schema.Scheduled, http), 3600, n-1800, 7200, n-3600, 600, n+600)
			db.Do(t, "SET", keys.CurrentMaintenance(schema.Scheduled, http), n-3600)
			// Acknowledged 10 minutes ago for 4 hours; a later one has not started yet.
			db.Do(t, "ZADD", keys.Maintenances(schema.Unscheduled, http), 4*3600, n-600, 60, n+60)
			db.Do(t, "ZADD", keys.SortedMaintenanceTimestamps(schema.Unscheduled, http), n-600, n-600, n+60, n+60)
			db.Do(t, "SET", keys.CurrentMaintenance(schema.Unscheduled, http), n-600)
			db.Do(t, "SET", keys.LastNotification(http, "problem"), n-500)
			db.Do(t, "SET", keys.LastNotification(http, "critical"), n-500)
			db.Do(t, "SET", keys.LastNotification(http, "recovery"), n-7000)
			db.Do(t, "SET", keys.LastNotification(http, "test"), n-9000)
			for _, h := range []struct {
				at             int64
				state, summary string
			}{{n - 7200, "ok", "fine"}, {n - 3600, "warning", "slow"}, {n - 600, "critical", "HTTP 500"}} {
				db.Do(t, "ZADD", keys.SortedStateTimestamps(http), h.at, h.at)
				db.Do(t, "SET", keys.StateAt(http, h.at), h.state)
				db.Do(t, "SET", keys.SummaryAt(http, h.at), h.summary)
			}

			ping := schema.CheckID(app, "Ping")
			db.Do(t, "HSET", keys.Check(ping), "state", "ok", "last_change", n-86400, "summary", "PING OK")
			db.Do(t, "SET", keys.LastNotification(ping, "recovery"), n-86400)
			db.Do(t, "ZADD", keys.SortedStateTimestamps(ping), n-86400, n-86400)
			db.Do(t, "SET", keys.StateAt(ping, n-86400), "ok")

			// A value holding the byte that joins a packed reply is read again unpacked.
			odd := schema.CheckID(app, "Odd")
			db.Do(t, "HSET", keys.Check(odd), "state", "warning", "revision", 2, "summary", "a\x1fb", "details", "\x1f")

			// An ok check read for an ok event gets the short reply (the check hash alone): every
			// field it holds must land where the whole reply puts it, and a separator inside a
			// value sends it to the unpacked read as well.
			web := schema.CheckID(app, "Web")
			db.Do(t, "HSET", keys.Check(web), "state", "ok", "last_change", n-900, "revision", 12,
				"last_event_time", n-5, "last_sequence", 99, "initial_failure_delay", 15,
				"repeat_failure_delay", 120, "summary", "200 OK", "details", "12 ms",
				"last_notification_kind", "recovery", "notified_severity", "warning")
			queue := schema.CheckID(app, "Queue")
			db.Do(t, "HSET", keys.Check(queue), "state", "critical", "revision", 5, "summary", "backlog")
			db.Do(t, "ZADD", keys.CurrentChecks(app), n, "Queue")
			oddOK := schema.CheckID(app, "OddOK")
			db.Do(t, "HSET", keys.Check(oddOK), "state", "ok", "revision", 3, "summary", "x\x1fy", "notified_severity", "\x1e")

			db.Do(t, "HSET", keys.EntityIDsByName(), db1, "2")
			cpu := schema.CheckID(db1, "CPU")
			db.Do(t, "HSET", keys.Check(cpu), "state", "critical", "summary", "busy")
			db.Do(t, "SET", keys.EntityID(legacy), "3")

			full := checkstate.CheckFacts{ID: http, Entity: app, Check: "HTTP",
				State: "critical", LastChange: n - 600, Revision: 7, LastEventTime: n - 30, LastSequence: 41,
				InitialFailureDelay: 30, RepeatFailureDelay: 60, HasInitialFailureDelay: true, HasRepeatFailureDelay: true,
				ScheduledMaintenance: checkstate.Window{Start: n - 3600, End: n + 3600}, ScheduledCurrent: formatInt(n - 3600),
				UnscheduledMaintenance: checkstate.Window{Start: n - 600, End: n + 4*3600 - 600}, UnscheduledCurrent: formatInt(n - 600),
				NotificationsRead: true,
				History: []checkstate.HistoryEntry{
					{Time: n - 600, State: "critical", Summary: "HTTP 500"}, {Time: n - 3600, State: "warning", Summary: "slow"}},
				Summary: "HTTP 500", Details: "body: oops", LastNotificationKind: "critical", NotifiedSeverity: "critical"}
			full.LastNotified[checkstate.KindProblem] = n - 500
			full.LastNotified[checkstate.KindCritical] = n - 500
			full.LastNotified[checkstate.KindRecovery] = n - 7000
			full.LastNotified[checkstate.KindTest] = n - 9000
			rollup := full
			rollup.Enabled = true
			maint := full
			maint.NotificationsRead, maint.LastNotified, maint.History = false, [7]int64{}, nil
			// ModeAlerting reads only the state, last change and summary of the check hash.
			alerting := checkstate.CheckFacts{ID: http, Entity: app, Check: "HTTP", State: "critical", LastChange: n - 600,
				Summary: "HTTP 500", Enabled: true, ScheduledMaintenance: maint.ScheduledMaintenance,
				ScheduledCurrent: maint.ScheduledCurrent, UnscheduledMaintenance: maint.UnscheduledMaintenance,
				UnscheduledCurrent: maint.UnscheduledCurrent}

			// Every reply, short (checks with a state and without windows whose history is not
			// needed) or long, says whether the check has windows.
			pingBase := checkstate.CheckFacts{ID: ping, Entity: app, Check: "Ping", State: "ok", LastChange: n - 86400, Summary: "PING OK", NoWindows: true}
			pingFull := pingBase
			pingFull.NotificationsRead = true
			pingFull.LastNotified[checkstate.KindRecovery] = n - 86400
			pingFull.History = []checkstate.HistoryEntry{{Time: n - 86400, State: "ok"}}

			webFacts := checkstate.CheckFacts{ID: web, Entity: app, Check: "Web", State: "ok", LastChange: n - 900, Revision: 12,
				LastEventTime: n - 5, LastSequence: 99, InitialFailureDelay: 15, HasInitialFailureDelay: true,
				RepeatFailureDelay: 120, HasRepeatFailureDelay: true, Summary: "200 OK", Details: "12 ms",
				LastNotificationKind: "recovery", NotifiedSeverity: "warning", NoWindows: true}

			reqs := []checkstate.FactsRequest{
				{Entity: app, Check: "HTTP", Mode: checkstate.ModeEvent},
				{Entity: app, Check: "HTTP", Mode: checkstate.ModeEventOK},
				{Entity: app, Check: "HTTP", Mode: checkstate.ModeRollup},
				{Entity: app, Check: "HTTP", Mode: checkstate.ModeMaintenance},
				{Entity: app, Check: "HTTP", Mode: checkstate.ModeAlerting},
				{Entity: app, Check: "Ping", Mode: checkstate.ModeEventOK},
				{Entity: app, Check: "Ping", Mode: checkstate.ModeEvent},
				{Entity: app, Check: "Odd", Mode: checkstate.ModeMaintenance},
				{Entity: app, Check: "Web", Mode: checkstate.ModeEventOK},
				{Entity: app, Check: "OddOK", Mode: checkstate.ModeEventOK},
				{Entity: app, Check: "Web", Mode: checkstate.ModeAlerting},
				{Entity: app, Check: "Queue", Mode: checkstate.ModeAlerting},
				{Entity: app, Check: "Queue", Mode: checkstate.ModeMaintenance},
				{Entity: db1, Check: "CPU", Mode: checkstate.ModeAlerting},
				{Entity: db1, Check: "Disk", Mode: checkstate.ModeAlerting},
				{Entity: db1, Check: "Disk", Mode: checkstate.ModeEventOK},
				{Entity: legacy, Check: "Load", Mode: checkstate.ModeRollup},
			}
			want := []checkstate.CheckFacts{full, full, rollup, maint, alerting, pingBase, pingFull,
				{ID: odd, Entity: app, Check: "Odd", State: "warning", Revision: 2, Summary: "a\x1fb", Details: "\x1f", NoWindows: true},
				webFacts,
				{ID: oddOK, Entity: app, Check: "OddOK", State: "ok", Revision: 3, Summary: "x\x1fy", NotifiedSeverity: "\x1e", NoWindows: true},
				{ID: web, Entity: app, Check: "Web", State: "ok", LastChange: n - 900, Summary: "200 OK", NoWindows: true},
				{ID: queue, Entity: app, Check: "Queue", State: "critical", Summary: "backlog", Enabled: true, NoWindows: true},
				{ID: queue, Entity: app, Check: "Queue", State: "critical", Revision: 5, Summary: "backlog", NoWindows: true},
				{ID: cpu, Entity: db1, Check: "CPU", State: "critical", Summary: "busy", EntityID: "2", NoWindows: true},
				{ID: schema.CheckID(db1, "Disk"), Entity: db1, Check: "Disk", EntityID: "2", NoWindows: true},
				{ID: schema.CheckID(db1, "Disk"), Entity: db1, Check: "Disk", EntityID: "2", NoWindows: true},
				{ID: schema.CheckID(legacy, "Load"), Entity: legacy, Check: "Load", EntityID: "3", NotificationsRead: true, NoWindows: true}}

			conn := db.Conn(t)
			defer conn.Close()
			got, err := checkstate.ReadFacts(conn, keys, now, reqs)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%d facts for %d requests", len(got), len(reqs))
			}
			for i := range want {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Errorf("%s %s:\n got %+v\nwant %+v", reqs[i].Mode, want[i].ID, got[i], want[i])
				}
			}
		})
	}
}

// TestReadFactsManyChecks reads more checks than one EXISTS over window keys takes: the one
// check with windows, in the last chunk, still gets them and its neighbours none.
func TestReadFactsManyChecks(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	keys := schema.NewKeys("")
	now := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)
	const n, maintained = 1200, 1100
	reqs := make([]checkstate.FactsRequest, n)
	for i := range reqs {
		reqs[i] = checkstate.FactsRequest{Entity: "host-" + strconv.Itoa(i), Check: "Ping", Mode: checkstate.ModeMaintenance}
	}
	id := schema.CheckID(reqs[maintained].Entity, "Ping")
	db.Do(t, "ZADD", keys.Maintenances(schema.Scheduled, id), 3600, now.Unix()-60)
	conn := db.Conn(t)
	defer conn.Close()
	got, err := checkstate.ReadFacts(conn, keys, now, reqs)
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range got {
		want := checkstate.Window{}
		if i == maintained {
			want = checkstate.Window{Start: now.Unix() - 60, End: now.Unix() + 3540}
		}
		if f.ScheduledMaintenance != want {
			t.Errorf("check %d: scheduled maintenance %+v, want %+v", i, f.ScheduledMaintenance, want)
		}
	}
}

func formatInt(n int64) string { return strconv.FormatInt(n, 10) }

// TestReadFactsWithCheckTags: the tags the API gave checks reach their facts; checks without any
// and batches where no check is tagged get none.
func TestReadFactsWithCheckTags(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	keys := schema.NewKeys("")
	now := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)
	conn := db.Conn(t)
	defer conn.Close()
	reqs := []checkstate.FactsRequest{{Entity: "web-01", Check: "HTTP", Mode: checkstate.ModeEventOK},
		{Entity: "web-01", Check: "Disk", Mode: checkstate.ModeEvent}}
	read := func() [][]string {
		facts, err := checkstate.ReadFactsWithCheckTags(context.Background(), conn, keys, now, reqs)
		if err != nil {
			t.Fatal(err)
		}
		return [][]string{facts[0].CheckTags, facts[1].CheckTags}
	}
	if got := read(); got[0] != nil || got[1] != nil {
		t.Fatalf("no tags known: %v", got)
	}
	db.Do(t, "SADD", keys.KnownCheckTags(), "team-a", "prod")
	db.Do(t, "SADD", keys.CheckTag("team-a"), "web-01:HTTP")
	db.Do(t, "SADD", keys.CheckTag("prod"), "web-01:HTTP", "db-01:Disk")
	if got := read(); !reflect.DeepEqual(got, [][]string{{"prod", "team-a"}, nil}) {
		t.Fatalf("tags %v", got)
	}
}
