package whatif

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/internal/embeddedredis"
	"github.com/flapjackgo/flapjack/internal/redisread"
	"github.com/flapjackgo/flapjack/redisconn"
	"github.com/flapjackgo/flapjack/schema"
)

// spacesOpened tells apart the prefixes of the groups of one run, opened at once.
var spacesOpened atomic.Int64

// ErrScratchURL is wrapped when the scratch Redis URL cannot be used.
var ErrScratchURL = errors.New("unusable scratch Redis URL")

// OpenSpaces are two empty spaces for the baseline and the candidate: private redis-server
// processes (when redis-server is installed; ten times faster than the embedded server), else
// embedded servers, or, when url names a Redis, private key prefixes of it that the returned
// cleanup deletes. cleanup also stops the servers.
func OpenSpaces(ctx context.Context, url string, log *zap.Logger) ([2]Space, func(), error) {
	var spaces [2]Space
	var closers []func()
	cleanup := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	if url == "" {
		for i := range spaces {
			url, stop, err := privateRedis(ctx)
			if err != nil {
				cleanup()
				return spaces, nil, err
			}
			closers = append(closers, stop)
			pool, err := redisconn.NewPool(redisconn.Config{URL: url}, log)
			if err != nil {
				cleanup()
				return spaces, nil, err
			}
			closers = append(closers, func() { pool.Close() })
			spaces[i] = Space{Pool: pool, Keys: schema.NewKeys("")}
		}
		return spaces, cleanup, nil
	}
	pool, err := redisconn.NewPool(redisconn.Config{URL: url}, log)
	if err != nil {
		return spaces, nil, fmt.Errorf("%w: %v", ErrScratchURL, err)
	}
	closers = append(closers, func() { pool.Close() })
	run := fmt.Sprintf("whatif-%d-%d-%d", os.Getpid(), time.Now().UnixNano(), spacesOpened.Add(1))
	for i, name := range []string{"baseline", "candidate"} {
		spaces[i] = Space{Pool: pool, Keys: schema.NewKeys(run + ":" + name + ":")}
		keys := spaces[i].Keys
		closers = append(closers, func() {
			if err := deletePrefix(context.WithoutCancel(ctx), pool, keys.Prefix()); err != nil {
				log.Warn("could not delete the scratch keys", zap.String("prefix", keys.Prefix()), zap.Error(err))
			}
		})
	}
	return spaces, cleanup, nil
}

// privateRedis starts a redis-server that keeps nothing on disk on a free loopback port, or an
// embedded server when redis-server is not installed.
func privateRedis(ctx context.Context) (string, func(), error) {
	path, err := exec.LookPath("redis-server")
	if err != nil {
		srv, err := embeddedredis.Start("")
		if err != nil {
			return "", nil, err
		}
		return srv.URL(), srv.Close, nil
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	addr := l.Addr().String()
	l.Close()
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(path, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("start a scratch redis-server: %w", err)
	}
	stop := func() {
		cmd.Process.Kill()
		cmd.Wait()
	}
	for deadline := time.Now().Add(5 * time.Second); !redisconn.Answers(addr); {
		if time.Now().After(deadline) || ctx.Err() != nil {
			stop()
			return "", nil, fmt.Errorf("the scratch redis-server on %s did not answer within 5 s", addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return "redis://" + addr + "/0", stop, nil
}

// deletePrefix removes every key of a scratch prefix.
func deletePrefix(ctx context.Context, pool *redis.Pool, prefix string) error {
	conn, err := pool.GetContext(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	rest, err := redisread.Scan(ctx, conn, prefix, "")
	if err != nil {
		return err
	}
	for start := 0; start < len(rest); start += 1000 {
		args := make([]any, 0, 1000)
		for _, r := range rest[start:min(start+1000, len(rest))] {
			args = append(args, prefix+r)
		}
		if _, err := conn.Do("UNLINK", args...); err != nil {
			return fmt.Errorf("delete the scratch keys %s*: %w", prefix, err)
		}
	}
	return nil
}
