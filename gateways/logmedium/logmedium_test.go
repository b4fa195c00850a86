package logmedium

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/config"
	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/schema"
)

type flags map[string]string

func (f flags) IsSet(name string) bool    { _, ok := f[name]; return ok }
func (f flags) String(name string) string { return f[name] }

func TestSendWithAndWithoutTemplate(t *testing.T) {
	summary := "HTTP 500"
	a := schema.Alert{ID: "a1", ContactID: "ops", Address: "stdout", EventID: "web-01:HTTP", State: "critical", Summary: &summary, NotificationType: "problem"}
	tplFile := filepath.Join(t.TempDir(), "alert.text")
	if err := os.WriteFile(tplFile, []byte("{{.Check}} on {{.Entity}}\nis {{.StateWords}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	table := append(append(config.Table{}, config.Core...), gateways.TemplateSettings("log", gateways.TemplateAlertText)...)
	v, err := config.Load(table, "", flags{config.FlagName(gateways.TemplateSetting("log", gateways.TemplateAlertText)): tplFile}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := gateways.LoadTemplates(v, "log", gateways.TemplateAlertText)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		s    *Sender
		want string
	}{
		{"built-in text", &Sender{}, "ALERT Problem: \"HTTP\" on web-01 is Critical, HTTP 500 [contact=ops address=stdout id=a1]\n"},
		{"template, one line", &Sender{Templates: tpl, Log: zap.NewNop()}, "ALERT HTTP on web-01 is Critical [contact=ops address=stdout id=a1]\n"},
	}
	for _, c := range cases {
		var out bytes.Buffer
		c.s.W = &out
		if err := c.s.Send(context.Background(), a); err != nil {
			t.Fatal(err)
		}
		if out.String() != c.want {
			t.Errorf("%s: %q, want %q", c.name, out.String(), c.want)
		}
	}
}
