package redisconn

import (
	"strings"
	"testing"
	"time"
)

func TestParseURL(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, url string
		want      endpoint
	}{
		{"empty is the default", "", endpoint{network: "tcp", addr: "127.0.0.1:6379", host: "127.0.0.1"}},
		{"host and port", "redis://example.org:7000", endpoint{network: "tcp", addr: "example.org:7000", host: "example.org"}},
		{"no port", "redis://example.org/2", endpoint{network: "tcp", addr: "example.org:6379", host: "example.org", db: 2}},
		{"no host", "redis:///3", endpoint{network: "tcp", addr: "127.0.0.1:6379", host: "127.0.0.1", db: 3}},
		{"trailing slash", "redis://h:1/", endpoint{network: "tcp", addr: "h:1", host: "h"}},
		{"db as query", "redis://h:1?db=5", endpoint{network: "tcp", addr: "h:1", host: "h", db: 5}},
		{"ipv6", "redis://[::1]:6380/1", endpoint{network: "tcp", addr: "[::1]:6380", host: "::1", db: 1}},
		{"tls", "rediss://r.example:6380/0", endpoint{network: "tcp", addr: "r.example:6380", host: "r.example", tls: true}},
		{"password only", "redis://:s3cret@h:1/0", endpoint{network: "tcp", addr: "h:1", host: "h", password: "s3cret"}},
		{"lone user-info is the password (redis-cli)", "redis://s3cret@h:1/0", endpoint{network: "tcp", addr: "h:1", host: "h", password: "s3cret"}},
		{"acl user", "redis://alice:s3cret@h:1/4", endpoint{network: "tcp", addr: "h:1", host: "h", username: "alice", password: "s3cret", db: 4}},
		{"encoded password", "redis://alice:a%2Fb%40c@h:1/0", endpoint{network: "tcp", addr: "h:1", host: "h", username: "alice", password: "a/b@c"}},
		{"unix", "unix:///run/redis/redis.sock", endpoint{network: "unix", addr: "/run/redis/redis.sock"}},
		{"unix with db", "unix:///run/redis.sock?db=7", endpoint{network: "unix", addr: "/run/redis.sock", db: 7}},
		{"unix with password", "unix://:pw@/run/redis.sock?db=1", endpoint{network: "unix", addr: "/run/redis.sock", password: "pw", db: 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseURL(tc.url)
			if err != nil {
				t.Fatalf("parseURL(%q): %v", tc.url, err)
			}
			if got != tc.want {
				t.Errorf("parseURL(%q) = %+v, want %+v", tc.url, got, tc.want)
			}
		})
	}
}

