package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/urfave/cli/v2"

	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/oncall"
)

func oncallCommand() *cli.Command {
	return &cli.Command{
		Name:  "oncall",
		Usage: "who is on call: now, at a time, or the shifts over a range, with what put each person there and the gaps",
		Description: `Without --until: who each schedule has on call at --at (default now) and why (a layer, an
override, the fallback, or nobody). With --until: the shifts from --at to --until, each with the
layer or override that made it; a stretch with nobody on call is a gap. Times are shown in the
schedule's timezone.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "schedule", Usage: "one schedule's id (default: every schedule)"},
			&cli.StringFlag{Name: "at", Value: "now", Usage: "the time asked about, or the start of the range: now, +2h, unix seconds, RFC 3339 or \"2026-01-05 10:00\""},
			&cli.StringFlag{Name: "until", Usage: "the end of the range of shifts (same forms as --at)"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON"},
		},
		Action: oneShot(runOncall),
	}
}

// oncallAnswer is one schedule's answer: at an instant (OnCall) or over a range (Shifts).
type oncallAnswer struct {
	Schedule string         `json:"schedule"`
	Name     string         `json:"name"`
	Timezone string         `json:"timezone"`
	At       *time.Time     `json:"at,omitempty"`
	OnCall   *oncall.OnCall `json:"on_call,omitempty"`
	Shifts   []oncall.Shift `json:"shifts,omitempty"`
	loc      *time.Location
}

func runOncall(c *cli.Context, rt *runtime) error {
	now := rt.clock.Now()
	at, err := parseTime(c.String("at"), now)
	if err != nil {
		return usageError("--at: %v", err)
	}
	var until time.Time
	if c.String("until") != "" {
		if until, err = parseTime(c.String("until"), now); err != nil {
			return usageError("--until: %v", err)
		}
		if !until.After(at) {
			return usageError("--until must be after --at")
		}
	}
	var schedules []*oncall.Schedule
	err = rt.withConn(c.Context, func(conn redis.Conn) error {
		var problems []error
		schedules, problems, err = roster.Schedules(conn, rt.keys)
		for _, p := range problems {
			fmt.Fprintln(c.App.ErrWriter, "warning:", p)
		}
		return err
	})
	if err != nil {
		return err
	}
	if id := c.String("schedule"); id != "" {
		schedules = pickSchedule(schedules, id)
		if len(schedules) == 0 {
			return cli.Exit(fmt.Sprintf("no schedule %q", id), 1)
		}
	}
	answers := make([]oncallAnswer, 0, len(schedules))
	for _, s := range schedules {
		a := oncallAnswer{Schedule: s.ID, Name: s.Title(), Timezone: s.Location().String(), loc: s.Location()}
		if until.IsZero() {
			oc, t := s.At(at), at.UTC()
			a.At, a.OnCall = &t, &oc
		} else if a.Shifts, err = s.Shifts(at, until); err != nil {
			return usageError("%v", err)
		}
		answers = append(answers, a)
	}
	if c.Bool("json") {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		return enc.Encode(answers)
	}
	if len(answers) == 0 {
		fmt.Fprintln(c.App.Writer, "no schedules (import some with flapjack import schedules -f FILE)")
	}
	for _, a := range answers {
		writeOncall(c.App.Writer, a)
	}
	return nil
}

func pickSchedule(all []*oncall.Schedule, id string) []*oncall.Schedule {
	for _, s := range all {
		if s.ID == id {
			return []*oncall.Schedule{s}
		}
	}
	return nil
}

// localTime is how flapjack oncall shows an instant: the schedule's wall clock and zone.
func localTime(t time.Time, loc *time.Location) string {
	return t.In(loc).Format("Mon 2006-01-02 15:04 MST")
}

// whoOnCall names the people of an answer, or says there are none.
func whoOnCall(o oncall.OnCall) string {
	if len(o.Contacts) == 0 {
		return "nobody"
	}
	return strings.Join(o.Contacts, ", ")
}

func writeOncall(w io.Writer, a oncallAnswer) {
	fmt.Fprintf(w, "%s (%s, %s)\n", a.Schedule, a.Name, a.Timezone)
	if a.OnCall != nil {
		fmt.Fprintf(w, "  %s: %s (%s)\n", localTime(*a.At, a.loc), whoOnCall(*a.OnCall), oncall.Provenance(*a.OnCall))
		return
	}
	for _, sh := range a.Shifts {
		what := oncall.Provenance(sh.OnCall)
		if sh.Gap() {
			what = "GAP: " + what
		}
		fmt.Fprintf(w, "  %s – %s  %-10s %s\n", localTime(sh.Start, a.loc), localTime(sh.End, a.loc), whoOnCall(sh.OnCall), what)
	}
}
