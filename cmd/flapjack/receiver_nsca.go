package main

import (
	"github.com/urfave/cli/v2"

	"github.com/flapjackgo/flapjack/lifecycle"
	"github.com/flapjackgo/flapjack/receiver"
)

const nscaStage = "nsca receiver"

// nscaCommand reads the nsca daemon's command_file pipe as a stage, with the Nagios receiver's
// pipe handling; metrics.addr serves its metrics.
func nscaCommand() *cli.Command {
	return &cli.Command{
		Name: "nsca",
		Usage: "read the passive results the nsca daemon writes (PROCESS_SERVICE_CHECK_RESULT, PROCESS_HOST_CHECK_RESULT) from the named pipe " +
			"its command_file names (receiver.nsca.fifo, created when missing, held open while nsca opens and closes it per result)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "fifo", Aliases: []string{"f"}, Usage: "the named pipe nsca's command_file names (same as --receiver-nsca-fifo)"},
			&cli.BoolFlag{Name: "replace-file", Usage: "when a regular file stands at the pipe's path, move it aside, queue its lines once and create the pipe"},
		},
		Action: func(c *cli.Context) error {
			return runStages(c, hooks{}, func(p *process) ([]lifecycle.Stage, error) {
				return pipeStages(c, p, "nsca", nscaStage, receiver.NewNSCAStats(p.reg), receiver.RunNSCA)
			})
		},
	}
}
