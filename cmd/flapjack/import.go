package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/gomodule/redigo/redis"
	"github.com/urfave/cli/v2"

	"github.com/flapjackgo/flapjack/importer"
	"github.com/flapjackgo/flapjack/schema"
)

type importFunc func(context.Context, redis.Conn, schema.Keys, []byte, importer.Options) (importer.Report, error)

func importCommand() *cli.Command {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Required: true, Usage: "Flapjack 1.x JSON file (- = standard input)"},
		&cli.BoolFlag{Name: "partial", Usage: "import the good records of a file that has bad ones"},
		&cli.BoolFlag{Name: "dry-run", Usage: "validate and report; write nothing"},
	}
	sub := func(name, usage string, f importFunc) *cli.Command {
		return &cli.Command{Name: name, Usage: usage, Flags: flags, Action: oneShot(func(c *cli.Context, rt *runtime) error {
			return runImport(c, rt, name, f)
		})}
	}
	return &cli.Command{
		Name:  "import",
		Usage: "import contacts (media, intervals, rollup thresholds, timezone, PagerDuty credentials, rules), entities, notification rules, escalation policies or on-call schedules from Flapjack 1.x JSON",
		Description: `Every bad record is reported with its index and reason; a file with any bad record imports
nothing unless --partial. Importing the same file again changes nothing; a changed record replaces
what was stored for its id.`,
		Subcommands: []*cli.Command{
			sub("contacts", "import contacts", importer.Contacts),
			sub("entities", "import entities (id, name, contacts, schedules, tags)", importer.Entities),
			sub("rules", "import notification rules of existing contacts (each needs id and contact_id); adds or replaces rules, deletes none", importer.Rules),
			sub("schedules", "import on-call schedules (id, name, timezone, layers, overrides, fallback; see docs/schedules.md); adds or replaces schedules, deletes none", importer.Schedules),
			sub("escalations", "import escalation policies (id, matching as notification rules, steps of delay and contacts, repeat, severities); adds or replaces policies, deletes none", importer.Escalations),
		},
	}
}

func runImport(c *cli.Context, rt *runtime, what string, f importFunc) error {
	path := c.String("file")
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(os.Stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return cli.Exit(err.Error(), 2)
	}
	var rep importer.Report
	err = rt.withConn(c.Context, func(conn redis.Conn) error {
		var ierr error
		rep, ierr = f(c.Context, conn, rt.keys, data, importer.Options{Partial: c.Bool("partial"), DryRun: c.Bool("dry-run")})
		return ierr
	})
	for _, p := range rep.Problems {
		fmt.Fprintln(c.App.ErrWriter, "problem:", p.String())
	}
	for _, n := range rep.Notes {
		fmt.Fprintln(c.App.ErrWriter, "note:", n)
	}
	if errors.Is(err, importer.ErrInvalid) {
		return cli.Exit(err.Error(), 1)
	}
	if err != nil {
		return err
	}
	verb := "imported"
	if c.Bool("dry-run") {
		verb = "would import"
	}
	fmt.Fprintf(c.App.Writer, "%s %d %s (%d skipped, %d writes)\n", verb, rep.Imported, what, rep.Skipped, rep.Writes)
	return nil
}
