package views_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/model/views"
	"github.com/flapjackgo/flapjack/schema"
)

func TestListings(t *testing.T) {
	t.Parallel()
	for _, prefix := range []string{"", "fj:"} {
		t.Run("prefix="+prefix, func(t *testing.T) {
			t.Parallel()
			db := testredis.New(t)
			keys := schema.NewKeys(prefix)
			db.Do(t, "ZADD", keys.FailedChecks(), 100, "a:X", 300, "b:Y", 200, "not-a-check-id", 300, "c:Z")
			db.Do(t, "ZADD", keys.CurrentEntities(), 1, "b", 1, "a")
			db.Do(t, "ZADD", keys.CurrentChecks("a"), 1, "X", 1, "W")
			db.Do(t, "ZADD", keys.CurrentChecks("b"), 1, "Y")
			db.Do(t, "HSET", keys.Check("a:X"), "state", "critical", "last_change", 100)
			db.Do(t, "HSET", keys.EntityIDsByName(), "a", "1")
			db.Do(t, "SET", keys.EntityID("b"), "2")
			db.Do(t, "SADD", keys.EntityTag("web"), "1", "2", "3")
			db.Do(t, "SADD", keys.EntityTag("db"), "2")
			conn := db.Conn(t)
			defer conn.Close()

			ref := func(e, c string) model.CheckRef { return model.CheckRef{Entity: e, Check: c} }
			for _, c := range []struct {
				limit int
				want  string
			}{
				{-1, "[{c:Z 300} {b:Y 300} {a:X 100}]"}, // ties: id descending, as ZREVRANGE
				{2, "[{c:Z 300} {b:Y 300}]"},
				{0, "[]"},
			} {
				got, total, err := views.RecentFailedChecks(conn, keys, c.limit)
				s := "["
				for i, f := range got {
					if i > 0 {
						s += " "
					}
					s += fmt.Sprintf("{%s %d}", f.ID(), f.Since)
				}
				if s += "]"; err != nil || s != c.want || total != 4 {
					t.Errorf("RecentFailedChecks(%d) = %s, %d, %v; want %s, 4", c.limit, s, total, err, c.want)
				}
			}

			current, err := checkstate.AllCurrentChecks(conn, keys)
			if want := []model.CheckRef{ref("a", "W"), ref("a", "X"), ref("b", "Y")}; err != nil || !reflect.DeepEqual(current, want) {
				t.Errorf("AllCurrentChecks = %v, %v", current, err)
			}

			tagged, err := views.EntitiesTagged(conn, keys, "web", []string{"a", "b", "unknown"})
			if want := map[string]bool{"a": true, "b": true}; err != nil || !reflect.DeepEqual(tagged, want) {
				t.Errorf("EntitiesTagged(web) = %v, %v", tagged, err)
			}
			tagged, err = views.EntitiesTagged(conn, keys, "db", []string{"a", "b"})
			if want := map[string]bool{"b": true}; err != nil || !reflect.DeepEqual(tagged, want) {
				t.Errorf("EntitiesTagged(db) = %v, %v", tagged, err)
			}

			changes, err := views.LastChanges(conn, keys, []model.CheckRef{ref("a", "X"), ref("b", "Y")})
			if err != nil || !reflect.DeepEqual(changes, []int64{100, 0}) {
				t.Errorf("LastChanges = %v, %v", changes, err)
			}

			// A key of the wrong type is an error, and the connection stays usable.
			db.Do(t, "SET", keys.EntityTag("broken"), "x")
			if _, err := views.EntitiesTagged(conn, keys, "broken", []string{"a"}); err == nil {
				t.Error("EntitiesTagged read a string as a set")
			}
			if _, _, err := views.RecentFailedChecks(conn, keys, 1); err != nil {
				t.Errorf("connection unusable after an error: %v", err)
			}
		})
	}
}
