package main

import (
	"io"
	"net"
	"os"
	"sort"

	"github.com/gomodule/redigo/redis"
)

// redisConn is a Redis connection (named so command files read naturally).
type redisConn = redis.Conn

func sortedKeysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sortedValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, k := range sortedKeysOf(m) {
		out = append(out, m[k])
	}
	return out
}

func hostOf(addr string) string {
	h, _, _ := net.SplitHostPort(addr)
	return h
}

func portOf(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}

func (rt *runtime) stderr() io.Writer { return os.Stderr }

func readAll(r io.Reader) ([]byte, error) { return io.ReadAll(r) }
