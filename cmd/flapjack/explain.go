package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/flapjackgo/flapjack/internal/humantime"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/schema"
)

func explainCommand() *cli.Command {
	return &cli.Command{
		Name:      "explain",
		Usage:     "why a check did or did not alert: the executive's and the notifier's last decisions about it",
		ArgsUsage: "ENTITY:CHECK",
		Description: `Prints, oldest first, what the executive made of each event of the check (the filter that
blocked it and why, or the notification generated) and what the notifier made of each
notification (the contacts considered, the rule that matched or why none did, the interval,
time restriction, blackhole or rollup that held a medium back). The last
executive.explain_entries decisions are kept per check.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "since", Usage: "only decisions this recent (e.g. 2h, 30 minutes)"},
			&cli.StringFlag{Name: "format", Value: "text", Usage: "text or json"},
		},
		Action: oneShot(func(c *cli.Context, rt *runtime) error {
			id := c.Args().First()
			if _, _, ok := schema.SplitCheckID(id); !ok || c.NArg() != 1 {
				return usageError("explain needs one ENTITY:CHECK argument")
			}
			format := c.String("format")
			if format != "text" && format != "json" {
				return usageError("--format: %q is not text or json", format)
			}
			var since int64
			if s := c.String("since"); s != "" {
				d, err := humantime.Parse(s)
				if err != nil {
					return usageError("--since: %v", err)
				}
				since = rt.clock.Now().Add(-d).Unix()
			}
			conn, err := rt.pool.GetContext(c.Context)
			if err != nil {
				return err
			}
			defer conn.Close()
			entries, err := model.ReadExplain(conn, rt.keys, id, since)
			if err != nil {
				return err
			}
			if format == "json" {
				if entries == nil {
					entries = []schema.ExplainEntry{}
				}
				enc := json.NewEncoder(c.App.Writer)
				enc.SetIndent("", "  ")
				return enc.Encode(entries)
			}
			if len(entries) == 0 {
				fmt.Fprintf(c.App.Writer, "no decisions recorded about %s\n", id)
				return nil
			}
			for _, e := range entries {
				fmt.Fprintln(c.App.Writer, strings.Join(model.ExplainLines(e, time.Local), "\n"))
			}
			return nil
		}),
	}
}
