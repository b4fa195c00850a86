package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/gomodule/redigo/redis"
	"github.com/urfave/cli/v2"

	"github.com/flapjackgo/flapjack/internal/humantime"
	"github.com/flapjackgo/flapjack/retention"
	"github.com/flapjackgo/flapjack/status"
)

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "show instances, queue depths, event rates and failing checks, and warn of on-call schedules in use with nobody on call within 24 hours; exit 1 when unhealthy (usable as a Nagios check)",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print JSON for scripts"},
			&cli.Int64Flag{Name: "max-queue", Value: 10000, Usage: "a queue deeper than this is a problem (0 = never)"},
			&cli.IntFlag{Name: "limit", Value: 50, Usage: "failing checks listed, most recent change first (the rest are counted)"},
		},
		Action: oneShot(func(c *cli.Context, rt *runtime) error {
			var snap status.Snapshot
			var warnings []string
			opts := rt.statusOptions()
			opts.FailingLimit = c.Int("limit")
			if opts.FailingLimit <= 0 {
				return usageError("--limit must be at least 1")
			}
			err := rt.withConn(c.Context, func(conn redis.Conn) error {
				var err error
				if snap, err = status.Read(conn, rt.keys, opts, rt.clock.Now()); err != nil {
					return err
				}
				warnings, err = status.ScheduleWarnings(conn, rt.keys, rt.clock.Now())
				return err
			})
			if err != nil {
				return err
			}
			problems := snap.Problems(c.Int64("max-queue"))
			if c.Bool("json") {
				out := struct {
					status.Snapshot
					Redis    string   `json:"redis"`
					Healthy  bool     `json:"healthy"`
					Problems []string `json:"problems"`
					Warnings []string `json:"warnings"`
				}{snap, rt.redisURL, len(problems) == 0, problems, warnings}
				enc := json.NewEncoder(c.App.Writer)
				enc.SetIndent("", "  ")
				if err := enc.Encode(out); err != nil {
					return err
				}
			} else {
				if err := printStatus(c.App.Writer, rt.redisURL, snap, problems, warnings); err != nil {
					return err
				}
			}
			if len(problems) > 0 {
				return cli.Exit("", 1)
			}
			return nil
		}),
	}
}

func printStatus(out io.Writer, redisURL string, s status.Snapshot, problems, warnings []string) error {
	w := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintf(w, "redis\t%s\n\n", redisURL)
	fmt.Fprintln(w, "PROCESS\tVERSION\tHEARTBEAT\tSTATE\tSTAGES")
	for _, p := range s.Processes {
		fmt.Fprintf(w, "%s\t%s\t%ds ago\t%s\t%s\n", p.ID, p.Version, p.HeartbeatAge, liveness(p.Stale), strings.Join(p.Stages, ", "))
	}
	if len(s.Processes) == 0 {
		fmt.Fprintln(w, "(no processes running)")
	}
	fmt.Fprintln(w, "\nSTAGE\tINSTANCE\tVERSION\tHEARTBEAT\tPROCESSED\tCLAIMED\tSTATE")
	for _, in := range s.Instances {
		fmt.Fprintf(w, "%s\t%s\t%s\t%ds ago\t%s\t%d\t%s\n", in.Stage, in.ID, in.Version, in.HeartbeatAge, in.ProcessedText(), in.Processing, liveness(in.Stale))
	}
	if len(s.Instances) == 0 {
		fmt.Fprintln(w, "(no instances running)")
	}
	fmt.Fprintln(w, "\nQUEUE\tKIND\tDEPTH")
	queues := append([]status.Queue(nil), s.Queues...)
	sort.SliceStable(queues, func(i, j int) bool { return queues[i].Kind < queues[j].Kind })
	for _, q := range queues {
		fmt.Fprintf(w, "%s\t%s\t%d\n", q.Name, q.Kind, q.Depth)
	}
	rates := make([]string, len(s.EventsPerMinute))
	for i, r := range s.EventsPerMinute {
		rates[i] = strconv.FormatInt(r, 10)
	}
	fmt.Fprintf(w, "\nevents per minute (last 10, oldest first)\t%s\n", strings.Join(rates, " "))
	fmt.Fprintf(w, "failing checks\t%d (acknowledged %d, in scheduled maintenance %d)\n", s.Failing, s.Acknowledged, s.InMaintenance)
	fmt.Fprintf(w, "contacts\t%d\n", s.Contacts)
	if len(problems) == 0 {
		fmt.Fprintln(w, "\nhealthy")
	} else {
		fmt.Fprintln(w, "\nPROBLEMS")
		for _, p := range problems {
			fmt.Fprintln(w, "  "+p)
		}
	}
	if len(warnings) > 0 {
		fmt.Fprintln(w, "\nWARNINGS")
		for _, p := range warnings {
			fmt.Fprintln(w, "  "+p)
		}
	}
	fmt.Fprintln(w)
	if err := w.Flush(); err != nil {
		return err
	}
	if err := s.WriteFailing(out); err != nil {
		return err
	}
	return s.WriteEscalations(out)
}

