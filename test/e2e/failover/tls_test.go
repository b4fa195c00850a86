package failover

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/testing/testbinary"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/schema"
)

func randomHex(t *testing.T) string {
	t.Helper()
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// secrets are the forms a password can take in a URL or in output.
func secrets(user, password string) []string {
	u := url.UserPassword(user, password)
	return []string{password, url.QueryEscape(password), url.PathEscape(password), u.String()}
}

// assertNoSecret fails if text holds any of the secrets.
func assertNoSecret(t *testing.T, what, text string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if s != "" && strings.Contains(text, s) {
			t.Errorf("%s contains the secret %q:\n%s", what, s, text)
		}
	}
}

// TestTLSAndAuthEndToEnd runs `flapjack executive` and `flapjack status --json` against a
// TLS-only redis-server that accepts only an ACL user with a password (the default user is off),
// through FLAPJACK_REDIS_URL=rediss://user:pass@host:port/0 and FLAPJACK_REDIS_TLS_CA_FILE. An
// event is processed; a wrong password and a missing CA fail with a clear error; the password
// never shows in any output (logs show the redacted URL).
func TestTLSAndAuthEndToEnd(t *testing.T) {
	t.Parallel()
	files := testredis.NewTLSFiles(t)
	const user = "flapjack"
	// The "/" must be percent-encoded in the URL, so both spellings are looked for in output.
	password := "Tls-S3cret/" + randomHex(t)
	wrong := "Wrong-S3cret/" + randomHex(t)
	srv := testredis.StartTLSServer(t, files,
		"--user", "default", "off",
		"--user", user, "on", ">"+password, "~*", "&*", "+@all")
	secretsOf := append(secrets(user, password), secrets(user, wrong)...)

	rediss := func(pw string) string {
		return (&url.URL{Scheme: "rediss", User: url.UserPassword(user, pw), Host: srv.Addr, Path: "/0"}).String()
	}
	redacted := "rediss://" + user + ":xxxxx@" + srv.Addr + "/0"
	good := []string{"FLAPJACK_REDIS_URL=" + rediss(password), "FLAPJACK_REDIS_TLS_CA_FILE=" + files.CAFile,
		"FLAPJACK_INSTANCE_HEARTBEAT=1s"}
	wrongPassword := []string{"FLAPJACK_REDIS_URL=" + rediss(wrong), "FLAPJACK_REDIS_TLS_CA_FILE=" + files.CAFile}
	noCA := []string{"FLAPJACK_REDIS_URL=" + rediss(password)}

	// The test's own connection, to push an event and look at the result.
	conn, err := redis.Dial("tcp", srv.Addr, redis.DialUseTLS(true), redis.DialTLSConfig(files.ClientConfig()),
		redis.DialUsername(user), redis.DialPassword(password), redis.DialConnectTimeout(2*time.Second),
		redis.DialReadTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Plaintext is refused: the server speaks only TLS.
	if plain, err := redis.Dial("tcp", srv.Addr, redis.DialConnectTimeout(time.Second), redis.DialReadTimeout(time.Second)); err == nil {
		if _, err := plain.Do("PING"); err == nil {
			t.Fatal("the TLS server answered a plaintext PING")
		}
		plain.Close()
	}

	// The good configuration: the executive processes an event.
	x := testbinary.Start(t, good, "executive")
	x.WaitLines(t, regexp.MustCompile(`stage started`), 1, 15*time.Second)
	using := x.WaitLines(t, regexp.MustCompile(`using Redis`), 1, time.Second)[0]
	if !strings.Contains(using, redacted) {
		t.Errorf("the `using Redis` line does not show the redacted URL %s: %s", redacted, using)
	}
	keys := schema.NewKeys("")
	if _, err := conn.Do("LPUSH", keys.Events(),
		`{"entity":"tls-host","check":"HTTPS","type":"service","state":"critical","summary":"over TLS"}`); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 10*time.Second, "the event to be processed over TLS", func() bool {
		state, _ := redis.String(conn.Do("HGET", keys.Check("tls-host:HTTPS"), "state"))
		return state == schema.StateCritical
	})
	if n, _ := redis.Int(conn.Do("HGET", keys.EventCounters(), "all")); n != 1 {
		t.Errorf("event_counters all = %d, want 1", n)
	}

	// status --json over TLS with the password: healthy, the executive listed, no secret.
	out, errOut, code := testbinary.Run(t, good, "", 20*time.Second, "status", "--json")
	var st struct {
		Redis     string `json:"redis"`
		Healthy   bool   `json:"healthy"`
		Failing   int    `json:"failing_checks"`
		Instances []struct {
			Stage string `json:"stage"`
		} `json:"instances"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil || code != 0 || !st.Healthy ||
		len(st.Instances) != 1 || st.Instances[0].Stage != "executive" || st.Failing != 1 {
		t.Errorf("status --json: exit %d, %v\n%s\n%s", code, err, out, errOut)
	}
	if st.Redis != redacted {
		t.Errorf("status --json shows redis %q, want %q", st.Redis, redacted)
	}
	assertNoSecret(t, "status --json stdout", out, secretsOf...)
	assertNoSecret(t, "status --json stderr", errOut, secretsOf...)

	if code := x.Stop(t); code != 0 {
		t.Errorf("executive exited %d after SIGTERM", code)
	}
	assertNoSecret(t, "executive stdout", x.Text(false), secretsOf...)
	assertNoSecret(t, "executive stderr", x.Text(true), secretsOf...)

	// A wrong password: one-shot commands and the executive fail with an authentication error
	// that repeats neither password nor user-info.
	out, errOut, code = testbinary.Run(t, wrongPassword, "", 20*time.Second, "status", "--json")
	if code == 0 || !regexp.MustCompile(`WRONGPASS|invalid username-password`).MatchString(errOut) {
		t.Errorf("status with a wrong password: exit %d, stderr %q; want non-zero and the WRONGPASS error", code, errOut)
	}
	assertNoSecret(t, "status (wrong password) stdout", out, secretsOf...)
	assertNoSecret(t, "status (wrong password) stderr", errOut, secretsOf...)

	// Without the CA file the server's certificate is not trusted.
	out, errOut, code = testbinary.Run(t, noCA, "", 20*time.Second, "status", "--json")
	if code == 0 || !strings.Contains(errOut, "certificate") {
		t.Errorf("status without the CA: exit %d, stderr %q; want non-zero and a certificate error", code, errOut)
	}
	assertNoSecret(t, "status (no CA) stdout", out, secretsOf...)
	assertNoSecret(t, "status (no CA) stderr", errOut, secretsOf...)

	// The executive, a long-running command, with either mistake: it should stop with the
	// reason rather than retry a configuration that cannot work. Both run at once.
	bad := testbinary.Start(t, wrongPassword, "executive")
	untrusting := testbinary.Start(t, noCA, "executive")
	badCode, untrustingCode := bad.WaitExit(10*time.Second), untrusting.WaitExit(time.Second)
	if badCode <= 0 {
		t.Errorf("executive with a wrong password: exit code %d after 10 s (-1: still running, retrying); want a non-zero exit", badCode)
	}
	if !regexp.MustCompile(`WRONGPASS|invalid username-password`).MatchString(bad.Text(true)) {
		t.Errorf("executive with a wrong password does not say why:\n%s", bad.Text(true))
	}
	if untrustingCode <= 0 {
		t.Errorf("executive without the CA: exit code %d after 10 s (-1: still running, retrying); want a non-zero exit", untrustingCode)
	}
	if !strings.Contains(untrusting.Text(true), "certificate") {
		t.Errorf("executive without the CA does not name the certificate problem:\n%s", untrusting.Text(true))
	}
	for _, p := range []*testbinary.Process{bad, untrusting} {
		p.Kill()
		assertNoSecret(t, "executive stderr", p.Text(true), secretsOf...)
		assertNoSecret(t, "executive stdout", p.Text(false), secretsOf...)
	}
}
