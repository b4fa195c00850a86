package redisconn

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"
)

// sentinels finds the master through Redis Sentinel, following the Sentinel client guidelines:
// ask each sentinel in turn, dial the address it gives, and keep the connection only if ROLE
// says master. The sentinel that answered moves to the front for the next dial. The list is
// copied before it is walked, so reordering never skips a sentinel (the bug that made
// FZambia/sentinel fail when the first sentinel was down).
type sentinels struct {
	master   string
	username string
	password string
	log      *zap.Logger

	mu         sync.Mutex
	addrs      []string // preferred order
	lastMaster string   // the master address last connected to, to log changes
}

func newSentinels(c SentinelConfig, log *zap.Logger) *sentinels {
	return &sentinels{
		master:   c.Master,
		username: c.Username,
		password: c.Password,
		log:      log.With(zap.String("sentinel_master", c.Master)),
		addrs:    append([]string(nil), c.Addrs...),
	}
}

// order returns a copy of the sentinel list in preferred order.
func (s *sentinels) order() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.addrs...)
}

// succeeded moves sentinel to the front and logs a master change.
func (s *sentinels) succeeded(sentinel, master string) {
	s.mu.Lock()
	for i, a := range s.addrs {
		if a == sentinel && i > 0 {
			copy(s.addrs[1:i+1], s.addrs[:i])
			s.addrs[0] = sentinel
			break
		}
	}
	previous := s.lastMaster
	s.lastMaster = master
	s.mu.Unlock()
	if previous != master {
		s.log.Info("redis master found through sentinel",
			zap.String("master_addr", master), zap.String("previous", previous), zap.String("sentinel", sentinel))
	}
}

// dialMaster returns a connection to the current master, made with opts, or an error that says
// what each sentinel answered.
func (s *sentinels) dialMaster(ctx context.Context, timeout time.Duration, opts []redis.DialOption) (redis.Conn, error) {
	addrs := s.order()
	var (
		problems []string
		answered bool
		tried    = map[string]bool{}
	)
	for _, sentinel := range addrs {
		if err := ctx.Err(); err != nil {
			problems = append(problems, err.Error())
			break
		}
		master, err := s.ask(ctx, sentinel)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", sentinel, err))
			continue
		}
		answered = true
		if tried[master] {
			continue // another sentinel named the same node; its failure is already recorded
		}
		tried[master] = true
		conn, err := dialChecked(ctx, master, timeout, opts)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s named %s: %v", sentinel, master, err))
			continue
		}
		s.succeeded(sentinel, master)
		return &masterConn{Conn: conn, log: s.log, addr: master}, nil
	}
	if !answered {
		return nil, fmt.Errorf("no sentinel of %v knows master %s: %s", addrs, s.master, strings.Join(problems, "; "))
	}
	return nil, fmt.Errorf("no master %s reachable through sentinels %v: %s", s.master, addrs, strings.Join(problems, "; "))
}

// ask sends SENTINEL get-master-addr-by-name to one sentinel and returns host:port.
func (s *sentinels) ask(ctx context.Context, sentinel string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, sentinelTimeout)
	defer cancel()
	opts := []redis.DialOption{redis.DialContextFunc(netDialer(sentinelTimeout).DialContext)}
	if s.password != "" {
		opts = append(opts, redis.DialUsername(s.username), redis.DialPassword(s.password))
	}
	conn, err := redis.DialContext(ctx, "tcp", sentinel, opts...)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	reply, err := redis.Strings(redis.DoContext(conn, ctx, "SENTINEL", "get-master-addr-by-name", s.master))
	switch {
	case errors.Is(err, redis.ErrNil):
		return "", fmt.Errorf("does not monitor a master named %s", s.master)
	case err != nil:
		return "", err
	case len(reply) != 2:
		return "", fmt.Errorf("unexpected reply %q", reply)
	}
	return net.JoinHostPort(reply[0], reply[1]), nil
}

// dialChecked connects to addr and keeps the connection only if the node is a master.
func dialChecked(ctx context.Context, addr string, timeout time.Duration, opts []redis.DialOption) (redis.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := redis.DialContext(ctx, "tcp", addr, opts...)
	if err != nil {
		return nil, err
	}
	deadline, _ := ctx.Deadline()
	if err := checkRole(conn, time.Until(deadline)); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// checkRole fails unless the node behind conn says ROLE master.
func checkRole(conn redis.Conn, timeout time.Duration) error {
	reply, err := redis.Values(redis.DoWithTimeout(conn, max(timeout, time.Millisecond), "ROLE"))
	if err != nil {
		if strings.HasPrefix(err.Error(), "NOPERM") {
			return fmt.Errorf("ROLE: %w (the Redis user needs +role)", err)
		}
		return fmt.Errorf("ROLE: %w", err)
	}
	if len(reply) == 0 {
		return errors.New("ROLE: empty reply")
	}
	role, err := redis.String(reply[0], nil)
	if err != nil {
		return fmt.Errorf("ROLE: %w", err)
	}
	if role != "master" {
		return fmt.Errorf("node has role %s, not master (failover in progress?)", role)
	}
	return nil
}

// errReadOnly marks a connection that reached a demoted master.
var errReadOnly = errors.New("redis: the node is read-only (no longer master); connection dropped")

// masterConn is a connection to a master found through Sentinel. Once a command gets a
// READONLY reply the node has been demoted: Err then reports it, so the pool closes the
// connection instead of lending it again, and the caller's retry dials the new master.
type masterConn struct {
	redis.Conn
	log  *zap.Logger
	addr string
	err  error
}

func (c *masterConn) note(reply any, err error) (any, error) {
	var re redis.Error
	if c.err == nil && errors.As(err, &re) && strings.HasPrefix(string(re), "READONLY") {
		c.err = errReadOnly
		c.log.Warn("redis master became read-only; dropping the connection", zap.String("master_addr", c.addr))
	}
	return reply, err
}

// Err reports a READONLY reply seen earlier, else the connection's own error.
func (c *masterConn) Err() error {
	if c.err != nil {
		return c.err
	}
	return c.Conn.Err()
}

func (c *masterConn) Do(cmd string, args ...any) (any, error) {
	return c.note(c.Conn.Do(cmd, args...))
}

func (c *masterConn) Receive() (any, error) {
	return c.note(c.Conn.Receive())
}

func (c *masterConn) DoWithTimeout(timeout time.Duration, cmd string, args ...any) (any, error) {
	return c.note(redis.DoWithTimeout(c.Conn, timeout, cmd, args...))
}

func (c *masterConn) ReceiveWithTimeout(timeout time.Duration) (any, error) {
	return c.note(redis.ReceiveWithTimeout(c.Conn, timeout))
}

func (c *masterConn) DoContext(ctx context.Context, cmd string, args ...any) (any, error) {
	return c.note(redis.DoContext(c.Conn, ctx, cmd, args...))
}

func (c *masterConn) ReceiveContext(ctx context.Context) (any, error) {
	return c.note(redis.ReceiveContext(c.Conn, ctx))
}
