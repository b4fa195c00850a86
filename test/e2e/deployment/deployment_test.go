// Package deployment tests the deployment shapes of the README: stages as separate processes
// sharing one Redis, `flapjack api` and a `server` with stages switched off leaving the queue
// alone, and the systemd units of etc/systemd starting as written.
package deployment

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/config"
	"github.com/flapjackgo/flapjack/gateways/media"
	"github.com/flapjackgo/flapjack/internal/testing/testbinary"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/schema"
)

func TestMain(m *testing.M) { testbinary.Main(m) }

var started = regexp.MustCompile(`INFO\s+starting\s`)

// waitReady polls addr's /readyz until it answers 200.
func waitReady(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s/readyz never answered 200", addr)
}

func postEvents(t *testing.T, addr string, events []map[string]any) {
	t.Helper()
	body, _ := json.Marshal(events)
	resp, err := http.Post("http://"+addr+"/events", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST /events: %s", resp.Status)
	}
}

// TestSeparateProcessesLoseNothing runs the three-tier shape as processes: `api`, two
// `executive`s, one `notifier`, one `gateway log`. 10,000 events posted through the API all
// become state, each failure is alerted exactly once, and killing one executive mid-stream
// loses nothing.
func TestSeparateProcessesLoseNothing(t *testing.T) {
	db := testredis.New(t)
	conn := db.Conn(t)
	demo := roster.ContactData{ID: "oncall", Media: []roster.Medium{{Name: "log", Address: "stdout"}}}
	if _, err := roster.SeedContact(context.Background(), conn, schema.NewKeys(""), demo, true); err != nil {
		t.Fatal(err)
	}
	apiAddr := testbinary.FreeAddr(t)
	env := []string{"FLAPJACK_REDIS_URL=" + db.URL(), "FLAPJACK_INSTANCE_HEARTBEAT=1s",
		"FLAPJACK_EXECUTIVE_INITIAL_FAILURE_DELAY=0", "FLAPJACK_HTTP_ADDR=" + apiAddr}
	api := testbinary.Start(t, env, "api")
	victim := testbinary.Start(t, env, "executive")
	survivor := testbinary.Start(t, env, "executive")
	notifier := testbinary.Start(t, env, "notifier")
	gateway := testbinary.Start(t, env, "gateway", "log")
	for _, p := range []*testbinary.Process{api, victim, survivor, notifier, gateway} {
		p.WaitMatch(t, true, started, 10*time.Second)
	}
	waitReady(t, apiAddr)

	const total, batch, failEvery = 10000, 500, 100
	now := time.Now().Unix()
	for start := 0; start < total; start += batch {
		events := make([]map[string]any, 0, batch)
		for i := start; i < start+batch; i++ {
			state := "ok"
			if i%failEvery == 0 {
				state = "critical"
			}
			events = append(events, map[string]any{"entity": "web-01", "check": fmt.Sprintf("check-%05d", i),
				"type": "service", "state": state, "summary": fmt.Sprintf("summary %d", i), "time": now})
		}
		postEvents(t, apiAddr, events)
		if start == total/2 {
			// SIGKILL mid-stream, once the victim has taken its share of the work.
			victimID := queue.Identity{Host: queue.LocalIdentity().Host, PID: victim.PID()}.ID()
			if n, _ := redis.Int(conn.Do("HGET", schema.NewKeys("").InstanceEventCounters(victimID), "all")); n == 0 {
				t.Fatalf("the executive to be killed processed nothing of the first %d events", start)
			}
			victim.Kill()
		}
	}

	deadline := time.Now().Add(60 * time.Second)
	var alerts []string
	for {
		alerts = gateway.Texts(false)
		stateCount, _ := redis.Int(conn.Do("ZCARD", schema.NewKeys("").CurrentChecks("web-01")))
		queued, _ := redis.Int(conn.Do("LLEN", "events"))
		if len(alerts) >= total/failEvery && stateCount == total && queued == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60 s: %d of %d checks have state, %d events queued, %d of %d alerts", stateCount, total, queued, len(alerts), total/failEvery)
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(2 * time.Second) // a duplicate would arrive within a heartbeat or two
	alerts = gateway.Texts(false)
	seen := map[string]int{}
	for _, line := range alerts {
		m := regexp.MustCompile(`^ALERT Problem: "(check-\d+)" on web-01 is Critical`).FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("unexpected gateway line %q", line)
		}
		seen[m[1]]++
	}
	for i := 0; i < total; i += failEvery {
		if n := seen[fmt.Sprintf("check-%05d", i)]; n != 1 {
			t.Errorf("check-%05d alerted %d times, want once", i, n)
		}
	}
	if len(alerts) != total/failEvery {
		t.Errorf("%d alerts, want %d", len(alerts), total/failEvery)
	}
	for i := 0; i < total; i += 997 {
		state, err := redis.String(conn.Do("HGET", schema.NewKeys("").Check(schema.CheckID("web-01", fmt.Sprintf("check-%05d", i))), "state"))
		want := "ok"
		if i%failEvery == 0 {
			want = "critical"
		}
		if err != nil || state != want {
			t.Errorf("check-%05d state %q (%v), want %s", i, state, err, want)
		}
	}
	for _, p := range []*testbinary.Process{api, survivor, notifier, gateway} {
		if code := p.Terminate(30 * time.Second); code != 0 {
			t.Errorf("%s exited %d", p, code)
		}
	}
}

