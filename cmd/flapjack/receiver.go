package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/urfave/cli/v2"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/config"
	"github.com/flapjackgo/flapjack/lifecycle"
	"github.com/flapjackgo/flapjack/receiver"
)

func receiverCommand() *cli.Command {
	return &cli.Command{
		Name:  "receiver",
		Usage: "feed events from Nagios (perfdata FIFO), JSON (stdin or file, Sensu events with --sensu) or HTTP",
		Subcommands: []*cli.Command{
			{
				Name:  "http",
				Usage: "serve POST /events (and /healthz, /readyz, /metrics) on http.addr, without running any stage",
				Action: func(c *cli.Context) error {
					return runStages(c, hooks{}, httpStages)
				},
			},
			nagiosCommand(),
			nscaCommand(),
			mirrorCommand(),
			{
				Name:  "json",
				Usage: "read events (one per line, concatenated, or an array) from --file or standard input",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Usage: "input file (default standard input)"},
					&cli.BoolFlag{Name: "sensu", Usage: "input is Sensu events (1.x or Go), converted to Flapjack events; a Sensu pipe handler: " +
						"kept in receiver.sensu.spool_dir while Redis is unavailable, quiet unless something is rejected or spooled"},
					&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "with --sensu: report the records read even when all were queued"},
				},
				Action: func(c *cli.Context) error {
					if c.Bool("sensu") {
						return sensuPipeHandler(c)
					}
					return oneShot(func(c *cli.Context, rt *runtime) error {
						in, err := jsonInput(c)
						if err != nil {
							return err
						}
						if f, ok := in.(*os.File); ok && f != os.Stdin {
							defer f.Close()
						}
						var rejected []receiver.Rejection
						rep, err := receiver.RunJSON(c.Context, in, receiver.JSONOptions{OnReject: func(r receiver.Rejection) {
							rejected = append(rejected, r)
						}}, rt.publisher(), rt.log)
						rt.keepRejectedNow(c.Context, "json", rejected)
						fmt.Fprintf(c.App.ErrWriter, "%d records: %d queued, %d rejected\n", rep.Records, rep.Enqueued, rep.Rejected)
						if err != nil {
							return cli.Exit(err.Error(), 1)
						}
						if rep.Rejected > 0 {
							return cli.Exit("", 1)
						}
						return nil
					})(c)
				},
			},
			{
				Name: "sensu",
				Usage: "accept Sensu Go TCP handler connections (one JSON event each) on receiver.sensu.listen, " +
					"spooling to receiver.sensu.spool_dir while Redis is unavailable",
				Flags: []cli.Flag{&cli.StringFlag{Name: "listen", Usage: "address to listen on (default receiver.sensu.listen)"}},
				Action: func(c *cli.Context) error {
					return runStages(c, hooks{}, sensuStages)
				},
			},
		},
	}
}

// jsonInput is --file, or standard input unless it is a terminal.
func jsonInput(c *cli.Context) (io.Reader, error) {
	if p := c.String("file"); p != "" {
		f, err := os.Open(p)
		if err != nil {
			return nil, cli.Exit(err.Error(), 2)
		}
		return f, nil
	}
	if fi, err := os.Stdin.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		return nil, cli.Exit("no --file given and standard input is a terminal", 2)
	}
	return os.Stdin, nil
}

// sensuSpool opens the spool of receiver.sensu.spool_dir (the same kind as the Nagios
// receiver's, in its own directory).
func sensuSpool(v *config.Values, log *zap.Logger) (*receiver.Spool, error) {
	spool, err := receiver.OpenSpool(v.String("receiver.sensu.spool_dir"), int64(v.Int("receiver.sensu.spool_max_bytes")))
	if err != nil {
		return nil, settingsError(fmt.Errorf("receiver.sensu.spool_dir %s: %w", v.String("receiver.sensu.spool_dir"), err))
	}
	spool.SetLogger(log)
	return spool, nil
}

// sensuPipeHandler is `receiver json --sensu`, run by Sensu once per event. Redis being
// unavailable is not a failure: the event is spooled (exit 0) and delivered by the next run or
// by `receiver sensu`, events spooled earlier first. Quiet when every record was queued, so
// Sensu's log is not filled with one line per event.
func sensuPipeHandler(c *cli.Context) error {
	rt, err := setup(c)
	if err != nil {
		return err
	}
	defer rt.close()
	if err := rt.connect(c.Context); err != nil {
		return err
	}
	in, err := jsonInput(c)
	if err != nil {
		return err
	}
	if f, ok := in.(*os.File); ok && f != os.Stdin {
		defer f.Close()
	}
	spool, err := sensuSpool(rt.values, rt.log)
	if err != nil {
		return err
	}
	defer spool.Close()
	enq := &receiver.SpoolingEnqueuer{Next: rt.publisher(), Spool: spool}
	var rejected []receiver.Rejection
	rep, err := receiver.RunJSON(c.Context, in, receiver.JSONOptions{Sensu: true, OnReject: func(r receiver.Rejection) {
		rejected = append(rejected, r)
	}}, enq, rt.log)
	rt.keepRejectedNow(c.Context, "sensu", rejected)
	if rep.Records == 0 && err == nil {
		// Nothing read: still deliver what earlier runs spooled.
		_, _ = spool.Drain(c.Context, rt.publisher())
	}
	if rep.Rejected > 0 || enq.Spooled() > 0 || spool.Dropped() > 0 || err != nil || c.Bool("verbose") {
		msg := fmt.Sprintf("%d records: %d queued, %d rejected", rep.Records, rep.Enqueued, rep.Rejected)
		if n := enq.Spooled(); n > 0 {
			msg += fmt.Sprintf("; %d of the queued spooled in %s until Redis answers", n, spool.Dir())
		}
		if n := spool.Dropped(); n > 0 {
			msg += fmt.Sprintf("; %d older spooled events dropped (receiver.sensu.spool_max_bytes)", n)
		}
		fmt.Fprintln(c.App.ErrWriter, msg)
	}
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	if rep.Rejected > 0 {
		return cli.Exit("", 1)
	}
	return nil
}

// sensuStages run the Sensu TCP receiver (`receiver sensu`, and `server` with
// receiver.sensu.enabled): events go to Redis, or to the spool while it is unavailable, and
// the spool is drained every second.
func sensuStages(p *process) ([]lifecycle.Stage, error) {
	addr := p.values.String("receiver.sensu.listen")
	if p.cli != nil && p.cli.IsSet("listen") {
		addr = p.cli.String("listen")
	}
	log := p.log.With(zap.String("stage", sensuStage))
	spool, err := sensuSpool(p.values, log)
	if err != nil {
		return nil, err
	}
	enq := &receiver.SpoolingEnqueuer{Next: p.publisher(), Spool: spool}
	onReject, keeper := p.keepRejected("sensu")
	return []lifecycle.Stage{
		{Name: sensuStage, Run: func(ctx context.Context) error {
			return receiver.ServeSensu(ctx, receiver.SensuOptions{Listen: addr, OnReject: onReject}, enq, log)
		}},
		keeper,
		{Name: sensuStage + " spool", Auxiliary: true, Run: func(ctx context.Context) error {
			enq.DrainEvery(ctx, time.Second)
			return nil
		}},
	}, nil
}

const sensuStage = "sensu receiver"
