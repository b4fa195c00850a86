//go:build linux

package receiver

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/events"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/schema"
)

// nagios4 runs a real Nagios 4 with a private configuration in a temporary directory.
type nagios4 struct {
	t    *testing.T
	dir  string
	cfg  string
	cmd  *exec.Cmd
	done chan struct{}
}

const nagios4Bin = "/usr/sbin/nagios4"

// newNagios4 writes the private configuration: etc/nagios/flapjack.cfg with the pipe path
// changed, four services whose active checks end in each state with perfdata and long output,
// and passive-only services fed through the external command file.
func newNagios4(t *testing.T, fifo string) *nagios4 {
	t.Helper()
	if _, err := os.Stat(nagios4Bin); err != nil {
		t.Fatalf("%s not installed (scripts/test-deps.sh installs nagios4-core): %v", nagios4Bin, err)
	}
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "checkresults"), 0o755)
	fragment, err := os.ReadFile("../etc/nagios/flapjack.cfg")
	if err != nil {
		t.Fatal(err)
	}
	u, _ := user.Current()
	g, _ := user.LookupGroupId(u.Gid)
	script := filepath.Join(dir, "fake_check")
	os.WriteFile(script, []byte("#!/bin/sh\nprintf '%s result | value=%s;1;2;0\\nfirst long line\\nsecond long line\\n' \"$2\" \"$1\"\nexit \"$1\"\n"), 0o755)
	var obj strings.Builder
	fmt.Fprintf(&obj, `define command { command_name fake
  command_line %s $ARG1$ $ARG2$ }
define command { command_name noop
  command_line /bin/true }
define timeperiod { timeperiod_name always
  alias always
  sunday 00:00-24:00
  monday 00:00-24:00
  tuesday 00:00-24:00
  wednesday 00:00-24:00
  thursday 00:00-24:00
  friday 00:00-24:00
  saturday 00:00-24:00 }
define contact { contact_name nobody
  host_notifications_enabled 0
  service_notifications_enabled 0
  host_notification_period always
  service_notification_period always
  host_notification_options n
  service_notification_options n
  host_notification_commands noop
  service_notification_commands noop }
define host { host_name web-01
  address 127.0.0.1
  check_command fake!0!UP
  max_check_attempts 1
  check_interval 1
  retry_interval 1
  check_period always
  contacts nobody
  notification_period always
  notifications_enabled 0 }
`, script)
	for code, name := range []string{"OK", "WARNING", "CRITICAL", "UNKNOWN"} {
		fmt.Fprintf(&obj, `define service { host_name web-01
  service_description active-%s
  check_command fake!%d!%s
  max_check_attempts 1
  check_interval 1
  retry_interval 1
  check_period always
  contacts nobody
  notification_period always
  notifications_enabled 0 }
`, strings.ToLower(name), code, name)
	}
	for i := range 10 {
		fmt.Fprintf(&obj, `define service { host_name web-01
  service_description passive-%d
  check_command noop
  active_checks_enabled 0
  passive_checks_enabled 1
  max_check_attempts 1
  check_interval 1
  retry_interval 1
  check_period always
  contacts nobody
  notification_period always
  notifications_enabled 0 }
`, i)
	}
	os.WriteFile(filepath.Join(dir, "objects.cfg"), []byte(strings.NewReplacer(" }\n", "\n}\n", "{ ", "{\n  ").Replace(obj.String())), 0o644)
	main := fmt.Sprintf(`log_file=%[1]s/nagios.log
cfg_file=%[1]s/objects.cfg
object_cache_file=%[1]s/objects.cache
precached_object_file=%[1]s/objects.precache
status_file=%[1]s/status.dat
lock_file=%[1]s/nagios.pid
temp_file=%[1]s/nagios.tmp
temp_path=%[1]s
state_retention_file=%[1]s/retention.dat
retain_state_information=0
check_result_path=%[1]s/checkresults
command_file=%[1]s/nagios.cmd
check_external_commands=1
nagios_user=%[2]s
nagios_group=%[3]s
service_inter_check_delay_method=n
host_inter_check_delay_method=n
max_service_check_spread=1
max_host_check_spread=1
enable_notifications=0
use_syslog=0
`, dir, u.Username, g.Name) + strings.ReplaceAll(string(fragment), "/var/lib/nagios4/flapjack.fifo", fifo)
	cfg := filepath.Join(dir, "nagios.cfg")
	os.WriteFile(cfg, []byte(main), 0o644)
	n := &nagios4{t: t, dir: dir, cfg: cfg}
	if out, err := exec.Command(nagios4Bin, "-v", cfg).CombinedOutput(); err != nil {
		t.Fatalf("nagios4 -v refused the configuration: %v\n%s", err, out)
	}
	t.Cleanup(n.stop)
	return n
}

