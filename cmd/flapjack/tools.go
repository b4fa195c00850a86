package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/urfave/cli/v2"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/api"
	"github.com/flapjackgo/flapjack/events"
	"github.com/flapjackgo/flapjack/internal/humantime"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/receiver"
	"github.com/flapjackgo/flapjack/replay"
	"github.com/flapjackgo/flapjack/retention"
	"github.com/flapjackgo/flapjack/schema"
	"github.com/flapjackgo/flapjack/status"
)

// oneShot runs a command body with settings loaded and Redis connected.
func oneShot(f func(c *cli.Context, rt *runtime) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		rt, err := setup(c)
		if err != nil {
			return err
		}
		defer rt.close()
		if err := rt.connectNow(c.Context); err != nil {
			return err
		}
		return f(c, rt)
	}
}

// publisher queues events on the executive's list (executive.queue).
func (rt *runtime) publisher() *events.Publisher {
	return events.NewPublisher(rt.pool, rt.keys, rt.values.String("executive.queue"))
}

func checkFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "entity", Aliases: []string{"e"}, Usage: "entity name", Value: "foo-app-01"},
		&cli.StringFlag{Name: "check", Aliases: []string{"k"}, Usage: "check name", Value: "HTTP"},
	}
}

func simulateCommand() *cli.Command {
	common := append(checkFlags(),
		&cli.StringFlag{Name: "summary", Usage: "event summary"},
		&cli.StringSliceFlag{Name: "tags", Aliases: []string{"T"}, Usage: "event tags"},
	)
	event := func(c *cli.Context, typ, state string) schema.Event {
		return schema.Event{Entity: strings.ToLower(c.String("entity")), Check: c.String("check"),
			Type: typ, State: state, Summary: c.String("summary"), Tags: c.StringSlice("tags")}
	}
	sub := func(name, usage string, flags []cli.Flag, action func(c *cli.Context, rt *runtime, send func(schema.Event) error) error) *cli.Command {
		return &cli.Command{Name: name, Usage: usage, Flags: append(append([]cli.Flag{}, common...), flags...),
			Action: oneShot(func(c *cli.Context, rt *runtime) error {
				send := func(e schema.Event) error {
					e.Time, e.HasTime = time.Now().Unix(), true
					queued, err := rt.publisher().Publish(c.Context, e)
					if err != nil {
						return err
					}
					b, _ := queued[0].MarshalJSON()
					fmt.Fprintf(c.App.Writer, "sent %s\n", b)
					return nil
				}
				return action(c, rt, send)
			})}
	}
	return &cli.Command{
		Name:  "simulate",
		Usage: "push simulated events: fail, ok, ack, test",
		Subcommands: []*cli.Command{
			sub("fail", "send a failure every --interval for --duration (Flapjack's default: 45 s at 10 s)", []cli.Flag{
				&cli.StringFlag{Name: "state", Aliases: []string{"s"}, Value: "critical", Usage: "warning, critical or unknown"},
				&cli.StringFlag{Name: "interval", Aliases: []string{"i"}, Value: "10s", Usage: "time between failure events"},
				&cli.StringFlag{Name: "duration", Aliases: []string{"t"}, Value: "45s", Usage: "how long to keep failing (0: one event)"},
			}, func(c *cli.Context, _ *runtime, send func(schema.Event) error) error {
				return simulateFailure(c, event(c, schema.TypeService, strings.ToLower(c.String("state"))), send)
			}),
			sub("ok", "send one ok event", nil, func(c *cli.Context, _ *runtime, send func(schema.Event) error) error {
				return send(event(c, schema.TypeService, schema.StateOK))
			}),
			sub("ack", "send one acknowledgement", []cli.Flag{
				&cli.StringFlag{Name: "duration", Aliases: []string{"t"}, Usage: "acknowledgement length (default executive.acknowledgement_duration)"},
			}, func(c *cli.Context, _ *runtime, send func(schema.Event) error) error {
				e := event(c, schema.TypeAction, schema.StateAcknowledgement)
				if c.IsSet("duration") {
					d, err := humantime.Parse(c.String("duration"))
					if err != nil || d < time.Second {
						return cli.Exit(fmt.Sprintf("--duration %q: want at least 1s", c.String("duration")), 2)
					}
					e.Duration, e.HasDuration = int64(d/time.Second), true
				}
				return send(e)
			}),
			sub("test", "send one test_notifications event", nil, func(c *cli.Context, _ *runtime, send func(schema.Event) error) error {
				return send(event(c, schema.TypeAction, schema.StateTestNotifications))
			}),
		},
	}
}

