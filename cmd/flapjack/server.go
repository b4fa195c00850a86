package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/api"
	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/internal/embeddedredis"
	"github.com/flapjackgo/flapjack/schema"
)

func serverCommand() *cli.Command {
	return &cli.Command{
		Name:  "server",
		Usage: "run everything in one process: executive, notifier, enabled gateways, retention and the HTTP listener",
		Description: `With no redis.url (nor Sentinel) configured and no Redis answering at 127.0.0.1:6379, an
embedded Redis-compatible server is started in-process (nothing is persisted) and a demo contact
"operator" receives every alert on the log medium, printed on standard output.`,
		Action: serverAction,
	}
}

func serverAction(c *cli.Context) error {
	rt, err := setup(c)
	if err != nil {
		return err
	}
	defer rt.close()
	embedded, err := rt.maybeEmbedRedis()
	if err != nil {
		return err
	}
	if err := rt.connect(c.Context); err != nil {
		return err
	}
	logRedis(rt)
	if err := rt.refuseBadCredentials(c.Context); err != nil {
		return err
	}
	if embedded {
		if err := rt.seedDemoContact(c.Context); err != nil {
			return err
		}
	}
	reg := newRegistry()
	tracker := &stageTracker{}
	gm := gateways.NewMetrics(reg)
	x := rt.newExecutive(reg)
	n := rt.newNotifier(reg)
	stages := []stage{
		{name: "executive", run: func(ctx context.Context) error { return x.Run(ctx, false) }},
		{name: "notifier", run: func(ctx context.Context) error { return n.Run(ctx, false) }},
		rt.retentionStage(reg),
	}
	for _, name := range []string{"log", "jabber", "pagerduty"} {
		if !rt.values.Bool("gateways." + name + ".enabled") {
			continue
		}
		gs, err := rt.gatewayStages(name, gm, reg)
		if err != nil {
			return err
		}
		stages = append(stages, gs...)
	}
	reg.MustRegister(rt.statusCollector())
	httpOpts := api.Options{
		Addr: rt.values.String("http.addr"), Token: rt.values.String("http.token"),
		MaxBody: int64(rt.values.Int("http.max_body_bytes")), Pool: rt.pool, Keys: rt.keys,
		Events: rt.publisher(), Gatherer: reg, Ready: tracker.ready,
		Log: rt.log.With(zap.String("stage", "http")), EventsEnabled: true,
	}
	if err := rt.checkSettings(); err != nil {
		return err
	}
	if err := httpOpts.Validate(); err != nil {
		return cli.Exit(err.Error(), 2)
	}
	stages = append(stages, stage{name: "http", run: func(ctx context.Context) error { return api.Serve(ctx, httpOpts) }})
	var names []string
	for _, s := range stages {
		names = append(names, s.name)
	}
	rt.log.Info("server starting", zap.String("version", version), zap.Strings("stages", names))
	return rt.runAll(c.Context, stages, tracker)
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
	case "auto":
		if v.String("redis.url") != "" || len(v.List("redis.sentinel.addrs")) > 0 || redisAnswers(preferred) {
			return false, nil
		}
	default:
		v.Invalid("redis.embedded", "must be auto, never or always")
		return false, rt.checkSettings()
	}
	srv, err := embeddedredis.Start(preferred)
	if err != nil {
		return false, err
	}
	rt.closers = append(rt.closers, srv.Close)
	rt.overrideRedisURL(srv.URL())
	banner := []string{
		"",
		"  ************************************************************************",
		"  * No Redis configured (or redis.embedded: always): started an EMBEDDED",
		"  * Redis at " + srv.Addr() + ". NOTHING IS PERSISTED: it is gone on exit. ",
		"  * Use it:  redis-cli -h " + hostOf(srv.Addr()) + " -p " + portOf(srv.Addr()) + " llen events",
		"  *          flapjack simulate fail --entity web-01 --check HTTP --redis-url " + srv.URL(),
		"  * Alerts for the demo contact \"operator\" (log medium) print here as ALERT lines.",
		"  * For production set redis.url (see etc/flapjack.yaml.example).",
		"  ************************************************************************",
		"",
	}
	fmt.Fprintln(rt.stderr(), strings.Join(banner, "\n"))
	rt.log.Warn("embedded Redis started: nothing is persisted", zap.String("addr", srv.Addr()))
	return true, nil
}

// seedDemoContact makes the embedded system alert someone: a contact interested in every check,
// without rules, whose only medium is the log medium.
func (rt *runtime) seedDemoContact(ctx context.Context) error {
	const id = "operator"
	return rt.withConn(ctx, func(conn redisConn) error {
		conn.Send("MULTI")
		conn.Send("HSET", rt.keys.Contact(id), "first_name", "Operator", "last_name", "(demo)")
		conn.Send("HSET", rt.keys.ContactMedia(id), "log", "stdout")
		conn.Send("SADD", rt.keys.ContactsFor(schema.AllContactsID), id)
		conn.Send("SADD", rt.keys.AllContacts(), id)
		if _, err := conn.Do("EXEC"); err != nil {
			return fmt.Errorf("create demo contact: %w", err)
		}
		rt.log.Info("demo contact created", zap.String("contact", id), zap.String("medium", "log"))
		return nil
	})
}
