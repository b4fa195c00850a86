package main

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/flapjackgo/flapjack/internal/humantime"
	"github.com/flapjackgo/flapjack/lifecycle"
	"github.com/flapjackgo/flapjack/receiver"
	"github.com/flapjackgo/flapjack/redisconn"
)

const mirrorStage = "mirror receiver"

// mirrorCommand is Flapjack 1.x's `receiver mirror`: events another Flapjack archived, queued
// here.
func mirrorCommand() *cli.Command {
	return &cli.Command{
		Name: "mirror",
		Usage: "queue here the events a Flapjack 1.x archives in events_archive:YYYYMMDDHH (processor archive_events), " +
			"reading its Redis only: --all what is archived now, or --follow new events as they are archived (position kept in mirror_cursors:SOURCE)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "source", Aliases: []string{"s"}, Required: true, Usage: "the other Flapjack's Redis URL (redis://host:port/db)"},
			&cli.BoolFlag{Name: "all", Aliases: []string{"a"}, Usage: "queue everything archived, oldest first, then exit"},
			&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "keep queueing events as they are archived, from where the last run stopped (first run: from now, or --since)"},
			&cli.StringFlag{Name: "include", Aliases: []string{"i"}, Usage: "only events whose ENTITY:CHECK matches this regular expression"},
			&cli.StringFlag{Name: "since", Usage: "only events archived from this time on: unix seconds, RFC 3339, \"2026-01-05 10:00\" or -2h (that long ago)"},
		},
		Action: func(c *cli.Context) error {
			if c.Bool("all") == c.Bool("follow") {
				return usageError("receiver mirror: give one of --all and --follow")
			}
			if c.Bool("all") {
				return oneShot(func(c *cli.Context, rt *runtime) error {
					opts, closeSource, err := mirrorOptions(c, rt)
					if err != nil {
						return err
					}
					defer closeSource()
					rep, err := receiver.RunMirror(c.Context, opts, rt.publisher(), rt.log)
					fmt.Fprintf(c.App.ErrWriter, "%d archived events read: %d queued, %d skipped (--include, --since), %d rejected\n",
						rep.Read, rep.Queued, rep.Skipped, rep.Rejected)
					if err != nil {
						return cli.Exit(err.Error(), 1)
					}
					return nil
				})(c)
			}
			return runStages(c, hooks{}, func(p *process) ([]lifecycle.Stage, error) {
				opts, closeSource, err := mirrorOptions(c, p.runtime)
				if err != nil {
					return nil, err
				}
				return []lifecycle.Stage{{Name: mirrorStage, Run: func(ctx context.Context) error {
					defer closeSource()
					_, err := receiver.RunMirror(ctx, opts, p.publisher(), p.log)
					return err
				}}}, nil
			})
		},
	}
}

// mirrorOptions reads the flags and opens the source Redis.
func mirrorOptions(c *cli.Context, rt *runtime) (receiver.MirrorOptions, func(), error) {
	opts := receiver.MirrorOptions{Dest: rt.pool, Keys: rt.keys, All: c.Bool("all")}
	if s := c.String("include"); s != "" {
		re, err := regexp.Compile(s)
		if err != nil {
			return opts, nil, usageError("--include: %v", err)
		}
		opts.Include = re
	}
	if s := c.String("since"); s != "" {
		now := rt.clock.Now()
		if d, err := humantime.Parse(strings.TrimPrefix(s, "-")); err == nil && strings.HasPrefix(s, "-") {
			opts.Since = now.Add(-d)
		} else if t, err := parseTime(s, now); err == nil && !strings.HasPrefix(s, "+") {
			opts.Since = t
		} else {
			return opts, nil, usageError("--since: cannot read time %q: use unix seconds, RFC 3339, \"2026-01-05 10:00\" or -2h", s)
		}
	}
	cfg := redisconn.Config{URL: c.String("source")}
	if err := cfg.Validate(); err != nil {
		return opts, nil, usageError("--source: %v", strings.TrimPrefix(err.Error(), "redis.url: "))
	}
	pool, err := redisconn.NewPool(cfg, rt.log)
	if err != nil {
		return opts, nil, usageError("--source: %v", err)
	}
	opts.Source, opts.SourceName = pool, redisconn.Redact(cfg.URL)
	return opts, func() { pool.Close() }, nil
}
