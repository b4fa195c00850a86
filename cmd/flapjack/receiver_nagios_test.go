package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/internal/testing/testbinary"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/schema"
	"github.com/gomodule/redigo/redis"
)

// writePipe writes lines into a named pipe the receiver holds open.
func writePipe(t *testing.T, path string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(strings.Join(lines, "\n") + "\n"); err != nil {
		t.Fatal(err)
	}
}

// TestNagiosReceiverStartsWhileRedisIsDown: `flapjack receiver nagios` started while Redis does
// not answer opens its pipe and reads, keeping the results in its spool, and queues them in
// order once a real redis-server starts on the configured address.
func TestNagiosReceiverStartsWhileRedisIsDown(t *testing.T) {
	t.Parallel()
	srv := testredis.StartServer(t)
	db := srv.NewDB(t)
	srv.Kill() // the address is known; nothing answers there until Restart
	dir := t.TempDir()
	fifo, spool := filepath.Join(dir, "flapjack.fifo"), filepath.Join(dir, "spool")
	p := testbinary.Start(t, []string{"FLAPJACK_REDIS_URL=" + db.URL(), "FLAPJACK_RECEIVER_NAGIOS_SPOOL_DIR=" + spool},
		"receiver", "nagios", "--fifo", fifo)
	p.WaitMatch(t, true, regexp.MustCompile(`FIFO open; reading`), 10*time.Second)
	var lines, want []string
	for i := range 50 {
		lines = append(lines, fmt.Sprintf("[SERVICEPERFDATA]\t1700000000\tweb-%02d\tHTTP\tOK\t0.01\t0.1\tHTTP OK\t\t", i))
		want = append(want, fmt.Sprintf("web-%02d:HTTP", i))
	}
	writePipe(t, fifo, lines...)
	deadline := time.Now().Add(10 * time.Second)
	for spooled(t, spool) < len(lines) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d results spooled with Redis down\n%s", spooled(t, spool), len(lines), p.Text(true))
		}
		time.Sleep(10 * time.Millisecond)
	}
	srv.Restart(t)
	waitQueued(t, db, want, 15*time.Second)
	if n := spooled(t, spool); n != 0 {
		t.Errorf("%d results left in the spool", n)
	}
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d\n%s", code, p.Text(true))
	}
}

// TestNagiosReceiverStoppedDuringAnOutageExitsZero: SIGTERM while Redis is away is a clean stop
// (systemd must not count it as a failure); what was read stays in the spool for the next start.
func TestNagiosReceiverStoppedDuringAnOutageExitsZero(t *testing.T) {
	t.Parallel()
	srv := testredis.StartServer(t)
	db := srv.NewDB(t)
	srv.Kill()
	dir := t.TempDir()
	fifo, spool := filepath.Join(dir, "flapjack.fifo"), filepath.Join(dir, "spool")
	p := testbinary.Start(t, []string{"FLAPJACK_REDIS_URL=" + db.URL(), "FLAPJACK_RECEIVER_NAGIOS_SPOOL_DIR=" + spool},
		"receiver", "nagios", "--fifo", fifo)
	p.WaitMatch(t, true, regexp.MustCompile(`FIFO open; reading`), 10*time.Second)
	writePipe(t, fifo, "[SERVICEPERFDATA]\t1700000000\tweb-01\tHTTP\tCRITICAL\t0.01\t0.1\tHTTP down\t\t")
	deadline := time.Now().Add(10 * time.Second)
	for spooled(t, spool) < 1 {
		if time.Now().After(deadline) {
			t.Fatalf("nothing spooled with Redis down\n%s", p.Text(true))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM during a Redis outage\n%s", code, p.Text(true))
	}
	if n := spooled(t, spool); n != 1 {
		t.Errorf("%d results in the spool after the stop, want 1", n)
	}
}

// TestReceiversKeepWhatTheyReject: a line the Nagios receiver refuses, and a record `receiver
// json` refuses, are kept in events_rejected:YYYYMMDDHH with their reasons and source in
// events_rejected_reasons, as the executive keeps the events it refuses; the good ones are queued.
func TestReceiversKeepWhatTheyReject(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	env := []string{"FLAPJACK_REDIS_URL=" + db.URL()}
	fifo := filepath.Join(t.TempDir(), "flapjack.fifo")
	p := testbinary.Start(t, env, "receiver", "nagios", "--fifo", fifo)
	p.WaitMatch(t, true, regexp.MustCompile(`FIFO open; reading`), 10*time.Second)
	writePipe(t, fifo, "[SERVICEPERFDATA]\t1700000000\tweb-01\tHTTP\tOK\t0.01\t0.1\tHTTP OK\t\t", "[SERVICEPERFDATA]\tnot enough fields")
	waitQueued(t, db, []string{"web-01:HTTP"}, 10*time.Second)
	if _, errOut, code := flapjack(t, env, `{"entity":"db-01","check":"MySQL","state":"sideways"}`, "receiver", "json"); code != 1 {
		t.Fatalf("receiver json with an invalid record: exit %d, want 1\n%s", code, errOut)
	}
	keys := schema.NewKeys("")
	sources := map[string]string{}
	deadline := time.Now().Add(10 * time.Second)
	for len(sources) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("rejections kept: %v\n%s", sources, p.Text(true))
		}
		time.Sleep(20 * time.Millisecond)
		whys, _ := redis.Strings(db.Do(t, "LRANGE", keys.EventsRejectedReasons(time.Now()), 0, -1), nil)
		for _, w := range whys {
			var r schema.RejectedReason
			if err := json.Unmarshal([]byte(w), &r); err != nil {
				t.Fatal(err)
			}
			sources[r.Source] = r.Event + " :: " + strings.Join(r.Reasons, "; ")
		}
	}
	if !strings.Contains(sources["nagios"], "not enough fields") || !strings.Contains(sources["json"], "sideways") {
		t.Errorf("rejections kept: %v", sources)
	}
	if n, _ := redis.Int(db.Do(t, "LLEN", keys.EventsRejected(time.Now())), nil); n != 2 {
		t.Errorf("events_rejected holds %d inputs, want 2", n)
	}
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d", code)
	}
}
