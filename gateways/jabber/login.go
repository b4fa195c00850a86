package jabber

import (
	"context"
	"crypto/tls"
	"time"

	xmpp "github.com/xmppo/go-xmpp"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/queue"
)

// Login is one XMPP account's connection as flapjack makes it: TLS mode, keepalive pings,
// presence. The Jabber gateway's Client and oobetet both connect through it. Never log it: it
// holds the password.
type Login struct {
	Host, User, Password, Resource string
	// Domain is the server name the certificate must carry.
	Domain                                   string
	TLS                                      string // TLSDirect, TLSStartTLS or TLSPlain
	InsecureSkipVerify                       bool
	DialTimeout, Keepalive, KeepaliveTimeout time.Duration
	// Software names the client in presence and version answers ("flapjack"), with Version.
	Software, Version string
}

// options are the go-xmpp options of the login.
func (l Login) options() xmpp.Options {
	o := xmpp.Options{
		Host: l.Host, User: l.User, Password: l.Password, Resource: l.Resource,
		DialTimeout: l.DialTimeout,
		Status:      "chat", StatusMessage: l.Software + " " + l.Version,
		PeriodicServerPings:        true,
		PeriodicServerPingsPeriod:  int(l.Keepalive / time.Millisecond),
		PeriodicServerPingsTimeout: int(l.KeepaliveTimeout / time.Millisecond),
		SoftwareName:               l.Software, SoftwareVersion: l.Version,
	}
	tlsConfig := &tls.Config{ServerName: l.Domain, InsecureSkipVerify: l.InsecureSkipVerify, MinVersion: tls.VersionTLS12}
	switch l.TLS {
	case TLSDirect:
		// go-xmpp: NoTLS false means TLS from the first byte.
		o.TLSConfig = tlsConfig
	case TLSStartTLS:
		o.NoTLS, o.StartTLS, o.TLSConfig = true, true, tlsConfig
	case TLSPlain:
		o.NoTLS, o.InsecureAllowUnencryptedAuth = true, true
	}
	return o
}

// Dial logs in. go-xmpp cannot be interrupted while it connects, so the attempt runs aside and a
// client that arrives after ctx ended is closed.
func (l Login) Dial(ctx context.Context) (*xmpp.Client, error) {
	type result struct {
		c   *xmpp.Client
		err error
	}
	done := make(chan result, 1)
	opts := l.options()
	go func() {
		x, err := opts.NewClient()
		done <- result{x, err}
	}()
	select {
	case r := <-done:
		return r.c, r.err
	case <-ctx.Done():
		go func() {
			if r := <-done; r.c != nil {
				r.c.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

// stableSession is how long a session must last for the next reconnect to be immediate again;
// a server that accepts logins and then drops them at once is retried with backoff.
const stableSession = 30 * time.Second

// KeepConnected owns the login's connection until ctx ends: dial, serve, and reconnect with
// backoff (first attempt immediate, then backoff.First doubling up to backoff.Max). serve runs
// one session and returns when the connection fails or ctx ends.
func (l Login) KeepConnected(ctx context.Context, log *zap.Logger, backoff queue.Backoff, serve func(context.Context, *xmpp.Client) error) {
	failures := 0
	for ctx.Err() == nil {
		if failures > 0 {
			delay := backoff.Delay(failures - 1)
			log.Info("reconnecting to the XMPP server", zap.Duration("in", delay), zap.Int("attempt", failures+1))
			queue.Sleep(ctx, delay)
			if ctx.Err() != nil {
				return
			}
		}
		client, err := l.Dial(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			failures++
			log.Warn("cannot connect to the XMPP server", zap.String("server", l.Host),
				zap.String("jid", l.User), zap.String("tls", l.TLS), zap.Error(err))
			continue
		}
		started := time.Now()
		err = serve(ctx, client)
		if ctx.Err() != nil {
			return
		}
		log.Warn("XMPP connection lost", zap.Error(err), zap.Duration("after", time.Since(started)))
		if time.Since(started) >= stableSession {
			failures = 0
		} else {
			failures++
		}
	}
}
