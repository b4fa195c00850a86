package views_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/model/views"
	"github.com/flapjackgo/flapjack/schema"
)

// seedLookup writes, on the documented layout, what Flapjack 1.x (or our executive) leaves for
// two entities: app-01 with a critical HTTP check acknowledged for 4h and an ok Ping check in
// scheduled maintenance, db-01 known only through all_entity_ids_by_name, and legacy-01 known
// only through the seed's entity_id:NAME key.
func seedLookup(t *testing.T, db *testredis.DB, keys schema.Keys, now int64) {
	t.Helper()
	http := "app-01.example.com:HTTP"
	ping := "app-01.example.com:Ping"
	db.Do(t, "HSET", keys.ChecksByHash(), schema.AckHash(http), http)
	db.Do(t, "HSET", keys.ChecksByHash(), "00000bad", "not-a-check-id")
	db.Do(t, "ZADD", keys.CurrentEntities(), now, "app-01.example.com")
	db.Do(t, "ZADD", keys.CurrentChecks("app-01.example.com"), now, "Ping", now, "HTTP")
	db.Do(t, "HSET", keys.EntityIDsByName(), "app-01.example.com", "1", "db-01.example.com", "2")
	db.Do(t, "SET", keys.EntityID("legacy-01.example.com"), "3")
	db.Do(t, "HSET", keys.Check(http), "state", "critical", "last_change", now-600, "summary", "HTTP 500")
	db.Do(t, "HSET", keys.Check(ping), "state", "ok", "last_change", now-86400, "summary", "PING OK")

	// HTTP: acknowledged 10 minutes ago for 4 hours; an older acknowledgement ended long ago.
	ackStart := now - 600
	db.Do(t, "ZADD", keys.Maintenances(schema.Unscheduled, http), 3600, now-86400, 4*3600, ackStart)
	db.Do(t, "ZADD", keys.SortedMaintenanceTimestamps(schema.Unscheduled, http), now-86400, now-86400, ackStart, ackStart)
	db.Do(t, "SET", keys.MaintenanceSummary(schema.Unscheduled, http, ackStart), "ada: fixing it")
	// The current-maintenance key is only a cache: its absence must not matter (docs/decisions.md D1).

	// Ping: scheduled window from an hour ago for 3 hours, and one in the future.
	smStart := now - 3600
	db.Do(t, "ZADD", keys.Maintenances(schema.Scheduled, ping), 3*3600, smStart, 3600, now+7200)
	db.Do(t, "SET", keys.MaintenanceSummary(schema.Scheduled, ping, smStart), "kernel upgrade")
}

func TestLookup(t *testing.T) {
	t.Parallel()
	for _, prefix := range []string{"", "fj:"} {
		t.Run("prefix="+prefix, func(t *testing.T) {
			t.Parallel()
			db := testredis.New(t)
			keys := schema.NewKeys(prefix)
			now := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)
			seedLookup(t, db, keys, now.Unix())
			conn := db.Conn(t)
			defer conn.Close()

			hash := schema.AckHash("app-01.example.com:HTTP")
			for _, h := range []string{hash, "  " + hash + " ", upper(hash)} {
				ref, found, err := views.CheckByHash(conn, keys, h)
				if err != nil || !found || ref != (model.CheckRef{Entity: "app-01.example.com", Check: "HTTP"}) {
					t.Errorf("CheckByHash(%q) = %+v, %v, %v", h, ref, found, err)
				}
			}
			for _, h := range []string{"deadbeef", "00000bad", ""} {
				if _, found, err := views.CheckByHash(conn, keys, h); err != nil || found {
					t.Errorf("CheckByHash(%q) found=%v err=%v, want not found", h, found, err)
				}
			}

			names, err := views.EntityNames(conn, keys)
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{"app-01.example.com", "db-01.example.com"}; !reflect.DeepEqual(names, want) {
				t.Errorf("EntityNames = %v, want %v", names, want)
			}

			for name, want := range map[string]bool{
				"app-01.example.com": true, "APP-01.example.com": true, "db-01.example.com": true,
				"legacy-01.example.com": true, "nope.example.com": false, "": false,
			} {
				if got, err := views.EntityExists(conn, keys, name); err != nil || got != want {
					t.Errorf("EntityExists(%q) = %v, %v; want %v", name, got, err, want)
				}
			}

			checks, err := checkstate.CurrentChecks(conn, keys, "app-01.example.com")
			if err != nil || !reflect.DeepEqual(checks, []string{"HTTP", "Ping"}) {
				t.Errorf("CurrentChecks = %v, %v", checks, err)
			}
			if checks, err := checkstate.CurrentChecks(conn, keys, "db-01.example.com"); err != nil || len(checks) != 0 {
				t.Errorf("CurrentChecks(db-01) = %v, %v; want none", checks, err)
			}

			st, err := views.CheckStatuses(conn, keys, now, []model.CheckRef{
				{Entity: "app-01.example.com", Check: "HTTP"},
				{Entity: "app-01.example.com", Check: "Ping"},
				{Entity: "db-01.example.com", Check: "Disk"},
			})
			if err != nil {
				t.Fatal(err)
			}
			n := now.Unix()
			want := []views.CheckStatus{
				{CheckRef: model.CheckRef{Entity: "app-01.example.com", Check: "HTTP"}, State: "critical", Summary: "HTTP 500",
					LastChange: n - 600, Enabled: true,
					Unscheduled: checkstate.Window{Start: n - 600, End: n - 600 + 4*3600}, UnscheduledSummary: "ada: fixing it"},
				{CheckRef: model.CheckRef{Entity: "app-01.example.com", Check: "Ping"}, State: "ok", Summary: "PING OK",
					LastChange: n - 86400, Enabled: true,
					Scheduled: checkstate.Window{Start: n - 3600, End: n + 2*3600}, ScheduledSummary: "kernel upgrade"},
				{CheckRef: model.CheckRef{Entity: "db-01.example.com", Check: "Disk"}},
			}
			if !reflect.DeepEqual(st, want) {
				t.Errorf("CheckStatuses =\n%+v\nwant\n%+v", st, want)
			}

			// Five hours later both windows are over, whatever Redis TTLs say.
			later, err := views.CheckStatusAt(conn, keys, "app-01.example.com", "HTTP", now.Add(5*time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			if later.InUnscheduledMaintenance() || later.InScheduledMaintenance() {
				t.Errorf("5h later: %+v, want no maintenance", later)
			}
			// Two and a half hours later the first window of Ping is over and the second one,
			// future at the seed time, is active.
			ping2h, err := views.CheckStatusAt(conn, keys, "app-01.example.com", "Ping", now.Add(150*time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			if ping2h.Scheduled != (checkstate.Window{Start: n + 7200, End: n + 10800}) {
				t.Errorf("2.5h later Ping window = %+v, want the second window", ping2h.Scheduled)
			}
		})
	}
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 32
		}
	}
	return string(b)
}
