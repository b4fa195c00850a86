// Package testredis gives tests a real Redis: a redis-server from PATH started on a free
// loopback port in a temp dir without persistence (or, when none is installed, a container via
// dockertest where a Docker engine answers). Each test gets its own database, so tests run in
// parallel without seeing each other's keys. There are no mocks: if no Redis can be started the
// test fails with the command that installs one.
package testredis

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/ory/dockertest/v3"

	"github.com/flapjackgo/flapjack/internal/embeddedredis"
)

// databases is how many logical databases the shared server offers (one per test).
const databases = 4096

// InstallHint is the command that makes the Redis tests runnable on Debian.
const InstallHint = "apt-get install -y redis-server   (or run `make test`, which installs it as root)"

// Server is one running redis-server.
type Server struct {
	Addr    string
	dir     string
	cmd     *exec.Cmd
	cleanup func()
	nextDB  int
	mu      sync.Mutex
	// received counts the commands an embedded server received, by name (it has no CLIENT
	// LIST); nil for redis-server.
	received map[string]int
}

var (
	sharedOnce sync.Once
	shared     *Server
	sharedErr  error
)

// DB is one test's database on a server.
type DB struct {
	Server *Server
	Index  int
	Pool   *redis.Pool
}

// URL is the redis:// URL of this database, for subprocesses and config.
func (d *DB) URL() string { return fmt.Sprintf("redis://%s/%d", d.Server.Addr, d.Index) }

// WaitBlocked waits up to 10 s until a client of this database is blocked in cmd (lower case,
// e.g. "blmove"), so that what a test pushes next arrives while a consumer waits. On
// redis-server that is CLIENT LIST's flag b; the embedded server lists no clients, so there it
// is the first cmd the server receives after the call (on any database), which blocks at once
// when its list is empty.
func (d *DB) WaitBlocked(cmd string) bool {
	deadline := time.Now().Add(10 * time.Second)
	if d.Server.received != nil {
		before := d.Server.count(cmd)
		for ; time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
			if d.Server.count(cmd) > before {
				return true
			}
		}
		return false
	}
	conn := d.Pool.Get()
	defer conn.Close()
	db, name := fmt.Sprintf("db=%d", d.Index), "cmd="+cmd
	for ; time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		list, err := redis.String(conn.Do("CLIENT", "LIST"))
		if err != nil {
			return false
		}
		for _, line := range strings.Split(list, "\n") {
			fields := strings.Fields(line)
			if slices.Contains(fields, db) && slices.Contains(fields, name) && slices.ContainsFunc(fields, func(f string) bool {
				flags, ok := strings.CutPrefix(f, "flags=")
				return ok && strings.Contains(flags, "b")
			}) {
				return true
			}
		}
	}
	return false
}

func (s *Server) count(cmd string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.received[cmd]
}

// Conn borrows a connection; the test fails on error.
func (d *DB) Conn(t testing.TB) redis.Conn {
	t.Helper()
	c := d.Pool.Get()
	if err := c.Err(); err != nil {
		t.Fatalf("redis connection: %v", err)
	}
	return c
}

// Do runs one command and fails the test on error.
func (d *DB) Do(t testing.TB, cmd string, args ...any) any {
	t.Helper()
	c := d.Conn(t)
	defer c.Close()
	v, err := c.Do(cmd, args...)
	if err != nil {
		t.Fatalf("redis %s %v: %v", cmd, args, err)
	}
	return v
}

// New returns a fresh, empty database on the shared server of this test binary.
func New(t testing.TB) *DB {
	t.Helper()
	sharedOnce.Do(func() { shared, sharedErr = start() })
	if sharedErr != nil {
		t.Fatalf("cannot start Redis for tests: %v\ninstall it with: %s", sharedErr, InstallHint)
	}
	return shared.NewDB(t)
}

// StartServer starts a private redis-server (for tests that stop, restart or kill it, or that
// are about real Redis's behaviour); it is stopped when the test ends.
func StartServer(t testing.TB, extraArgs ...string) *Server {
	t.Helper()
	s, err := startMode(false, extraArgs...)
	if err != nil {
		t.Fatalf("cannot start Redis for tests: %v\ninstall it with: %s", err, InstallHint)
	}
	t.Cleanup(s.Stop)
	return s
}

