package status

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/events"
	"github.com/flapjackgo/flapjack/executive"
	"github.com/flapjackgo/flapjack/importer"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/schema"
	"github.com/flapjackgo/flapjack/staleness"
)

// t0 is the instant the listings are read at: 2026-01-05 10:00:00 UTC.
var t0 = time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)

// onCall is an installation written through the real write paths: entities imported with tags,
// events processed by an executive on a fake clock, an acknowledgement event and a scheduled
// maintenance window.
type onCall struct {
	db   *testredis.DB
	keys schema.Keys
	clk  *clock.Fake
	x    *executive.Executive
}

func newOnCall(t *testing.T) *onCall {
	t.Helper()
	o := &onCall{db: testredis.New(t), keys: schema.NewKeys(""), clk: clock.NewFake(t0.Add(-3 * time.Hour))}
	conn := o.db.Conn(t)
	defer conn.Close()
	entities := `{"entities": [
		{"id": "E-web-01", "name": "web-01.example.com", "tags": ["web", "prod"]},
		{"id": "E-web-02", "name": "web-02.example.com", "tags": ["web"]},
		{"id": "E-db-01", "name": "db-01.example.com", "tags": ["db", "prod"]}]}`
	if _, err := importer.Entities(context.Background(), conn, o.keys, []byte(entities), importer.Options{}); err != nil {
		t.Fatal(err)
	}
	o.x = executive.New(executive.Options{Pool: o.db.Pool, Keys: o.keys, Config: executive.DefaultConfig(), Clock: o.clk,
		Identity: queue.Identity{Host: "exec", PID: 1}, Version: "test"})
	if _, err := o.x.Loop(false).Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	return o
}