func simulateFailure(c *cli.Context, base schema.Event, send func(schema.Event) error) error {
	if !schema.IsFailure(base.State) {
		return cli.Exit("--state must be warning, critical or unknown", 2)
	}
	interval, err := humantime.Parse(c.String("interval"))
	if err != nil || interval <= 0 {
		return cli.Exit(fmt.Sprintf("--interval %q: want a positive duration", c.String("interval")), 2)
	}
	duration, err := humantime.Parse(c.String("duration"))
	if err != nil {
		return cli.Exit(fmt.Sprintf("--duration: %v", err), 2)
	}
	deadline := time.Now().Add(duration)
	for {
		if err := send(base); err != nil {
			return err
		}
		if !time.Now().Add(interval).Before(deadline.Add(time.Millisecond)) {
			break
		}
		select {
		case <-c.Context.Done():
			fmt.Fprintln(c.App.Writer, "stopping")
			return nil
		case <-time.After(interval):
		}
	}
	fmt.Fprintln(c.App.Writer, "stopping")
	return nil
}

func ackCommand() *cli.Command {
	return &cli.Command{
		Name:  "ack",
		Usage: "acknowledge a failing check (queues an acknowledgement event)",
		Flags: append(checkFlags(),
			&cli.StringFlag{Name: "duration", Aliases: []string{"d"}, Value: "4h", Usage: "how long the acknowledgement lasts"},
			&cli.StringFlag{Name: "summary", Aliases: []string{"m"}, Usage: "comment shown with the acknowledgement"},
		),
		Action: oneShot(func(c *cli.Context, rt *runtime) error {
			d, err := humantime.Parse(c.String("duration"))
			if err != nil || d < time.Second {
				return cli.Exit(fmt.Sprintf("--duration %q: want a duration of at least 1s", c.String("duration")), 2)
			}
			e := schema.Event{Entity: strings.ToLower(c.String("entity")), Check: c.String("check"),
				Type: schema.TypeAction, State: schema.StateAcknowledgement, Summary: c.String("summary"),
				Duration: int64(d / time.Second), HasDuration: true, Time: time.Now().Unix(), HasTime: true}
			queued, err := rt.publisher().Publish(c.Context, e)
			if err != nil {
				return err
			}
			fmt.Fprintf(c.App.Writer, "acknowledgement queued for %s for %s\n", queued[0].ID(), humantime.Words(d))
			return nil
		}),
	}
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
				Flags: append(checkFlags(),
					&cli.StringFlag{Name: "start", Value: "now", Usage: "start: now, +2h, unix seconds, RFC 3339 or \"2026-01-05 10:00\""},
					&cli.StringFlag{Name: "duration", Aliases: []string{"d"}, Required: true, Usage: "length, e.g. 2h or \"90 minutes\""},
					&cli.StringFlag{Name: "summary", Aliases: []string{"m"}, Usage: "reason"},
				),
				Action: oneShot(func(c *cli.Context, rt *runtime) error {
					now := time.Now()
					start, err := parseTime(c.String("start"), now)
					if err != nil {
						return cli.Exit("--start: "+err.Error(), 2)
					}
					d, err := humantime.Parse(c.String("duration"))
					if err != nil {
						return cli.Exit("--duration: "+err.Error(), 2)
					}
					entity := strings.ToLower(c.String("entity"))
					err = rt.withConn(c.Context, func(conn redis.Conn) error {
						return model.CreateScheduledMaintenance(conn, rt.keys, entity, c.String("check"), start, d, c.String("summary"), now)
					})
					if err != nil {
						return err
					}
					fmt.Fprintf(c.App.Writer, "scheduled maintenance for %s:%s from %s for %s\n", entity, c.String("check"),
						start.Format(time.RFC3339), humantime.Words(d))
					return nil
				}),
			},
			{
				Name:  "end",
				Usage: "end a maintenance window: scheduled (needs --start of the window) or unscheduled (the current acknowledgement)",
				Flags: append(checkFlags(), kindFlag,
					&cli.StringFlag{Name: "start", Usage: "start of the scheduled window (as shown by list)"}),
				Action: oneShot(func(c *cli.Context, rt *runtime) error {
					now := time.Now()
					entity, check := strings.ToLower(c.String("entity")), c.String("check")
					return rt.withConn(c.Context, func(conn redis.Conn) error {
						var err error
						switch c.String("type") {
						case schema.Unscheduled:
							err = model.EndUnscheduledMaintenance(conn, rt.keys, entity, check, now)
						case schema.Scheduled:
							if !c.IsSet("start") {
								return cli.Exit("ending a scheduled window needs --start (see `flapjack maintenance list`)", 2)
							}
							start, perr := parseTime(c.String("start"), now)
							if perr != nil {
								return cli.Exit("--start: "+perr.Error(), 2)
							}
							err = model.EndScheduledMaintenance(conn, rt.keys, entity, check, start, now)
						default:
							return cli.Exit("--type must be scheduled or unscheduled", 2)
						}
						if errors.Is(err, model.ErrNoSuchWindow) {
							return cli.Exit(fmt.Sprintf("%s:%s: %v", entity, check, err), 1)
						}
						if err == nil {
							fmt.Fprintf(c.App.Writer, "ended %s maintenance of %s:%s\n", c.String("type"), entity, check)
						}
						return err
					})
				}),
			},
		},
	}
}

