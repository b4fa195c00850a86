package main

import (
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/flapjackgo/flapjack/replay"
)

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
			xcfg, err := rt.executiveConfig()
			if err != nil {
				return err
			}
			ncfg, err := rt.notifierConfig()
			if err != nil {
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
