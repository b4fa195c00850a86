package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/testing/testbinary"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/schema"
)

func TestMain(m *testing.M) { testbinary.Main(m) }

// flapjack runs the binary to completion.
func flapjack(t *testing.T, env []string, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return testbinary.Run(t, env, stdin, 2*time.Minute, args...)
}

// TestEmbeddedServerShowsASimulatedAlert is the newcomer's path: `flapjack server` without
// Redis, then `flapjack simulate fail` in another terminal, and an alert is printed.
func TestEmbeddedServerShowsASimulatedAlert(t *testing.T) {
	t.Parallel()
	srv := testbinary.Start(t, []string{"FLAPJACK_REDIS_EMBEDDED=always", "FLAPJACK_HTTP_ADDR=" + testbinary.FreeAddr(t),
		"FLAPJACK_WEB_ADDR=" + testbinary.FreeAddr(t), "FLAPJACK_EXECUTIVE_INITIAL_FAILURE_DELAY=2s"}, "server")
	addr := srv.WaitMatch(t, true, regexp.MustCompile(`Redis at (127\.0\.0\.1:\d+)\. NOTHING IS PERSISTED`), 10*time.Second)[1]
	out, errOut, code := flapjack(t, []string{"FLAPJACK_REDIS_URL=redis://" + addr + "/0"}, "",
		"simulate", "fail", "--entity", "web-01", "--check", "HTTP", "--interval", "1s", "--duration", "3s")
	if code != 0 || !strings.Contains(out, `"entity":"web-01"`) {
		t.Fatalf("simulate: %d %s %s", code, out, errOut)
	}
	alert := srv.WaitMatch(t, false, regexp.MustCompile(`^ALERT Problem: "HTTP" on web-01 is Critical.*contact=operator`), 10*time.Second)
	t.Logf("server printed: %s", alert[0])
	if code := srv.Stop(t); code != 0 {
		t.Fatalf("server exited %d after SIGTERM", code)
	}
}

// TestGracefulShutdownLeavesNothingClaimed: SIGTERM mid-stream, exit 0, empty processing lists.
func TestGracefulShutdownLeavesNothingClaimed(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	keys := schema.NewKeys("")
	conn := db.Conn(t)
	defer conn.Close()
	for i := 0; i < 20000; i++ {
		conn.Send("LPUSH", keys.Events(), fmt.Sprintf(`{"entity":"e%d","check":"c","type":"service","state":"critical"}`, i%500))
	}
	conn.Flush()
	for i := 0; i < 20000; i++ {
		conn.Receive()
	}
	srv := testbinary.Start(t, []string{"FLAPJACK_REDIS_URL=" + db.URL(), "FLAPJACK_HTTP_ADDR=" + testbinary.FreeAddr(t),
		"FLAPJACK_WEB_ADDR=" + testbinary.FreeAddr(t), "FLAPJACK_EXECUTIVE_INITIAL_FAILURE_DELAY=0"}, "server")
	srv.WaitMatch(t, true, regexp.MustCompile(`notification generated`), 20*time.Second)
	if code := srv.Stop(t); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, stage := range []string{"executive", "notifier", "log_gateway"} {
		members, _ := redis.Strings(conn.Do("SMEMBERS", keys.Instances(stage)))
		if len(members) != 0 {
			t.Errorf("%s instances still registered after a clean stop: %v", stage, members)
		}
	}
	keysLeft, _ := redis.Strings(conn.Do("KEYS", "*_processing:*"))
	if len(keysLeft) != 0 {
		t.Fatalf("processing lists left: %v", keysLeft)
	}
}