func maintenanceList(c *cli.Context, rt *runtime) error {
	entityRe, err := regexp.Compile(c.String("entity"))
	if err != nil {
		return cli.Exit("--entity: "+err.Error(), 2)
	}
	checkRe, err := regexp.Compile(c.String("check"))
	if err != nil {
		return cli.Exit("--check: "+err.Error(), 2)
	}
	kind := c.String("type")
	if kind != schema.Scheduled && kind != schema.Unscheduled {
		return cli.Exit("--type must be scheduled or unscheduled", 2)
	}
	now := time.Now().Unix()
	w := tabwriter.NewWriter(c.App.Writer, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "CHECK\tSTART\tEND\tSTATE\tSUMMARY")
	err = rt.withConn(c.Context, func(conn redis.Conn) error {
		entities, err := redis.Strings(conn.Do("ZRANGE", rt.keys.CurrentEntities(), 0, -1))
		if err != nil {
			return err
		}
		for _, e := range entities {
			if !entityRe.MatchString(e) {
				continue
			}
			checks, err := redis.Strings(conn.Do("ZRANGE", rt.keys.CurrentChecks(e), 0, -1))
			if err != nil {
				return err
			}
			for _, ch := range checks {
				if !checkRe.MatchString(ch) {
					continue
				}
				windows, err := model.ListMaintenance(conn, rt.keys, kind, schema.CheckID(e, ch))
				if err != nil {
					return err
				}
				for _, win := range windows {
					end := win.Start + win.Duration
					state := "future"
					switch {
					case end <= now:
						state = "ended"
					case win.Start <= now:
						state = "active"
					}
					if state == "ended" && !c.Bool("all") {
						continue
					}
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", win.CheckID, time.Unix(win.Start, 0).Format(time.RFC3339),
						time.Unix(end, 0).Format(time.RFC3339), state, win.Summary)
				}
			}
		}
		return nil
	})
	w.Flush()
	return err
}

