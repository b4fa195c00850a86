// Command flapjack is the one binary of flapjack: every stage (executive, notifier, gateways),
// the all-in-one server, receivers and the operator tools.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/flapjackgo/flapjack/config"
)

// version is set at build time (-ldflags "-X main.version=...").
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	err := newApp().RunContext(ctx, os.Args)
	stop()
	os.Exit(exitCode(err))
}

// exitCode maps errors to exit statuses: 2 for configuration and usage errors (cli.Exit), 1 for
// the rest.
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var coder cli.ExitCoder
	if errors.As(err, &coder) {
		if msg := err.Error(); msg != "" {
			fmt.Fprintln(os.Stderr, "flapjack:", msg)
		}
		return coder.ExitCode()
	}
	fmt.Fprintln(os.Stderr, "flapjack:", err)
	return 1
}

func newApp() *cli.App {
	return &cli.App{
		Name:    "flapjack",
		Usage:   "monitoring event processor and notification router (Flapjack 1.x compatible)",
		Version: version,
		Description: `Nagios, Sensu and scripts push check results (LPUSH events, POST /events, receivers);
the executive keeps state, history and maintenance in Redis and decides when a failure deserves a
notification; the notifier routes it by each contact's rules; gateways deliver it (Jabber,
PagerDuty, log). Every setting is a flag, a FLAPJACK_* environment variable and a key of the
--config YAML file (flag > environment > file > default); see etc/flapjack.yaml.example.`,
		Flags:                settingFlags(),
		EnableBashCompletion: true,
		Commands: []*cli.Command{
			serverCommand(),
			executiveCommand(),
			notifierCommand(),
			gatewayCommand(),
			receiverCommand(),
			simulateCommand(),
			maintenanceCommand(),
			ackCommand(),
			purgeCommand(),
			importCommand(),
			replayCommand(),
			statusCommand(),
			versionCommand(),
		},
	}
}

// settingFlags turns every setting into a global flag with its environment variable.
func settingFlags() []cli.Flag {
	flags := []cli.Flag{&cli.StringFlag{
		Name: "config", Aliases: []string{"c"}, EnvVars: []string{"FLAPJACK_CONFIG"},
		Usage: "YAML configuration file (sections redis, executive, notifier, gateways, http, metrics, retention)",
	}}
	for _, s := range config.Settings {
		usage := s.Usage
		if s.Default != "" && !s.Secret {
			usage += fmt.Sprintf(" (default %q)", s.Default)
		}
		flags = append(flags, &cli.StringFlag{
			Name: s.Flag(), EnvVars: []string{s.Env()}, Usage: usage, Category: s.Section(),
		})
	}
	return flags
}

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print the version",
		Action: func(c *cli.Context) error {
			fmt.Fprintln(c.App.Writer, "flapjack", version)
			return nil
		},
	}
}
