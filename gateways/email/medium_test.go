package email_test

import (
	"context"
	"fmt"
	"mime"
	"net/mail"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/config"
	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/gateways/email"
	"github.com/flapjackgo/flapjack/gateways/media"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/internal/testing/testsmtp"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/schema"
)

// operatorConfig writes a configuration file as an operator would (extra YAML under
// gateways.email) and loads it with every setting of every medium.
func operatorConfig(t *testing.T, srv *testsmtp.Server, from, extra string) (*config.Values, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "flapjack.yaml")
	body := fmt.Sprintf(`notifier:
  default_contact_timezone: Europe/Berlin
gateways:
  email:
    enabled: true
    smtp_config:
      host: %s
      port: %d
      auth:
        type: login
        username: %s
        password: %q
      from: %q
      reply_to: ops@example.com
      ca_file: %s
%s`, srv.Host, srv.Port, testsmtp.User, testsmtp.Password, from, srv.CAFile, extra)
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return config.Load(media.Table(), path, nil, nil)
}

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestOperatorSubjectTemplate runs the medium as `flapjack gateway email` builds it (Spec.Stages
// from a configuration file) with an operator's alert_subject.text: the subject is the
// operator's, the bodies stay built in.
func TestOperatorSubjectTemplate(t *testing.T) {
	t.Parallel()
	srv := testsmtp.Start(t, testsmtp.Options{})
	tpl := writeFile(t, "subject.tmpl", "[{{.StateWords}}] {{.Check}} on {{.Entity}}{{with .Summary}}: {{.}}{{end}}\n")
	v, err := operatorConfig(t, srv, "Flapjack <flapjack@example.com>", "    templates:\n      alert_subject.text: "+tpl+"\n")
	if err != nil {
		t.Fatal(err)
	}
	db := testredis.New(t)
	keys := schema.NewKeys("")
	stages, err := email.Spec.Stages(gateways.Env{Values: v, Pool: db.Pool, Keys: keys, Clock: clock.Real{},
		Log: zap.NewNop(), Identity: queue.LocalIdentity(), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if len(stages) != 1 || stages[0].Name != "email gateway" {
		t.Fatalf("stages %v", stages)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = stages[0].Run(ctx) }()
	t.Cleanup(func() { cancel(); wg.Wait() })

	db.Do(t, "RPUSH", keys.Queue("email_notifications"), `{"media":"email","address":"ada@example.com","id":"a1",
		"contact_id":"ada","contact_first_name":"Ada","event_id":"web-01:HTTP","event_hash":"8f4a2b1c","state":"critical",
		"summary":"HTTP 500","time":1767607200,"notification_type":"problem","tags":[]}`)
	m := srv.WaitMessages(t, 1, 15*time.Second)[0]
	msg, err := mail.ReadMessage(strings.NewReader(m.Data))
	if err != nil {
		t.Fatal(err)
	}
	subject, _ := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
	if subject != "[Critical] HTTP on web-01: HTTP 500" {
		t.Errorf("Subject %q, want the operator's", subject)
	}
	if !strings.Contains(m.Data, "Monitoring has detected the following:") || !strings.Contains(m.Data, "2026-01-05 11:00:00 CET") {
		t.Errorf("the built-in body (in the default contact timezone) is missing:\n%s", m.Data)
	}
	if srv.CountEvents("auth LOGIN") != 1 {
		t.Errorf("auth.type login not used:\n%s", srv.EventsText())
	}
}

// TestBadSettingsStopTheGateway: a template that does not parse, or an address that is not one,
// is an error at start naming the setting.
func TestBadSettingsStopTheGateway(t *testing.T) {
	t.Parallel()
	srv := testsmtp.Start(t, testsmtp.Options{})
	broken := writeFile(t, "broken.tmpl", "{{.Check")
	for _, tt := range []struct{ from, extra, want string }{
		{"flapjack@example.com", "    templates:\n      rollup.html: " + broken + "\n", "gateways.email.templates.rollup.html"},
		{"flapjack@example.com", "    templates:\n      alert.text: /nonexistent/alert.text\n", "gateways.email.templates.alert.text"},
		{"flapjack at example.com", "", "gateways.email.smtp_config.from"},
	} {
		v, err := operatorConfig(t, srv, tt.from, tt.extra)
		if err != nil {
			t.Fatal(err)
		}
		_, err = email.Spec.Stages(gateways.Env{Values: v, Log: zap.NewNop()})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q %q: %v, want an error naming %s", tt.from, tt.extra, err, tt.want)
		}
	}
}
