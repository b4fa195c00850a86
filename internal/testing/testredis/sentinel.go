package testredis

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

// SentinelOptions shape StartSentinelSet. Zero values give one master, one replica and three
// sentinels monitoring "mymaster" with quorum 2, down-after 1 s and failover-timeout 5 s.
type SentinelOptions struct {
	MasterName string // default "mymaster"
	Sentinels  int    // default 3
	Quorum     int    // default 2
	// MasterPassword sets requirepass (and masterauth) on master and replica, and
	// `sentinel auth-pass` on the sentinels.
	MasterPassword string
	// SentinelPassword sets requirepass on the sentinels (they use it with each other too).
	SentinelPassword string
}

// SentinelSet is a master, its replica and the sentinels watching them, all private
// redis-server processes on free loopback ports, stopped when the test ends.
type SentinelSet struct {
	MasterName string
	Master     *Server
	Replica    *Server
	Sentinels  []*Server
	opts       SentinelOptions
}

// Addrs lists the sentinels' host:port.
func (s *SentinelSet) Addrs() []string {
	out := make([]string, len(s.Sentinels))
	for i, sn := range s.Sentinels {
		out[i] = sn.Addr
	}
	return out
}

// KillMaster kills the master process abruptly (SIGKILL, no shutdown).
func (s *SentinelSet) KillMaster() { s.Master.Kill() }

// StartSentinelSet starts a master, a replica of it (waiting until it is in sync) and the
// sentinels (waiting until each knows the replica and the other sentinels, so a failover can
// happen as soon as the master dies). Sentinels rewrite their config files, so each gets its
// own temp dir.
func StartSentinelSet(t testing.TB, opts SentinelOptions) *SentinelSet {
	t.Helper()
	if opts.MasterName == "" {
		opts.MasterName = "mymaster"
	}
	if opts.Sentinels == 0 {
		opts.Sentinels = 3
	}
	if opts.Quorum == 0 {
		opts.Quorum = 2
	}
	set := &SentinelSet{MasterName: opts.MasterName, opts: opts}
	// Without the delay a replica's first full sync waits 5 s (repl-diskless-sync-delay).
	fast := []string{"--repl-diskless-sync-delay", "0"}
	set.Master = StartServerAuth(t, opts.MasterPassword, fast...)
	host, port, _ := net.SplitHostPort(set.Master.Addr)
	set.Replica = StartServerAuth(t, opts.MasterPassword, append(fast, "--replicaof", host, port)...)
	waitFor(t, 10*time.Second, "replica in sync", func() error {
		info, err := redis.String(do(set.Replica.Addr, opts.MasterPassword, "INFO", "replication"))
		if err != nil {
			return err
		}
		if !strings.Contains(info, "master_link_status:up") {
			return fmt.Errorf("replica not in sync yet")
		}
		return nil
	})

	var conf []string
	if opts.MasterPassword != "" {
		conf = append(conf, fmt.Sprintf("sentinel auth-pass %s %s", opts.MasterName, opts.MasterPassword))
	}
	for i := 0; i < opts.Sentinels; i++ {
		set.Sentinels = append(set.Sentinels,
			StartSentinel(t, opts.MasterName, set.Master.Addr, opts.Quorum, opts.SentinelPassword, conf...))
	}
	for _, sn := range set.Sentinels {
		waitFor(t, 15*time.Second, "sentinel "+sn.Addr+" to see its peers and the replica", func() error {
			m, err := redis.StringMap(do(sn.Addr, opts.SentinelPassword, "SENTINEL", "MASTER", opts.MasterName))
			if err != nil {
				return err
			}
			if m["num-other-sentinels"] != strconv.Itoa(opts.Sentinels-1) || m["num-slaves"] != "1" {
				return fmt.Errorf("num-other-sentinels=%s num-slaves=%s", m["num-other-sentinels"], m["num-slaves"])
			}
			return nil
		})
	}
	return set
}

// MasterAddr asks the sentinels, in order, where the master is; "" if none answers.
func (s *SentinelSet) MasterAddr() string {
	for _, sn := range s.Sentinels {
		r, err := redis.Strings(do(sn.Addr, s.opts.SentinelPassword, "SENTINEL", "get-master-addr-by-name", s.MasterName))
		if err == nil && len(r) == 2 {
			return net.JoinHostPort(r[0], r[1])
		}
	}
	return ""
}