func replayCommand() *cli.Command {
	return &cli.Command{
		Name:  "replay",
		Usage: "run the real executive and notifier over a timeline with simulated time; print every alert as JSON",
		Description: `Input: JSON lines in time order, each with an integer "time": events, or admin actions
{"action": "scheduled_maintenance"|"end_scheduled_maintenance"|"end_unscheduled_maintenance"|
"disable_check"|"enable_check", "time": T, "entity": E, "check": C, ...}. State is read from and
written to the configured Redis as in live operation; alerts also go to their media queues.
stdout carries only alert JSON; logs go to stderr. Use a Redis (or key prefix) no live stage consumes.`,
		Flags: []cli.Flag{&cli.StringFlag{Name: "input", Aliases: []string{"i"}, Value: "-", Usage: "timeline file (- = standard input)"}},
		Action: oneShot(func(c *cli.Context, rt *runtime) error {
			in := io.Reader(os.Stdin)
			if p := c.String("input"); p != "-" && p != "" {
				f, err := os.Open(p)
				if err != nil {
					return cli.Exit(err.Error(), 2)
				}
				defer f.Close()
				in = f
			}
			xcfg, ncfg := rt.executiveConfig(), rt.notifierConfig()
			if err := rt.checkSettings(); err != nil {
				return err
			}
			sum, err := replay.Run(c.Context, replay.Options{Pool: rt.pool, Keys: rt.keys, Executive: xcfg, Notifier: ncfg,
				Log: rt.log, Version: version, Identity: rt.identity}, in, c.App.Writer)
			if err != nil {
				return cli.Exit("replay stopped: "+err.Error(), 1)
			}
			fmt.Fprintf(c.App.ErrWriter, "replayed %d lines (%d events, %d actions): %d alerts\n", sum.Lines, sum.Events, sum.Actions, sum.Alerts)
			return nil
		}),
	}
}

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "show instances, queue depths, event rates and failing checks; exit 1 when unhealthy (usable as a Nagios check)",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print JSON for scripts"},
			&cli.Int64Flag{Name: "max-queue", Value: 10000, Usage: "a queue deeper than this is a problem (0 = never)"},
		},
		Action: oneShot(func(c *cli.Context, rt *runtime) error {
			var snap status.Snapshot
			err := rt.withConn(c.Context, func(conn redis.Conn) error {
				var err error
				snap, err = status.Read(conn, rt.keys, rt.statusOptions(), time.Now())
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
				}{snap, rt.redisURL, len(problems) == 0, problems}
				enc := json.NewEncoder(c.App.Writer)
				enc.SetIndent("", "  ")
				if err := enc.Encode(out); err != nil {
					return err
				}
			} else {
				printStatus(c.App.Writer, rt.redisURL, snap, problems)
			}
			if len(problems) > 0 {
				return cli.Exit("", 1)
			}
			return nil
		}),
	}
}

