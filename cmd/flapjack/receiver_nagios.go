package main

import (
	"context"
	"fmt"
	"os"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/flapjackgo/flapjack/lifecycle"
	"github.com/flapjackgo/flapjack/receiver"
)

const nagiosStage = "nagios receiver"

// nagiosCommand reads Nagios perfdata from the pipe as a stage: metrics.addr serves its metrics.
func nagiosCommand() *cli.Command {
	return &cli.Command{
		Name:  "nagios",
		Usage: "read Nagios host and service perfdata lines from a named pipe (receiver.nagios.fifo, created when missing, held open through Nagios reloads and restarts)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "fifo", Aliases: []string{"f"}, Usage: "the perfdata named pipe (same as --receiver-nagios-fifo)"},
			&cli.BoolFlag{Name: "replace-file", Usage: "when a regular file stands at the pipe's path, move it aside, queue its lines once and create the pipe"},
		},
		Action: func(c *cli.Context) error {
			return runStages(c, hooks{}, func(p *process) ([]lifecycle.Stage, error) {
				opts, err := nagiosOptions(c, p)
				if err != nil {
					return nil, err
				}
				return []lifecycle.Stage{{Name: nagiosStage, Run: func(ctx context.Context) error {
					if opts.Spool != nil {
						defer opts.Spool.Close()
					}
					return receiver.RunNagios(ctx, opts, p.publisher(), p.log)
				}}}, nil
			})
		},
	}
}

func nagiosOptions(c *cli.Context, p *process) (receiver.NagiosOptions, error) {
	v := p.values
	fifo := v.String("receiver.nagios.fifo")
	if c.IsSet("fifo") {
		fifo = c.String("fifo")
	}
	mode, err := strconv.ParseUint(v.String("receiver.nagios.fifo_mode"), 8, 32)
	if err != nil || mode > 0o777 {
		return receiver.NagiosOptions{}, settingsError(fmt.Errorf("receiver.nagios.fifo_mode %q is not an octal mode such as 0660", v.String("receiver.nagios.fifo_mode")))
	}
	spool, err := receiver.OpenSpool(v.String("receiver.nagios.spool_dir"), int64(v.Int("receiver.nagios.spool_max_bytes")))
	if err != nil {
		return receiver.NagiosOptions{}, settingsError(fmt.Errorf("receiver.nagios.spool_dir %s: %w", v.String("receiver.nagios.spool_dir"), err))
	}
	pipeSize := v.Int("receiver.nagios.pipe_size")
	if pipeSize == 0 {
		pipeSize = -1 // 0: leave the kernel's size
	}
	return receiver.NagiosOptions{
		FIFO: fifo, FIFOMode: os.FileMode(mode), FIFOGroup: v.String("receiver.nagios.fifo_group"),
		ReplaceFile: c.Bool("replace-file"), PipeSize: pipeSize, Spool: spool,
		Stats: receiver.NewNagiosStats(p.reg),
	}, nil
}
