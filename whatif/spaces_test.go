package whatif

import (
	"context"
	"errors"
	"testing"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/internal/testing/testredis"
)

// TestScratchPrefixesAreDeletedAfterwards: with a scratch Redis named, the two spaces are private
// key prefixes of it, and cleanup deletes their keys and nothing else.
func TestScratchPrefixesAreDeletedAfterwards(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	db.Do(t, "SET", "someone-elses", "1")
	spaces, cleanup, err := OpenSpaces(context.Background(), db.URL(), zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	if spaces[0].Keys.Prefix() == "" || spaces[0].Keys.Prefix() == spaces[1].Keys.Prefix() {
		t.Fatalf("prefixes %q and %q, want two distinct private ones", spaces[0].Keys.Prefix(), spaces[1].Keys.Prefix())
	}
	for _, s := range spaces {
		for i := range 1500 { // more than one UNLINK's worth
			db.Do(t, "SET", s.Keys.Check(string(rune('a'+i%26))+string(rune('0'+i/26))), "x")
		}
	}
	cleanup()
	keys, err := redis.Strings(db.Do(t, "KEYS", "*"), nil)
	if err != nil || len(keys) != 1 || keys[0] != "someone-elses" {
		t.Fatalf("keys left after cleanup: %d %v (%v)", len(keys), keys[:min(len(keys), 5)], err)
	}
	if _, _, err := OpenSpaces(context.Background(), "http://not-redis", zap.NewNop()); !errors.Is(err, ErrScratchURL) {
		t.Errorf("an unusable scratch URL: %v, want ErrScratchURL", err)
	}
}
