package main

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/urfave/cli/v2"

	"github.com/flapjackgo/flapjack/events"
	"github.com/flapjackgo/flapjack/internal/humantime"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/schema"
)

// checkFlags name one check; required where an action must never hit a check the user did
// not name (ack, maintenance).
func checkFlags(required bool) []cli.Flag {
	entity := &cli.StringFlag{Name: "entity", Aliases: []string{"e"}, Usage: "entity name", Required: required}
	check := &cli.StringFlag{Name: "check", Aliases: []string{"k"}, Usage: "check name", Required: required}
	if !required {
		entity.Value, check.Value = "foo-app-01", "HTTP"
	}
	return []cli.Flag{entity, check}
}

// durationFlag reads a duration flag of at least one second.
func durationFlag(c *cli.Context, name string) (time.Duration, error) {
	d, err := humantime.Parse(c.String(name))
	if err != nil || d < time.Second {
		return 0, usageError("--%s %q: want a duration of at least 1s", name, c.String(name))
	}
	return d, nil
}

func ackCommand() *cli.Command {
	return &cli.Command{
		Name:  "ack",
		Usage: "acknowledge a failing check (queues an acknowledgement event)",
		Description: `Without --duration the acknowledgement lasts executive.acknowledgement_duration (default 4
hours), as acknowledgements from Jabber and simulate do.`,
		Flags: append(checkFlags(true),
			&cli.StringFlag{Name: "duration", Aliases: []string{"d"}, Usage: "how long the acknowledgement lasts (default executive.acknowledgement_duration)"},
			&cli.StringFlag{Name: "summary", Aliases: []string{"m"}, Usage: "comment shown with the acknowledgement (default \"acknowledged by $USER via CLI\")"},
		),
		Action: oneShot(func(c *cli.Context, rt *runtime) error {
			summary := c.String("summary")
			if !c.IsSet("summary") {
				summary = "acknowledged by " + currentUser() + " via CLI"
			}
			ev, err := acknowledge(c, rt, summary)
			if err != nil {
				return err
			}
			how := "the default length (executive.acknowledgement_duration)"
			if ev.HasDuration {
				how = humantime.Words(time.Duration(ev.Duration) * time.Second)
			}
			fmt.Fprintf(c.App.Writer, "acknowledgement queued for %s for %s\n", ev.ID(), how)
			return nil
		}),
	}
}

// acknowledge queues the acknowledgement of --entity/--check for --duration (if given).
func acknowledge(c *cli.Context, rt *runtime, summary string) (schema.Event, error) {
	var d time.Duration
	if c.IsSet("duration") {
		var err error
		if d, err = durationFlag(c, "duration"); err != nil {
			return schema.Event{}, err
		}
	}
	ev := events.Acknowledgement(c.String("entity"), c.String("check"), summary, d, rt.clock.Now())
	queued, err := rt.publisher().Publish(c.Context, ev)
	if err != nil {
		return schema.Event{}, err
	}
	return queued[0], nil
}

func currentUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	if name := os.Getenv("USER"); name != "" {
		return name
	}
	return "unknown"
}

// parseTime reads "now", unix seconds, RFC 3339 or "YYYY-MM-DD HH:MM[:SS]" (local time).
func parseTime(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "now" {
		return now, nil
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Unix(n, 0), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02T15:04"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	if d, err := humantime.Parse(strings.TrimPrefix(s, "+")); err == nil && strings.HasPrefix(s, "+") {
		return now.Add(d), nil
	}
	return time.Time{}, fmt.Errorf("cannot read time %q: use now, +2h, unix seconds, RFC 3339 or \"2026-01-05 10:00\"", s)
}

