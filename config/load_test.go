package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeSource stands for the command line + environment as urfave/cli presents them.
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
	cases := []struct {
		name   string
		source fakeSource
		key    string
		want   string
	}{
		{"default", nil, "http.addr", "127.0.0.1:3081"},
		{"file beats default", nil, "redis.key_prefix", "fromfile"},
		{"flag (or env) beats file", fakeSource{"redis-url": "redis://flag:1/0"}, "redis.url", "redis://flag:1/0"},
		{"file when flag unset", fakeSource{"other": "x"}, "redis.url", "redis://file:6379/1"},
	}
	for _, c := range cases {
		v, err := Load(file, c.source, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := v.String(c.key); got != c.want {
			t.Errorf("%s: %s = %q, want %q", c.name, c.key, got, c.want)
		}
	}
	v, _ := Load(file, nil, []string{"FLAPJACK_NOTIFIER_SNS_QUEUE=sns_q"})
	if d := v.Duration("executive.initial_failure_delay"); d != 2*time.Minute {
		t.Errorf("duration words: %v", d)
	}
	q := v.MediumQueues()
	if q["sms_twilio"] != "twilio" || q["sns"] != "sns_q" || q["jabber"] != "jabber_notifications" {
		t.Errorf("medium queues %v", q)
	}
}

func TestUnknownAndMalformedSettingsAreNamed(t *testing.T) {
	t.Parallel()
	file := writeFile(t, "redis:\n  ulr: x\nexecutive:\n  batch_size: [1, 2]\n")
	_, err := Load(file, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "redis.ulr") || !strings.Contains(err.Error(), "executive.batch_size") {
		t.Fatalf("error %v should name both settings", err)
	}
}

func TestInvalidValuesNameTheSettingAndOrigin(t *testing.T) {
	t.Parallel()
	v, err := Load("", fakeSource{"executive-batch-size": "lots", "executive-repeat-failure-delay": "soonish"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	v.Int("executive.batch_size")
	v.Duration("executive.repeat_failure_delay")
	err = v.Err()
	if err == nil || !strings.Contains(err.Error(), "executive.batch_size (from --executive-batch-size / FLAPJACK_EXECUTIVE_BATCH_SIZE)") ||
		!strings.Contains(err.Error(), "executive.repeat_failure_delay") {
		t.Fatalf("error %v", err)
	}
}

func TestNames(t *testing.T) {
	t.Parallel()
	s, _ := Lookup("notifier.default_contact_timezone")
	if s.Flag() != "notifier-default-contact-timezone" || s.Env() != "FLAPJACK_NOTIFIER_DEFAULT_CONTACT_TIMEZONE" {
		t.Fatalf("%s %s", s.Flag(), s.Env())
	}
	seen := map[string]bool{}
	for _, s := range Settings {
		if seen[s.Flag()] {
			t.Errorf("two settings share the flag --%s", s.Flag())
		}
		seen[s.Flag()] = true
	}
}
