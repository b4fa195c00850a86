package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/config"
	"github.com/flapjackgo/flapjack/gateways/media"
)

// fakeSource stands for the flags typed on the command line.
type fakeSource map[string]string

func (f fakeSource) IsSet(name string) bool    { _, ok := f[name]; return ok }
func (f fakeSource) String(name string) string { return f[name] }

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "flapjack.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPrecedence(t *testing.T) {
	t.Parallel()
	file := writeFile(t, `
redis:
  url: redis://file:6379/1
  key_prefix: fromfile
executive:
  initial_failure_delay: 2 minutes
notifier:
  sms_twilio_queue: twilio
`)
	env := []string{"FLAPJACK_REDIS_KEY_PREFIX=fromenv"}
	cases := []struct {
		name   string
		source fakeSource
		env    []string
		key    string
		want   string
	}{
		{"default", nil, nil, "http.addr", "127.0.0.1:3081"},
		{"file beats default", nil, nil, "redis.key_prefix", "fromfile"},
		{"env beats file", nil, env, "redis.key_prefix", "fromenv"},
		{"flag beats env", fakeSource{"redis-key-prefix": "fromflag"}, env, "redis.key_prefix", "fromflag"},
		{"flag beats file", fakeSource{"redis-url": "redis://flag:1/0"}, nil, "redis.url", "redis://flag:1/0"},
		{"file when flag unset", fakeSource{"other": "x"}, nil, "redis.url", "redis://file:6379/1"},
	}
	for _, c := range cases {
		v, err := config.Load(media.Table(), file, c.source, c.env)
		if err != nil {
			t.Fatal(err)
		}
		if got := v.String(c.key); got != c.want {
			t.Errorf("%s: %s = %q, want %q", c.name, c.key, got, c.want)
		}
	}
	v, _ := config.Load(media.Table(), file, nil, []string{"FLAPJACK_NOTIFIER_SNS_QUEUE=sns_q"})
	if d := v.Duration("executive.initial_failure_delay"); d != 2*time.Minute {
		t.Errorf("duration words: %v", d)
	}
	q := v.MediumQueues()
	if q["sms_twilio"] != "twilio" || q["sns"] != "sns_q" || q["jabber"] != "jabber_notifications" {
		t.Errorf("medium queues %v", q)
	}
}

func TestEveryProblemIsNamedAtOnceWithItsLine(t *testing.T) {
	t.Parallel()
	file := writeFile(t, "redis:\n  ulr: x\nexecutive:\n  batch_size: [1, 2]\n  repeat_failure_delay: soonish\nlog:\n  level: loud\n")
	_, err := config.Load(media.Table(), file, fakeSource{"executive-initial-failure-delay": "never"}, nil)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		"redis.ulr (at " + file + ":2): unknown setting",
		"executive.batch_size (at " + file + ":4): want a single value",
		"executive.repeat_failure_delay (from " + file + ":5)",
		"log.level (from " + file + ":7): \"loud\" is not one of debug, info, warn, error",
		"executive.initial_failure_delay (from --executive-initial-failure-delay)",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q:\n%v", want, err)
		}
	}
}

func TestInvalidValuesNameTheSettingAndOrigin(t *testing.T) {
	t.Parallel()
	_, err := config.Load(media.Table(), "", fakeSource{"executive-batch-size": "lots"},
		[]string{"FLAPJACK_EXECUTIVE_REPEAT_FAILURE_DELAY=soonish"})
	if err == nil || !strings.Contains(err.Error(), `executive.batch_size (from --executive-batch-size): "lots" is not a whole number`) ||
		!strings.Contains(err.Error(), "executive.repeat_failure_delay (from FLAPJACK_EXECUTIVE_REPEAT_FAILURE_DELAY)") {
		t.Fatalf("error %v", err)
	}
}

func TestDeprecatedQueueSettingsStillLoad(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, file  string
		key, want   string
		warning     string
		conflicting bool
	}{
		{name: "gateway queue alias", file: "gateways:\n  jabber:\n    queue: xmpp_out\n",
			key: "notifier.jabber_queue", want: "xmpp_out", warning: "gateways.jabber.queue"},
		{name: "executive notifier_queue alias", file: "executive:\n  notifier_queue: notes\n",
			key: "notifier.queue", want: "notes", warning: "executive.notifier_queue"},
		{name: "alias agreeing with the setting", file: "executive:\n  notifier_queue: notes\nnotifier:\n  queue: notes\n",
			key: "notifier.queue", want: "notes"},
		{name: "alias contradicting the setting", file: "gateways:\n  jabber:\n    queue: a\nnotifier:\n  jabber_queue: b\n",
			conflicting: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, err := config.Load(media.Table(), writeFile(t, c.file), nil, nil)
			if c.conflicting {
				if err == nil || !strings.Contains(err.Error(), "name the same thing differently") {
					t.Fatalf("err %v, want a conflict", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := v.String(c.key); got != c.want {
				t.Errorf("%s = %q, want %q", c.key, got, c.want)
			}
			warned := strings.Join(v.Warnings(), "\n")
			if (c.warning == "") != (warned == "") || !strings.Contains(warned, c.warning) {
				t.Errorf("warnings %q, want one about %q", warned, c.warning)
			}
		})
	}
}

func TestReadingAnUnknownSettingIsAProgrammingError(t *testing.T) {
	t.Parallel()
	v, err := config.Load(media.Table(), "", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, read := range []func(){
		func() { v.String("redis.ulr") },
		func() { v.Duration("redis.url") },
		func() { v.String("executive.notifier_queue") },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			read()
		}()
	}
}

func TestNames(t *testing.T) {
	t.Parallel()
	s, _ := media.Table().Lookup("notifier.default_contact_timezone")
	if s.Flag() != "notifier-default-contact-timezone" || s.Env() != "FLAPJACK_NOTIFIER_DEFAULT_CONTACT_TIMEZONE" {
		t.Fatalf("%s %s", s.Flag(), s.Env())
	}
	seen := map[string]bool{}
	for _, s := range media.Table() {
		if seen[s.Flag()] {
			t.Errorf("two settings share the flag --%s", s.Flag())
		}
		seen[s.Flag()] = true
	}
}
