package receiver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/events"
	"github.com/flapjackgo/flapjack/internal/testing/testbinary"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/schema"
)

func TestParseNSCALine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		line    string
		want    schema.Event
		reasons []string // nil: accepted
	}{
		{name: "service result as nsca 2.10 writes it (space after the time)",
			line: "[1795575299] PROCESS_SERVICE_CHECK_RESULT;web-01;DISK;0;OK - 40% used|used=40%;80;90\n",
			want: svc("web-01", "DISK", "ok", 1795575299, "OK - 40% used", "", "used=40%;80;90")},
		{name: "TAB after the time, as Flapjack 1.x expected",
			line: "[1795575299]\tPROCESS_SERVICE_CHECK_RESULT;Web-01;DISK;1;WARNING - 85% used",
			want: svc("web-01", "DISK", "warning", 1795575299, "WARNING - 85% used", "", "")},
		{name: "critical; semicolons in the output are kept",
			line: "[1795575299] PROCESS_SERVICE_CHECK_RESULT;db-01;MySQL: lag;2;lag 412s; slave stopped|lag=412s;60;300",
			want: svc("db-01", "MySQL: lag", "critical", 1795575299, "lag 412s; slave stopped", "", "lag=412s;60;300")},
		{name: "unknown; long output after \\n becomes details, \\\\ a backslash",
			line: `[1795575299] PROCESS_SERVICE_CHECK_RESULT;db-01;backup;3;UNKNOWN - C:\\backup|age=0\nline one\\n\nline two|x=1` + "\r\n",
			want: svc("db-01", "backup", "unknown", 1795575299, `UNKNOWN - C:\backup`, "line one\\n\nline two|x=1", "age=0")},
		{name: "host up", line: "[1795575299] PROCESS_HOST_CHECK_RESULT;web-01;0;PING OK - rta 0.1ms",
			want: svc("web-01", "HOST", "ok", 1795575299, "PING OK - rta 0.1ms", "", "")},
		{name: "host down", line: "[1795575299] PROCESS_HOST_CHECK_RESULT;web-01;1;host down",
			want: svc("web-01", "HOST", "critical", 1795575299, "host down", "", "")},
		{name: "host unreachable", line: "[1795575299] PROCESS_HOST_CHECK_RESULT;web-01;2;unreachable|pl=100%",
			want: svc("web-01", "HOST", "critical", 1795575299, "unreachable", "", "pl=100%")},
		{name: "no separator after the time", line: "[1795575299]PROCESS_HOST_CHECK_RESULT;web-01;0;ok",
			reasons: []string{"no space or TAB after [time]"}},
		{name: "unknown command", line: "[1795575299] SCHEDULE_FORCED_SVC_CHECK;web-01;DISK;1795575299",
			reasons: []string{`command "SCHEDULE_FORCED_SVC_CHECK" is neither PROCESS_SERVICE_CHECK_RESULT nor PROCESS_HOST_CHECK_RESULT`}},
		{name: "return code out of range", line: "[1795575299] PROCESS_SERVICE_CHECK_RESULT;web-01;DISK;7;odd",
			reasons: []string{`return code "7" is not 0 (ok), 1 (warning), 2 (critical) or 3 (unknown)`}},
		{name: "host return code 3", line: "[1795575299] PROCESS_HOST_CHECK_RESULT;web-01;3;odd",
			reasons: []string{`host return code "3" is not 0 (up), 1 (down) or 2 (unreachable)`}},
		{name: "too few fields", line: "[1795575299] PROCESS_SERVICE_CHECK_RESULT;web-01;DISK",
			reasons: []string{"PROCESS_SERVICE_CHECK_RESULT has 2 of its 4 fields (host;service;return code;output)"}},
		{name: "bad time and command together", line: "[17x] PROCESS_SERVICE_CHEK_RESULT;a;b;0;c",
			reasons: []string{`time "17x" is not a string of digits`, `command "PROCESS_SERVICE_CHEK_RESULT" is neither PROCESS_SERVICE_CHECK_RESULT nor PROCESS_HOST_CHECK_RESULT`}},
		{name: "no time", line: "PROCESS_HOST_CHECK_RESULT;web-01;0;ok",
			reasons: []string{`line does not start with [time]: "PROCESS_HOST_CHECK_RESULT;web-01;0;ok"`}},
		{name: "unclosed time", line: "[1795575299 PROCESS_HOST_CHECK_RESULT;web-01;0;ok",
			reasons: []string{"line does not start with [time]: no closing ]"}},
		{name: "event rules apply", line: "[1795575299] PROCESS_SERVICE_CHECK_RESULT;a:b; ;0;ok",
			reasons: []string{"check must not be empty"}},
		{name: "blank", line: " \n", reasons: []string{"blank line"}},
		{name: "invalid UTF-8", line: "[1795575299] PROCESS_HOST_CHECK_RESULT;web-\xff;0;ok", reasons: []string{"line is not valid UTF-8"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseNSCALine(tc.line)
			if tc.reasons == nil {
				if err != nil {
					t.Fatalf("rejected: %v", err)
				}
				if !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("\n got %+v\nwant %+v", got, tc.want)
				}
				return
			}
			var rej *schema.RejectError
			if !errors.As(err, &rej) {
				t.Fatalf("got error %v (event %+v), want a *schema.RejectError", err, got)
			}
			if !reflect.DeepEqual(rej.Reasons, tc.reasons) {
				t.Fatalf("reasons\n got %q\nwant %q", rej.Reasons, tc.reasons)
			}
		})
	}
}

