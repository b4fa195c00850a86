package redisconn

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/flapjackgo/flapjack/internal/testing/testredis"
)

// serverPort asks the node behind conn which port it listens on.
func serverPort(t *testing.T, conn redis.Conn) string {
	t.Helper()
	kv, err := redis.Strings(conn.Do("CONFIG", "GET", "port"))
	if err != nil || len(kv) != 2 {
		t.Fatalf("CONFIG GET port: %v %q", err, kv)
	}
	return kv[1]
}

// deadAddr is a loopback address nothing listens on.
func deadAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func TestSentinelDiscovery(t *testing.T) {
	t.Parallel()
	const (
		masterPass   = "master-pa55-J4t"
		sentinelPass = "sentinel-pa55-W8r"
	)
	set := testredis.StartSentinelSet(t, testredis.SentinelOptions{
		MasterPassword: masterPass, SentinelPassword: sentinelPass,
	})
	_, masterPort, _ := net.SplitHostPort(set.Master.Addr)
	good := Config{
		URL: "redis://:" + masterPass + "@host.is.ignored:1/2",
		Sentinel: SentinelConfig{
			Addrs: set.Addrs(), Master: set.MasterName, Password: sentinelPass,
		},
	}
	dial := func(t *testing.T, c Config) (redis.Conn, error) {
		t.Helper()
		pool, err := NewPool(c, zaptest.NewLogger(t))
		if err != nil {
			t.Fatalf("NewPool: %v", err)
		}
		t.Cleanup(func() { pool.Close() })
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return pool.GetContext(ctx)
	}
	noSecrets := func(t *testing.T, err error) {
		t.Helper()
		for _, s := range []string{masterPass, sentinelPass, "wrong-Zq9"} {
			if strings.Contains(err.Error(), s) {
				t.Errorf("error %q contains a password", err)
			}
		}
	}

	t.Run("writes reach the master", func(t *testing.T) {
		conn, err := dial(t, good)
		if err != nil {
			t.Fatalf("Get: %v", err)
		}
		defer conn.Close()
		if _, err := conn.Do("SET", "redisconn-sentinel", "x"); err != nil {
			t.Fatalf("SET: %v", err)
		}
		if p := serverPort(t, conn); p != masterPort {
			t.Errorf("connected to port %s, want the master's %s", p, masterPort)
		}
		if db, _ := redis.String(conn.Do("CLIENT", "INFO")); !strings.Contains(db, " db=2 ") {
			t.Errorf("CLIENT INFO %q: want the URL's db=2", db)
		}
	})

	t.Run("first sentinel down", func(t *testing.T) {
		c := good
		down := deadAddr(t)
		c.Sentinel.Addrs = append([]string{down}, set.Addrs()...)
		conn, err := dial(t, c)
		if err != nil {
			t.Fatalf("first Get with %s down: %v", down, err)
		}
		defer conn.Close()
		if _, err := conn.Do("SET", "redisconn-sentinel", "y"); err != nil {
			t.Fatalf("SET: %v", err)
		}
		// The sentinel that answered moves to the front; the list keeps every entry.
		s := newSentinels(c.Sentinel, zap.NewNop())
		ep, _ := parseURL(c.URL)
		mc, err := s.dialMaster(context.Background(), time.Second,
			[]redis.DialOption{redis.DialPassword(ep.password)})
		if err != nil {
			t.Fatalf("dialMaster: %v", err)
		}
		mc.Close()
		want := append([]string{set.Addrs()[0], down}, set.Addrs()[1:]...)
		if got := s.order(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("sentinel order after success = %v, want %v", got, want)
		}
	})

	t.Run("no sentinel answers", func(t *testing.T) {
		c := good
		c.Sentinel.Addrs = []string{deadAddr(t), deadAddr(t)}
		_, err := dial(t, c)
		want := fmt.Sprintf("no sentinel of %v knows master %s: ", c.Sentinel.Addrs, set.MasterName)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Fatalf("Get error %v, want it to start %q", err, want)
		}
		t.Logf("error as expected: %v", err)
	})

	t.Run("unknown master name", func(t *testing.T) {
		c := good
		c.Sentinel.Master = "nosuchmaster"
		_, err := dial(t, c)
		if err == nil || !strings.Contains(err.Error(), "does not monitor a master named nosuchmaster") {
			t.Fatalf("Get error %v, want 'does not monitor a master named nosuchmaster'", err)
		}
	})

	t.Run("wrong sentinel password", func(t *testing.T) {
		c := good
		c.Sentinel.Password = "wrong-Zq9"
		_, err := dial(t, c)
		if err == nil || !strings.Contains(err.Error(), "WRONGPASS") {
			t.Fatalf("Get error %v, want WRONGPASS", err)
		}
		noSecrets(t, err)
	})

	t.Run("wrong master password", func(t *testing.T) {
		c := good
		c.URL = "redis://:wrong-Zq9@ignored/0"
		_, err := dial(t, c)
		if err == nil || !strings.Contains(err.Error(), "WRONGPASS") || !strings.Contains(err.Error(), "no master mymaster reachable") {
			t.Fatalf("Get error %v, want WRONGPASS from the master", err)
		}
		noSecrets(t, err)
	})

	t.Run("a node that is not master is refused", func(t *testing.T) {
		// Make the first sentinel hand out the replica's address under another name.
		first := set.Sentinels[0].Addr
		sc, err := redis.Dial("tcp", first, redis.DialPassword(sentinelPass))
		if err != nil {
			t.Fatal(err)
		}
		defer sc.Close()
		host, port, _ := net.SplitHostPort(set.Replica.Addr)
		if _, err := sc.Do("SENTINEL", "MONITOR", "fake", host, port, 1); err != nil {
			t.Fatalf("SENTINEL MONITOR: %v", err)
		}
		defer sc.Do("SENTINEL", "REMOVE", "fake")
		if _, err := sc.Do("SENTINEL", "SET", "fake", "auth-pass", masterPass); err != nil {
			t.Fatalf("SENTINEL SET: %v", err)
		}
		c := good
		c.Sentinel.Addrs, c.Sentinel.Master = []string{first}, "fake"
		_, err = dial(t, c)
		if err == nil || !strings.Contains(err.Error(), "role slave, not master") {
			t.Fatalf("Get error %v, want the replica refused", err)
		}
		t.Logf("error as expected: %v", err)
	})

	t.Run("borrow check asks ROLE of connections idle a while", func(t *testing.T) {
		pool, err := NewPool(good, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		old, recent := time.Now().Add(-time.Minute), time.Now()
		for _, tc := range []struct {
			addr     string
			lastUsed time.Time
			wantErr  string
		}{
			{set.Master.Addr, old, ""},
			{set.Replica.Addr, recent, ""}, // not checked: used a moment ago
			{set.Replica.Addr, old, "role slave"},
		} {
			c, err := redis.Dial("tcp", tc.addr, redis.DialPassword(masterPass))
			if err != nil {
				t.Fatal(err)
			}
			err = pool.TestOnBorrow(c, tc.lastUsed)
			c.Close()
			if (tc.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("TestOnBorrow(%s, idle %v) = %v, want %q", tc.addr, time.Since(tc.lastUsed).Round(time.Second), err, tc.wantErr)
			}
		}
	})

	t.Run("READONLY drops the connection", func(t *testing.T) {
		// A pool whose connections reach the replica directly, as after a demotion.
		pool := &redis.Pool{MaxIdle: 2, Dial: func() (redis.Conn, error) {
			c, err := redis.Dial("tcp", set.Replica.Addr, redis.DialPassword(masterPass))
			if err != nil {
				return nil, err
			}
			return &masterConn{Conn: c, log: zaptest.NewLogger(t), addr: set.Replica.Addr}, nil
		}}
		defer pool.Close()
		conn := pool.Get()
		if _, err := conn.Do("GET", "k"); err != nil {
			t.Fatalf("GET on the replica: %v", err)
		}
		if err := conn.Err(); err != nil {
			t.Fatalf("Err after a read = %v", err)
		}
		_, err := conn.Do("SET", "k", "v")
		if err == nil || !strings.HasPrefix(err.Error(), "READONLY") {
			t.Fatalf("SET on the replica = %v, want READONLY", err)
		}
		if !errors.Is(conn.Err(), errReadOnly) {
			t.Fatalf("Err after READONLY = %v, want errReadOnly", conn.Err())
		}
		conn.Close()
		if n := pool.IdleCount(); n != 0 {
			t.Errorf("pool kept %d idle connection(s) after READONLY, want 0", n)
		}
		// The context and timeout variants are wrapped too.
		conn = pool.Get()
		defer conn.Close()
		if _, err := redis.DoContext(conn, context.Background(), "SET", "k", "v"); err == nil || !errors.Is(conn.Err(), errReadOnly) {
			t.Fatalf("DoContext SET: %v, Err %v", err, conn.Err())
		}
	})
}

