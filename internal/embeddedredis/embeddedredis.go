// Package embeddedredis owns the in-process Redis-compatible server (miniredis) that
// `flapjack server` starts when no Redis is configured and none answers at the default address,
// so `make run` works on a bare machine. Nothing it holds survives the process.
package embeddedredis

import (
	"fmt"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/alicebob/miniredis/v2/server"
)

// Server is a running embedded Redis.
type Server struct {
	m    *miniredis.Miniredis
	stop chan struct{}
	done chan struct{}
}

// Start listens on preferred (e.g. 127.0.0.1:6379, so tools reach it without flags) and falls
// back to a free loopback port when that is taken.
func Start(preferred string) (*Server, error) {
	m := miniredis.NewMiniRedis()
	if preferred == "" || m.StartAddr(preferred) != nil {
		if err := m.StartAddr("127.0.0.1:0"); err != nil {
			return nil, fmt.Errorf("start embedded Redis: %w", err)
		}
	}
	s := &Server{m: m, stop: make(chan struct{}), done: make(chan struct{})}
	go s.expire()
	return s, nil
}

// expire runs the keys' TTLs down by the wall clock, as on a real server. miniredis can do that
// itself on every command (ClockTTL), but then every command walks and sorts all keys: a batch
// of 2,000 events took 51 s that way. Here the walk happens once a second, or, when it grows
// long, after twenty times its own length, so it never takes more than ~5% of a core. Nothing
// rests on a key expiring on time (TTLs only tidy).
func (s *Server) expire() {
	defer close(s.done)
	last := time.Now()
	wait := time.Second
	for {
		select {
		case <-s.stop:
			return
		case <-time.After(wait):
		}
		now := time.Now()
		s.m.FastForward(now.Sub(last))
		last = now
		wait = max(time.Second, 20*time.Since(now))
	}
}

// Addr is host:port.
func (s *Server) Addr() string { return s.m.Addr() }

// URL is the redis:// URL of database 0.
func (s *Server) URL() string { return "redis://" + s.m.Addr() + "/0" }

// OnCommand calls seen with the lower-case name of every command the server receives, before
// it runs it. The embedded server has no CLIENT LIST, so this is how a test sees that a client
// has sent a blocking command (testredis's WaitBlocked).
func (s *Server) OnCommand(seen func(cmd string)) {
	s.m.Server().SetPreHook(func(_ *server.Peer, cmd string, _ ...string) bool {
		seen(strings.ToLower(cmd))
		return false
	})
}

// Close stops the server; its data is gone.
func (s *Server) Close() {
	close(s.stop)
	<-s.done
	s.m.Close()
}
