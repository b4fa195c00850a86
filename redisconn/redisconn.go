// Package redisconn owns connecting to Redis: it reads the redis.* settings (URL, TLS, Sentinel,
// pool size), validates them with messages that name the setting, and builds the redigo pool
// every component shares.
//
// # Timeouts
//
// DialTimeout (default 2 s) bounds a whole new connection: TCP connect, TLS handshake, AUTH,
// SELECT and, with Sentinel, the ROLE check. CommandTimeout (redis.command_timeout) bounds every
// command on a pooled connection, writing it and waiting for its reply, so a frozen Redis (a
// stopped process, a slow disk, a long KEYS) turns into an error within it instead of a hang:
// a request answers 503, a receiver spools, a stage backs off. A blocking command passes its own
// longer timeout with redis.DoWithTimeout (the consumers' BLMOVE waits its block time plus a
// margin); redis.DoContext takes the shorter of its context's deadline and CommandTimeout. TCP
// keep-alive probes (30 s idle, then every 10 s, 3 misses) close connections whose peer vanished
// without a FIN, which matters only with CommandTimeout 0.
//
// # Failures and retries
//
// The pool waits for a free connection when PoolSize are in use (Wait is set), so use
// GetContext with a context that ends. A connection that saw a network error is closed by redigo
// when it goes back to the pool, and the next Get dials afresh; with Sentinel, a connection that
// got a READONLY reply (its node was demoted) is closed too, and an idle connection is checked
// with ROLE before reuse. Nothing here retries a failed command: callers retry with backoff (the
// stages already do), and their next connection goes to wherever the master is then.
package redisconn

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"
)

// Defaults for the zero values of Config.
const (
	DefaultDialTimeout = 2 * time.Second
	DefaultPoolSize    = 32
	DefaultMaxIdle     = 8
)

const (
	// idleTimeout closes connections that sat unused in the pool this long.
	idleTimeout = 5 * time.Minute
	// borrowCheckAfter: an idle connection older than this is pinged before it is lent out.
	borrowCheckAfter = 3 * time.Second
	// sentinelTimeout bounds each exchange with one sentinel (connect, AUTH, query).
	sentinelTimeout = time.Second
)

// Config holds the redis.* settings.
type Config struct {
	// URL is redis://[user:password@]host:port/db, rediss:// for TLS, or
	// unix:///path/to/redis.sock?db=N. Empty means DefaultURL. A lone user-info part
	// (redis://secret@host) is a password, as with redis-cli.
	URL string
	// KeyPrefix is carried for callers; this package does not apply it.
	KeyPrefix string
	// Sentinel, when Addrs is set, finds the master; the URL's host is then ignored, but its
	// user, password, database and TLS apply to the master.
	Sentinel SentinelConfig
	// TLS applies to rediss:// URLs.
	TLS TLSConfig
	// DialTimeout bounds a new connection (connect, TLS, AUTH, SELECT, ROLE); 0 means 2 s.
	DialTimeout time.Duration
	// CommandTimeout bounds each command: writing it and waiting for its reply (redis.command_timeout;
	// 0 means none). Blocking commands give their own with redis.DoWithTimeout.
	CommandTimeout time.Duration
	// PoolSize is the most connections open at once (redigo MaxActive); 0 means 32. Up to 8 idle
	// connections are kept.
	PoolSize int
}

// SentinelConfig is redis.sentinel.*. Sentinels are reached over plain TCP (a rediss:// URL
// makes only the master connection TLS); the Redis user of the URL needs permission for ROLE.
type SentinelConfig struct {
	Addrs              []string // host:port of each sentinel, tried in turn
	Master             string   // name the sentinels monitor the master under
	Username, Password string   // for the sentinels themselves (optional)
}

// TLSConfig is redis.tls.*.
type TLSConfig struct {
	CAFile             string // PEM CA bundle; empty means the system roots
	CertFile, KeyFile  string // client certificate, for servers with tls-auth-clients yes
	InsecureSkipVerify bool   // testing only
	ServerName         string // name to verify instead of the host (useful when Sentinel hands out IPs)
}

func (t TLSConfig) isSet() bool {
	return t.CAFile != "" || t.CertFile != "" || t.KeyFile != "" || t.InsecureSkipVerify || t.ServerName != ""
}

// Validate checks the settings without touching the network or files. Its messages name the
// setting ("redis.url: ...") and never contain a password.
func (c Config) Validate() error {
	ep, err := parseURL(c.URL)
	if err != nil {
		return err
	}
	s := c.Sentinel
	switch {
	case len(s.Addrs) > 0 && s.Master == "":
		return errors.New("redis.sentinel.master: required when redis.sentinel.addrs is set")
	case len(s.Addrs) == 0 && s.Master != "":
		return errors.New("redis.sentinel.addrs: required when redis.sentinel.master is set")
	case len(s.Addrs) == 0 && (s.Username != "" || s.Password != ""):
		return errors.New("redis.sentinel.addrs: required when a sentinel username or password is set")
	case len(s.Addrs) > 0 && ep.network == "unix":
		return errors.New("redis.url: a unix socket cannot be combined with redis.sentinel.addrs")
	}
	for _, a := range s.Addrs {
		host, port, err := net.SplitHostPort(a)
		if err != nil || host == "" {
			return fmt.Errorf("redis.sentinel.addrs: %q is not host:port", a)
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("redis.sentinel.addrs: %q has no valid port", a)
		}
	}
	if c.TLS.isSet() && !ep.tls {
		return errors.New("redis.tls: TLS settings need a rediss:// redis.url")
	}
	if (c.TLS.CertFile == "") != (c.TLS.KeyFile == "") {
		return errors.New("redis.tls.cert_file and redis.tls.key_file: set both or neither")
	}
	switch {
	case c.DialTimeout < 0:
		return errors.New("redis.dial_timeout: must not be negative")
	case c.CommandTimeout < 0:
		return errors.New("redis.command_timeout: must not be negative")
	case c.PoolSize < 0:
		return errors.New("redis.pool_size: must not be negative")
	}
	return nil
}

