package web

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/humantime"
	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/schema"
)

// escalationLine is one policy's ladder for the check page.
type escalationLine struct {
	Policy  string
	State   string // "step 2 of 3 fired; step 3 due at ...", "stopped (acknowledged) at ..."
	Alerted string
}

// checkEscalations describes the check's escalation ladders at now.
func checkEscalations(conn redis.Conn, keys schema.Keys, checkID string, now time.Time) ([]escalationLine, error) {
	ladders, err := roster.LaddersOf(conn, keys, checkID)
	if err != nil || len(ladders) == 0 {
		return nil, err
	}
	policies, _, err := roster.EscalationPolicies(conn, keys)
	if err != nil {
		return nil, err
	}
	var out []escalationLine
	for _, l := range ladders {
		if !l.Exists {
			continue
		}
		steps := 0
		if i := slices.IndexFunc(policies, func(p roster.EscalationPolicy) bool { return p.ID == l.PolicyID }); i >= 0 {
			steps = len(policies[i].Steps)
		}
		at := func(t int64) string { return time.Unix(t, 0).UTC().Format("2006-01-02 15:04:05 UTC") }
		state := fmt.Sprintf("step %d of %d fired (started %s)", l.Fired, steps, at(l.StartedAt))
		switch {
		case !l.Active():
			state += fmt.Sprintf("; stopped (%s) at %s", l.StoppedReason, at(l.StoppedAt))
		case l.NextDue > 0:
			state += fmt.Sprintf("; step %d due at %s (in %s)", min(l.Fired+1, steps), at(l.NextDue),
				humantime.Words(time.Unix(l.NextDue, 0).Sub(now)))
		default:
			state += "; no step to come"
		}
		alerted := strings.Join(l.Alerted, ", ")
		if alerted == "" {
			alerted = "nobody yet"
		}
		out = append(out, escalationLine{Policy: l.PolicyID, State: state, Alerted: alerted})
	}
	return out, nil
}

// policyLine is one escalation policy on a contact's page.
type policyLine struct {
	ID, Name string
	Steps    []string // the contact's steps: "step 2 after 15 minutes"
}

// contactPolicies lists the escalation policies whose steps alert contactID.
func contactPolicies(conn redis.Conn, keys schema.Keys, contactID string) ([]policyLine, error) {
	policies, _, err := roster.EscalationPolicies(conn, keys)
	if err != nil {
		return nil, err
	}
	var out []policyLine
	for _, p := range policies {
		line := policyLine{ID: p.ID, Name: p.Name}
		for i, s := range p.Steps {
			if slices.Contains(s.Contacts, contactID) {
				line.Steps = append(line.Steps, fmt.Sprintf("step %d of %d, after %s", i+1, len(p.Steps),
					humantime.Words(time.Duration(s.Delay)*time.Second)))
			}
		}
		if len(line.Steps) > 0 {
			out = append(out, line)
		}
	}
	return out, nil
}
