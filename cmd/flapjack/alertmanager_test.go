package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/testing/testbinary"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/schema"
)

// The tests here run flapjack beside a real Alertmanager and a real Prometheus (Debian packages
// prometheus-alertmanager and prometheus, installed by scripts/test-deps.sh), each on a free
// loopback port with a configuration the test writes around README's examples/ files.

const promToken = "prom-test-token"

// exampleAddr is the flapjack address the examples/ files show.
const exampleAddr = "127.0.0.1:3081"

// exampleTokenFile is the token file the examples/ files show.
const exampleTokenFile = "/etc/prometheus/flapjack.token"

// flapjackForPrometheus runs `flapjack server` with http.token, mirroring acknowledgements into
// the Alertmanager at amURL when set; it returns the server's http.addr.
func flapjackForPrometheus(t *testing.T, db *testredis.DB, amURL string) string {
	t.Helper()
	addr := testbinary.FreeAddr(t)
	env := []string{"FLAPJACK_REDIS_URL=" + db.URL(), "FLAPJACK_HTTP_ADDR=" + addr, "FLAPJACK_HTTP_TOKEN=" + promToken,
		"FLAPJACK_WEB_ENABLED=false", "FLAPJACK_EXECUTIVE_STALENESS_INTERVAL=200ms",
		"FLAPJACK_ALERTMANAGER_URL=" + amURL, "FLAPJACK_ALERTMANAGER_SYNC_INTERVAL=200ms"}
	srv := testbinary.Start(t, env, "server")
	t.Cleanup(func() { srv.Stop(t) })
	waitHTTP(t, "http://"+addr+"/readyz")
	return addr
}

// fromExample is an examples/ file pointed at flapjack's addr with a token file holding
// promToken.
func fromExample(t *testing.T, name, flapjackAddr string) string {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("..", "..", "examples", name))
	if err != nil {
		t.Fatal(err)
	}
	tokenFile := filepath.Join(t.TempDir(), "flapjack.token")
	if err := os.WriteFile(tokenFile, []byte(promToken), 0o600); err != nil {
		t.Fatal(err)
	}
	s := string(body)
	if !strings.Contains(s, exampleAddr) || !strings.Contains(s, exampleTokenFile) {
		t.Fatalf("examples/%s no longer names %s and %s", name, exampleAddr, exampleTokenFile)
	}
	return strings.NewReplacer(exampleAddr, flapjackAddr, exampleTokenFile, tokenFile).Replace(s)
}

