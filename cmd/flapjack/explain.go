package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/flapjackgo/flapjack/internal/humantime"
	"github.com/flapjackgo/flapjack/model/views"
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
executive.explain_entries decisions are kept per check. The text ends with the check's alerts
from the delivery log and what became of each (as flapjack log --check prints them).`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "since", Usage: "only decisions this recent (e.g. 2h, 30 minutes)"},
			&cli.StringFlag{Name: "format", Value: "text", Usage: "text or json"},
		},
		Action: oneShot(func(c *cli.Context, rt *runtime) error {
			id, opts, err := explainArgs(c)
			if err != nil {
				return err
			}
			format := opts["format"]
			if format != "text" && format != "json" {
				return usageError("--format: %q is not text or json", format)
			}
			var since int64
			if s := opts["since"]; s != "" {
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
			entries, err := views.ReadExplain(conn, rt.keys, id, since)
			if err != nil {
				return err
			}
			deliveries, err := views.ReadDeliveries(conn, rt.keys, views.DeliveryFilter{Check: id, Since: since})
			if err != nil {
				return err
			}
			if format == "json" {
				return writeJSONList(c.App.Writer, entries)
			}
			if len(entries) == 0 {
				fmt.Fprintf(c.App.Writer, "no decisions recorded about %s\n", id)
			}
			for _, e := range entries {
				fmt.Fprintln(c.App.Writer, strings.Join(views.ExplainLines(e, time.Local, views.NewFates(deliveries)), "\n"))
			}
			if len(deliveries) > 0 {
				fmt.Fprintln(c.App.Writer, "Deliveries (flapjack log):")
				for _, r := range deliveries {
					fmt.Fprintln(c.App.Writer, "  "+deliveryText(r, time.Local))
				}
			}
			return nil
		}),
	}
}

// explainArgs reads ENTITY:CHECK and the flags, which may also follow it (the command line reads
// "explain ENTITY:CHECK --since 2h"; flag parsing stops at the first argument).
func explainArgs(c *cli.Context) (string, map[string]string, error) {
	opts := map[string]string{"since": c.String("since"), "format": c.String("format")}
	var rest []string
	args := c.Args().Slice()
	for i := 0; i < len(args); i++ {
		name, value, hasValue := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if _, known := opts[name]; !known || !strings.HasPrefix(args[i], "-") {
			rest = append(rest, args[i])
			continue
		}
		if !hasValue {
			if i+1 == len(args) {
				return "", nil, usageError("--%s needs a value", name)
			}
			i++
			value = args[i]
		}
		opts[name] = value
	}
	if len(rest) != 1 {
		return "", nil, usageError("explain needs one ENTITY:CHECK argument")
	}
	if _, _, ok := schema.SplitCheckID(rest[0]); !ok {
		return "", nil, usageError("%q is not ENTITY:CHECK", rest[0])
	}
	return rest[0], opts, nil
}