// TestNothingConsumesWhereNoExecutiveRuns: `flapjack api`, and `server` with the executive
// switched off, leave queued events queued.
func TestNothingConsumesWhereNoExecutiveRuns(t *testing.T) {
	cases := []struct {
		name string
		args []string
		log  string
	}{
		{"api", []string{"api"}, `"stages": ["http"]`},
		{"server without executive", []string{"server", "--executive-enabled=false"}, `"stages": ["retention", "notifier", "log gateway", "http", "web"]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			db := testredis.New(t)
			for i := 0; i < 4; i++ {
				db.Do(t, "LPUSH", "events", fmt.Sprintf(`{"entity":"e","check":"c%d","type":"service","state":"ok"}`, i))
			}
			addr := testbinary.FreeAddr(t)
			p := testbinary.Start(t, []string{"FLAPJACK_REDIS_URL=" + db.URL(), "FLAPJACK_HTTP_ADDR=" + addr,
				"FLAPJACK_WEB_ADDR=" + testbinary.FreeAddr(t)}, c.args...)
			p.WaitLine(t, 10*time.Second, c.log)
			waitReady(t, addr)
			time.Sleep(1500 * time.Millisecond)
			if n, _ := redis.Int(db.Do(t, "LLEN", "events"), nil); n != 4 {
				t.Fatalf("%d events left queued, want 4", n)
			}
			if code := p.Terminate(30 * time.Second); code != 0 {
				t.Fatalf("exit %d", code)
			}
		})
	}
}

func TestServerWithEveryStageOffRefusesToStart(t *testing.T) {
	db := testredis.New(t)
	env := []string{"FLAPJACK_REDIS_URL=" + db.URL()}
	_, stderr, code := testbinary.Run(t, env, "", 20*time.Second, "server", "--executive-enabled=false",
		"--notifier-enabled=false", "--retention-enabled=false", "--http-enabled=false", "--web-enabled=false", "--gateways-log-enabled=false")
	if code != 2 || !strings.Contains(stderr, "nothing to run") || !strings.Contains(stderr, "executive.enabled") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
}

// repoRoot is the module root (this test runs in test/e2e/deployment).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestDeploymentConfigsLoad: every example configuration under etc/ loads.
func TestDeploymentConfigsLoad(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(repoRoot(t), "etc", "deploy", "*.yaml"))
	if len(files) < 3 {
		t.Fatalf("want the three-host layout's configs under etc/deploy, found %v", files)
	}
	for _, f := range files {
		if _, err := config.Load(media.Table(), f, nil, nil); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// execStart reads the ExecStart command line of a unit file.
func execStart(t *testing.T, unit string) []string {
	t.Helper()
	f, err := os.Open(unit)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), "ExecStart="); ok {
			return strings.Fields(line)
		}
	}
	t.Fatalf("%s has no ExecStart", unit)
	return nil
}

// TestSystemdUnitsStartAsWritten runs every unit's ExecStart command line (its binary replaced by
// the built one, /etc/flapjack/NAME.yaml by the repository's file, %i by a medium), against a
// test Redis (environment variables point it there instead of the example Sentinels): each starts its stages and stops with exit 0 on SIGTERM, as systemd sends it.
func TestSystemdUnitsStartAsWritten(t *testing.T) {
	root := repoRoot(t)
	units, _ := filepath.Glob(filepath.Join(root, "etc", "systemd", "*.service"))
	if len(units) == 0 {
		t.Fatal("no units")
	}
	closed := testbinary.FreeAddr(t) // nothing listens here: a Jabber server that is down
	for _, unit := range units {
		t.Run(filepath.Base(unit), func(t *testing.T) {
			cmd := execStart(t, unit)
			if cmd[0] != "/usr/local/bin/flapjack" {
				t.Fatalf("ExecStart runs %s", cmd[0])
			}
			var args []string
			for _, a := range cmd[1:] {
				switch {
				case a == "/etc/flapjack/flapjack.yaml":
					a = filepath.Join(root, "etc", "flapjack.yaml.example")
				case strings.HasPrefix(a, "/etc/flapjack/"):
					a = filepath.Join(root, "etc", "deploy", strings.TrimPrefix(a, "/etc/flapjack/"))
				case a == "%i":
					a = "log"
				}
				args = append(args, a)
			}
			db := testredis.New(t)
			host, port, _ := strings.Cut(closed, ":")
			env := []string{"FLAPJACK_REDIS_URL=" + db.URL(), "FLAPJACK_REDIS_SENTINEL_ADDRS=", "FLAPJACK_REDIS_SENTINEL_MASTER=",
				"FLAPJACK_HTTP_ADDR=" + testbinary.FreeAddr(t), "FLAPJACK_METRICS_ADDR=" + testbinary.FreeAddr(t),
				"FLAPJACK_WEB_ADDR=" + testbinary.FreeAddr(t),
				"FLAPJACK_GATEWAYS_JABBER_SERVER=" + host, "FLAPJACK_GATEWAYS_JABBER_PORT=" + port,
				"FLAPJACK_GATEWAYS_JABBER_TLS=plain", "FLAPJACK_GATEWAYS_JABBER_ALLOW_PLAINTEXT=true"}
			p := testbinary.Start(t, env, args...)
			p.WaitMatch(t, true, started, 10*time.Second)
			if err := p.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			if code := p.WaitExit(30 * time.Second); code != 0 {
				t.Fatalf("%v exited %d:\n%s", args, code, p.Tail(20))
			}
		})
	}
}
