package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/redisconn"
)

// defaultRedisURL is used when redis.url is empty.
const defaultRedisURL = "redis://127.0.0.1:6379/0"

// redisConfig builds the connection settings.
func (rt *runtime) redisConfig() redisconn.Config {
	v := rt.values
	url := v.String("redis.url")
	if rt.redisOverride != "" {
		url = rt.redisOverride
	}
	if url == "" {
		url = defaultRedisURL
	}
	return redisconn.Config{
		URL:       url,
		KeyPrefix: v.String("redis.key_prefix"),
		Sentinel: redisconn.SentinelConfig{
			Addrs:    v.List("redis.sentinel.addrs"),
			Master:   v.String("redis.sentinel.master"),
			Username: v.String("redis.sentinel.username"),
			Password: v.String("redis.sentinel.password"),
		},
		TLS: redisconn.TLSConfig{
			CAFile:             v.String("redis.tls.ca_file"),
			CertFile:           v.String("redis.tls.cert_file"),
			KeyFile:            v.String("redis.tls.key_file"),
			InsecureSkipVerify: v.Bool("redis.tls.insecure_skip_verify"),
		},
		PoolSize:       v.Int("redis.pool_size"),
		CommandTimeout: v.Duration("redis.command_timeout"),
	}
}

// connect opens the Redis pool. Commands that only make sense against a live Redis check it
// answers at once, with an error naming the (redacted) URL.
func (rt *runtime) connect(ctx context.Context) error {
	cfg := rt.redisConfig()
	if err := cfg.Validate(); err != nil {
		return cli.Exit(err.Error(), 2)
	}
	pool, err := redisconn.NewPool(cfg, rt.log)
	if err != nil {
		return cli.Exit(err.Error(), 2)
	}
	rt.pool = pool
	rt.redisURL = redisconn.Redact(cfg.URL)
	if len(cfg.Sentinel.Addrs) > 0 {
		rt.redisURL = fmt.Sprintf("sentinel master %q via %v", cfg.Sentinel.Master, cfg.Sentinel.Addrs)
	}
	rt.closers = append(rt.closers, func() { pool.Close() })
	return nil
}

// connectNow is connect plus a ping, for one-shot commands.
func (rt *runtime) connectNow(ctx context.Context) error {
	if err := rt.connect(ctx); err != nil {
		return err
	}
	pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := redisconn.Ping(pingCtx, rt.pool); err != nil {
		return fmt.Errorf("no answer from Redis at %s: %w", rt.redisURL, err)
	}
	return nil
}

// refuseBadCredentials pings Redis once at the start of a long-running command: a password
// Redis refuses or a certificate that is not trusted will not fix itself, so the process exits 2
// naming the setting instead of retrying forever. Anything else (Redis down, a failover under
// way) is left to the stages, which retry with backoff.
func (rt *runtime) refuseBadCredentials(ctx context.Context) error {
	pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	err := redisconn.Ping(pingCtx, rt.pool)
	if err == nil {
		return nil
	}
	// Matched on text: the Sentinel dial flattens the underlying errors.
	msg := err.Error()
	switch {
	case strings.Contains(msg, "x509:") || strings.Contains(msg, "tls: failed to verify"):
		return cli.Exit(fmt.Sprintf("redis.tls.ca_file: the certificate of Redis at %s is not trusted: %v", rt.redisURL, err), 2)
	case strings.Contains(msg, "WRONGPASS") || strings.Contains(msg, "NOAUTH") || strings.Contains(msg, "NOPERM"):
		return cli.Exit(fmt.Sprintf("redis.url: Redis at %s refused the credentials: %v", rt.redisURL, err), 2)
	}
	rt.log.Warn("Redis does not answer yet; stages will retry", zap.String("redis", rt.redisURL), zap.Error(err))
	return nil
}