// startPeer runs one of the Prometheus programs until the test ends, once it answers /-/ready.
func startPeer(t *testing.T, addr string, program string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(program, args...)
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s (apt-get install -y prometheus prometheus-alertmanager, or make test): %v", program, err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("%s output:\n%s", program, logs.String())
		}
	})
	waitHTTP(t, "http://"+addr+"/-/ready")
	return cmd
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func waitHTTP(t *testing.T, url string) {
	t.Helper()
	waitUntil(t, 20*time.Second, "GET "+url+" answers 200", func() (bool, string) {
		resp, err := http.Get(url)
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
}

// waitUntil polls ok until it holds or timeout passes; ok says what it saw.
func waitUntil(t *testing.T, timeout time.Duration, what string, ok func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		done, saw := ok()
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s; last saw %s", what, timeout, saw)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitState waits for the check's state (and, when given, a summary prefix).
func waitState(t *testing.T, db *testredis.DB, timeout time.Duration, checkID, state, summaryPrefix string) {
	t.Helper()
	waitUntil(t, timeout, checkID+" "+state, func() (bool, string) {
		v, _ := redis.StringMap(db.Do(t, "HGETALL", schema.NewKeys("").Check(checkID)), nil)
		return v["state"] == state && strings.HasPrefix(v["summary"], summaryPrefix), fmt.Sprintf("%v", v)
	})
}

// amSilence is a silence as Alertmanager's API v2 lists it.
type amSilence struct {
	ID       string `json:"id"`
	Matchers []struct {
		Name    string `json:"name"`
		Value   string `json:"value"`
		IsRegex bool   `json:"isRegex"`
		IsEqual bool   `json:"isEqual"`
	} `json:"matchers"`
	EndsAt    time.Time `json:"endsAt"`
	CreatedBy string    `json:"createdBy"`
	Comment   string    `json:"comment"`
	Status    struct {
		State string `json:"state"`
	} `json:"status"`
}

func silences(t *testing.T, amURL string) []amSilence {
	t.Helper()
	resp, err := http.Get(amURL + "/api/v2/silences")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []amSilence
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

func postAlert(t *testing.T, amURL string, labels map[string]string, summary string, endsAt time.Time) {
	t.Helper()
	a := map[string]any{"labels": labels, "annotations": map[string]string{"summary": summary}}
	if !endsAt.IsZero() {
		a["startsAt"], a["endsAt"] = endsAt.Add(-time.Minute), endsAt
	}
	body, _ := json.Marshal([]any{a})
	resp, err := http.Post(amURL+"/api/v2/alerts", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("Alertmanager refused the alert: %s %s", resp.Status, b)
	}
}

// TestAlertmanagerWebhookAndSilences: an alert posted to a real Alertmanager reaches flapjack
// through the README's receiver block as a critical check, an acknowledgement in flapjack
// becomes an active silence with the alert's labels, ending it expires the silence, and the
// resolution arrives as ok; the resolution of a silenced alert, which Alertmanager does not
// send, is read back from it, and the recovery expires the second acknowledgement's silence.
func TestAlertmanagerWebhookAndSilences(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	// Alertmanager needs flapjack's address in its configuration, flapjack Alertmanager's: the
	// Alertmanager's port is chosen first and flapjack started pointing at it.
	amAddr := testbinary.FreeAddr(t)
	flapjackAddr := flapjackForPrometheus(t, db, "http://"+amAddr)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "alertmanager.yml"),
		"route:\n  receiver: flapjack\n  group_by: ['...']\n  group_wait: 0s\n  group_interval: 1s\n  repeat_interval: 1h\n"+
			fromExample(t, "alertmanager-receiver.yml", flapjackAddr))
	startPeer(t, amAddr, "prometheus-alertmanager", "--config.file="+filepath.Join(dir, "alertmanager.yml"),
		"--storage.path="+filepath.Join(dir, "data"), "--web.listen-address="+amAddr, "--cluster.listen-address=")
	amURL := "http://" + amAddr

	labels := map[string]string{"alertname": "DiskFull", "instance": "db-1:9100", "severity": "critical", "device": "sda"}
	posted := time.Now()
	postAlert(t, amURL, labels, "disk sda full on db-1", time.Time{})
	waitState(t, db, 5*time.Second, "db-1:DiskFull", "critical", "disk sda full on db-1")
	t.Logf("alert reached flapjack %s after it was posted to Alertmanager", time.Since(posted).Round(time.Millisecond))

	env := []string{"FLAPJACK_REDIS_URL=" + db.URL()}
	if _, errOut, code := flapjack(t, env, "", "ack", "--entity", "db-1", "--check", "DiskFull", "-d", "1h", "-m", "on it: replacing sda"); code != 0 {
		t.Fatalf("ack: %d %s", code, errOut)
	}
	var silenced amSilence
	waitUntil(t, 10*time.Second, "an active flapjack silence for db-1:DiskFull", func() (bool, string) {
		list := silences(t, amURL)
		for _, s := range list {
			if s.CreatedBy == "flapjack" && s.Status.State == "active" {
				silenced = s
				return true, ""
			}
		}
		return false, fmt.Sprintf("%+v", list)
	})
	got := map[string]string{}
	for _, m := range silenced.Matchers {
		if m.IsRegex || !m.IsEqual {
			t.Errorf("matcher %+v is not an equality", m)
		}
		got[m.Name] = m.Value
	}
	if fmt.Sprint(got) != fmt.Sprint(labels) || silenced.Comment != "on it: replacing sda" {
		t.Errorf("silence matchers %v comment %q; want %v and the acknowledgement's summary", got, silenced.Comment, labels)
	}
	if until := time.Until(silenced.EndsAt); until < 58*time.Minute || until > time.Hour {
		t.Errorf("silence ends in %s, want the acknowledgement's hour", until)
	}
	amtool, err := exec.Command("amtool", "silence", "query", "--alertmanager.url="+amURL, "alertname=DiskFull").CombinedOutput()
	if err != nil || !strings.Contains(string(amtool), silenced.ID) {
		t.Errorf("amtool silence query does not list %s: %v\n%s", silenced.ID, err, amtool)
	}

	// A new acknowledgement replaces the current one: the silence follows it, and stays one.
	if _, errOut, code := flapjack(t, env, "", "ack", "--entity", "db-1", "--check", "DiskFull", "-d", "3h", "-m", "still on it"); code != 0 {
		t.Fatalf("ack: %d %s", code, errOut)
	}
	waitUntil(t, 10*time.Second, "the one active flapjack silence following the 3 h acknowledgement", func() (bool, string) {
		var active []amSilence
		for _, s := range silences(t, amURL) {
			if s.CreatedBy == "flapjack" && s.Status.State == "active" {
				active = append(active, s)
			}
		}
		if len(active) != 1 || time.Until(active[0].EndsAt) < 170*time.Minute || active[0].Comment != "still on it" {
			return false, fmt.Sprintf("%+v", active)
		}
		silenced = active[0]
		return true, ""
	})

	if _, errOut, code := flapjack(t, env, "", "maintenance", "end", "--entity", "db-1", "--check", "DiskFull", "--type", "unscheduled"); code != 0 {
		t.Fatalf("maintenance end: %d %s", code, errOut)
	}
	waitSilence(t, amURL, silenced.ID, "expired")

	// With no silence, the resolution comes through the webhook.
	postAlert(t, amURL, labels, "disk sda full on db-1", time.Now())
	waitState(t, db, 10*time.Second, "db-1:DiskFull", "ok", "disk sda full on db-1")

	// Firing again and acknowledged: Alertmanager mutes the silenced alert's resolution, so it
	// is read back from Alertmanager, and the recovery ends the acknowledgement and its silence.
	postAlert(t, amURL, labels, "disk sda full on db-1 again", time.Time{})
	waitState(t, db, 10*time.Second, "db-1:DiskFull", "critical", "disk sda full on db-1 again")
	if _, errOut, code := flapjack(t, env, "", "ack", "--entity", "db-1", "--check", "DiskFull", "-d", "2h"); code != 0 {
		t.Fatalf("ack: %d %s", code, errOut)
	}
	var second string
	waitUntil(t, 10*time.Second, "a second active flapjack silence", func() (bool, string) {
		for _, s := range silences(t, amURL) {
			if s.CreatedBy == "flapjack" && s.Status.State == "active" && s.ID != silenced.ID {
				second = s.ID
				return true, ""
			}
		}
		return false, ""
	})
	postAlert(t, amURL, labels, "disk sda full on db-1 again", time.Now())
	waitState(t, db, 10*time.Second, "db-1:DiskFull", "ok", "resolved in Alertmanager while silenced")
	waitSilence(t, amURL, second, "expired")

	out, errOut, _ := flapjack(t, env, "", "status")
	if !strings.Contains(out, "alertmanager_silences_queue") || !strings.Contains(out, "alertmanager_gateway") {
		t.Errorf("status does not report the silence queue and its gateway:\n%s\n%s", out, errOut)
	}
}

func waitSilence(t *testing.T, amURL, id, state string) {
	t.Helper()
	waitUntil(t, 10*time.Second, "silence "+id+" "+state, func() (bool, string) {
		list := silences(t, amURL)
		for _, s := range list {
			if s.ID == id {
				return s.Status.State == state, s.Status.State
			}
		}
		return false, fmt.Sprintf("not listed in %+v", list)
	})
}

// TestPrometheusPushesToFlapjack: a real Prometheus whose alerting block is README's sends a
// rule's alert straight to flapjack: firing is critical, resolution ok, and once Prometheus
// stops the firing alert goes stale after its endsAt.
func TestPrometheusPushesToFlapjack(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	flapjackAddr := flapjackForPrometheus(t, db, "")
	var broken atomic.Int32
	broken.Store(1)
	exporter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "# TYPE flapjack_test_broken gauge\nflapjack_test_broken %d\n", broken.Load())
	}))
	t.Cleanup(exporter.Close)
	exporterAddr := strings.TrimPrefix(exporter.URL, "http://")

	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "rules.yml"), `groups:
  - name: flapjack-test
    rules:
      - alert: ExporterBroken
        expr: flapjack_test_broken == 1
        labels:
          severity: critical
        annotations:
          summary: exporter {{ $labels.instance }} says it is broken
`)
	writeFile(t, filepath.Join(dir, "prometheus.yml"), fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [%q]
scrape_configs:
  - job_name: exporter
    static_configs:
      - targets: [%q]
`, filepath.Join(dir, "rules.yml"), exporterAddr)+fromExample(t, "prometheus-alerting.yml", flapjackAddr))
	promAddr := testbinary.FreeAddr(t)
	// --rules.alert.resend-delay=1s: Prometheus resends every second and its alerts' endsAt is
	// 4 s ahead (4 × max(resend delay, evaluation interval)), so a stop shows within seconds.
	prom := startPeer(t, promAddr, "prometheus", "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+promAddr, "--rules.alert.resend-delay=1s")

	checkID := "127.0.0.1:ExporterBroken"
	summary := "exporter " + exporterAddr + " says it is broken"
	waitState(t, db, 20*time.Second, checkID, "critical", summary)
	broken.Store(0)
	waitState(t, db, 15*time.Second, checkID, "ok", "")
	broken.Store(1)
	waitState(t, db, 15*time.Second, checkID, "critical", summary)

	if err := prom.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	prom.Wait()
	waitState(t, db, 15*time.Second, checkID, "unknown", "stale:")
	t.Logf("stale %s after Prometheus was stopped", time.Since(stopped).Round(time.Millisecond))
}

// TestReadmeShowsThePrometheusExamples: README's From Prometheus blocks are the examples/
// files the tests above give to Alertmanager and Prometheus, byte for byte.
func TestReadmeShowsThePrometheusExamples(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"alertmanager-receiver.yml", "prometheus-alerting.yml"} {
		body, err := os.ReadFile(filepath.Join("..", "..", "examples", name))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(readme), "```yaml\n"+string(body)+"```\n") {
			t.Errorf("README.md does not show examples/%s as a yaml block", name)
		}
	}
}

// TestAlertmanagerSettingsRefused: bad alertmanager.* and receiver.alertmanager.* values stop
// the command with exit status 2 and the setting named.
func TestAlertmanagerSettingsRefused(t *testing.T) {
	t.Parallel()
	env := []string{"FLAPJACK_REDIS_URL=" + testredis.New(t).URL(), "FLAPJACK_HTTP_ADDR=" + testbinary.FreeAddr(t)}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"gateway", "alertmanager", "--alertmanager-url", "ftp://am"}, "alertmanager.url"},
		{[]string{"gateway", "alertmanager", "--alertmanager-url", "http://127.0.0.1:9093", "--alertmanager-sync-interval", "0"}, "alertmanager.sync_interval"},
		{[]string{"api", "--receiver-alertmanager-severity-states", "page"}, "receiver.alertmanager.severity_states"},
		{[]string{"api", "--receiver-alertmanager-info-state", "loud"}, "receiver.alertmanager.info_state"},
	} {
		_, errOut, code := flapjack(t, env, "", c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("flapjack %s: exit %d, stderr %q; want 2 naming %s", strings.Join(c.args, " "), code, errOut, c.want)
		}
	}
}
