package main

import (
	"context"
	"fmt"
	"os"
	"strconv"

	"github.com/urfave/cli/v2"
	"go.uber.org/zap"

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
				return pipeStages(c, p, "nagios", nagiosStage, receiver.NewNagiosStats(p.reg), receiver.RunNagios)
			})
		},
	}
}

// pipeStages are a pipe receiver's stages: run reading the pipe whose settings are
// receiver.NAME.*, and the keeper of the lines it rejects.
func pipeStages(c *cli.Context, p *process, name, stage string, stats *receiver.NagiosStats,
	run func(context.Context, receiver.NagiosOptions, receiver.Enqueuer, *zap.Logger) error) ([]lifecycle.Stage, error) {
	opts, err := pipeOptions(c, p, name, stats)
	if err != nil {
		return nil, err
	}
	var keeper lifecycle.Stage
	opts.OnReject, keeper = p.keepRejected(name)
	return []lifecycle.Stage{{Name: stage, Run: func(ctx context.Context) error {
		defer opts.Spool.Close()
		return run(ctx, opts, p.publisher(), p.log)
	}}, keeper}, nil
}

// pipeOptions are the options of the pipe receiver whose settings are receiver.NAME.*.
func pipeOptions(c *cli.Context, p *process, name string, stats *receiver.NagiosStats) (receiver.NagiosOptions, error) {
	v := p.values
	setting := func(s string) string { return "receiver." + name + "." + s }
	fifo := v.String(setting("fifo"))
	if c.IsSet("fifo") {
		fifo = c.String("fifo")
	}
	mode, err := strconv.ParseUint(v.String(setting("fifo_mode")), 8, 32)
	if err != nil || mode > 0o777 {
		return receiver.NagiosOptions{}, settingsError(fmt.Errorf("%s %q is not an octal mode such as 0660", setting("fifo_mode"), v.String(setting("fifo_mode"))))
	}
	spool, err := receiver.OpenSpool(v.String(setting("spool_dir")), int64(v.Int(setting("spool_max_bytes"))))
	if err != nil {
		return receiver.NagiosOptions{}, settingsError(fmt.Errorf("%s %s: %w", setting("spool_dir"), v.String(setting("spool_dir")), err))
	}
	pipeSize := v.Int(setting("pipe_size"))
	if pipeSize == 0 {
		pipeSize = -1 // 0: leave the kernel's size
	}
	return receiver.NagiosOptions{
		FIFO: fifo, FIFOMode: os.FileMode(mode), FIFOGroup: v.String(setting("fifo_group")),
		ReplaceFile: c.Bool("replace-file"), PipeSize: pipeSize, Spool: spool, Stats: stats,
	}, nil
}
