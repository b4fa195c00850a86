package main

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/flapjackgo/flapjack/config"
	"github.com/flapjackgo/flapjack/gateways/media"
)

// settingsNote ends every command's help: the shared flags are listed once, not per command.
const settingsNote = "Every setting flag (--config, --redis-url, --log-level, ...) is accepted here too, before or after\nthe command name: see `flapjack help settings`."

// withSettingFlags gives the app and every command and sub-command its own copy of every
// setting flag, hidden from help. urfave/cli v2 parses a flag only at the level that defines
// it, so this is what lets `flapjack replay --redis-url U` and `flapjack --redis-url U replay`
// mean the same; settingSource then picks the value given closest to the command.
func withSettingFlags(app *cli.App) {
	app.Flags = append(app.Flags, settingFlags(true, true)...)
	var walk func(cmds []*cli.Command)
	walk = func(cmds []*cli.Command) {
		for _, cmd := range cmds {
			cmd.Flags = append(cmd.Flags, settingFlags(false, !hasFlagName(cmd.Flags, "c"))...)
			if cmd.Name != "settings" {
				cmd.Description = strings.TrimSpace(cmd.Description + "\n\n" + settingsNote)
			}
			walk(cmd.Subcommands)
		}
	}
	walk(app.Commands)
}

// settingFlags are fresh flags for every setting (no environment variables: config.Load reads
// the environment itself, so a variable never hides a flag given at another level). shortConfig
// adds -c for --config where the command has no -c of its own (purge's -c is --check).
func settingFlags(global, shortConfig bool) []cli.Flag {
	configFlag := &cli.StringFlag{Name: "config", Usage: "YAML configuration file (also FLAPJACK_CONFIG)", Hidden: !global}
	if shortConfig {
		configFlag.Aliases = []string{"c"}
	}
	flags := []cli.Flag{configFlag}
	for _, s := range media.Table() {
		flags = append(flags, &cli.StringFlag{Name: s.Flag(), Hidden: true})
	}
	return flags
}

func hasFlagName(flags []cli.Flag, name string) bool {
	for _, f := range flags {
		if slices.Contains(f.Names(), name) {
			return true
		}
	}
	return false
}

// settingSource reads setting flags from the command line: the value given closest to the
// command wins (`flapjack --redis-url A replay --redis-url B` uses B).
type settingSource struct{ c *cli.Context }

func (s settingSource) given(name string) *cli.Context {
	for _, ctx := range s.c.Lineage() {
		if slices.Contains(ctx.LocalFlagNames(), name) {
			return ctx
		}
	}
	return nil
}

func (s settingSource) IsSet(name string) bool { return s.given(name) != nil }

func (s settingSource) String(name string) string {
	if ctx := s.given(name); ctx != nil {
		return ctx.String(name)
	}
	return ""
}

// configPath is --config or -c (anywhere on the command line), else FLAPJACK_CONFIG.
func configPath(c *cli.Context) string {
	if src := (settingSource{c}); src.IsSet("config") {
		return src.String("config")
	}
	return os.Getenv("FLAPJACK_CONFIG")
}

// loadSettings reads the configuration; problems exit with status 2 naming each setting.
func loadSettings(c *cli.Context) (*config.Values, error) {
	v, err := config.Load(media.Table(), configPath(c), settingSource{c}, os.Environ())
	if err != nil {
		return nil, cli.Exit(err.Error(), 2)
	}
	return v, nil
}

func settingsCommand() *cli.Command {
	return &cli.Command{
		Name:        "settings",
		Usage:       "list every setting with its flag, environment variable and default",
		Description: settingsHelp(),
		Action: func(c *cli.Context) error {
			fmt.Fprintln(c.App.Writer, settingsHelp())
			return nil
		},
	}
}

// settingsHelp lists the settings by section.
func settingsHelp() string {
	var b strings.Builder
	b.WriteString(`Every setting is a flag (accepted before or after any command name), a FLAPJACK_* environment
variable and a key of the --config YAML file; flag > environment > file > default. Durations
accept integer seconds, Go durations (90s, 720h) and words (15 minutes, 1 day).

  --config FILE, -c FILE   YAML configuration file (also FLAPJACK_CONFIG)
`)
	section := ""
	for _, s := range media.Table() {
		if s.Section() != section {
			section = s.Section()
			fmt.Fprintf(&b, "\n%s\n", section)
		}
		def := ""
		if s.Default != "" && !s.Secret {
			def = fmt.Sprintf(" (default %q)", s.Default)
		}
		fmt.Fprintf(&b, "  --%s, %s\n      %s%s\n", s.Flag(), s.Env(), s.Usage, def)
	}
	return b.String()
}
