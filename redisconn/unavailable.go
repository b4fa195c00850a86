package redisconn

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/gomodule/redigo/redis"
)

// transientReplies are the error replies of a Redis that cannot serve for now.
var transientReplies = map[string]bool{"LOADING": true, "BUSY": true, "READONLY": true, "MASTERDOWN": true, "TRYAGAIN": true}

// Unavailable reports whether err means Redis could not be reached or did not answer in time
// (refused or dropped connection, a command past redis.command_timeout, no free connection
// before a deadline) or that it cannot serve now (LOADING its data after a restart, BUSY with a
// long script, READONLY or MASTERDOWN during a failover), as opposed to an answer about the
// request (WRONGTYPE, a script's error). Request handlers answer the first kind 503, so a
// client knows to retry.
func Unavailable(err error) bool {
	if err == nil {
		return false
	}
	var reply redis.Error
	if errors.As(err, &reply) {
		code, _, _ := strings.Cut(string(reply), " ")
		return transientReplies[code]
	}
	var netErr net.Error
	return errors.As(err, &netErr) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, redis.ErrPoolExhausted)
}
