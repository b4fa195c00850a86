package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
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
	"github.com/flapjackgo/flapjack/staleness"
)

// TestSameSecondAcknowledgementsAndWindows: acknowledgements and scheduled windows given twice
// in one second of a timeline end as in Flapjack 1.6: the later replaces the earlier, and the
// current-maintenance keys expire with it.
func TestSameSecondAcknowledgementsAndWindows(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	keys := schema.NewKeys("")
	const t0 = 1767607200
	ev := func(at int64, state string, extra string) string {
		typ := "service"
		if state == "acknowledgement" {
			typ = "action"
		}
		return fmt.Sprintf(`{"time":%d,"entity":"h1","check":"PING","type":%q,"state":%q%s}`, at, typ, state, extra)
	}
	sm := func(duration int64) string {
		return fmt.Sprintf(`{"action":"scheduled_maintenance","time":%d,"entity":"h1","check":"PING","duration":%d}`, t0+40, duration)
	}
	timeline := strings.Join([]string{
		ev(t0, "ok", ""), ev(t0+1, "critical", ""), ev(t0+31, "critical", ""),
		ev(t0+40, "acknowledgement", `,"duration":600`),
		ev(t0+40, "acknowledgement", `,"duration":1200`),
		sm(600), sm(1800),
	}, "\n")
	cfg := executive.DefaultConfig()
	_, err := Run(context.Background(), Options{Pool: db.Pool, Keys: keys, Executive: cfg,
		Notifier: notifier.DefaultConfig(), Identity: queue.Identity{Host: "replay-test", PID: 1}},
		strings.NewReader(timeline), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	conn := db.Conn(t)
	defer conn.Close()
	for _, c := range []struct {
		kind     string
		duration int64
	}{{schema.Unscheduled, 1200}, {schema.Scheduled, 1800}} {
		windows, err := redis.Int64s(conn.Do("ZRANGE", keys.Maintenances(c.kind, "h1:PING"), 0, -1, "WITHSCORES"))
		if err != nil {
			t.Fatal(err)
		}
		if len(windows) != 2 || windows[0] != t0+40 || windows[1] != c.duration {
			t.Errorf("%s windows %v, want [%d %d]", c.kind, windows, t0+40, c.duration)
		}
		key := keys.CurrentMaintenance(c.kind, "h1:PING")
		start, _ := redis.Int64(conn.Do("GET", key))
		ttl, _ := redis.Int64(conn.Do("TTL", key))
		if start != t0+40 || ttl < c.duration-1 || ttl > c.duration {
			t.Errorf("%s is %d with TTL %d, want %d with TTL %d", key, start, ttl, t0+40, c.duration)
		}
	}
}

// TestSecondBatchesAlertAsOneByOne: with SecondBatches (whatif's mode) the events of a second go
// through the executive together, and a timeline of many checks alerts exactly as line by line;
// with Private too (schedules remembered between writes, the queue drained by count) the same,
// with a check going stale and an escalation ladder to remember; and the same again when the
// silent check's ttl comes from executive.ttl_by_check instead of its events.
func TestSecondBatchesAlertAsOneByOne(t *testing.T) {
	t.Parallel()
	const t0 = 1767607200
	var lines []string
	for m := 0; m < 60; m++ {
		for c := 0; c < 20; c++ {
			state := "ok"
			if (m+c*3)%30 < 8 {
				state = "critical"
			}
			lines = append(lines, fmt.Sprintf(`{"time":%d,"entity":"h%d","check":"PING","type":"service","state":%q}`, t0+m*60, c, state))
		}
		if m == 20 {
			lines = append(lines, fmt.Sprintf(`{"action":"scheduled_maintenance","time":%d,"entity":"h3","check":"PING","duration":600}`, t0+m*60))
		}
		if m < 5 {
			// reports until 00:04, then goes silent: stale every 300 s
			lines = append(lines, fmt.Sprintf(`{"time":%d,"entity":"quiet","check":"PING","type":"service","state":"ok","ttl":300}`, t0+m*60))
		}
	}
	var outs [4]bytes.Buffer
	for i, mode := range []struct{ batched, private, ruled bool }{{false, false, false}, {true, false, false}, {true, true, false}, {true, true, true}} {
		db := testredis.New(t)
		keys := schema.NewKeys("")
		conn := db.Conn(t)
		conn.Do("HSET", keys.Contact("ops"), "first_name", "Ops")
		conn.Do("SADD", keys.AllContacts(), "ops")
		conn.Do("HSET", keys.ContactMedia("ops"), "email", "ops@example.com")
		conn.Do("SADD", keys.ContactsFor(schema.AllContactsID), "ops")
		conn.Do("HSET", keys.Contact("lead"), "first_name", "Lead")
		conn.Do("SADD", keys.AllContacts(), "lead")
		conn.Do("HSET", keys.ContactMedia("lead"), "email", "lead@example.com")
		if _, err := importer.Escalations(context.Background(), conn, keys, []byte(`[{"id": "ladder", "entities": ["h1", "quiet"],
			"steps": [{"delay": "0 minutes", "contacts": ["ops"]}, {"delay": "7 minutes", "contacts": ["lead"]}]}]`), importer.Options{}); err != nil {
			t.Fatal(err)
		}
		conn.Close()
		ncfg := notifier.DefaultConfig()
		ncfg.MediaQueues = map[string]string{"email": "email_notifications"}
		xcfg, timeline := executive.DefaultConfig(), strings.Join(lines, "\n")
		if mode.ruled {
			rules, err := staleness.ParseRules([]string{"^quiet:PING$=300"})
			if err != nil {
				t.Fatal(err)
			}
			xcfg.Staleness.Rules, timeline = rules, strings.ReplaceAll(timeline, `,"ttl":300`, "")
		}
		sum, err := Run(context.Background(), Options{Pool: db.Pool, Keys: keys, Executive: xcfg,
			Notifier: ncfg, Identity: queue.Identity{Host: "replay-test", PID: 1}, SecondBatches: mode.batched, Private: mode.private},
			strings.NewReader(timeline), &outs[i])
		if err != nil {
			t.Fatal(err)
		}
		if sum.Events != 1205 || sum.Actions != 1 {
			t.Fatalf("summary %+v", sum)
		}
	}
	if outs[0].Len() == 0 || strings.Count(outs[0].String(), "\n") < 20 {
		t.Fatalf("too few alerts to compare: %q", outs[0].String())
	}
	for _, want := range []string{`"contact_id":"lead"`, `"event_id":"quiet:PING"`} {
		if !strings.Contains(outs[0].String(), want) {
			t.Errorf("no alert with %s (escalation step 2, stale check): %s", want, outs[0].String())
		}
	}
	// Batched, an escalation step due in a second whose events alert too is routed beside
	// them in another order: the same alerts, each second's in any order.
	if a, b := bySecond(t, outs[0].String()), bySecond(t, outs[1].String()); !reflect.DeepEqual(a, b) {
		t.Errorf("batched alerts differ:\none by one:\n%s\nbatched:\n%s", outs[0].String(), outs[1].String())
	}
	if outs[1].String() != outs[2].String() {
		t.Errorf("private alerts differ:\nbatched:\n%s\nbatched private:\n%s", outs[1].String(), outs[2].String())
	}
	if outs[2].String() != outs[3].String() {
		t.Errorf("alerts with the ttl from executive.ttl_by_check differ:\nfrom the events:\n%s\nfrom the setting:\n%s", outs[2].String(), outs[3].String())
	}
}

// bySecond groups alert lines by their time, each second's sorted.
func bySecond(t *testing.T, out string) map[int64][]string {
	t.Helper()
	m := map[int64][]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var a struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal([]byte(l), &a); err != nil {
			t.Fatal(err)
		}
		_, at, _ := strings.Cut(a.ID, "-")
		sec, _ := strconv.ParseFloat(at, 64)
		m[int64(sec)] = append(m[int64(sec)], l)
	}
	for _, ls := range m {
		slices.Sort(ls)
	}
	return m
}