func maintenanceCommand() *cli.Command {
	kindFlag := &cli.StringFlag{Name: "type", Value: schema.Scheduled, Usage: "scheduled or unscheduled"}
	return &cli.Command{
		Name:  "maintenance",
		Usage: "list, create and end maintenance windows",
		Subcommands: []*cli.Command{
			{
				Name:  "list",
				Usage: "list maintenance windows of current checks (active and future; --all for past too)",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "entity", Aliases: []string{"e"}, Usage: "entity regex"},
					&cli.StringFlag{Name: "check", Aliases: []string{"k"}, Usage: "check regex"},
					kindFlag, &cli.BoolFlag{Name: "all", Usage: "include windows that have ended"},
				},
				Action: oneShot(maintenanceList),
			},
			{
				Name:  "create",
				Usage: "create a scheduled maintenance window",
				Flags: append(checkFlags(true),
					&cli.StringFlag{Name: "start", Value: "now", Usage: "start: now, +2h, unix seconds, RFC 3339 or \"2026-01-05 10:00\""},
					&cli.StringFlag{Name: "duration", Aliases: []string{"d"}, Required: true, Usage: "length, e.g. 2h or \"90 minutes\""},
					&cli.StringFlag{Name: "summary", Aliases: []string{"m"}, Usage: "reason"},
				),
				Action: oneShot(maintenanceCreate),
			},
			{
				Name:   "end",
				Usage:  "end a maintenance window: scheduled (needs --start of the window) or unscheduled (the current acknowledgement)",
				Flags:  append(checkFlags(true), kindFlag, &cli.StringFlag{Name: "start", Usage: "start of the scheduled window (as shown by list)"}),
				Action: oneShot(maintenanceEnd),
			},
		},
	}
}

func maintenanceCreate(c *cli.Context, rt *runtime) error {
	now := rt.clock.Now()
	start, err := parseTime(c.String("start"), now)
	if err != nil {
		return usageError("--start: %v", err)
	}
	d, err := humantime.Parse(c.String("duration"))
	if err != nil {
		return usageError("--duration: %v", err)
	}
	entity := strings.ToLower(c.String("entity"))
	err = rt.withConn(c.Context, func(conn redis.Conn) error {
		return checkstate.CreateScheduledMaintenance(conn, rt.keys, entity, c.String("check"), start, d, c.String("summary"), now)
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(c.App.Writer, "scheduled maintenance for %s:%s from %s for %s\n", entity, c.String("check"),
		start.Format(time.RFC3339), humantime.Words(d))
	return nil
}

func maintenanceEnd(c *cli.Context, rt *runtime) error {
	now := rt.clock.Now()
	entity, check := strings.ToLower(c.String("entity")), c.String("check")
	var end func(conn redis.Conn) error
	switch c.String("type") {
	case schema.Unscheduled:
		end = func(conn redis.Conn) error {
			return checkstate.EndUnscheduledMaintenance(conn, rt.keys, entity, check, now)
		}
	case schema.Scheduled:
		if !c.IsSet("start") {
			return usageError("ending a scheduled window needs --start (see `flapjack maintenance list`)")
		}
		start, err := parseTime(c.String("start"), now)
		if err != nil {
			return usageError("--start: %v", err)
		}
		end = func(conn redis.Conn) error {
			return checkstate.EndScheduledMaintenance(conn, rt.keys, entity, check, start, now)
		}
	default:
		return usageError("--type must be scheduled or unscheduled")
	}
	err := rt.withConn(c.Context, end)
	if errors.Is(err, checkstate.ErrNoSuchWindow) {
		return cli.Exit(fmt.Sprintf("%s:%s: %v", entity, check, err), 1)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(c.App.Writer, "ended %s maintenance of %s:%s\n", c.String("type"), entity, check)
	return nil
}

func maintenanceList(c *cli.Context, rt *runtime) error {
	q := checkstate.MaintenanceQuery{Kind: c.String("type"), IncludeEnded: c.Bool("all")}
	if q.Kind != schema.Scheduled && q.Kind != schema.Unscheduled {
		return usageError("--type must be scheduled or unscheduled")
	}
	var err error
	if q.Entity, err = optionalRegexp(c, "entity"); err != nil {
		return err
	}
	if q.Check, err = optionalRegexp(c, "check"); err != nil {
		return err
	}
	now := rt.clock.Now()
	var windows []checkstate.MaintenanceWindow
	err = rt.withConn(c.Context, func(conn redis.Conn) (err error) {
		windows, err = checkstate.ListMaintenanceWindows(conn, rt.keys, q, now)
		return err
	})
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(c.App.Writer, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "CHECK\tSTART\tEND\tSTATE\tSUMMARY")
	for _, win := range windows {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", win.CheckID, time.Unix(win.Start, 0).Format(time.RFC3339),
			time.Unix(win.Start+win.Duration, 0).Format(time.RFC3339), win.State(now), win.Summary)
	}
	return w.Flush()
}

// optionalRegexp compiles a regex flag; unset means nil (match everything).
func optionalRegexp(c *cli.Context, name string) (*regexp.Regexp, error) {
	if c.String(name) == "" {
		return nil, nil
	}
	re, err := regexp.Compile(c.String(name))
	if err != nil {
		return nil, usageError("--%s: %v", name, err)
	}
	return re, nil
}