// NewDB allocates the next unused database of s, flushed, with a pool closed at test end.
func (s *Server) NewDB(t testing.TB) *DB {
	t.Helper()
	s.mu.Lock()
	idx := s.nextDB
	s.nextDB++
	s.mu.Unlock()
	if idx >= databases {
		t.Fatalf("testredis: more than %d databases requested from one server", databases)
	}
	pool := Pool(s.Addr, idx)
	t.Cleanup(func() { pool.Close() })
	d := &DB{Server: s, Index: idx, Pool: pool}
	d.Do(t, "FLUSHDB")
	return d
}

// Pool returns a redigo pool for addr and database index.
func Pool(addr string, db int) *redis.Pool {
	return &redis.Pool{
		MaxIdle:     8,
		IdleTimeout: time.Minute,
		Dial: func() (redis.Conn, error) {
			return redis.Dial("tcp", addr, redis.DialDatabase(db),
				redis.DialConnectTimeout(2*time.Second))
		},
	}
}

// Launch starts a private redis-server for programs that are not tests (the benchmark); the
// caller stops it with Stop.
func Launch(extraArgs ...string) (*Server, error) { return start(extraArgs...) }

// EmbeddedEnv selects the in-process Redis-compatible server flapjack embeds (miniredis) instead
// of redis-server: FLAPJACK_TEST_REDIS=embedded go test ./executive ./notifier proves the
// embedded default supports every command and script those stages use.
const EmbeddedEnv = "FLAPJACK_TEST_REDIS"

func start(extraArgs ...string) (*Server, error) {
	return startMode(os.Getenv(EmbeddedEnv) == "embedded", extraArgs...)
}

func startMode(embedded bool, extraArgs ...string) (*Server, error) {
	if embedded {
		srv, err := embeddedredis.Start("")
		if err != nil {
			return nil, err
		}
		s := &Server{Addr: srv.Addr(), cleanup: srv.Close, received: map[string]int{}}
		srv.OnCommand(func(cmd string) {
			s.mu.Lock()
			s.received[cmd]++
			s.mu.Unlock()
		})
		return s, nil
	}
	if path, err := exec.LookPath("redis-server"); err == nil {
		return startLocal(path, extraArgs...)
	}
	if s, err := startDocker(); err == nil {
		return s, nil
	}
	return nil, errors.New("redis-server is not on PATH and no Docker engine answers")
}

func startLocal(path string, extraArgs ...string) (*Server, error) {
	dir, err := os.MkdirTemp("", "flapjack-redis-")
	if err != nil {
		return nil, err
	}
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		s := &Server{Addr: fmt.Sprintf("127.0.0.1:%d", port), dir: dir}
		if err := s.launch(path, port, extraArgs...); err != nil {
			lastErr = err
			continue
		}
		return s, nil
	}
	os.RemoveAll(dir)
	return nil, lastErr
}

