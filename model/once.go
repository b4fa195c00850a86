package model

import (
	_ "embed"
	"fmt"

	"github.com/gomodule/redigo/redis"
)

var (
	//go:embed scripts/remember_once.lua
	rememberOnceSource string
	rememberOnceScript = redis.NewScript(0, rememberOnceSource)
)

// RememberOnce adds member, scored at, to the sorted set key unless it is there already, and
// forgets the members scored before forgetBefore in the same atomic step: true when the member
// is new. Signed requests use it to refuse a replay within the time their timestamp is accepted
// in; the set stays one window long by the injected clock, with no TTL.
func RememberOnce(conn redis.Conn, key, member string, at, forgetBefore int64) (bool, error) {
	n, err := redis.Int(rememberOnceScript.Do(conn, key, member, at, forgetBefore))
	if err != nil {
		return false, fmt.Errorf("remember %s: %w", key, err)
	}
	return n == 1, nil
}