func (n *nagios4) start() {
	n.t.Helper()
	n.cmd = exec.Command(nagios4Bin, n.cfg)
	n.cmd.Dir = n.dir
	out, _ := os.Create(filepath.Join(n.dir, "stdout.log"))
	n.cmd.Stdout, n.cmd.Stderr = out, out
	if err := n.cmd.Start(); err != nil {
		n.t.Fatal(err)
	}
	n.done = make(chan struct{})
	go func(c *exec.Cmd, done chan struct{}) { c.Wait(); close(done) }(n.cmd, n.done)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if st, err := os.Stat(filepath.Join(n.dir, "nagios.cmd")); err == nil && st.Mode()&os.ModeNamedPipe != 0 {
			return
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(n.dir, "nagios.log"))
			n.t.Fatalf("nagios4 did not create its command file\n%s", log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (n *nagios4) stop() {
	if n.cmd == nil {
		return
	}
	n.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-n.done:
	case <-time.After(10 * time.Second):
		n.cmd.Process.Kill()
		<-n.done
	}
	n.cmd = nil
}

func (n *nagios4) reload() {
	n.t.Helper()
	if err := n.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		n.t.Fatal(err)
	}
}

// submit writes passive results to the external command file; pace 0 writes them as fast as
// Nagios takes them.
func (n *nagios4) submit(round string, count int, pace time.Duration) {
	n.t.Helper()
	w, err := os.OpenFile(filepath.Join(n.dir, "nagios.cmd"), os.O_WRONLY, 0)
	if err != nil {
		n.t.Fatal(err)
	}
	defer w.Close()
	bw := bufio.NewWriter(w)
	now := time.Now().Unix()
	for i := range count {
		fmt.Fprintf(bw, "[%d] PROCESS_SERVICE_CHECK_RESULT;web-01;passive-%d;%d;%s-%d|n=%d\n", now, i%10, i%3, round, i, i)
		if pace > 0 && i%20 == 19 {
			bw.Flush()
			time.Sleep(pace)
		}
	}
	if err := bw.Flush(); err != nil {
		n.t.Fatal(err)
	}
}

// queued takes every event off the list and returns them.
func queued(t *testing.T, pool *redis.Pool, key string) []schema.Event {
	t.Helper()
	c := pool.Get()
	defer c.Close()
	c.Send("MULTI")
	c.Send("LRANGE", key, 0, -1)
	c.Send("DEL", key)
	vals, err := redis.Values(c.Do("EXEC"))
	if err != nil {
		return nil // Redis away
	}
	raws, _ := redis.ByteSlices(vals[0], nil)
	var out []schema.Event
	for i := len(raws) - 1; i >= 0; i-- { // LPUSHed: oldest at the tail
		ev, err := schema.ParseEvent(raws[i])
		if err != nil {
			t.Fatalf("queued event %s does not validate: %v", raws[i], err)
		}
		out = append(out, ev)
	}
	return out
}

// collector gathers a round's passive results by summary.
type collector struct {
	t    *testing.T
	pool *redis.Pool
	key  string
	seen map[string]int
	all  []schema.Event
}

