package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/flapjackgo/flapjack/notifier"
)

func rulesCommand() *cli.Command {
	return &cli.Command{
		Name:  "rules",
		Usage: "inspect notification rules",
		Subcommands: []*cli.Command{{
			Name:  "test",
			Usage: "which of a contact's media a notification would alert now, and why (sends and writes nothing)",
			Description: `Runs the notifier's own routing on what Redis holds: the contact's rules (entities, tags,
regexes, blackholes, time restrictions in the contact's timezone), the intervals already running
(contact_alert_state) and rollup thresholds.`,
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "contact", Required: true, Usage: "contact id"},
				&cli.StringFlag{Name: "entity", Aliases: []string{"e"}, Required: true, Usage: "entity name"},
				&cli.StringFlag{Name: "check", Aliases: []string{"c"}, Required: true, Usage: "check name"},
				&cli.StringFlag{Name: "state", Value: "critical", Usage: "ok, warning, critical, unknown or acknowledgement"},
				&cli.StringFlag{Name: "severity", Usage: "for ok and acknowledgement: the severity they carry (default: the highest notified since the check's last recovery, as the executive gives them)"},
				&cli.StringFlag{Name: "time", Usage: "when: now, +2h, unix seconds, RFC 3339 or \"2026-01-05 10:00\" (default now)"},
				&cli.StringSliceFlag{Name: "tags", Usage: "tags of the check (comma-separated)"},
				&cli.BoolFlag{Name: "json", Usage: "print JSON for scripts"},
			},
			Action: oneShot(func(c *cli.Context, rt *runtime) error {
				at, err := parseTime(c.String("time"), rt.clock.Now())
				if err != nil {
					return usageError("--time: %v", err)
				}
				var tags []string
				for _, t := range c.StringSlice("tags") {
					for _, s := range strings.Split(t, ",") {
						if s = strings.TrimSpace(s); s != "" {
							tags = append(tags, s)
						}
					}
				}
				cfg, err := rt.notifierConfig()
				if err != nil {
					return err
				}
				conn, err := rt.pool.GetContext(c.Context)
				if err != nil {
					return err
				}
				defer conn.Close()
				ans, err := notifier.TestRules(conn, rt.keys, cfg, notifier.RulesQuery{Contact: c.String("contact"),
					Entity: c.String("entity"), Check: c.String("check"), State: c.String("state"), Severity: c.String("severity"),
					Tags: tags, Time: at})
				if errors.Is(err, notifier.ErrNoContact) || (err != nil && (strings.HasPrefix(err.Error(), "state ") || strings.HasPrefix(err.Error(), "severity "))) {
					return usageError("%v", err)
				}
				if err != nil {
					return err
				}
				if c.Bool("json") {
					enc := json.NewEncoder(c.App.Writer)
					enc.SetIndent("", "  ")
					return enc.Encode(ans)
				}
				printRulesAnswer(c.App.Writer, ans)
				return nil
			}),
		}},
	}
}

func printRulesAnswer(w io.Writer, a notifier.RulesAnswer) {
	who := a.Contact.ID
	if a.Contact.Name != "" {
		who = a.Contact.Name + " (" + a.Contact.ID + ")"
	}
	fmt.Fprintf(w, "%s %s of %s for %s at %s (%s):\n", a.Severity, a.Type, a.CheckID, who,
		a.Time.Format("Mon 2006-01-02 15:04 MST"), a.Timezone)
	if a.SeverityNote != "" {
		fmt.Fprintf(w, "  severity %s: %s\n", a.Severity, a.SeverityNote)
	}
	for _, r := range a.Contact.Rules {
		fmt.Fprintf(w, "  %s\n", r)
	}
	if a.Contact.Reason != "" {
		fmt.Fprintf(w, "  nothing is sent: %s\n", a.Contact.Reason)
	}
	for _, m := range a.Contact.Media {
		verdict := "no"
		if m.Alerted {
			verdict = "ALERT"
		}
		fmt.Fprintf(w, "  %-10s %-9s %s\n", m.Medium, verdict, m.Reason)
	}
}