// StartSentinel starts one sentinel (`redis-server sentinel.conf --sentinel`) on a free loopback
// port monitoring masterAddr as name with quorum, down-after-milliseconds 1000 and
// failover-timeout 5000. password, when set, becomes the sentinel's requirepass (which
// sentinels also use with each other); extraConf lines are appended to the config file. It is
// stopped when the test ends.
func StartSentinel(t testing.TB, name, masterAddr string, quorum int, password string, extraConf ...string) *Server {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("testredis: sentinel tests need redis-server on PATH: %s", InstallHint)
	}
	host, port, err := net.SplitHostPort(masterAddr)
	if err != nil {
		t.Fatalf("testredis: master address %q: %v", masterAddr, err)
	}
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		dir, err := os.MkdirTemp("", "flapjack-sentinel-")
		if err != nil {
			t.Fatal(err)
		}
		sport, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		lines := []string{
			"port " + strconv.Itoa(sport),
			"bind 127.0.0.1",
			"daemonize no",
			"dir " + dir,
			"logfile " + filepath.Join(dir, fmt.Sprintf("redis-%d.log", sport)),
			fmt.Sprintf("sentinel monitor %s %s %s %d", name, host, port, quorum),
			fmt.Sprintf("sentinel down-after-milliseconds %s 1000", name),
			fmt.Sprintf("sentinel failover-timeout %s 5000", name),
			fmt.Sprintf("sentinel parallel-syncs %s 1", name),
		}
		if password != "" {
			lines = append(lines, "requirepass "+password)
		}
		lines = append(lines, extraConf...)
		confFile := filepath.Join(dir, "sentinel.conf")
		if err := os.WriteFile(confFile, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		s := &Server{Addr: fmt.Sprintf("127.0.0.1:%d", sport), dir: dir}
		lastErr = s.launchProcess(path, []string{confFile, "--sentinel"}, sport, func() error {
			_, err := do(s.Addr, password, "PING")
			return err
		})
		if lastErr == nil {
			t.Cleanup(s.Stop)
			return s
		}
		os.RemoveAll(dir)
	}
	t.Fatalf("cannot start redis sentinel: %v", lastErr)
	return nil
}

// do runs one command on a fresh connection to addr, authenticating when password is set.
func do(addr, password, cmd string, args ...any) (any, error) {
	opts := []redis.DialOption{
		redis.DialConnectTimeout(time.Second), redis.DialReadTimeout(2 * time.Second),
		redis.DialWriteTimeout(time.Second),
	}
	if password != "" {
		opts = append(opts, redis.DialPassword(password))
	}
	c, err := redis.Dial("tcp", addr, opts...)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.Do(cmd, args...)
}

// waitFor polls check every 50 ms until it succeeds or timeout passes, then fails the test.
func waitFor(t testing.TB, timeout time.Duration, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("testredis: waiting for %s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// StartServerAuth is StartServer for a server that wants a password: with password set it adds
// --requirepass and --masterauth (so it can also serve as or become a replica) and waits for
// the server with AUTH. An empty password is plain StartServer.
func StartServerAuth(t testing.TB, password string, extraArgs ...string) *Server {
	t.Helper()
	if password == "" {
		return StartServer(t, extraArgs...)
	}
	path, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("testredis: this test needs redis-server on PATH: %s", InstallHint)
	}
	dir, err := os.MkdirTemp("", "flapjack-redis-")
	if err != nil {
		t.Fatal(err)
	}
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		s := &Server{Addr: fmt.Sprintf("127.0.0.1:%d", port), dir: dir}
		args := []string{
			"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
			"--save", "", "--appendonly", "no", "--databases", strconv.Itoa(databases),
			"--logfile", filepath.Join(dir, fmt.Sprintf("redis-%d.log", port)),
			"--requirepass", password, "--masterauth", password,
		}
		args = append(args, extraArgs...)
		lastErr = s.launchProcess(path, args, port, func() error {
			_, err := do(s.Addr, password, "PING")
			return err
		})
		if lastErr == nil {
			t.Cleanup(s.Stop)
			return s
		}
	}
	os.RemoveAll(dir)
	t.Fatalf("cannot start Redis for tests: %v", lastErr)
	return nil
}
