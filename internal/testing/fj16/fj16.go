// Package fj16 loads into a test's Redis a database recorded from the real Flapjack 1.6 data
// layer (testdata/dump.json, written by testdata/record.rb; testdata/README.md says how), so
// tests can show that what Flapjack 1.6 wrote is found, shown and changed as 1.6 would.
package fj16

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/testing/testredis"
)

//go:embed testdata/dump.json
var dumpJSON []byte

// Key is one recorded key: its Redis type, the seconds it had left to live (-1: none) and its
// value (string, hash, set members, list items, or sorted-set [member, score] pairs).
type Key struct {
	Key   string          `json:"key"`
	Type  string          `json:"type"`
	TTL   int64           `json:"ttl"`
	Value json.RawMessage `json:"value"`
}

// Dump is a whole recording.
type Dump struct {
	// RecordedAt is the Unix time of the recording; maintenance 1.6 had to time from its own
	// clock (current scheduled and unscheduled maintenance) lies around it.
	RecordedAt int64 `json:"recorded_at"`
	Keys       []Key `json:"keys"`
}

// Recorded is the recording.
func Recorded(t testing.TB) Dump {
	t.Helper()
	var d Dump
	if err := json.Unmarshal(dumpJSON, &d); err != nil {
		t.Fatalf("decode the Flapjack 1.6 recording: %v", err)
	}
	return d
}

// Load writes the recording into conn's database (keys with a time to live get it again, counted
// from now) and returns it.
func Load(t testing.TB, conn redis.Conn) Dump {
	t.Helper()
	d := Recorded(t)
	for _, k := range d.Keys {
		args, err := restoreArgs(k)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Do(args[0].(string), args[1:]...); err != nil {
			t.Fatalf("restore %s: %v", k.Key, err)
		}
		if k.TTL > 0 {
			if _, err := conn.Do("EXPIRE", k.Key, k.TTL); err != nil {
				t.Fatalf("expire %s: %v", k.Key, err)
			}
		}
	}
	return d
}

// NewDB is a fresh test database (testredis.New) holding the recording.
func NewDB(t testing.TB) *testredis.DB {
	t.Helper()
	db := testredis.New(t)
	conn := db.Conn(t)
	defer conn.Close()
	Load(t, conn)
	return db
}

// restoreArgs is the command that writes k.
func restoreArgs(k Key) ([]any, error) {
	switch k.Type {
	case "string":
		var s string
		err := json.Unmarshal(k.Value, &s)
		return []any{"SET", k.Key, s}, wrap(k, err)
	case "hash":
		var m map[string]string
		err := json.Unmarshal(k.Value, &m)
		args := []any{"HSET", k.Key}
		for f, v := range m {
			args = append(args, f, v)
		}
		return args, wrap(k, err)
	case "set", "list":
		var items []string
		err := json.Unmarshal(k.Value, &items)
		args := []any{map[string]string{"set": "SADD", "list": "RPUSH"}[k.Type], k.Key}
		for _, v := range items {
			args = append(args, v)
		}
		return args, wrap(k, err)
	case "zset":
		var pairs [][2]json.RawMessage
		err := json.Unmarshal(k.Value, &pairs)
		args := []any{"ZADD", k.Key}
		for _, p := range pairs {
			var member string
			var score float64
			if err == nil {
				err = json.Unmarshal(p[0], &member)
			}
			if err == nil {
				err = json.Unmarshal(p[1], &score)
			}
			args = append(args, strconv.FormatFloat(score, 'f', -1, 64), member)
		}
		return args, wrap(k, err)
	}
	return nil, fmt.Errorf("recorded key %s has type %q, which Load does not restore", k.Key, k.Type)
}

func wrap(k Key, err error) error {
	if err != nil {
		return fmt.Errorf("decode recorded %s %s: %w", k.Type, k.Key, err)
	}
	return nil
}

// Find is the recorded key named key; the test fails when there is none.
func (d Dump) Find(t testing.TB, key string) Key {
	t.Helper()
	for _, k := range d.Keys {
		if k.Key == key {
			return k
		}
	}
	t.Fatalf("the Flapjack 1.6 recording has no key %q", key)
	return Key{}
}