// FuzzParseNSCALine: no input panics, every refusal has reasons, and whatever is accepted
// re-validates exactly as the executive will see it.
func FuzzParseNSCALine(f *testing.F) {
	f.Add("[1795575299] PROCESS_SERVICE_CHECK_RESULT;web-01;DISK;0;OK - 40% used|used=40%;80;90")
	f.Add("[1795575299]\tPROCESS_HOST_CHECK_RESULT;web-01;1;host down\\nmore")
	f.Fuzz(func(t *testing.T, line string) {
		ev, err := ParseNSCALine(line)
		if err != nil {
			if len(schema.RejectReasons(err)) == 0 {
				t.Fatalf("error without reasons: %v", err)
			}
			return
		}
		again, err := schema.ParseEvent(ev.AppendJSON(nil))
		if err != nil || !reflect.DeepEqual(again, ev) {
			t.Fatalf("accepted %q as %+v, which parses back to %+v, %v", line, ev, again, err)
		}
	})
}

// nscaDaemon runs the real nsca daemon (Debian package nsca) in the foreground on addr with a
// private configuration whose command_file is fifo, as an unprivileged user: nobody when the
// tests run as root (nsca drops to nsca_user), else the tests' own user.
func nscaDaemon(t *testing.T, dir, addr, fifo string) {
	t.Helper()
	const daemon = "/usr/sbin/nsca"
	if _, err := os.Stat(daemon); err != nil {
		t.Fatalf("%s is missing: run scripts/test-deps.sh (apt-get install -y nsca nsca-client): %v", daemon, err)
	}
	runAs, group := "nobody", "nogroup"
	if os.Getuid() != 0 {
		u, err := user.Current()
		if err != nil {
			t.Fatal(err)
		}
		g, err := user.LookupGroupId(u.Gid)
		if err != nil {
			t.Fatal(err)
		}
		runAs, group = u.Username, g.Name
	}
	host, port, _ := net.SplitHostPort(addr)
	cfg := filepath.Join(dir, "nsca.cfg")
	conf := fmt.Sprintf("pid_file=%s\nserver_address=%s\nserver_port=%s\nnsca_user=%s\nnsca_group=%s\ndebug=1\n"+
		"command_file=%s\nalternate_dump_file=%s\naggregate_writes=0\nappend_to_file=0\nmax_packet_age=30\ndecryption_method=0\n",
		filepath.Join(dir, "nsca.pid"), host, port, runAs, group, fifo, filepath.Join(dir, "nsca.dump"))
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(daemon, "-f", "-c", cfg, "--single")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	waitFor(t, "nsca to listen on "+addr, 5*time.Second, func() bool {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
}

// sendNSCA sends results with the real send_nsca client (Debian package nsca-client), each
// TAB-separated as send_nsca reads it and ended by ETB, so that an output may span lines.
func sendNSCA(t *testing.T, dir, addr string, results ...string) {
	t.Helper()
	cfg := filepath.Join(dir, "send_nsca.cfg")
	if err := os.WriteFile(cfg, []byte("encryption_method=0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(addr)
	for _, r := range results { // one connection per result, as a check's command would send it
		cmd := exec.Command("/usr/sbin/send_nsca", "-H", host, "-p", port, "-c", cfg)
		cmd.Stdin = strings.NewReader(r + "\x17")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("send_nsca %q: %v: %s", r, err, out)
		}
	}
}

// TestRealNSCA: results sent with the real send_nsca to the real nsca daemon, whose
// command_file is the receiver's pipe, arrive on Redis as the right events, in order; nsca
// opens and closes the pipe for every result without the receiver losing any; a result with a
// return code out of range is refused with its reason.
func TestRealNSCA(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// nsca runs as another user when the tests run as root: it must reach the pipe.
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fifo := filepath.Join(dir, "nsca.fifo")
	db := testredis.New(t)
	pub := events.NewPublisher(db.Pool, schema.NewKeys(""), "")
	stats := NewNSCAStats(nil)
	var rej rejections
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- RunNSCA(ctx, NagiosOptions{FIFO: fifo, FIFOMode: 0o666, Stats: stats, OnReject: rej.add}, pub, zap.NewNop())
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("RunNSCA: %v", err)
		}
	}()
	waitOpen(t, stats)
	addr := testbinary.FreeAddr(t)
	nscaDaemon(t, dir, addr, fifo)

	sendNSCA(t, dir, addr,
		"web-01\tDISK\t0\tOK - 40% used|used=40%;80;90",
		"web-01\tDISK\t1\tWARNING - 85% used|used=85%;80;90",
		"db-01\tMySQL: lag\t2\tlag 412s|lag=412s;60;300\nslave io: stopped\nslave sql: running C:\\",
		"db-01\tbackup\t3\tUNKNOWN - no status",
		"web-01\t0\tPING OK",
		"router-1\t1\tCRITICAL - host down",
		"router-2\t2\tunreachable",
		"web-01\tDISK\t7\tnot a return code",
	)
	want := []string{"web-01:DISK ok OK - 40% used|used=40%;80;90|", "web-01:DISK warning WARNING - 85% used|used=85%;80;90|",
		"db-01:MySQL: lag critical lag 412s|lag=412s;60;300|slave io: stopped\nslave sql: running C:\\", "db-01:backup unknown UNKNOWN - no status||",
		"web-01:HOST ok PING OK||", "router-1:HOST critical CRITICAL - host down||", "router-2:HOST critical unreachable||"}
	var got []string
	waitFor(t, "7 events on Redis and 1 refusal", 10*time.Second, func() bool {
		raws, err := redis.Strings(db.Do(t, "LRANGE", pub.Key(), 0, -1), nil)
		if err != nil {
			t.Fatal(err)
		}
		got = got[:0]
		for _, raw := range slices.Backward(raws) {
			ev, err := schema.ParseEvent([]byte(raw))
			if err != nil {
				t.Fatalf("queued %s: %v", raw, err)
			}
			if now := time.Now().Unix(); ev.Time < now-60 || ev.Time > now+1 {
				t.Fatalf("event time %d is not nsca's time of the result (now %d)", ev.Time, now)
			}
			got = append(got, fmt.Sprintf("%s %s %s|%s|%s", ev.ID(), ev.State, ev.Summary, ev.Perfdata, ev.Details))
		}
		return len(got) >= len(want) && len(rej.get()) >= 1
	})
	if !slices.Equal(got, want) {
		t.Fatalf("queued\n %q\nwant\n %q", got, want)
	}
	r := rej.get()
	if len(r) != 1 || !strings.Contains(r[0].Input, "PROCESS_SERVICE_CHECK_RESULT;web-01;DISK;7;not a return code") ||
		!slices.Equal(r[0].Reasons, []string{`return code "7" is not 0 (ok), 1 (warning), 2 (critical) or 3 (unknown)`}) {
		t.Fatalf("rejections %+v", r)
	}
	if stats.LinesRead.Load() != 8 || stats.Enqueued.Load() != 7 || stats.Rejected.Load() != 1 {
		t.Errorf("stats: read %d, enqueued %d, rejected %d; want 8, 7, 1", stats.LinesRead.Load(), stats.Enqueued.Load(), stats.Rejected.Load())
	}
}