func (s *Server) launch(path string, port int, extraArgs ...string) error {
	args := []string{
		"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", s.dir,
		"--save", "", "--appendonly", "no", "--databases", strconv.Itoa(databases),
		"--logfile", filepath.Join(s.dir, fmt.Sprintf("redis-%d.log", port)),
	}
	args = append(args, extraArgs...)
	cmd := exec.Command(path, args...)
	// The server must not outlive the test binary, even if it is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start redis-server: %w", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	s.cmd = cmd
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return fmt.Errorf("redis-server exited at start (port %d busy?): see %s", port, s.logTail(port))
		default:
		}
		if c, err := redis.Dial("tcp", s.Addr); err == nil {
			_, err = c.Do("PING")
			c.Close()
			if err == nil {
				s.cleanup = func() {
					cmd.Process.Kill()
					<-exited
				}
				return nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Kill()
	return fmt.Errorf("redis-server on port %d did not answer within 5s", port)
}

func (s *Server) logTail(port int) string {
	f, err := os.Open(filepath.Join(s.dir, fmt.Sprintf("redis-%d.log", port)))
	if err != nil {
		return "no log"
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return strings.Join(lines, " | ")
}

// Stop kills the server and removes its directory.
func (s *Server) Stop() {
	if s.cleanup != nil {
		s.cleanup()
		s.cleanup = nil
	}
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
}

// Kill stops the server abruptly, keeping its port for Restart.
func (s *Server) Kill() {
	if s.cleanup != nil {
		s.cleanup()
		s.cleanup = nil
	}
}

// Freeze stops the server process with SIGSTOP: connections stay open and commands are
// accepted by the kernel but never answered, as with a Redis stuck on a slow disk. Thaw resumes
// it; a test that freezes a server should defer Thaw.
func (s *Server) Freeze(t testing.TB) { s.signal(t, syscall.SIGSTOP) }

// Thaw resumes a frozen server (SIGCONT); it answers the commands sent meanwhile.
func (s *Server) Thaw(t testing.TB) { s.signal(t, syscall.SIGCONT) }

func (s *Server) signal(t testing.TB, sig syscall.Signal) {
	t.Helper()
	if s.cmd == nil || s.cmd.Process == nil {
		t.Fatalf("testredis: %v needs a local redis-server", sig)
	}
	if err := s.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("testredis: %v: %v", sig, err)
	}
}

// Restart starts the server again on the same port (data is gone: no persistence).
func (s *Server) Restart(t testing.TB, extraArgs ...string) {
	t.Helper()
	if s.cmd == nil {
		t.Fatalf("testredis: Restart needs a local redis-server")
	}
	_, portText, _ := net.SplitHostPort(s.Addr)
	port, _ := strconv.Atoi(portText)
	var err error
	for attempt := 0; attempt < 50; attempt++ {
		if err = s.launch(s.cmd.Path, port, extraArgs...); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("restart redis-server: %v", err)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func startDocker() (*Server, error) {
	pool, err := dockertest.NewPool("")
	if err != nil {
		return nil, err
	}
	if err := pool.Client.Ping(); err != nil {
		return nil, fmt.Errorf("no docker engine: %w", err)
	}
	res, err := pool.Run("redis", "7", []string{})
	if err != nil {
		return nil, fmt.Errorf("start redis container: %w", err)
	}
	s := &Server{Addr: "127.0.0.1:" + res.GetPort("6379/tcp"), cleanup: func() { pool.Purge(res) }}
	err = pool.Retry(func() error {
		c, err := redis.Dial("tcp", s.Addr)
		if err != nil {
			return err
		}
		defer c.Close()
		_, err = c.Do("CONFIG", "SET", "save", "")
		return err
	})
	if err != nil {
		pool.Purge(res)
		return nil, err
	}
	return s, nil
}

// Dump returns every key of the database rendered as "type value" strings, for tests that
// assert the exact Redis state after an operation. Sorted sets render member=score pairs in
// score order, hashes and sets sorted, lists in order; TTLs are not included.
func (d *DB) Dump(t testing.TB) map[string]string {
	t.Helper()
	c := d.Conn(t)
	defer c.Close()
	keys, err := redis.Strings(c.Do("KEYS", "*"))
	if err != nil {
		t.Fatalf("dump keys: %v", err)
	}
	out := make(map[string]string, len(keys))
	for _, k := range keys {
		out[k] = d.render(t, c, k)
	}
	return out
}

// DiffDumps reports every key whose rendering differs between two Dumps, and the keys only got
// holds.
func DiffDumps(t testing.TB, got, want map[string]string) {
	t.Helper()
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s:\n got  %q\n want %q", k, got[k], w)
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected key %s = %q", k, g)
		}
	}
}

func (d *DB) render(t testing.TB, c redis.Conn, key string) string {
	t.Helper()
	typ, err := redis.String(c.Do("TYPE", key))
	if err != nil {
		t.Fatalf("type %s: %v", key, err)
	}
	switch typ {
	case "string":
		v, _ := redis.String(c.Do("GET", key))
		return v
	case "list":
		v, _ := redis.Strings(c.Do("LRANGE", key, 0, -1))
		return "list[" + strings.Join(v, ", ") + "]"
	case "set":
		v, _ := redis.Strings(c.Do("SMEMBERS", key))
		sort.Strings(v)
		return "set{" + strings.Join(v, ", ") + "}"
	case "hash":
		m, _ := redis.StringMap(c.Do("HGETALL", key))
		fields := make([]string, 0, len(m))
		for f, v := range m {
			fields = append(fields, f+"="+v)
		}
		sort.Strings(fields)
		return "hash{" + strings.Join(fields, ", ") + "}"
	case "zset":
		v, _ := redis.Strings(c.Do("ZRANGE", key, 0, -1, "WITHSCORES"))
		pairs := make([]string, 0, len(v)/2)
		for i := 0; i+1 < len(v); i += 2 {
			pairs = append(pairs, v[i]+"="+v[i+1])
		}
		return "zset[" + strings.Join(pairs, ", ") + "]"
	default:
		return typ
	}
}
