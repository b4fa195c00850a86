package status

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/oncall"
	"github.com/flapjackgo/flapjack/schema"
)

// ScheduleLookahead is how far ahead ScheduleWarnings looks for nobody on call.
const ScheduleLookahead = 24 * time.Hour

// ScheduleWarnings are warnings about the on-call schedules an entity or an escalation step
// uses: one that does not exist, and one with nobody on call (a gap) or only its fallback at
// some point between now and ScheduleLookahead later. They do not make the system unhealthy:
// routing still goes somewhere, or the operator chose the gap.
func ScheduleWarnings(conn redis.Conn, keys schema.Keys, now time.Time) ([]string, error) {
	users, err := scheduleUsers(conn, keys)
	if err != nil || len(users) == 0 {
		return nil, err
	}
	schedules, problems, err := roster.Schedules(conn, keys)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range problems {
		out = append(out, p.Error())
	}
	byID := make(map[string]*oncall.Schedule, len(schedules))
	for _, s := range schedules {
		byID[s.ID] = s
	}
	for _, id := range slices.Sorted(maps.Keys(users)) {
		used := strings.Join(users[id], ", ")
		s, ok := byID[id]
		if !ok {
			out = append(out, fmt.Sprintf("schedule %s, used by %s, does not exist", id, used))
			continue
		}
		shifts, err := s.Shifts(now, now.Add(ScheduleLookahead))
		if err != nil {
			return nil, err
		}
		for _, sh := range shifts {
			if sh.Source != oncall.Nobody && sh.Source != oncall.FromFallback {
				continue
			}
			what := "nobody is on call"
			if sh.Source == oncall.FromFallback {
				what = "only the fallback (" + strings.Join(sh.Contacts, ", ") + ") is on call"
			}
			when := "from " + sh.Start.UTC().Format(time.RFC3339)
			if !sh.Start.After(now) {
				when = "now"
			}
			out = append(out, fmt.Sprintf("schedule %s, used by %s: %s %s until %s", id, used, what, when,
				sh.End.UTC().Format(time.RFC3339)))
		}
	}
	return out, nil
}

// scheduleUsers maps each schedule id named by an entity or an escalation step to who names it
// ("entity web-01", "escalation db-escalation"), sorted.
func scheduleUsers(conn redis.Conn, keys schema.Keys) (map[string][]string, error) {
	names, err := redis.StringMap(conn.Do("HGETALL", keys.EntityNamesByID()))
	if err != nil {
		return nil, fmt.Errorf("read entities: %w", err)
	}
	byEntity, err := roster.ScheduleEntities(conn, keys)
	if err != nil {
		return nil, err
	}
	users := map[string][]string{}
	for s, ids := range byEntity {
		for _, id := range ids {
			users[s] = append(users[s], "entity "+names[id])
		}
	}
	policies, _, err := roster.EscalationPolicies(conn, keys)
	if err != nil {
		return nil, err
	}
	for _, p := range policies {
		for _, step := range p.Steps {
			for _, s := range step.Schedules {
				if u := "escalation " + p.ID; !slices.Contains(users[s], u) {
					users[s] = append(users[s], u)
				}
			}
		}
	}
	for _, u := range users {
		sort.Strings(u)
	}
	return users, nil
}
