package main

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/notifier"
	"github.com/flapjackgo/flapjack/oncall"
	"github.com/flapjackgo/flapjack/queue"
)

// scheduleRouting: the notifier's throughput routing problem notifications of 200 entities of 20
// teams, each entity with its team lead as contact, with 20 on-call schedules (one per team:
// three people taking weekly turns, the lead as fallback, named by each of the team's entities)
// and 20 escalation policies (one per team, its step waking the schedule after 15 minutes), and
// without them, the person the schedule has on call named as a contact of the entities instead:
// the same alerts either way. Batch routing must hold with them: within 80% of the throughput
// without.
func (b *bench) scheduleRouting() error {
	notifications := max(b.o.events/50, 500)
	fmt.Printf("== schedules: %d problem notifications over 200 entities of 20 teams, routed without and with 20 schedules + 20 escalation policies (alternating, best of %d each)\n",
		notifications, scheduleRounds)
	var best [2]float64
	names := [2]string{"without schedules or policies", "with 20 schedules + 20 escalation policies"}
	for range scheduleRounds {
		for i, with := range []bool{false, true} {
			rate, alerts, err := b.routeTeams(notifications, with)
			if err != nil {
				return err
			}
			best[i] = max(best[i], rate)
			fmt.Printf("   %s: %.0f notifications/s (%d alerts)\n", names[i], rate, alerts)
		}
	}
	for i, name := range names {
		b.add(row{scenario: "notifier routing, " + name, target: "with ≥ 80% of without", eventsPerSec: best[i],
			p50: math.NaN(), p95: math.NaN(), p99: math.NaN(), note: "events/s = notifications routed per second (best run), batches of 64"})
	}
	fmt.Printf("   with / without (best of each): %.0f%%\n", 100*best[1]/best[0])
	return nil
}

// scheduleRounds is how many times each routing run is repeated, alternating, so that both meet
// the same moments of a shared machine.
const scheduleRounds = 3

const teams = 20

// routeTeams seeds a fresh Redis with the teams' failing checks and routes their notifications,
// returning notifications per second and the alerts queued.
func (b *bench) routeTeams(notifications int, with bool) (float64, int, error) {
	env, err := startRedis()
	if err != nil {
		return 0, 0, err
	}
	defer env.close()
	entity := func(i int) string { return fmt.Sprintf("team-%d-host-%d.example.com", i%teams, i%200/teams) }
	gen := func(i int) string {
		c, round := i%notifications, i/notifications
		state, at := "ok", base
		if round > 0 {
			state, at = "critical", base+1
		}
		return serviceEvent(entity(c), fmt.Sprintf("check-%d", c/200), state, at)
	}
	if err := env.push(notifications*2, gen); err != nil {
		return 0, 0, err
	}
	if _, err := b.runExecutives(env, notifications*2, 1, "FLAPJACK_EXECUTIVE_INITIAL_FAILURE_DELAY=0s"); err != nil {
		return 0, 0, err
	}
	conn := env.pool.Get()
	defer conn.Close()
	clk := clock.NewFake(time.Unix(base+2, 0))
	if err := seedTeams(conn, env, with, clk.Now()); err != nil {
		return 0, 0, err
	}
	cfg := notifier.DefaultConfig()
	cfg.MediaQueues = map[string]string{"sms": "sms_notifications"}
	n := notifier.New(notifier.Options{Pool: env.pool, Keys: env.keys, Config: cfg, Clock: clk, HeartbeatClock: clock.Real{},
		Identity: queue.Identity{Host: "bench", PID: 1}})
	ctx := context.Background()
	loop := n.Loop(false)
	if _, err := loop.Open(ctx); err != nil {
		return 0, 0, err
	}
	defer loop.Close(ctx)
	if queued, _ := redis.Int(conn.Do("LLEN", env.keys.Notifications())); queued != notifications {
		return 0, 0, fmt.Errorf("the executive queued %d notifications, want %d", queued, notifications)
	}
	routed, alerts := 0, 0
	t0 := time.Now()
	for {
		r, err := n.ProcessNextResult(ctx, 0)
		if err != nil {
			return 0, 0, err
		}
		if r.Finished == 0 {
			break
		}
		routed += r.Finished
		alerts += len(r.Alerts)
	}
	took := time.Since(t0)
	if routed != notifications {
		return 0, 0, fmt.Errorf("routed %d of %d notifications", routed, notifications)
	}
	return float64(routed) / took.Seconds(), alerts, nil
}

