package embeddedredis

import (
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

// TestKeysExpireByTheWallClock: a key set with a TTL is gone a little after it ran down, as on a
// real server, and one without stays.
func TestKeysExpireByTheWallClock(t *testing.T) {
	t.Parallel()
	srv, err := Start("")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	conn, err := redis.Dial("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Do("SET", "short", "v", "EX", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Do("SET", "kept", "v"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		n, err := redis.Int(conn.Do("EXISTS", "short"))
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a key set with EX 1 still exists after 5 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if n, _ := redis.Int(conn.Do("EXISTS", "kept")); n != 1 {
		t.Error("a key without a TTL is gone")
	}
}