// NewPool validates c, loads the TLS files and returns a pool. It does not connect: the first
// Get does (use Ping to check at start). With Sentinel, every new connection asks the sentinels
// where the master is, so after a failover new connections follow the new master; a node
// whose ROLE is not master is refused. log may be nil.
func NewPool(c Config, log *zap.Logger) (*redis.Pool, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = zap.NewNop()
	}
	log = log.With(zap.String("component", "redis"))
	if c.DialTimeout == 0 {
		c.DialTimeout = DefaultDialTimeout
	}
	if c.PoolSize == 0 {
		c.PoolSize = DefaultPoolSize
	}
	ep, _ := parseURL(c.URL) // Validate parsed it
	opts := []redis.DialOption{
		redis.DialContextFunc(netDialer(c.DialTimeout).DialContext),
		redis.DialTLSHandshakeTimeout(c.DialTimeout),
		redis.DialReadTimeout(c.CommandTimeout),
		redis.DialWriteTimeout(c.CommandTimeout),
		redis.DialDatabase(ep.db),
	}
	if ep.password != "" {
		opts = append(opts, redis.DialUsername(ep.username), redis.DialPassword(ep.password))
	}
	if ep.tls {
		tc, err := c.TLS.load()
		if err != nil {
			return nil, err
		}
		opts = append(opts, redis.DialUseTLS(true), redis.DialTLSConfig(tc))
	}

	d := &dialer{ep: ep, opts: opts, timeout: c.DialTimeout}
	if len(c.Sentinel.Addrs) > 0 {
		d.sentinel = newSentinels(c.Sentinel, log)
	}
	return &redis.Pool{
		MaxActive:   c.PoolSize,
		MaxIdle:     min(DefaultMaxIdle, c.PoolSize),
		IdleTimeout: idleTimeout,
		Wait:        true,
		DialContext: d.dial,
		TestOnBorrow: func(conn redis.Conn, lastUsed time.Time) error {
			if time.Since(lastUsed) < borrowCheckAfter {
				return nil
			}
			if d.sentinel != nil {
				return checkRole(conn, c.DialTimeout)
			}
			_, err := redis.DoWithTimeout(conn, c.DialTimeout, "PING")
			return err
		},
	}, nil
}

// Ping borrows a connection and sends PING, both bounded by ctx. Give ctx a deadline: the
// connection itself has no read timeout.
func Ping(ctx context.Context, pool *redis.Pool) error {
	conn, err := pool.GetContext(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	reply, err := redis.String(redis.DoContext(conn, ctx, "PING"))
	if err != nil {
		return err
	}
	if reply != "PONG" {
		return fmt.Errorf("PING answered %q", reply)
	}
	return nil
}

// netDialer connects with keep-alive probes that notice a vanished peer within about a minute.
func netDialer(timeout time.Duration) *net.Dialer {
	return &net.Dialer{
		Timeout: timeout,
		KeepAliveConfig: net.KeepAliveConfig{
			Enable: true, Idle: 30 * time.Second, Interval: 10 * time.Second, Count: 3,
		},
	}
}

// dialer makes the pool's connections.
type dialer struct {
	ep       endpoint
	opts     []redis.DialOption
	timeout  time.Duration
	sentinel *sentinels // nil without Sentinel
}

func (d *dialer) dial(ctx context.Context) (redis.Conn, error) {
	if d.sentinel != nil {
		return d.sentinel.dialMaster(ctx, d.timeout, d.opts)
	}
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	conn, err := redis.DialContext(ctx, d.ep.network, d.ep.addr, d.opts...)
	if err != nil {
		return nil, fmt.Errorf("redis at %s: %w", d.ep, err)
	}
	return conn, nil
}

// load builds the client TLS configuration, reading the files.
func (t TLSConfig) load() (*tls.Config, error) {
	tc := &tls.Config{
		MinVersion:         tls.VersionTLS12,
		InsecureSkipVerify: t.InsecureSkipVerify, //nolint:gosec // an explicit, documented test setting
		ServerName:         t.ServerName,
	}
	if t.CAFile != "" {
		pem, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, fmt.Errorf("redis.tls.ca_file: %w", err)
		}
		roots := x509.NewCertPool()
		if !roots.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("redis.tls.ca_file: no PEM certificate in %s", t.CAFile)
		}
		tc.RootCAs = roots
	}
	if t.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("redis.tls.cert_file and redis.tls.key_file: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

// Answers reports whether something speaking Redis listens at addr.
func Answers(addr string) bool {
	conn, err := net.DialTimeout("tcp", addr, 300*time.Millisecond)
	if err != nil {
		return false
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(500 * time.Millisecond))
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	buf := make([]byte, 64)
	n, _ := conn.Read(buf)
	return n > 0 && (buf[0] == '+' || buf[0] == '-')
}