// TestMetricsAreValidAndMove: /metrics passes promtool and its counters follow the events.
func TestMetricsAreValidAndMove(t *testing.T) {
	t.Parallel()
	promtool := promtoolPath(t)
	db := testredis.New(t)
	addr := testbinary.FreeAddr(t)
	srv := testbinary.Start(t, []string{"FLAPJACK_REDIS_URL=" + db.URL(), "FLAPJACK_HTTP_ADDR=" + addr,
		"FLAPJACK_WEB_ADDR=" + testbinary.FreeAddr(t)}, "server")
	srv.WaitMatch(t, true, regexp.MustCompile(`HTTP listening`), 10*time.Second)
	scrape := func() string {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	before := scrape()
	check := exec.Command(promtool, "check", "metrics")
	check.Stdin = strings.NewReader(before)
	if out, err := check.CombinedOutput(); err != nil {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
	body := `[{"entity":"m1","check":"c","type":"service","state":"ok"},{"entity":"m1","check":"c","type":"service","state":"critical"}]`
	resp, err := http.Post("http://"+addr+"/events", "application/json", strings.NewReader(body))
	if err != nil || resp.StatusCode != 202 {
		t.Fatalf("POST /events: %v %v", resp, err)
	}
	want := regexp.MustCompile(`flapjack_events_processed_total\{result="blocked",type="service"\} 2`)
	deadline := time.Now().Add(10 * time.Second)
	for !want.MatchString(scrape()) {
		if time.Now().After(deadline) {
			t.Fatalf("counter did not move:\n%s", grep(scrape(), "flapjack_events_processed_total"))
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, name := range []string{"flapjack_queue_depth", "flapjack_event_processing_seconds_bucket", "flapjack_build_info",
		"flapjack_instances", "flapjack_checks_failing", "flapjack_notifier_notifications_total"} {
		if !strings.Contains(scrape(), name) {
			t.Errorf("metric %s missing", name)
		}
	}
}

func grep(text, needle string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, needle) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestStatusReportsAKilledInstanceAsStale and exits non-zero (usable as a Nagios check).
func TestStatusReportsAKilledInstanceAsStale(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	env := []string{"FLAPJACK_REDIS_URL=" + db.URL(), "FLAPJACK_INSTANCE_HEARTBEAT=1s"}
	x := testbinary.Start(t, env, "executive")
	x.WaitMatch(t, true, regexp.MustCompile(`stage started`), 10*time.Second)
	out, _, code := flapjack(t, env, "", "status", "--json")
	var live struct {
		Healthy   bool `json:"healthy"`
		Instances []struct {
			Stage string `json:"stage"`
			Stale bool   `json:"stale"`
		} `json:"instances"`
	}
	if err := json.Unmarshal([]byte(out), &live); err != nil || code != 0 || !live.Healthy || len(live.Instances) != 1 || live.Instances[0].Stale {
		t.Fatalf("live status: code %d %v %s", code, err, out)
	}
	x.Kill()
	// The record goes stale once its heartbeat is missed (a few seconds with a 1s beat): ask
	// until status says so.
	var dead struct {
		Healthy   bool     `json:"healthy"`
		Problems  []string `json:"problems"`
		Instances []struct {
			Stale bool `json:"stale"`
		} `json:"instances"`
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		out, _, code = flapjack(t, env, "", "status", "--json")
		if err := json.Unmarshal([]byte(out), &dead); err != nil {
			t.Fatal(err)
		}
		if len(dead.Instances) == 1 && dead.Instances[0].Stale || time.Now().After(deadline) {
			break
		}
	}
	if code != 1 || dead.Healthy || len(dead.Instances) != 1 || !dead.Instances[0].Stale || len(dead.Problems) == 0 {
		t.Fatalf("after SIGKILL: code %d %s", code, out)
	}
}

func TestConfigurationErrorsExitTwoNamingTheSetting(t *testing.T) {
	t.Parallel()
	cases := []struct {
		env  []string
		args []string
		want string
	}{
		{[]string{"FLAPJACK_EXECUTIVE_BATCH_SIZE=lots"}, []string{"executive"}, "executive.batch_size"},
		{nil, []string{"--executive-repeat-failure-delay", "soon", "executive"}, "executive.repeat_failure_delay"},
		{[]string{"FLAPJACK_LOG_LEVEL=chatty"}, []string{"status"}, "log.level"},
		{[]string{"FLAPJACK_REDIS_URL=http://nope"}, []string{"status"}, "redis.url"},
		{[]string{"FLAPJACK_NOTIFIER_DEFAULT_CONTACT_TIMEZONE=Mars/Olympus"}, []string{"notifier"}, "notifier.default_contact_timezone"},
		{[]string{"FLAPJACK_HTTP_ADDR=0.0.0.0:0", "FLAPJACK_REDIS_EMBEDDED=always"}, []string{"server"}, "http.token"},
		{[]string{"FLAPJACK_EXECUTIVE_TTL_BY_CHECK=^db-=5 minutes,([=60"}, []string{"executive"}, "executive.ttl_by_check"},
		{nil, []string{"--executive-default-ttl", "1.5s", "executive"}, "executive.default_ttl"},
	}
	for _, c := range cases {
		_, errOut, code := flapjack(t, c.env, "", c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v %v: exit %d, stderr %q; want 2 naming %s", c.env, c.args, code, errOut, c.want)
		}
	}
	file := filepath.Join(t.TempDir(), "f.yaml")
	os.WriteFile(file, []byte("redis:\n  urll: x\n"), 0o600)
	if _, errOut, code := flapjack(t, nil, "", "--config", file, "status"); code != 2 || !strings.Contains(errOut, "redis.urll") {
		t.Errorf("unknown file setting: %d %s", code, errOut)
	}
}

// TestReplayIsFastAndDeterministic: a 24-hour timeline of 10,000 events replays in seconds and
// prints the same alerts every time.
func TestReplayIsFastAndDeterministic(t *testing.T) {
	t.Parallel()
	var timeline strings.Builder
	start := int64(1767571200) // 2026-01-05 00:00 UTC
	// 140 checks (20 hosts x 7 checks), each seen every 20 minutes; states hold for about 3 hours
	states := []string{"ok", "critical", "ok", "warning", "critical", "ok", "unknown", "ok"}
	for i := 0; i < 10000; i++ {
		at := start + int64(i)*86400/10000
		fmt.Fprintf(&timeline, `{"entity":"host-%d","check":"check-%d","type":"service","state":%q,"time":%d}`+"\n",
			i%20, i%7, states[(i/1250+i%3)%len(states)], at)
		if i == 5000 {
			fmt.Fprintf(&timeline, `{"action":"scheduled_maintenance","time":%d,"entity":"host-3","check":"check-3","duration":"2h","summary":"patching"}`+"\n", at)
		}
	}
	run := func() (string, time.Duration) {
		db := testredis.New(t)
		db.Do(t, "HSET", "contact:ada", "first_name", "Ada")
		db.Do(t, "HSET", "contact_media:ada", "log", "stdout", "jabber", "ada@example.com")
		db.Do(t, "SADD", "contacts_for:ALL", "ada")
		began := time.Now()
		out, errOut, code := flapjack(t, []string{"FLAPJACK_REDIS_URL=" + db.URL()}, timeline.String(), "replay")
		if code != 0 {
			t.Fatalf("replay exit %d: %s", code, errOut)
		}
		return out, time.Since(began)
	}
	first, took := run()
	second, _ := run()
	if first != second {
		t.Fatal("two replays of the same timeline printed different alerts")
	}
	lines := strings.Count(first, "\n")
	if lines < 100 {
		t.Fatalf("only %d alerts", lines)
	}
	for _, l := range strings.SplitN(first, "\n", 3)[:2] {
		if _, err := schema.ParseAlert([]byte(l)); err != nil {
			t.Fatalf("stdout carries a non-alert line %q: %v", l, err)
		}
	}
	t.Logf("10,000 events over 24 h replayed in %v: %d alerts", took, lines)
	if took > 60*time.Second {
		t.Fatalf("replay took %v", took)
	}
}

func TestReplayStopsAtAMalformedLineWithItsNumber(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	in := `{"entity":"a","check":"b","type":"service","state":"ok","time":100}` + "\n" +
		`{"entity":"a","check":"b","type":"service","state":"ok","time":50}` + "\n"
	_, errOut, code := flapjack(t, []string{"FLAPJACK_REDIS_URL=" + db.URL()}, in, "replay")
	if code == 0 || !strings.Contains(errOut, "line 2") || !strings.Contains(errOut, "clock never goes back") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	_, errOut, code = flapjack(t, []string{"FLAPJACK_REDIS_URL=" + db.URL()}, "{\"time\":200,\"entity\":1}\n", "replay")
	if code == 0 || !strings.Contains(errOut, "line 1") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}

// TestImportRoundTripsTheExamplesAndRefusesABrokenFile via the CLI.
func TestImportRoundTripsTheExamplesAndRefusesABrokenFile(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	env := []string{"FLAPJACK_REDIS_URL=" + db.URL()}
	for _, what := range []string{"contacts", "entities"} {
		out, errOut, code := flapjack(t, env, "", "import", what, "-f", "../../examples/"+what+".json")
		if code != 0 || !strings.Contains(out, "imported") {
			t.Fatalf("import %s: %d %s %s", what, code, out, errOut)
		}
	}
	before := db.Dump(t)
	flapjack(t, env, "", "import", "contacts", "-f", "../../examples/contacts.json")
	after := db.Dump(t)
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Fatal("importing the same file again changed Redis")
	}
	if out, errOut, code := flapjack(t, env, "", "import", "rules", "-f", "../../examples/rules.json"); code != 0 || !strings.Contains(out, "imported 2") {
		t.Fatalf("import rules: %d %s %s", code, out, errOut)
	}
	if owner, _ := redis.String(db.Do(t, "HGET", "notification_rule:grace-payments-critical", "contact_id"), nil); owner != "grace" {
		t.Fatalf("imported rule's contact_id %q, want grace", owner)
	}
	before = db.Dump(t)
	flapjack(t, env, "", "import", "rules", "-f", "../../examples/rules.json")
	if after := db.Dump(t); fmt.Sprint(before) != fmt.Sprint(after) {
		t.Fatal("importing the same rules file again changed Redis")
	}
	clean := testredis.New(t)
	_, errOut, code := flapjack(t, []string{"FLAPJACK_REDIS_URL=" + clean.URL()}, "", "import", "contacts", "-f", "../../examples/contacts-broken.json")
	if code != 1 || !strings.Contains(errOut, "problem: record 0") || !strings.Contains(errOut, "nothing written") {
		t.Fatalf("broken file: %d %s", code, errOut)
	}
	if n := len(clean.Dump(t)); n != 0 {
		t.Fatalf("a refused file wrote %d keys", n)
	}
}

// TestHTTPReceiverQueuesEvents: `receiver http` serves POST /events on its own.
func TestHTTPReceiverQueuesEvents(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	addr := testbinary.FreeAddr(t)
	p := testbinary.Start(t, []string{"FLAPJACK_REDIS_URL=" + db.URL(), "FLAPJACK_HTTP_ADDR=" + addr}, "receiver", "http")
	p.WaitMatch(t, true, regexp.MustCompile(`HTTP listening`), 10*time.Second)
	resp, err := http.Post("http://"+addr+"/events", "application/json",
		strings.NewReader(`{"entity":"r1","check":"c","type":"service","state":"ok"}`))
	if err != nil || resp.StatusCode != 202 {
		t.Fatalf("POST /events: %v %v", resp, err)
	}
	if n, _ := redis.Int(db.Do(t, "LLEN", "events"), nil); n != 1 {
		t.Fatalf("%d events queued", n)
	}
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// TestSIGHUPReloadsTheLogLevel: a running stage takes a new log.level from its configuration
// file on SIGHUP, says so, and logs at the new level from then on.
func TestSIGHUPReloadsTheLogLevel(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	file := filepath.Join(t.TempDir(), "flapjack.yaml")
	writeLevel := func(level string) {
		if err := os.WriteFile(file, []byte("log:\n  level: "+level+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	processed := func(entity string) {
		t.Helper()
		db.Do(t, "LPUSH", "events", `{"entity":"`+entity+`","check":"c","type":"service","state":"ok"}`)
		deadline := time.Now().Add(10 * time.Second)
		for {
			n, _ := redis.Int(db.Do(t, "EXISTS", "check:"+entity+":c"), nil)
			if n == 1 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("event of %s not processed", entity)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	writeLevel("info")
	x := testbinary.Start(t, []string{"FLAPJACK_REDIS_URL=" + db.URL()}, "--config", file, "executive")
	x.WaitLine(t, 10*time.Second, "stage started")
	processed("before")
	if strings.Contains(x.Text(true), "blocked by") {
		t.Fatalf("a debug line was logged at level info:\n%s", x.Text(true))
	}
	writeLevel("debug")
	if err := x.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	x.WaitLine(t, 10*time.Second, "SIGHUP: reloaded log.level", "debug")
	processed("after")
	x.WaitLine(t, 10*time.Second, "blocked by", "after")
	if code := x.Stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM", code)
	}
}
