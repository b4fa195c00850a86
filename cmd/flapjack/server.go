package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/gomodule/redigo/redis"
	"github.com/urfave/cli/v2"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/gateways/media"
	"github.com/flapjackgo/flapjack/internal/embeddedredis"
	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/redisconn"
)

func serverCommand() *cli.Command {
	return &cli.Command{
		Name:  "server",
		Usage: "run everything in one process: executive, notifier, enabled gateways, retention, the HTTP listener and the web UI",
		Description: `Each stage has a switch (executive.enabled, notifier.enabled, retention.enabled, http.enabled, web.enabled,
gateways.<name>.enabled); the log says which stages run, and a server with none refuses to start.

With no redis.url (nor Sentinel) configured and no Redis answering at 127.0.0.1:6379, an
embedded Redis-compatible server is started in-process (nothing is persisted) and a demo contact
"operator" receives every alert on the log medium, printed on standard output.`,
		Action: func(c *cli.Context) error {
			setGCPercent(os.LookupEnv, serverGCPercent)
			var embedded bool
			h := hooks{
				beforeConnect: func(rt *runtime) (err error) { embedded, err = rt.maybeEmbedRedis(); return err },
				afterConnect: func(ctx context.Context, rt *runtime) error {
					if !embedded {
						return nil
					}
					return rt.seedDemoContact(ctx)
				},
			}
			return runStages(c, h, serverStages)
		},
	}
}

func executiveCommand() *cli.Command {
	return &cli.Command{
		Name:  "executive",
		Usage: "process events from the events list: state, history, maintenance, filters, notifications",
		Description: `Claims events in batches (several executives may share one Redis), keeps each check's
state on the Flapjack 1.x key layout and pushes notifications to the notifications list.`,
		Flags: []cli.Flag{&cli.BoolFlag{Name: "exit-when-empty", Usage: "stop (exit 0) once the events list is empty: for batch runs and benchmarks"}},
		Action: func(c *cli.Context) error {
			if c.Bool("exit-when-empty") {
				return runStages(c, hooks{}, executiveStages(true))
			}
			return runStages(c, hooks{}, executiveStages(false), retentionStages)
		},
	}
}

func apiCommand() *cli.Command {
	return &cli.Command{
		Name:  "api",
		Usage: "serve http.addr alone: POST /events, metrics, health; no stage runs, nothing is consumed",
		Description: `Holds no state of its own and starts in well under a second: run as many as wanted behind a
load balancer, apart from the executives (see the README's deployment shapes).`,
		Action: func(c *cli.Context) error {
			return runStages(c, hooks{}, httpStages)
		},
	}
}

func webCommand() *cli.Command {
	return &cli.Command{
		Name:  "web",
		Usage: "serve the web UI on web.addr alone (pages of checks, entities, contacts; acknowledge, maintenance)",
		Description: `Reads without a login only from loopback; elsewhere, and for every action, a web.users login
(HTTP Basic) or the user a trusted reverse proxy names in web.auth_header. See the README's Web UI.`,
		Action: func(c *cli.Context) error {
			return runStages(c, hooks{}, webStages)
		},
	}
}

func notifierCommand() *cli.Command {
	return &cli.Command{
		Name:  "notifier",
		Usage: "route notifications to contacts' media queues by their rules, intervals and rollup",
		Action: func(c *cli.Context) error {
			return runStages(c, hooks{}, notifierStages)
		},
	}
}

// gatewayCommand has one sub-command per gateway of the media registry, so flags may follow
// the gateway's name (urfave/cli stops parsing flags at a plain argument).
func gatewayCommand() *cli.Command {
	var subs []*cli.Command
	for _, m := range media.WithGateway() {
		subs = append(subs, &cli.Command{
			Name:  m.Name,
			Usage: "deliver the " + m.Name + " medium's alerts",
			Action: func(c *cli.Context) error {
				return runStages(c, hooks{}, gatewayStages(m.Name))
			},
		})
	}
	return &cli.Command{
		Name:        "gateway",
		Usage:       "deliver alerts of one medium: " + media.GatewayNames(", "),
		ArgsUsage:   media.GatewayNames("|"),
		Subcommands: subs,
	}
}

// maybeEmbedRedis starts the embedded Redis when nothing is configured and nothing answers at
// the default address; it reports whether it did.
func (rt *runtime) maybeEmbedRedis() (bool, error) {
	v := rt.values
	preferred := "127.0.0.1:6379"
	switch v.String("redis.embedded") {
	case "never":
		return false, nil
	case "always":
		preferred = ""
	default:
		if v.String("redis.url") != "" || len(v.List("redis.sentinel.addrs")) > 0 || redisconn.Answers(preferred) {
			return false, nil
		}
	}
	srv, err := embeddedredis.Start(preferred)
	if err != nil {
		return false, err
	}
	rt.closers = append(rt.closers, srv.Close)
	rt.redisOverride = srv.URL()
	host, port, _ := net.SplitHostPort(srv.Addr())
	banner := []string{
		"",
		"  ************************************************************************",
		"  * No Redis configured (or redis.embedded: always): started an EMBEDDED",
		"  * Redis at " + srv.Addr() + ". NOTHING IS PERSISTED: it is gone on exit. ",
		"  * Use it:  redis-cli -h " + host + " -p " + port + " llen events",
		"  *          flapjack simulate fail --entity web-01 --check HTTP --redis-url " + srv.URL(),
		"  * Alerts for the demo contact \"operator\" (log medium) print here as ALERT lines.",
		"  * For production set redis.url (see etc/flapjack.yaml.example).",
		"  ************************************************************************",
		"",
	}
	fmt.Fprintln(os.Stderr, strings.Join(banner, "\n"))
	rt.log.Warn("embedded Redis started: nothing is persisted", zap.String("addr", srv.Addr()))
	return true, nil
}

// demoContact is the contact the embedded system alerts: interested in every check, without
// rules, whose only medium is the log medium.
const demoContact = "operator"

func (rt *runtime) seedDemoContact(ctx context.Context) error {
	demo := roster.ContactData{ID: demoContact, ContactInfo: roster.ContactInfo{FirstName: "Operator", LastName: "(demo)"},
		Media: []roster.Medium{{Name: "log", Address: "stdout"}}}
	var created bool
	err := rt.withConn(ctx, func(conn redis.Conn) (err error) {
		created, err = roster.SeedContact(ctx, conn, rt.keys, demo, true)
		return err
	})
	if err != nil {
		return fmt.Errorf("create demo contact: %w", err)
	}
	if created {
		rt.log.Info("demo contact created", zap.String("contact", demoContact), zap.String("medium", "log"))
	}
	return nil
}
