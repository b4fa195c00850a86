package views_test

import (
	"reflect"
	"testing"

	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/model/views"
	"github.com/flapjackgo/flapjack/schema"
)

func TestCurrentFailingChecks(t *testing.T) {
	t.Parallel()
	for _, prefix := range []string{"", "fj:"} {
		t.Run("prefix="+prefix, func(t *testing.T) {
			t.Parallel()
			db := testredis.New(t)
			keys := schema.NewKeys(prefix)
			conn := db.Conn(t)
			defer conn.Close()

			got, err := views.CurrentFailingChecks(conn, keys)
			if err != nil || len(got) != 0 {
				t.Fatalf("empty database: %v, %v", got, err)
			}

			// a: Z and X fail, W passes; b:Y fails but is disabled (not current); c:V fails and
			// has a colon in its name; a member that is not ENTITY:CHECK is skipped.
			db.Do(t, "ZADD", keys.FailedChecks(), 100, "a:Z", 200, "a:X", 300, "b:Y", 400, "not-a-check-id", 500, "c:db:conn")
			db.Do(t, "ZADD", keys.CurrentChecks("a"), 1, "X", 1, "W", 1, "Z")
			db.Do(t, "ZADD", keys.CurrentChecks("b"), 1, "Other")
			db.Do(t, "ZADD", keys.CurrentChecks("c"), 1, "db:conn")
			got, err = views.CurrentFailingChecks(conn, keys)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string][]string{"a": {"X", "Z"}, "c": {"db:conn"}}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("CurrentFailingChecks = %v, want %v", got, want)
			}
		})
	}
}
