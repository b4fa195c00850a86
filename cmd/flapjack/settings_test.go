package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/flapjackgo/flapjack/gateways/media"
	"github.com/flapjackgo/flapjack/lifecycle"
)

// probe runs the real app with its commands' actions replaced by one that loads the settings,
// and returns redis.url and http.addr as that command saw them.
func probe(t *testing.T, env map[string]string, args ...string) (url, addr string) {
	t.Helper()
	for k, v := range env {
		t.Setenv(k, v)
	}
	app := newApp()
	app.Writer, app.ErrWriter = io.Discard, io.Discard
	app.ExitErrHandler = func(*cli.Context, error) {}
	load := func(c *cli.Context) error {
		v, err := loadSettings(c)
		if err != nil {
			return err
		}
		url, addr = v.String("redis.url"), v.String("http.addr")
		return nil
	}
	var walk func([]*cli.Command)
	walk = func(cmds []*cli.Command) {
		for _, cmd := range cmds {
			if cmd.Action != nil {
				cmd.Action = load
			}
			walk(cmd.Subcommands)
		}
	}
	walk(app.Commands)
	if err := app.RunContext(context.Background(), append([]string{"flapjack"}, args...)); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return url, addr
}

func TestSettingFlagsGoAnywhere(t *testing.T) {
	const u = "redis://127.0.0.1:7/1"
	cases := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"before the command", nil, []string{"--redis-url", u, "replay", "--input", "x"}, u},
		{"after the command", nil, []string{"replay", "--redis-url", u, "--input", "x"}, u},
		{"after a sub-command", nil, []string{"simulate", "fail", "--entity", "web-01", "--redis-url", u}, u},
		{"between command and sub-command", nil, []string{"maintenance", "--redis-url", u, "list"}, u},
		{"with a command flag", nil, []string{"executive", "--redis-url", u, "--exit-when-empty"}, u},
		{"the one closest to the command wins", nil, []string{"--redis-url", "redis://outer:1/0", "status", "--redis-url", u}, u},
		{"a flag beats the environment", map[string]string{"FLAPJACK_REDIS_URL": "redis://env:1/0"}, []string{"status", "--redis-url", u}, u},
		{"the environment when no flag", map[string]string{"FLAPJACK_REDIS_URL": u}, []string{"status"}, u},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got, _ := probe(t, c.env, c.args...); got != c.want {
				t.Errorf("redis.url = %q, want %q", got, c.want)
			}
		})
	}
	cfg := filepath.Join(t.TempDir(), "flapjack.yaml")
	if err := os.WriteFile(cfg, []byte("redis:\n  url: "+u+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"-c", cfg, "status"}, {"status", "-c", cfg}, {"status", "--config", cfg}, {"purge", "--config", cfg, "-c", "a:b"}} {
		if got, _ := probe(t, nil, args...); got != u {
			t.Errorf("%v: redis.url = %q from the file, want %q", args, got, u)
		}
	}
	if _, addr := probe(t, nil, "receiver", "http", "--http-addr", "127.0.0.1:9"); addr != "127.0.0.1:9" {
		t.Errorf("http.addr = %q after receiver http", addr)
	}
}

func TestCommandHelpPointsToTheSettings(t *testing.T) {
	app := newApp()
	var out strings.Builder
	app.Writer = &out
	if err := app.Run([]string{"flapjack", "help", "replay"}); err != nil {
		t.Fatal(err)
	}
	help := out.String()
	if !strings.Contains(help, "--input") || !strings.Contains(help, "flapjack help settings") || strings.Contains(help, "--gateways-jabber-port") {
		t.Fatalf("replay help should list --input, point to `flapjack help settings` and not repeat the settings:\n%s", help)
	}
	out.Reset()
	if err := app.Run([]string{"flapjack", "help", "settings"}); err != nil {
		t.Fatal(err)
	}
	for _, s := range media.Table() {
		if !strings.Contains(out.String(), "--"+s.Flag()) {
			t.Errorf("`flapjack help settings` lacks --%s", s.Flag())
		}
	}
}

// TestEveryComponentReadsKnownSettings builds every stage's options from the defaults: a
// mistyped setting key in Go code panics here instead of reading "" in production.
func TestEveryComponentReadsKnownSettings(t *testing.T) {
	app := &cli.App{Name: "flapjack", Commands: []*cli.Command{{Name: "probe", Action: func(c *cli.Context) error {
		rt, err := setup(c)
		if err != nil {
			return err
		}
		if err := rt.connect(c.Context); err != nil {
			return err
		}
		defer rt.close()
		p := &process{runtime: rt, reg: newRegistry(), tracker: &lifecycle.Tracker{}}
		if _, err := executiveStages(false)(p); err != nil {
			return err
		}
		if _, err := notifierStages(p); err != nil {
			return err
		}
		if _, err := httpStages(p); err != nil {
			return err
		}
		if _, err := retentionStages(p); err != nil {
			return err
		}
		processRecord(p, []string{"probe"})
		if _, err := serverStages(&process{runtime: rt, reg: newRegistry(), tracker: &lifecycle.Tracker{}}); err != nil {
			return err
		}
		for _, m := range media.WithGateway() {
			// Jabber and PagerDuty refuse empty credentials; what matters is that no read panics.
			gatewayStages(m.Name)(&process{runtime: rt, reg: newRegistry(), tracker: &lifecycle.Tracker{}})
		}
		rt.statusOptions()
		rt.redisConfig()
		return nil
	}}}}
	withSettingFlags(app)
	if err := app.Run([]string{"flapjack", "probe", "--redis-url", "redis://127.0.0.1:1/0"}); err != nil {
		t.Fatal(err)
	}
}