// at processes one event at t0+offset.
func (o *onCall) at(t *testing.T, offset time.Duration, entity, check, state, summary string, extra ...string) {
	t.Helper()
	o.clk.Set(t0.Add(offset))
	typ := "service"
	if state == schema.StateAcknowledgement {
		typ = "action"
	}
	ev := fmt.Sprintf(`{"entity":%q,"check":%q,"type":%q,"state":%q,"summary":%q`, entity, check, typ, state, summary)
	for _, e := range extra {
		ev += "," + e
	}
	o.db.Do(t, "LPUSH", o.keys.Events(), ev+"}")
	for {
		n, err := o.x.ProcessNext(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
}

// seedOnCall writes seven checks: four failing (one acknowledged, one in scheduled maintenance,
// one that got worse) and three ok (one recovered).
func seedOnCall(t *testing.T) *onCall {
	t.Helper()
	o := newOnCall(t)
	o.at(t, -7200*time.Second, "web-01.example.com", "Ping", "ok", "PING OK")
	o.at(t, -5000*time.Second, "app-01.example.com", "Load", "critical", "load 30")
	o.at(t, -4000*time.Second, "app-01.example.com", "Load", "ok", "load 1")
	o.at(t, -3600*time.Second, "web-01.example.com", "HTTP", "critical", "HTTP 500\nInternal Server Error")
	o.at(t, -1800*time.Second, "db-01.example.com", "MySQL", "warning", "replication lag 30s")
	o.at(t, -900*time.Second, "db-01.example.com", "MySQL", "critical", "replication lag 300s")
	o.at(t, -600*time.Second, "web-02.example.com", "HTTP", "critical", "connection refused")
	o.at(t, -300*time.Second, "db-01.example.com", "Disk", "critical", "disk 99%")
	o.at(t, -120*time.Second, "web-01.example.com", "HTTP", "acknowledgement", "ada: on it", `"duration":3600`)
	o.at(t, -60*time.Second, "web-02.example.com", "Ping", "ok", "PING OK")
	// the last ok event for web-01:HTTP is still critical: acknowledged, not recovered
	conn := o.db.Conn(t)
	defer conn.Close()
	if err := checkstate.CreateScheduledMaintenance(conn, o.keys, "web-02.example.com", "HTTP", t0.Add(-5*time.Minute), time.Hour, "deploy", t0.Add(-5*time.Minute)); err != nil {
		t.Fatal(err)
	}
	return o
}

// row renders a CheckRow compactly: id, state, seconds before t0 of the last change, markers.
func row(r CheckRow) string {
	s := fmt.Sprintf("%s:%s %s -%d", r.Entity, r.Check, r.State, t0.Unix()-r.Since)
	if r.Acknowledged {
		s += " ack"
	}
	if r.InMaintenance {
		s += " maint"
	}
	return s
}

func TestReadChecks(t *testing.T) {
	t.Parallel()
	o := seedOnCall(t)
	const (
		disk  = "db-01.example.com:Disk critical -300"
		http2 = "web-02.example.com:HTTP critical -600 maint"
		mysql = "db-01.example.com:MySQL critical -900"
		http1 = "web-01.example.com:HTTP critical -3600 ack"
		ping2 = "web-02.example.com:Ping ok -60"
		load  = "app-01.example.com:Load ok -4000"
		ping1 = "web-01.example.com:Ping ok -7200"
	)
	cases := []struct {
		name  string
		q     CheckQuery
		want  []string
		total int64
	}{
		{"failing, newest change first", CheckQuery{FailingOnly: true}, []string{disk, http2, mysql, http1}, 4},
		{"failing, limit", CheckQuery{FailingOnly: true, Limit: 2}, []string{disk, http2}, 4},
		{"failing, no limit", CheckQuery{FailingOnly: true, Limit: -1}, []string{disk, http2, mysql, http1}, 4},
		{"failing, entity regex", CheckQuery{FailingOnly: true, Entity: "^db-"}, []string{disk, mysql}, 2},
		{"failing, check regex and limit", CheckQuery{FailingOnly: true, Check: "^HTTP$", Limit: 1}, []string{http2}, 2},
		{"failing, entity tag", CheckQuery{FailingOnly: true, Tag: "prod"}, []string{disk, mysql, http1}, 3},
		{"failing, tag from the check name", CheckQuery{FailingOnly: true, Tag: "disk"}, []string{disk}, 1},
		{"failing, tag from the entity name", CheckQuery{FailingOnly: true, Tag: "web-02"}, []string{http2}, 1},
		{"failing, unknown tag", CheckQuery{FailingOnly: true, Tag: "nope"}, nil, 0},
		{"all, newest change first", CheckQuery{}, []string{ping2, disk, http2, mysql, http1, load, ping1}, 7},
		{"all, limit", CheckQuery{Limit: 3}, []string{ping2, disk, http2}, 7},
		{"all, entity regex", CheckQuery{Entity: "web-01"}, []string{http1, ping1}, 2},
		{"all, tag and limit", CheckQuery{Tag: "web", Limit: 3}, []string{ping2, http2, http1}, 4},
		{"all, both regexes", CheckQuery{Entity: "example", Check: "^P"}, []string{ping2, ping1}, 2},
		{"all, no match", CheckQuery{Check: "^nothing$"}, nil, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			conn := o.db.Conn(t)
			defer conn.Close()
			got, err := ReadChecks(conn, o.keys, c.q, t0)
			if err != nil {
				t.Fatal(err)
			}
			var rows []string
			for _, r := range got.Checks {
				rows = append(rows, row(r))
			}
			if strings.Join(rows, "\n") != strings.Join(c.want, "\n") || got.Total != c.total {
				t.Errorf("rows (total %d, want %d):\n%s\nwant:\n%s", got.Total, c.total, strings.Join(rows, "\n"), strings.Join(c.want, "\n"))
			}
			if got.FailingOnly != c.q.FailingOnly {
				t.Errorf("FailingOnly %v", got.FailingOnly)
			}
		})
	}

	t.Run("summary and JSON", func(t *testing.T) {
		t.Parallel()
		conn := o.db.Conn(t)
		defer conn.Close()
		got, err := ReadChecks(conn, o.keys, CheckQuery{FailingOnly: true, Entity: "web-01"}, t0)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(got.Checks)
		want := fmt.Sprintf(`[{"entity":"web-01.example.com","check":"HTTP","state":"critical","since":%d,"summary":"HTTP 500\nInternal Server Error","acknowledged":true,"in_maintenance":false}]`, t0.Unix()-3600)
		if string(b) != want {
			t.Errorf("JSON\n%s\nwant\n%s", b, want)
		}
	})

	t.Run("markers follow now", func(t *testing.T) {
		t.Parallel()
		conn := o.db.Conn(t)
		defer conn.Close()
		// two hours later the acknowledgement (1 h) and the window (1 h) are over
		got, err := ReadChecks(conn, o.keys, CheckQuery{FailingOnly: true, Check: "HTTP"}, t0.Add(2*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range got.Checks {
			if r.Acknowledged || r.InMaintenance {
				t.Errorf("%s still marked", row(r))
			}
		}
	})

	t.Run("bad pattern", func(t *testing.T) {
		t.Parallel()
		q := CheckQuery{Check: "("}
		if err := q.Validate(); err == nil || !strings.Contains(err.Error(), "check pattern") {
			t.Fatalf("Validate: %v", err)
		}
		conn := o.db.Conn(t)
		defer conn.Close()
		if _, err := ReadChecks(conn, o.keys, q, t0); err == nil {
			t.Fatal("ReadChecks accepted a bad pattern")
		}
	})
}

// countingConn counts round trips: each Do, and each Flush of pipelined commands.
type countingConn struct {
	redis.Conn
	trips int
}

func (c *countingConn) Do(cmd string, args ...any) (any, error) {
	c.trips++
	return c.Conn.Do(cmd, args...)
}

func (c *countingConn) Flush() error {
	c.trips++
	return c.Conn.Flush()
}

// TestReadChecksRoundTrips: the number of round trips does not grow with the number of checks.
func TestReadChecksRoundTrips(t *testing.T) {
	t.Parallel()
	o := newOnCall(t)
	o.clk.Set(t0.Add(-time.Hour))
	var failing, failingHost0, host001 int64
	for i := 0; i < 300; i++ {
		state := "critical"
		if i%3 == 0 {
			state = "ok"
		}
		entity := fmt.Sprintf("host-%03d", i%40)
		if state != "ok" {
			failing++
			if strings.HasPrefix(entity, "host-00") {
				failingHost0++
			}
		}
		if entity == "host-001" {
			host001++
		}
		o.db.Do(t, "LPUSH", o.keys.Events(), fmt.Sprintf(`{"entity":%q,"check":"Check %d","type":"service","state":%q}`, entity, i, state))
	}
	for {
		n, err := o.x.ProcessNext(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	cases := []struct {
		name     string
		q        CheckQuery
		maxTrips int
		total    int64
	}{
		{"failing", CheckQuery{FailingOnly: true}, 4, failing},
		{"failing, filtered", CheckQuery{FailingOnly: true, Entity: "^host-00", Tag: "check"}, 5, failingHost0},
		{"all", CheckQuery{Limit: -1}, 7, 300},
		{"all, tagged", CheckQuery{Tag: "host-001"}, 8, host001},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			conn := &countingConn{Conn: o.db.Conn(t)}
			defer conn.Close()
			got, err := ReadChecks(conn, o.keys, c.q, t0)
			if err != nil {
				t.Fatal(err)
			}
			if got.Total != c.total {
				t.Errorf("total %d, want %d", got.Total, c.total)
			}
			if conn.trips > c.maxTrips {
				t.Errorf("%d round trips, want at most %d", conn.trips, c.maxTrips)
			}
		})
	}
}

// TestStaleChecksListed: a check whose ttl ran out is listed as stale (with its ttl) by the
// failing view of `flapjack status`, `flapjack checks` and the web UI; a check with a ttl that
// still reports is not.
func TestStaleChecksListed(t *testing.T) {
	t.Parallel()
	o := newOnCall(t)
	o.at(t, -700*time.Second, "web-01.example.com", "HTTP", "ok", "HTTP 200", `"ttl":300`, `"initial_failure_delay":0`)
	o.at(t, -700*time.Second, "web-01.example.com", "Ping", "ok", "PING OK", `"ttl":300`)
	o.at(t, -100*time.Second, "web-01.example.com", "Ping", "critical", "PING timeout", `"ttl":300`)
	o.clk.Set(t0.Add(-400 * time.Second))
	tk := &staleness.Ticker{Pool: o.db.Pool, Keys: o.keys, Clock: o.clk, Events: events.NewPublisher(o.db.Pool, o.keys, "")}
	if res, err := tk.Tick(context.Background()); err != nil || res.Claimed != 1 {
		t.Fatalf("tick: %+v %v", res, err)
	}
	for { // the executive records the queued stale result
		n, err := o.x.ProcessNext(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	conn := o.db.Conn(t)
	defer conn.Close()
	list, err := ReadChecks(conn, o.keys, CheckQuery{FailingOnly: true}, t0)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]CheckRow{}
	for _, r := range list.Checks {
		got[r.Check] = r
	}
	http, ping := got["HTTP"], got["Ping"]
	if len(list.Checks) != 2 || !http.Stale || http.StaleTTL != 300 || http.State != "unknown" ||
		http.Summary != "stale: no result for 5 minutes (ttl 300 s)" || ping.Stale {
		t.Fatalf("rows %+v", list.Checks)
	}
	var b bytes.Buffer
	if err := WriteChecks(&b, list, t0); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "unknown for 6m [stale]") || strings.Count(b.String(), "[stale]") != 1 {
		t.Fatalf("table:\n%s", b.String())
	}
}

func TestWriteChecks(t *testing.T) {
	t.Parallel()
	now := t0
	ago := func(d time.Duration) int64 { return now.Add(-d).Unix() }
	rows := []CheckRow{
		{Entity: "db-01", Check: "Disk", State: "critical", Since: ago(12*time.Minute + 30*time.Second), Summary: "disk 99%"},
		{Entity: "web-02", Check: "HTTP", State: "critical", Since: ago(3*time.Hour + 5*time.Minute), Summary: "refused", InMaintenance: true},
		{Entity: "web-01", Check: "HTTP", State: "warning", Since: ago(26 * time.Hour), Summary: "HTTP 500\n\tInternal  Error", Acknowledged: true, InMaintenance: true},
		{Entity: "new", Check: "Ping", Summary: strings.Repeat("x", 120)},
		{Entity: "odd", Check: "Clock", State: "unknown", Since: now.Add(time.Minute).Unix()},
	}
	cases := []struct {
		name string
		list CheckList
		want string
	}{
		{"no failing checks", CheckList{FailingOnly: true}, "no failing checks\n"},
		{"no checks", CheckList{}, "no checks\n"},
		{"rows and more", CheckList{Checks: rows, Total: 7, FailingOnly: true}, "" +
			"ENTITY  CHECK  STATE                           SUMMARY\n" +
			"db-01   Disk   critical for 12m                disk 99%\n" +
			"web-02  HTTP   critical for 3h5m [maint]       refused\n" +
			"web-01  HTTP   warning for 1d2h [ack] [maint]  HTTP 500 Internal Error\n" +
			"new     Ping   no state                        " + strings.Repeat("x", 100) + "…\n" +
			"odd     Clock  unknown for 0s                  \n" +
			"and 2 more\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var b bytes.Buffer
			if err := WriteChecks(&b, c.list, now); err != nil {
				t.Fatal(err)
			}
			if b.String() != c.want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), c.want)
			}
		})
	}
}

func TestCompact(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		-time.Second: "0s", 0: "0s", 59 * time.Second: "59s", time.Minute: "1m", 12*time.Minute + 59*time.Second: "12m",
		time.Hour: "1h", 3*time.Hour + 5*time.Minute: "3h5m", 24 * time.Hour: "1d", 50 * time.Hour: "2d2h",
	} {
		if got := Compact(d); got != want {
			t.Errorf("Compact(%v) = %q, want %q", d, got, want)
		}
	}
}