func TestValidateErrors(t *testing.T) {
	t.Parallel()
	sentinel := SentinelConfig{Addrs: []string{"127.0.0.1:26379"}, Master: "mymaster"}
	cases := []struct {
		name    string
		cfg     Config
		wantErr string // substring; "" means valid
	}{
		{"default", Config{}, ""},
		{"sentinel", Config{URL: "redis://:pw@ignored/2", Sentinel: sentinel}, ""},
		{"tls settings", Config{URL: "rediss://h:1", TLS: TLSConfig{CAFile: "/ca.pem", CertFile: "c", KeyFile: "k"}}, ""},

		{"no scheme", Config{URL: "localhost:6379"}, "redis.url: must start with redis://"},
		{"bad scheme", Config{URL: "http://localhost:6379"}, `redis.url: scheme "http" is not supported`},
		{"bad db", Config{URL: "redis://h:1/abc"}, "redis.url: the path must be /N"},
		{"negative db", Config{URL: "redis://h:1/-1"}, "redis.url: the path must be /N"},
		{"db in path and query", Config{URL: "redis://h:1/1?db=2"}, "redis.url: database given both"},
		{"bad db query", Config{URL: "redis://h:1?db=x"}, "redis.url: db must be"},
		{"unknown parameter", Config{URL: "redis://h:1/0?timeout=3"}, `redis.url: unknown parameter "timeout"`},
		{"port out of range", Config{URL: "redis://h:70000/0"}, "redis.url: the port is out of range"},
		{"bad port", Config{URL: "redis://h:port/0"}, "redis.url: not a valid URL"},
		{"fragment", Config{URL: "redis://h:1/0#x"}, "redis.url: unexpected #fragment"},
		{"relative unix path", Config{URL: "unix://run/redis.sock"}, "redis.url: a unix socket path must be absolute"},
		{"unix without path", Config{URL: "unix://"}, "redis.url: unix:// needs a socket path"},
		{"unix bad db", Config{URL: "unix:///s.sock?db=-2"}, "redis.url: db must be"},

		{"sentinel without master", Config{Sentinel: SentinelConfig{Addrs: sentinel.Addrs}}, "redis.sentinel.master: required when redis.sentinel.addrs is set"},
		{"master without sentinels", Config{Sentinel: SentinelConfig{Master: "m"}}, "redis.sentinel.addrs: required when redis.sentinel.master is set"},
		{"sentinel password alone", Config{Sentinel: SentinelConfig{Password: "p"}}, "redis.sentinel.addrs: required when a sentinel username or password"},
		{"sentinel addr without port", Config{Sentinel: SentinelConfig{Addrs: []string{"h"}, Master: "m"}}, `redis.sentinel.addrs: "h" is not host:port`},
		{"sentinel addr bad port", Config{Sentinel: SentinelConfig{Addrs: []string{"h:0"}, Master: "m"}}, `redis.sentinel.addrs: "h:0" has no valid port`},
		{"sentinel with unix", Config{URL: "unix:///s.sock", Sentinel: sentinel}, "redis.url: a unix socket cannot be combined"},

		{"tls with redis://", Config{URL: "redis://h:1", TLS: TLSConfig{InsecureSkipVerify: true}}, "redis.tls: TLS settings need a rediss:// redis.url"},
		{"cert without key", Config{URL: "rediss://h:1", TLS: TLSConfig{CertFile: "c"}}, "redis.tls.cert_file and redis.tls.key_file: set both"},
		{"negative dial timeout", Config{DialTimeout: -time.Second}, "redis.dial_timeout"},
		{"negative command timeout", Config{CommandTimeout: -time.Second}, "redis.command_timeout"},
		{"negative pool", Config{PoolSize: -1}, "redis.pool_size"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case tc.wantErr != "" && err == nil:
				t.Fatalf("Validate accepted %+v, want error %q", tc.cfg, tc.wantErr)
			case tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr):
				t.Fatalf("Validate error %q, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}

// TestValidateNeverEchoesPasswords feeds malformed URLs whose password would land in the host,
// port or path, and checks the message does not repeat it.
func TestValidateNeverEchoesPasswords(t *testing.T) {
	t.Parallel()
	for _, u := range []string{
		"redis://user:pa/ss99@h:1/0",     // "/" ends the authority: host user, port "pa"
		"redis://user:12/34@h:6379/0",    // port 12 is valid; the rest lands in the path
		"redis://user:99999/x@h:6379",    // port out of range is part of the password
		"redis://user:p@ss word@h:1/0",   // space and "@"
		"redis://u:pa%ss@h:1/0",          // bad escape
		"http://user:pa55word@h:1/0",     // bad scheme
		"redis://user:pa55word@h:1/zz",   // bad db
		"redis://user:pa55word@h:1?x=pw", // unknown parameter
	} {
		err := Config{URL: u}.Validate()
		if err == nil {
			t.Errorf("Validate(%q) accepted it", u)
			continue
		}
		for _, secret := range []string{"pa/ss99", "ss99", "34", "99999", "ss word", "pa%ss", "pa55word"} {
			if strings.Contains(u, secret) && strings.Contains(err.Error(), secret) {
				t.Errorf("Validate(%q) = %q, which repeats %q", u, err, secret)
			}
		}
		if !strings.HasPrefix(err.Error(), "redis.url: ") {
			t.Errorf("Validate(%q) = %q, which does not name redis.url", u, err)
		}
	}
}

func TestRedact(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{"redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"},
		{"redis://:s3cret@h:1/0", "redis://:xxxxx@h:1/0"},
		{"redis://alice:s3cret@h:1/0", "redis://alice:xxxxx@h:1/0"},
		{"rediss://alice:s%2F3cret@h:1/0", "rediss://alice:xxxxx@h:1/0"},
		{"redis://s3cret@h:1/0", "redis://xxxxx@h:1/0"},
		{"unix://:s3cret@/run/redis.sock?db=1", "unix://:xxxxx@/run/redis.sock?db=1"},
		{"unix:///run/redis.sock?db=1", "unix:///run/redis.sock?db=1"},
		{"redis://alice:pa/ss@h:1/0", "redis://xxxxx@h:1/0"},
		{"redis://alice:12/34@h:6379/0", "redis://xxxxx@h:6379/0"},
		{"redis://u:p@ss word@h:1/0", "redis://xxxxx@h:1/0"},
		{"alice:s3cret@h:1", "xxxxx@h:1"},
		{"", ""},
	}
	for _, tc := range cases {
		if got := Redact(tc.in); got != tc.want {
			t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