func printStatus(out io.Writer, redisURL string, s status.Snapshot, problems []string) {
	w := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintf(w, "redis\t%s\n\n", redisURL)
	fmt.Fprintln(w, "STAGE\tINSTANCE\tVERSION\tHEARTBEAT\tPROCESSED\tCLAIMED\tSTATE")
	for _, in := range s.Instances {
		state := "live"
		if in.Stale {
			state = "STALE"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%ds ago\t%d\t%d\t%s\n", in.Stage, in.ID, in.Version, in.HeartbeatAge, in.Processed, in.Processing, state)
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
	if len(problems) == 0 {
		fmt.Fprintln(w, "\nhealthy")
	} else {
		fmt.Fprintln(w, "\nPROBLEMS")
		for _, p := range problems {
			fmt.Fprintln(w, "  "+p)
		}
	}
	w.Flush()
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
			p := retention.Policy{MaxAge: rt.values.Duration("retention.max_age"), MaxEntries: rt.values.Int("retention.max_entries")}
			if c.IsSet("older-than") {
				d, err := humantime.Parse(c.String("older-than"))
				if err != nil {
					return cli.Exit("--older-than: "+err.Error(), 2)
				}
				p.MaxAge = d
			}
			if c.IsSet("max-entries") {
				p.MaxEntries = c.Int("max-entries")
			}
			if err := rt.checkSettings(); err != nil {
				return err
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

func receiverCommand() *cli.Command {
	return &cli.Command{
		Name:  "receiver",
		Usage: "feed events from Nagios (perfdata FIFO), JSON (stdin or file, Sensu events with --sensu) or HTTP",
		Subcommands: []*cli.Command{
			{
				Name:  "http",
				Usage: "serve POST /events (and /healthz, /readyz, /metrics) on http.addr, without running any stage",
				Action: func(c *cli.Context) error {
					return runStages(c, func(rt *runtime, reg prometheus.Registerer) ([]stage, error) {
						o := api.Options{Addr: rt.values.String("http.addr"), Token: rt.values.String("http.token"),
							MaxBody: int64(rt.values.Int("http.max_body_bytes")), Pool: rt.pool, Keys: rt.keys,
							Events: rt.publisher(), Gatherer: reg.(prometheus.Gatherer),
							Log: rt.log.With(zap.String("stage", "http")), EventsEnabled: true}
						if err := o.Validate(); err != nil {
							return nil, cli.Exit(err.Error(), 2)
						}
						return []stage{{name: "http receiver", run: func(ctx context.Context) error { return api.Serve(ctx, o) }}}, nil
					})
				},
			},
			{
				Name:  "nagios",
				Usage: "read Nagios host and service perfdata lines from a named pipe (reopened at EOF)",
				Flags: []cli.Flag{&cli.StringFlag{Name: "fifo", Aliases: []string{"f"}, Value: "/var/cache/nagios3/event_stream.fifo", Usage: "the perfdata named pipe"}},
				Action: func(c *cli.Context) error {
					rt, err := setup(c)
					if err != nil {
						return err
					}
					defer rt.close()
					if err := rt.connect(c.Context); err != nil {
						return err
					}
					err = receiver.RunNagios(c.Context, receiver.NagiosOptions{FIFO: c.String("fifo")}, rt.publisher(), rt.log)
					if err != nil {
						return cli.Exit(err.Error(), 1)
					}
					return nil
				},
			},
			{
				Name:  "json",
				Usage: "read events (one per line, concatenated, or an array) from --file or standard input",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Usage: "input file (default standard input)"},
					&cli.BoolFlag{Name: "sensu", Usage: "input is Sensu events (1.x or Go), converted to Flapjack events"},
				},
				Action: oneShot(func(c *cli.Context, rt *runtime) error {
					in := io.Reader(os.Stdin)
					if p := c.String("file"); p != "" {
						f, err := os.Open(p)
						if err != nil {
							return cli.Exit(err.Error(), 2)
						}
						defer f.Close()
						in = f
					} else if fi, err := os.Stdin.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
						return cli.Exit("no --file given and standard input is a terminal", 2)
					}
					rep, err := receiver.RunJSON(c.Context, in, receiver.JSONOptions{Sensu: c.Bool("sensu")}, rt.publisher(), rt.log)
					fmt.Fprintf(c.App.ErrWriter, "%d records: %d queued, %d rejected\n", rep.Records, rep.Enqueued, rep.Rejected)
					if err != nil {
						return cli.Exit(err.Error(), 1)
					}
					if rep.Rejected > 0 {
						return cli.Exit("", 1)
					}
					return nil
				}),
			},
		},
	}
}
