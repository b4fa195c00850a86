package receiver

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
)

// TestServeSensu: one event per connection as Sensu Go sends it, several on one connection,
// a rejected one reported, and a connection left open does not hold up shutdown.
func TestServeSensu(t *testing.T) {
	t.Parallel()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := &countingListener{Listener: inner}
	enq := &memEnqueuer{}
	var rej rejections
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ServeSensu(ctx, SensuOptions{Listener: ln, OnReject: rej.add}, enq, zap.NewNop()) }()
	send := func(data string, close bool) net.Conn {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Write([]byte(data)); err != nil {
			t.Fatal(err)
		}
		if close {
			c.Close()
		}
		return c
	}
	for _, f := range sensuGoFixtures {
		send(string(readFixture(t, f.file)), true)
	}
	waitFor(t, "the fixtures", 5*time.Second, func() bool { return enq.count() == len(sensuGoFixtures) })
	send(sensu1+"\n"+sensuGo+"\n"+`{"entity":{"metadata":{"name":"x"}},"check":{"metadata":{"name":"c"}}}`, true)
	waitFor(t, "a connection's two events", 5*time.Second, func() bool { return enq.count() == len(sensuGoFixtures)+2 })
	waitFor(t, "the rejection", 5*time.Second, func() bool { return len(rej.get()) == 1 })
	accepted := ln.accepted.Load()
	open := send(`{"entity":`, false)
	defer open.Close()
	waitFor(t, "the open connection accepted", 5*time.Second, func() bool { return ln.accepted.Load() > accepted })
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ServeSensu did not return after cancellation with a connection open")
	}
}

// countingListener counts the connections ServeSensu has accepted.
type countingListener struct {
	net.Listener
	accepted atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted.Add(1)
	}
	return c, err
}
