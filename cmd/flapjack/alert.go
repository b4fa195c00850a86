package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/gateways/media"
	"github.com/flapjackgo/flapjack/schema"
)

func alertCommand() *cli.Command {
	return &cli.Command{
		Name:  "alert",
		Usage: "work with alert messages: render an alert through a message template",
		Subcommands: []*cli.Command{{
			Name:  "render",
			Usage: "show what a template makes of an alert (alert JSON as on <medium>_notifications)",
			Description: `The template is read as the one its --name says (default: the file's name when it is one
of the medium's template names, e.g. alert_subject.text; else alert.text); .html names are
html/template, the others text/template. Errors are shown, not replaced by the built-in text.`,
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "medium", Aliases: []string{"m"}, Required: true, Usage: "the medium whose template it is"},
				&cli.StringFlag{Name: "template", Aliases: []string{"t"}, Required: true, Usage: "template file"},
				&cli.StringFlag{Name: "name", Usage: "which template the file is (alert.text, alert_subject.text, alert.html, rollup.text, ...)"},
				&cli.StringFlag{Name: "alert", Aliases: []string{"a"}, Value: "-", Usage: "alert JSON file (- = standard input)"},
				&cli.StringFlag{Name: "timezone", Value: "UTC", Usage: "the contact's timezone, for times"},
			},
			Action: renderAlert,
		}},
	}
}

func renderAlert(c *cli.Context) error {
	m, ok := media.Lookup(c.String("medium"))
	if !ok || len(m.Templates) == 0 {
		return usageError("--medium %q: no templates; media with templates: %s", c.String("medium"), mediaWithTemplates())
	}
	name := c.String("name")
	if name == "" {
		name = filepath.Base(c.String("template"))
		if !slices.Contains(m.Templates, name) {
			name = gateways.TemplateAlertText
		}
	}
	if !slices.Contains(m.Templates, name) {
		return usageError("--name %q: %s's templates are %v", name, m.Name, m.Templates)
	}
	loc, err := time.LoadLocation(c.String("timezone"))
	if err != nil {
		return usageError("--timezone: %v", err)
	}
	in := io.Reader(os.Stdin)
	if p := c.String("alert"); p != "-" {
		f, err := os.Open(p)
		if err != nil {
			return usageError("--alert: %v", err)
		}
		defer f.Close()
		in = f
	}
	var a schema.Alert
	if err := json.NewDecoder(in).Decode(&a); err != nil {
		return usageError("--alert: not alert JSON: %v", err)
	}
	out, err := gateways.RenderTemplateFile(name, c.String("template"), gateways.NewMessage(a, loc))
	if err != nil {
		return cli.Exit(fmt.Sprintf("template %s: %v", c.String("template"), err), 1)
	}
	fmt.Fprint(c.App.Writer, out)
	return nil
}

func mediaWithTemplates() []string {
	var names []string
	for _, m := range media.All {
		if len(m.Templates) > 0 {
			names = append(names, m.Name)
		}
	}
	return names
}
