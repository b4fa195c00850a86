package main

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/flapjackgo/flapjack/model/views"
	"github.com/flapjackgo/flapjack/schema"
)

func logCommand() *cli.Command {
	return &cli.Command{
		Name:  "log",
		Usage: "the delivery log: each alert queued for a contact and what became of it (queued, delivered, retried, failed)",
		Description: `Prints, oldest first, one line per alert: when it was queued, the check, the contact, the
medium and its fate — "queued" while no gateway has taken it, "delivered" (with the provider's
message id where it gives one) once the provider accepted it, "failed" with the reason once it was
dead-lettered — and how many times it was retried.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "check", Usage: "only alerts about ENTITY:CHECK"},
			&cli.StringFlag{Name: "contact", Usage: "only alerts to this contact id"},
			&cli.StringFlag{Name: "since", Usage: "only alerts queued since this time (7d, \"3 days ago\", unix seconds, RFC 3339, \"2026-01-05 10:00\")"},
			&cli.IntFlag{Name: "limit", Value: views.DefaultDeliveryLimit, Usage: "at most this many alerts, the newest"},
			&cli.BoolFlag{Name: "json", Usage: "print the records as a JSON array"},
		},
		Action: oneShot(func(c *cli.Context, rt *runtime) error {
			f := views.DeliveryFilter{Check: c.String("check"), Contact: c.String("contact"), Limit: c.Int("limit")}
			if f.Check != "" {
				if _, _, ok := schema.SplitCheckID(f.Check); !ok {
					return usageError("--check: %q is not ENTITY:CHECK", f.Check)
				}
			}
			if s := c.String("since"); s != "" {
				t, err := parsePastTime(s, rt.clock.Now())
				if err != nil {
					return usageError("--since: %v", err)
				}
				f.Since = t.Unix()
			}
			conn, err := rt.pool.GetContext(c.Context)
			if err != nil {
				return err
			}
			defer conn.Close()
			recs, err := views.ReadDeliveries(conn, rt.keys, f)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return writeJSONList(c.App.Writer, recs)
			}
			if len(recs) == 0 {
				fmt.Fprintln(c.App.Writer, "no alerts in the delivery log")
				return nil
			}
			for _, r := range recs {
				fmt.Fprintln(c.App.Writer, deliveryText(r, time.Local))
			}
			return nil
		}),
	}
}

// deliveryText is a record as `log` and `explain` print it: the queue time, then the sentence.
func deliveryText(r schema.DeliveryRecord, loc *time.Location) string {
	return time.Unix(r.QueuedAt, 0).In(loc).Format("2006-01-02 15:04:05 MST") + "  " + views.DeliveryLine(r)
}
