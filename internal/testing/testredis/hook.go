package testredis

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

// HookedPool is a pool of d's database whose connections call hook before every command they
// send (Do, Send and their context and timeout forms), for tests that look at what a component
// sends or interfere at a chosen moment. It is closed when the test ends.
func (d *DB) HookedPool(t testing.TB, hook func(cmd string, args []any)) *redis.Pool {
	dial := Pool(d.Server.Addr, d.Index).Dial
	pool := &redis.Pool{Dial: func() (redis.Conn, error) {
		c, err := dial()
		return hookConn{c, hook}, err
	}}
	t.Cleanup(func() { pool.Close() })
	return pool
}

// hookConn calls hook before every command it sends.
type hookConn struct {
	redis.Conn
	hook func(cmd string, args []any)
}

func (c hookConn) Do(cmd string, args ...any) (any, error) {
	c.hook(cmd, args)
	return c.Conn.Do(cmd, args...)
}

func (c hookConn) Send(cmd string, args ...any) error {
	c.hook(cmd, args)
	return c.Conn.Send(cmd, args...)
}

func (c hookConn) DoContext(ctx context.Context, cmd string, args ...any) (any, error) {
	c.hook(cmd, args)
	return redis.DoContext(c.Conn, ctx, cmd, args...)
}

func (c hookConn) DoWithTimeout(timeout time.Duration, cmd string, args ...any) (any, error) {
	c.hook(cmd, args)
	return redis.DoWithTimeout(c.Conn, timeout, cmd, args...)
}

func (c hookConn) ReceiveContext(ctx context.Context) (any, error) {
	return redis.ReceiveContext(c.Conn, ctx)
}

func (c hookConn) ReceiveWithTimeout(timeout time.Duration) (any, error) {
	return redis.ReceiveWithTimeout(c.Conn, timeout)
}
