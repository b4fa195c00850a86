// Package embeddedredis owns the in-process Redis-compatible server (miniredis) that
// `flapjack server` starts when no Redis is configured and none answers at the default address,
// so `make run` works on a bare machine. Nothing it holds survives the process.
package embeddedredis

import (
	"fmt"

	"github.com/alicebob/miniredis/v2"
)

// Server is a running embedded Redis.
type Server struct {
	m *miniredis.Miniredis
}

// Start listens on preferred (e.g. 127.0.0.1:6379, so tools reach it without flags) and falls
// back to a free loopback port when that is taken.
func Start(preferred string) (*Server, error) {
	m := miniredis.NewMiniRedis()
	// Keys with a TTL expire by the wall clock, as on a real server.
	m.ClockTTL(true)
	if preferred != "" {
		if err := m.StartAddr(preferred); err == nil {
			return &Server{m: m}, nil
		}
	}
	if err := m.StartAddr("127.0.0.1:0"); err != nil {
		return nil, fmt.Errorf("start embedded Redis: %w", err)
	}
	return &Server{m: m}, nil
}

// Addr is host:port.
func (s *Server) Addr() string { return s.m.Addr() }

// URL is the redis:// URL of database 0.
func (s *Server) URL() string { return "redis://" + s.m.Addr() + "/0" }

// Close stops the server; its data is gone.
func (s *Server) Close() { s.m.Close() }
