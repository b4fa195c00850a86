package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/flapjackgo/flapjack/internal/humantime"
	"github.com/flapjackgo/flapjack/schema"
)

func simulateCommand() *cli.Command {
	common := append(checkFlags(false),
		&cli.StringFlag{Name: "summary", Usage: "event summary"},
		&cli.StringSliceFlag{Name: "tags", Aliases: []string{"T"}, Usage: "event tags"},
	)
	event := func(c *cli.Context, typ, state string) schema.Event {
		return schema.Event{Entity: c.String("entity"), Check: c.String("check"),
			Type: typ, State: state, Summary: c.String("summary"), Tags: c.StringSlice("tags")}
	}
	sub := func(name, usage string, flags []cli.Flag, action func(c *cli.Context, rt *runtime, send func(schema.Event) error) error) *cli.Command {
		return &cli.Command{Name: name, Usage: usage, Flags: append(append([]cli.Flag{}, common...), flags...),
			Action: oneShot(func(c *cli.Context, rt *runtime) error {
				send := func(e schema.Event) error {
					e.Time, e.HasTime = rt.clock.Now().Unix(), true
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
			}, func(c *cli.Context, rt *runtime, send func(schema.Event) error) error {
				return simulateFailure(c, rt, event(c, schema.TypeService, strings.ToLower(c.String("state"))), send)
			}),
			sub("ok", "send one ok event", nil, func(c *cli.Context, _ *runtime, send func(schema.Event) error) error {
				return send(event(c, schema.TypeService, schema.StateOK))
			}),
			sub("ack", "send one acknowledgement", []cli.Flag{
				&cli.StringFlag{Name: "duration", Aliases: []string{"t"}, Usage: "acknowledgement length (default executive.acknowledgement_duration)"},
			}, func(c *cli.Context, rt *runtime, _ func(schema.Event) error) error {
				ev, err := acknowledge(c, rt, c.String("summary"))
				if err != nil {
					return err
				}
				b, _ := ev.MarshalJSON()
				fmt.Fprintf(c.App.Writer, "sent %s\n", b)
				return nil
			}),
			sub("test", "send one test_notifications event", nil, func(c *cli.Context, _ *runtime, send func(schema.Event) error) error {
				return send(event(c, schema.TypeAction, schema.StateTestNotifications))
			}),
		},
	}
}

func simulateFailure(c *cli.Context, rt *runtime, base schema.Event, send func(schema.Event) error) error {
	if !schema.IsFailure(base.State) {
		return usageError("--state must be warning, critical or unknown")
	}
	interval, err := humantime.Parse(c.String("interval"))
	if err != nil || interval <= 0 {
		return usageError("--interval %q: want a positive duration", c.String("interval"))
	}
	duration, err := humantime.Parse(c.String("duration"))
	if err != nil {
		return usageError("--duration: %v", err)
	}
	deadline := rt.clock.Now().Add(duration)
	for {
		if err := send(base); err != nil {
			return err
		}
		if !rt.clock.Now().Add(interval).Before(deadline.Add(time.Millisecond)) {
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