// seedTeams gives each team a lead (every entity's contact) and three people; with schedules,
// the team's schedule over them on each of its entities and its escalation policy, without, the
// person the schedule has on call at now as a contact of each entity.
func seedTeams(conn redis.Conn, env *redisEnv, with bool, now time.Time) error {
	ids, err := redis.StringMap(conn.Do("HGETALL", env.keys.EntityIDsByName()))
	if err != nil {
		return err
	}
	var defs []byte
	var policies []roster.EscalationPolicy
	for t := range teams {
		people := []string{fmt.Sprintf("lead-%d", t), fmt.Sprintf("ada-%d", t), fmt.Sprintf("bob-%d", t), fmt.Sprintf("cyd-%d", t)}
		for _, id := range people {
			for _, cmd := range [][]any{{"SADD", env.keys.AllContacts(), id}, {"HSET", env.keys.Contact(id), "first_name", id},
				{"HSET", env.keys.ContactMedia(id), "sms", "+44770090" + id}} {
				if _, err := conn.Do(cmd[0].(string), cmd[1:]...); err != nil {
					return err
				}
			}
		}
		sep := ","
		if t == 0 {
			sep = "["
		}
		defs = fmt.Appendf(defs, `%s{"id": "team-%d", "timezone": "Europe/London", "layers": [{"name": "weekly",
		  "start": "2026-01-05T09:00:00", "turn": "1 week", "members": [%q, %q, %q]}], "fallback": [%q]}`,
			sep, t, people[1], people[2], people[3], people[0])
		p := roster.EscalationPolicy{ID: fmt.Sprintf("team-%d", t),
			Steps: []roster.EscalationStep{{Delay: 900, Schedules: []string{fmt.Sprintf("team-%d", t)}}}}
		for h := range 200 / teams {
			p.Entities = append(p.Entities, fmt.Sprintf("team-%d-host-%d.example.com", t, h))
		}
		policies = append(policies, p)
	}
	schedules, problems, err := oncall.Parse(append(defs, ']'), nil)
	if err != nil || len(problems) > 0 {
		return fmt.Errorf("schedules: %v %v", err, problems)
	}
	for name, id := range ids {
		var t, h int
		if _, err := fmt.Sscanf(name, "team-%d-host-%d.example.com", &t, &h); err != nil {
			continue
		}
		cmd := []any{env.keys.ContactsFor(id), fmt.Sprintf("lead-%d", t)}
		if !with {
			cmd = append(cmd, schedules[t].At(now).Contacts[0])
		} else if _, err := conn.Do("SADD", env.keys.EntitySchedules(id), schedules[t].ID); err != nil {
			return err
		}
		if _, err := conn.Do("SADD", cmd...); err != nil {
			return err
		}
	}
	if !with {
		return nil
	}
	ctx := context.Background()
	if res, err := roster.PutSchedules(ctx, conn, env.keys, schedules, roster.ReplaceOptions{}); err != nil || len(res.Problems) > 0 {
		return fmt.Errorf("put schedules: %v %v", err, res.Problems)
	}
	if res, err := roster.PutEscalationPolicies(ctx, conn, env.keys, policies, roster.ReplaceOptions{}); err != nil || len(res.Problems) > 0 {
		return fmt.Errorf("put policies: %v %v", err, res.Problems)
	}
	return nil
}
