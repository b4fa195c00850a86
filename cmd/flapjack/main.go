// Command flapjack is the one binary of flapjack: every stage (executive, notifier, gateways),
// the all-in-one server, receivers and the operator tools. Each file holds one group of
// commands; they translate flags into calls of the domain packages and print the result.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"
)

// version is set at build time (-ldflags "-X main.version=...").
var version = "dev"

func main() {
	setGCPercent(os.LookupEnv, defaultGCPercent)
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
	app := &cli.App{
		Name:    "flapjack",
		Usage:   "monitoring event processor and notification router (Flapjack 1.x compatible)",
		Version: version,
		Description: `Nagios, Sensu and scripts push check results (LPUSH events, POST /events, receivers);
the executive keeps state, history and maintenance in Redis and decides when a failure deserves a
notification; the notifier routes it by each contact's rules; gateways deliver it (Jabber,
PagerDuty, log). Every setting is a flag, a FLAPJACK_* environment variable and a key of the
--config YAML file (flag > environment > file > default), accepted before or after the command
name: see ` + "`flapjack help settings`" + ` and etc/flapjack.yaml.example.`,
		EnableBashCompletion: true,
		Commands: []*cli.Command{
			serverCommand(),
			webCommand(),
			executiveCommand(),
			notifierCommand(),
			apiCommand(),
			gatewayCommand(),
			receiverCommand(),
			simulateCommand(),
			maintenanceCommand(),
			ackCommand(),
			purgeCommand(),
			importCommand(),
			oncallCommand(),
			replayCommand(),
			whatifCommand(),
			alertCommand(),
			statusCommand(),
			checksCommand(),
			rulesCommand(),
			explainCommand(),
			logCommand(),
			reportCommand(),
			settingsCommand(),
			versionCommand(),
		},
	}
	withSettingFlags(app)
	return app
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
