package views

import (
	"maps"
	"slices"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/schema"
)

// CurrentFailingChecks maps each entity to its failing current checks, sorted: the members of
// failed_checks that are also in current_checks:ENTITY (Flapjack 1.x's
// find_current_names_failing_by_entity, which the Jabber bulk acknowledgements act on). A
// disabled check stays out even while failed_checks still lists it. Two round trips; read only.
func CurrentFailingChecks(conn redis.Conn, keys schema.Keys) (map[string][]string, error) {
	failed, _, err := RecentFailedChecks(conn, keys, -1)
	if err != nil {
		return nil, err
	}
	failing := map[string][]string{}
	for _, f := range failed {
		failing[f.Entity] = append(failing[f.Entity], f.Check)
	}
	current, err := checkstate.CurrentChecksOf(conn, keys, slices.Sorted(maps.Keys(failing)))
	if err != nil {
		return nil, err
	}
	out := make(map[string][]string, len(failing))
	for entity, checks := range failing {
		var keep []string
		for _, c := range checks {
			if _, ok := slices.BinarySearch(current[entity], c); ok {
				keep = append(keep, c)
			}
		}
		if len(keep) > 0 {
			slices.Sort(keep)
			out[entity] = keep
		}
	}
	return out, nil
}
