package jabber

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/flapjackgo/flapjack/oncall"
)

// onCallHorizon is how far ahead `oncall` looks for the end of the current shift and the next.
const onCallHorizon = 31 * 24 * time.Hour

// onCall answers `oncall [SCHEDULE]`: per schedule, who is on call now and why, until when,
// and who comes next.
func (b *bot) onCall(ctx context.Context, c OnCall, now time.Time) (string, error) {
	all, err := b.store.Schedules(ctx)
	if err != nil {
		return "", err
	}
	if len(all) == 0 {
		return "there are no on-call schedules", nil
	}
	var lines []string
	var ids []string
	for _, s := range all {
		ids = append(ids, s.ID)
		if c.Schedule != "" && s.ID != c.Schedule {
			continue
		}
		line, err := onCallLine(s, now)
		if err != nil {
			return "", err
		}
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		return fmt.Sprintf("no schedule '%s' (schedules: %s)", c.Schedule, strings.Join(ids, ", ")), nil
	}
	return strings.Join(lines, "\n"), nil
}

// onCallLine is one schedule's answer: "web-primary (Web primary): bob on call (layer
// "weekly") until Mon 30 Mar 18:00 BST, then carl".
func onCallLine(s *oncall.Schedule, now time.Time) (string, error) {
	shifts, err := s.Shifts(now, now.Add(onCallHorizon))
	if err != nil {
		return "", err
	}
	cur := shifts[0]
	line := fmt.Sprintf("%s (%s): %s on call (%s)", s.ID, s.Title(), who(cur.OnCall), oncall.Provenance(cur.OnCall))
	if len(shifts) > 1 {
		line += fmt.Sprintf(" until %s, then %s", cur.End.In(s.Location()).Format("Mon 2 Jan 15:04 MST"), who(shifts[1].OnCall))
	}
	return line, nil
}

func who(o oncall.OnCall) string {
	if len(o.Contacts) == 0 {
		return "nobody"
	}
	return strings.Join(o.Contacts, ", ")
}