func liveness(stale bool) string {
	if stale {
		return "STALE"
	}
	return "live"
}

func checksCommand() *cli.Command {
	return &cli.Command{
		Name:  "checks",
		Usage: "list checks with their state, for how long, summary and ack/maintenance markers, most recent change first",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "failing", Usage: "only failing checks"},
			&cli.StringFlag{Name: "entity", Aliases: []string{"e"}, Usage: "entity regex"},
			&cli.StringFlag{Name: "check", Aliases: []string{"k"}, Usage: "check regex"},
			&cli.StringFlag{Name: "tag", Aliases: []string{"T"}, Usage: "only checks whose entity (or name) carries this tag"},
			&cli.IntFlag{Name: "limit", Value: 50, Usage: "checks listed (the rest are counted; 0 = all)"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON for scripts"},
		},
		Action: oneShot(func(c *cli.Context, rt *runtime) error {
			q := status.CheckQuery{FailingOnly: c.Bool("failing"), Entity: c.String("entity"), Check: c.String("check"),
				Tag: c.String("tag"), Limit: c.Int("limit")}
			if q.Limit == 0 {
				q.Limit = -1
			}
			if err := q.Validate(); err != nil {
				return usageError("%v", err)
			}
			now := rt.clock.Now()
			var list status.CheckList
			err := rt.withConn(c.Context, func(conn redis.Conn) (err error) {
				list, err = status.ReadChecks(conn, rt.keys, q, now)
				return err
			})
			if err != nil {
				return err
			}
			if c.Bool("json") {
				enc := json.NewEncoder(c.App.Writer)
				enc.SetIndent("", "  ")
				return enc.Encode(list)
			}
			return status.WriteChecks(c.App.Writer, list, now)
		}),
	}
}

func purgeCommand() *cli.Command {
	return &cli.Command{
		Name:  "purge",
		Usage: "remove history older than --older-than and beyond --max-entries per check, now (server and executive also do it continuously)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "older-than", Aliases: []string{"d"}, Usage: "age, e.g. \"90 days\" (default retention.max_age)"},
			&cli.IntFlag{Name: "max-entries", Usage: "state changes kept per check (default retention.max_entries)"},
			&cli.StringSliceFlag{Name: "check", Aliases: []string{"c"}, Usage: "only these checks (ENTITY:CHECK)"},
		},
		Action: oneShot(func(c *cli.Context, rt *runtime) error {
			p := retention.Policy{MaxAge: rt.values.Duration("retention.max_age"), MaxEntries: rt.values.Int("retention.max_entries"),
				MaxDeliveries: rt.values.Int("retention.max_deliveries")}
			if c.IsSet("older-than") {
				d, err := humantime.Parse(c.String("older-than"))
				if err != nil {
					return usageError("--older-than: %v", err)
				}
				p.MaxAge = d
			}
			if c.IsSet("max-entries") {
				p.MaxEntries = c.Int("max-entries")
			}
			s := &retention.Sweeper{Pool: rt.pool, Keys: rt.keys, Policy: p, Clock: rt.clock, Log: rt.log, Only: c.StringSlice("check")}
			st, err := s.Sweep(c.Context)
			if err != nil {
				return err
			}
			fmt.Fprintf(c.App.Writer, "purged %d history records from %d checks\n", st.Deleted, st.Checks)
			return nil
		}),
	}
}

// statusCollector exports queue depths, instances and failing checks at scrape time.
func (rt *runtime) statusCollector() *status.Collector {
	return &status.Collector{Pool: rt.pool, Keys: rt.keys, Options: rt.statusOptions(), Clock: rt.clock, Log: rt.log}
}
