package redisconn

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap/zaptest"

	"github.com/flapjackgo/flapjack/internal/testing/testredis"
)

// whoami opens a pool for c, pings and returns ACL WHOAMI, or the first error.
func whoami(t *testing.T, c Config) (string, error) {
	t.Helper()
	pool, err := NewPool(c, zaptest.NewLogger(t))
	if err != nil {
		t.Fatalf("NewPool: %v", err)
	}
	defer pool.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := Ping(ctx, pool); err != nil {
		return "", err
	}
	conn, err := pool.GetContext(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	return redis.String(redis.DoContext(conn, ctx, "ACL", "WHOAMI"))
}

func TestAuth(t *testing.T) {
	t.Parallel()
	const (
		defaultPass = "req-pa55-Kx7"
		alicePass   = "alice-pa55-Qm2"
	)
	srv := testredis.StartServerAuth(t, defaultPass,
		"--user", "alice", "on", ">"+alicePass, "~*", "&*", "+@all")
	url := func(userinfo string) string { return fmt.Sprintf("redis://%s@%s/3", userinfo, srv.Addr) }

	cases := []struct {
		name     string
		url      string
		wantUser string // "" means an error is expected
		wantErr  string
	}{
		{"requirepass", url(":" + defaultPass), "default", ""},
		{"requirepass redis-cli style", url(defaultPass), "default", ""},
		{"acl user", url("alice:" + alicePass), "alice", ""},
		{"wrong requirepass", url(":wrong-Zq9"), "", "WRONGPASS"},
		{"acl user, wrong password", url("alice:wrong-Zq9"), "", "WRONGPASS"},
		{"acl user, default's password", url("alice:" + defaultPass), "", "WRONGPASS"},
		{"no password", fmt.Sprintf("redis://%s/0", srv.Addr), "", "NOAUTH"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			user, err := whoami(t, Config{URL: tc.url})
			if tc.wantUser != "" {
				if err != nil {
					t.Fatalf("connect: %v", err)
				}
				if user != tc.wantUser {
					t.Fatalf("ACL WHOAMI = %q, want %q", user, tc.wantUser)
				}
				return
			}
			if err == nil {
				t.Fatalf("connected as %q, want an error containing %s", user, tc.wantErr)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %q does not contain %s", err, tc.wantErr)
			}
			for _, secret := range []string{defaultPass, alicePass, "wrong-Zq9"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error %q contains a password", err)
				}
			}
			// AUTH runs while dialing, so its error says where.
			if tc.wantErr == "WRONGPASS" && !strings.Contains(err.Error(), srv.Addr) {
				t.Errorf("error %q does not name the server %s", err, srv.Addr)
			}
		})
	}
}

// TestDatabaseSelected checks the URL's database is the one written to.
func TestDatabaseSelected(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	for _, u := range []string{db.URL(), fmt.Sprintf("redis://%s?db=%d", db.Server.Addr, db.Index)} {
		pool, err := NewPool(Config{URL: u}, nil)
		if err != nil {
			t.Fatalf("NewPool: %v", err)
		}
		conn := pool.Get()
		if _, err := conn.Do("SET", "redisconn-db", u); err != nil {
			t.Fatalf("SET: %v", err)
		}
		conn.Close()
		pool.Close()
		if got, _ := redis.String(db.Do(t, "GET", "redisconn-db"), nil); got != u {
			t.Fatalf("through %s: GET in db %d = %q", u, db.Index, got)
		}
	}
}

// TestUnixSocket connects through unix:///path?db=N.
func TestUnixSocket(t *testing.T) {
	t.Parallel()
	sock := t.TempDir() + "/redis.sock"
	testredis.StartServer(t, "--unixsocket", sock, "--unixsocketperm", "700")
	pool, err := NewPool(Config{URL: "unix://" + sock + "?db=2"}, nil)
	if err != nil {
		t.Fatalf("NewPool: %v", err)
	}
	defer pool.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := Ping(ctx, pool); err != nil {
		t.Fatalf("Ping over unix socket: %v", err)
	}
	conn := pool.Get()
	defer conn.Close()
	info, err := redis.String(conn.Do("CLIENT", "INFO"))
	if err != nil {
		t.Fatalf("CLIENT INFO: %v", err)
	}
	if !strings.Contains(info, " db=2 ") {
		t.Errorf("CLIENT INFO %q: want db=2", info)
	}
}

// TestPingFailsFast: nothing listens, so Ping reports the address within the dial timeout.
func TestPingFailsFast(t *testing.T) {
	t.Parallel()
	srv := testredis.StartServer(t)
	srv.Stop() // its port is now closed
	pool, err := NewPool(Config{URL: "redis://" + srv.Addr + "/0", DialTimeout: 500 * time.Millisecond}, nil)
	if err != nil {
		t.Fatalf("NewPool: %v", err)
	}
	defer pool.Close()
	start := time.Now()
	err = Ping(context.Background(), pool)
	if err == nil || !strings.Contains(err.Error(), srv.Addr) {
		t.Fatalf("Ping = %v, want an error naming %s", err, srv.Addr)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Ping took %v", d)
	}
}

// TestPoolSettings pins the pool's shape.
func TestPoolSettings(t *testing.T) {
	t.Parallel()
	pool, err := NewPool(Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if pool.MaxActive != 32 || pool.MaxIdle != 8 || !pool.Wait || pool.TestOnBorrow == nil {
		t.Errorf("default pool: MaxActive %d MaxIdle %d Wait %v", pool.MaxActive, pool.MaxIdle, pool.Wait)
	}
	pool, err = NewPool(Config{PoolSize: 4}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if pool.MaxActive != 4 || pool.MaxIdle != 4 {
		t.Errorf("PoolSize 4: MaxActive %d MaxIdle %d", pool.MaxActive, pool.MaxIdle)
	}
}
