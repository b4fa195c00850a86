package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/flapjackgo/flapjack/internal/humantime"
	"github.com/flapjackgo/flapjack/model/views"
)

func reportCommand() *cli.Command {
	return &cli.Command{
		Name:  "report",
		Usage: "reports over the recorded history",
		Subcommands: []*cli.Command{{
			Name:  "oncall",
			Usage: "per contact and week: alerts received by medium and hour of day (nights apart), pages acknowledged and how fast, escalations",
			Description: `Reads the delivery log and the checks' acknowledgements. Hours are on the contact's
clock (its timezone, else notifier.default_contact_timezone); nights are 22:00 to 07:00. A page is
a problem notification (one per check and time, whatever the media); it counts as acknowledged
when its check was acknowledged after it and before the contact's next page about the check (or
--until); the median and 90th percentile of the delays are nearest-rank.`,
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "from", Required: true, Usage: "start (7d, \"3 days ago\", unix seconds, RFC 3339, \"2026-01-05 10:00\")"},
				&cli.StringFlag{Name: "until", Value: "now", Usage: "end (same forms)"},
				&cli.StringFlag{Name: "contact", Usage: "only this contact id"},
				&cli.BoolFlag{Name: "json", Usage: "print the weeks as a JSON array"},
			},
			Action: oneShot(func(c *cli.Context, rt *runtime) error {
				now := rt.clock.Now()
				from, err := parsePastTime(c.String("from"), now)
				if err != nil {
					return usageError("--from: %v", err)
				}
				until, err := parsePastTime(c.String("until"), now)
				if err != nil {
					return usageError("--until: %v", err)
				}
				if !until.After(from) {
					return usageError("--until must be after --from")
				}
				loc, err := rt.values.DefaultContactTimezone()
				if err != nil {
					return err
				}
				conn, err := rt.pool.GetContext(c.Context)
				if err != nil {
					return err
				}
				defer conn.Close()
				weeks, err := views.OncallReport(conn, rt.keys, from.Unix(), until.Unix(), c.String("contact"), loc)
				if err != nil {
					return err
				}
				if c.Bool("json") {
					return writeJSONList(c.App.Writer, weeks)
				}
				writeOncallReport(c.App.Writer, weeks)
				return nil
			}),
		}},
	}
}

// writeOncallReport prints each contact's weeks in a few lines.
func writeOncallReport(w io.Writer, weeks []views.OncallWeek) {
	if len(weeks) == 0 {
		fmt.Fprintln(w, "no alerts in the period")
		return
	}
	for _, wk := range weeks {
		who := wk.Contact
		if wk.Name != "" {
			who = wk.Name + " (" + wk.Contact + ")"
		}
		var media []string
		for _, m := range slices.Sorted(maps.Keys(wk.ByMedium)) {
			media = append(media, fmt.Sprintf("%s %d", m, wk.ByMedium[m]))
		}
		var hours []string
		for h, n := range wk.ByHour {
			if n > 0 {
				hours = append(hours, fmt.Sprintf("%02d:00 %d", h, n))
			}
		}
		fmt.Fprintf(w, "%s, week of %s (%s)\n", who, wk.Week, wk.Timezone)
		fmt.Fprintf(w, "  alerts: %d (%s), %d at night (%02d:00-%02d:00), %d delivered\n", wk.Alerts, strings.Join(media, ", "),
			wk.Nights, views.NightStart, views.NightEnd, wk.Delivered)
		fmt.Fprintf(w, "  by hour: %s\n", strings.Join(hours, ", "))
		ack := fmt.Sprintf("  pages: %d, acknowledged %d", wk.Pages, wk.Acknowledged)
		if wk.AckMedian != nil {
			ack += fmt.Sprintf(": median %s, 90th percentile %s", humantime.Words(time.Duration(*wk.AckMedian)*time.Second),
				humantime.Words(time.Duration(*wk.AckP90)*time.Second))
		}
		fmt.Fprintln(w, ack)
		fmt.Fprintf(w, "  escalations that reached them: %d\n", wk.Escalations)
	}
}