// TestSentinelFailover kills the master under a pool and measures how long writes fail.
func TestSentinelFailover(t *testing.T) {
	t.Parallel()
	set := testredis.StartSentinelSet(t, testredis.SentinelOptions{})
	_, masterPort, _ := net.SplitHostPort(set.Master.Addr)
	_, replicaPort, _ := net.SplitHostPort(set.Replica.Addr)
	core, logs := observer.New(zap.InfoLevel)
	pool, err := NewPool(Config{
		URL:      "redis:///5",
		Sentinel: SentinelConfig{Addrs: set.Addrs(), Master: set.MasterName},
	}, zap.New(core))
	if err != nil {
		t.Fatalf("NewPool: %v", err)
	}
	defer pool.Close()

	conn := pool.Get()
	if _, err := conn.Do("SET", "before", "failover"); err != nil {
		t.Fatalf("SET on the master: %v", err)
	}
	if p := serverPort(t, conn); p != masterPort {
		t.Fatalf("first connection on port %s, want the master's %s", p, masterPort)
	}
	if n, err := redis.Int(conn.Do("WAIT", 1, 5000)); err != nil || n != 1 {
		t.Fatalf("WAIT for the replica: %d %v", n, err)
	}
	conn.Close() // stays idle in the pool, so the first borrow after the kill gets a dead one

	// A consumer blocked in BLMOVE on the master must see an error when it dies.
	blocked := pool.Get()
	defer blocked.Close()
	blockedErr := make(chan error, 1)
	go func() {
		_, err := blocked.Do("BLMOVE", "empty", "elsewhere", "LEFT", "RIGHT", 0)
		blockedErr <- err
	}()
	// The master is killed once the consumer is blocked there (CLIENT LIST shows it).
	probe := pool.Get()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(2 * time.Millisecond) {
		list, err := redis.String(probe.Do("CLIENT", "LIST"))
		if err == nil && strings.Contains(list, "cmd=blmove") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the consumer never blocked in BLMOVE: %v", err)
		}
	}
	probe.Close()

	killed := time.Now()
	set.KillMaster()

	select {
	case err := <-blockedErr:
		if err == nil {
			t.Error("blocked BLMOVE returned no error when the master died")
		}
	case <-time.After(5 * time.Second):
		t.Error("blocked BLMOVE still waiting 5 s after the master died")
	}

	var (
		attempts int
		lastErr  error
		gap      time.Duration
	)
	for deadline := killed.Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no successful write within 20 s of killing the master (%d attempts, last error: %v)", attempts, lastErr)
		}
		attempts++
		c := pool.Get()
		_, err := redis.DoWithTimeout(c, time.Second, "SET", "after", "failover")
		if err == nil {
			gap = time.Since(killed)
			if p := serverPort(t, c); p != replicaPort {
				t.Errorf("write went to port %s, want the promoted replica's %s", p, replicaPort)
			}
			if v, _ := redis.String(c.Do("GET", "before")); v != "failover" {
				t.Errorf("GET before = %q on the new master, want the replicated value", v)
			}
			c.Close()
			break
		}
		lastErr = err
		c.Close()
	}
	t.Logf("failover gap: %v from SIGKILL of the master to the first successful write (%d attempts at 50 ms intervals; last error before: %v)",
		gap.Round(10*time.Millisecond), attempts, lastErr)
	if gap > 15*time.Second {
		t.Errorf("failover gap %v, want within 15 s", gap)
	}

	// Every later connection goes to the new master too.
	for i := 0; i < 3; i++ {
		c, err := pool.GetContext(context.Background())
		if err != nil {
			t.Fatalf("Get after failover: %v", err)
		}
		if _, err := c.Do("INCR", "after-count"); err != nil {
			t.Fatalf("INCR after failover: %v", err)
		}
		c.Close()
	}
	var sawSwitch bool
	for _, e := range logs.FilterMessage("redis master found through sentinel").All() {
		m := e.ContextMap()
		if m["master_addr"] == set.Replica.Addr && m["previous"] == set.Master.Addr {
			sawSwitch = true
		}
	}
	if !sawSwitch {
		t.Errorf("no log of the master moving from %s to %s: %v", set.Master.Addr, set.Replica.Addr, logs.All())
	}
}
