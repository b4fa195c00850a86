package redisconn

import (
	"context"
	"fmt"
	"io"
	"net"
	"testing"

	"github.com/gomodule/redigo/redis"
)

func TestUnavailable(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: fmt.Errorf("connection refused")}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"none", nil, false},
		{"refused", fmt.Errorf("queue events on events: %w", refused), true},
		{"dropped", fmt.Errorf("queue events: %w", io.EOF), true},
		{"deadline", fmt.Errorf("get: %w", context.DeadlineExceeded), true},
		{"pool", redis.ErrPoolExhausted, true},
		{"loading", fmt.Errorf("x: %w", redis.Error("LOADING Redis is loading the dataset in memory")), true},
		{"busy", redis.Error("BUSY Redis is busy running a script"), true},
		{"wrong type", fmt.Errorf("x: %w", redis.Error("WRONGTYPE Operation against a key holding the wrong kind of value")), false},
		{"script error", redis.Error("ERR user_script:1: bad"), false},
		{"other", fmt.Errorf("encode event: bad"), false},
	} {
		if got := Unavailable(tc.err); got != tc.want {
			t.Errorf("%s: Unavailable(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}
