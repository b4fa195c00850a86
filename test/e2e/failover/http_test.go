package failover

import (
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/testing/testbinary"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/schema"
)

// TestHTTPWriteEndpointsNeedTheToken covers, through the binary and its environment variables,
// what api's unit tests check on the handler: `server` refuses a non-loopback http.addr without
// http.token before it starts any stage, and with FLAPJACK_HTTP_TOKEN set POST /events wants
// the bearer token while the read endpoints do not. (cmd/flapjack covers the refusal with the
// embedded Redis; here a real Redis shows no stage registered.)
func TestHTTPWriteEndpointsNeedTheToken(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	keys := schema.NewKeys("")
	base := []string{"FLAPJACK_REDIS_URL=" + db.URL(), "FLAPJACK_REDIS_EMBEDDED=never"}

	// 0.0.0.0 without a token: exit 2 naming http.token; nothing registered, nothing listening.
	_, port, _ := net.SplitHostPort(testbinary.FreeAddr(t))
	_, errOut, code := testbinary.Run(t, append(base, "FLAPJACK_HTTP_ADDR=0.0.0.0:"+port), "", 20*time.Second, "server")
	if code != 2 || !strings.Contains(errOut, "http.token") {
		t.Fatalf("server on 0.0.0.0 without a token: exit %d, stderr %q; want 2 naming http.token", code, errOut)
	}
	if left, _ := redis.Strings(db.Do(t, "KEYS", "*"), nil); len(left) != 0 {
		t.Errorf("the refused server wrote to Redis: %v", left)
	}

	// With a token (on loopback, where it is optional but still enforced once set).
	token := "tok-" + randomHex(t)
	addr := testbinary.FreeAddr(t)
	srv := testbinary.Start(t, append(base, "FLAPJACK_HTTP_ADDR="+addr, "FLAPJACK_HTTP_TOKEN="+token), "server")
	srv.WaitLines(t, regexp.MustCompile(`HTTP listening.*"token": true`), 1, 15*time.Second)
	post := func(auth string) int {
		req, _ := http.NewRequest("POST", "http://"+addr+"/events",
			strings.NewReader(`{"entity":"tok-host","check":"API","type":"service","state":"warning"}`))
		req.Header.Set("Content-Type", "application/json")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := httpClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, auth := range []string{"", "Bearer wrong", "Bearer " + token + "x", token, "Basic " + token} {
		if code := post(auth); code != http.StatusUnauthorized {
			t.Errorf("POST /events with Authorization %q: %d, want 401", auth, code)
		}
	}
	if n, _ := redis.Int(db.Do(t, "HGET", keys.EventCounters(), "all"), nil); n != 0 {
		t.Errorf("refused requests reached the executive: event_counters all = %d", n)
	}
	if code := post("Bearer " + token); code != http.StatusAccepted {
		t.Fatalf("POST /events with the token: %d, want 202", code)
	}
	waitUntil(t, 10*time.Second, "the accepted event to be processed", func() bool {
		state, _ := redis.String(db.Do(t, "HGET", keys.Check("tok-host:API"), "state"), nil)
		return state == schema.StateWarning
	})
	for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
		if code := getStatus("http://" + addr + path); code != 200 {
			t.Errorf("GET %s without a token: %d, want 200", path, code)
		}
	}
	if strings.Contains(srv.Text(true)+srv.Text(false), token) {
		t.Error("the server printed the HTTP token")
	}
	if code := srv.Stop(t); code != 0 {
		t.Errorf("server exited %d after SIGTERM", code)
	}
}
