package main

import (
	"context"
	"fmt"
	"os"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/urfave/cli/v2"

	"github.com/flapjackgo/flapjack/executive"
	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/gateways/logmedium"
	"github.com/flapjackgo/flapjack/notifier"
)

func executiveCommand() *cli.Command {
	return &cli.Command{
		Name:  "executive",
		Usage: "process events from the events list: state, history, maintenance, filters, notifications",
		Description: `Claims events in batches (several executives may share one Redis), keeps each check's
state on the Flapjack 1.x key layout and pushes notifications to the notifications list.`,
		Flags: []cli.Flag{&cli.BoolFlag{Name: "exit-when-empty", Usage: "stop (exit 0) once the events list is empty: for batch runs and benchmarks"}},
		Action: func(c *cli.Context) error {
			return runStages(c, func(rt *runtime, reg prometheus.Registerer) ([]stage, error) {
				x := rt.newExecutive(reg)
				exitWhenEmpty := c.Bool("exit-when-empty")
				stages := []stage{{name: "executive", run: func(ctx context.Context) error { return x.Run(ctx, exitWhenEmpty) }}}
				if !exitWhenEmpty {
					stages = append(stages, rt.retentionStage(reg))
				}
				return stages, nil
			})
		},
	}
}

func notifierCommand() *cli.Command {
	return &cli.Command{
		Name:  "notifier",
		Usage: "route notifications to contacts' media queues by their rules, intervals and rollup",
		Action: func(c *cli.Context) error {
			return runStages(c, func(rt *runtime, reg prometheus.Registerer) ([]stage, error) {
				n := rt.newNotifier(reg)
				return []stage{{name: "notifier", run: func(ctx context.Context) error { return n.Run(ctx, false) }}}, nil
			})
		},
	}
}

func gatewayCommand() *cli.Command {
	return &cli.Command{
		Name:      "gateway",
		Usage:     "deliver alerts of one medium: jabber, pagerduty or log",
		ArgsUsage: "jabber|pagerduty|log",
		Action: func(c *cli.Context) error {
			name := c.Args().First()
			if c.NArg() != 1 {
				return cli.Exit("usage: flapjack gateway jabber|pagerduty|log", 2)
			}
			return runStages(c, func(rt *runtime, reg prometheus.Registerer) ([]stage, error) {
				return rt.gatewayStages(name, gateways.NewMetrics(reg), reg)
			})
		},
	}
}

func (rt *runtime) newExecutive(reg prometheus.Registerer) *executive.Executive {
	return executive.New(executive.Options{
		Pool: rt.pool, Keys: rt.keys, Config: rt.executiveConfig(), Clock: rt.clock, Log: rt.log,
		Metrics: executive.NewMetrics(reg), Identity: rt.identity, Version: version, Beat: rt.heartbeat(),
	})
}

func (rt *runtime) newNotifier(reg prometheus.Registerer) *notifier.Notifier {
	return notifier.New(notifier.Options{
		Pool: rt.pool, Keys: rt.keys, Config: rt.notifierConfig(), Clock: rt.clock, Log: rt.log,
		Metrics: notifier.NewMetrics(reg), Identity: rt.identity, Version: version, Beat: rt.heartbeat(),
	})
}

// gatewayOptions are the shared gateway settings for medium.
func (rt *runtime) gatewayOptions(medium string, m *gateways.Metrics) gateways.Options {
	v := rt.values
	return gateways.Options{
		Pool: rt.pool, Keys: rt.keys, Medium: medium, Queue: v.String("gateways." + medium + ".queue"),
		Identity: rt.identity, Clock: rt.clock, Log: rt.log, Metrics: m, Version: version,
		MaxAttempts: v.Int("gateways.retry.max_attempts"), FirstBackoff: v.Duration("gateways.retry.first_backoff"),
		MaxBackoff: v.Duration("gateways.retry.max_backoff"), Beat: rt.heartbeat(),
	}
}

// gatewayStages builds the stages of one gateway.
func (rt *runtime) gatewayStages(name string, m *gateways.Metrics, reg prometheus.Registerer) ([]stage, error) {
	switch name {
	case "log":
		g := gateways.New(rt.gatewayOptions("log", m), &logmedium.Sender{W: os.Stdout})
		return []stage{{name: "log gateway", run: g.Run}}, nil
	case "jabber":
		return rt.jabberStages(m)
	case "pagerduty":
		return rt.pagerdutyStages(m, reg)
	}
	return nil, cli.Exit(fmt.Sprintf("unknown gateway %q: jabber, pagerduty or log", name), 2)
}
