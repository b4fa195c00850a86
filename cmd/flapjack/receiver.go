package main

import (
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

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