func (c *collector) poll() {
	for _, ev := range queued(c.t, c.pool, c.key) {
		c.all = append(c.all, ev)
		if strings.HasPrefix(ev.Check, "passive-") {
			c.seen[ev.Summary]++
		}
	}
}

func (c *collector) waitRound(round string, count int, timeout time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		c.poll()
		got := 0
		for i := range count {
			if c.seen[fmt.Sprintf("%s-%d", round, i)] > 0 {
				got++
			}
		}
		if got == count {
			break
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("round %s: %d of %d results arrived within %v", round, got, count, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for i := range count {
		if n := c.seen[fmt.Sprintf("%s-%d", round, i)]; n != 1 {
			c.t.Errorf("round %s: result %d arrived %d times", round, i, n)
		}
	}
}

// TestRealNagios4 runs Debian's nagios4 against RunNagios and a real Redis.
func TestRealNagios4(t *testing.T) {
	srv := testredis.StartServer(t)
	db := srv.NewDB(t)
	pub := events.NewPublisher(db.Pool, schema.NewKeys(""), "")
	fifo := filepath.Join(t.TempDir(), "flapjack.fifo") // the receiver creates it
	spool, err := OpenSpool(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	stats := NewNagiosStats(nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- RunNagios(ctx, NagiosOptions{FIFO: fifo, Spool: spool, Stats: stats}, pub, zap.NewNop())
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("RunNagios: %v", err)
		}
	}()
	waitFor(t, "the receiver to create the pipe", 5*time.Second, func() bool { return stats.PipeSize.Load() > 0 })
	t.Logf("pipe size obtained: %d bytes", stats.PipeSize.Load())

	n := newNagios4(t, fifo)
	n.start()
	col := &collector{t: t, pool: db.Pool, key: pub.Key(), seen: map[string]int{}}

	// Active checks in all four states, and the host, with perfdata and long output.
	want := map[string]string{"active-ok": "ok", "active-warning": "warning", "active-critical": "critical", "active-unknown": "unknown", "HOST": "ok"}
	deadline := time.Now().Add(20 * time.Second)
	got := map[string]schema.Event{}
	for len(got) < len(want) {
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(n.dir, "nagios.log"))
			t.Fatalf("active results seen: %v\n%s", got, log)
		}
		col.poll()
		for _, ev := range col.all {
			if _, ok := want[ev.Check]; ok {
				got[ev.Check] = ev
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	for check, state := range want {
		ev := got[check]
		if ev.Entity != "web-01" || ev.State != state || ev.Perfdata == "" || ev.Details != "first long line\nsecond long line" {
			t.Errorf("%s: got %+v, want state %s with perfdata and two lines of long output", check, ev, state)
		}
	}

	const count = 2000
	n.submit("paced", count, 2*time.Millisecond)
	n.reload() // straight after the round: results still on their way
	col.waitRound("paced", count, 30*time.Second)

	n.submit("fast", count, 0)
	col.waitRound("fast", count, 30*time.Second)
	// A full restart (the command file goes with it, so the round must be taken in first; our
	// pipe stays open throughout).
	n.stop()
	n.start()

	srv.Kill() // a Redis outage of 30 s, as long as the issue asks the spool to cover
	outageStart := time.Now()
	n.submit("outage", count, 0)
	time.Sleep(30*time.Second - time.Since(outageStart))
	if stats.Spooled.Load() == 0 {
		t.Errorf("nothing spooled during the Redis outage")
	}
	srv.Restart(t)
	col.waitRound("outage", count, 30*time.Second)
	if d := stats.Dropped.Load(); d != 0 {
		t.Errorf("%d events dropped", d)
	}
	t.Logf("lines read %d, enqueued %d, spooled %d, rejected %d", stats.LinesRead.Load(), stats.Enqueued.Load(), stats.Spooled.Load(), stats.Rejected.Load())
}
