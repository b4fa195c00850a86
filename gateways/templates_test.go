package gateways

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/config"
	"github.com/flapjackgo/flapjack/schema"
)

func testAlert() schema.Alert {
	summary, details, hash := "HTTP 500 <b>", "stack", "8f4a2b1c"
	at, dur := int64(1767607200), int64(720)
	return schema.Alert{Media: "email", Address: "ada@example.com", ID: "a1", EventID: "web-01:HTTP", State: "critical",
		Summary: &summary, Details: &details, EventHash: &hash, Time: &at, StateDuration: &dur, NotificationType: "problem"}
}

func writeTemplate(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestNewMessage(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	m := NewMessage(testAlert(), berlin)
	if m.Entity != "web-01" || m.Check != "HTTP" || m.StateWords != "Critical" || m.TypeWords != "Problem" ||
		m.AckHint != "ACKID 8f4a2b1c" || m.Duration != "12 minutes" || m.Time.Format("15:04 MST") != "11:00 CET" {
		t.Fatalf("message %+v", m)
	}
	if m.Text != `Problem: "HTTP" on web-01 is Critical, HTTP 500 <b>` {
		t.Fatalf("text %q", m.Text)
	}
}

func TestTemplates(t *testing.T) {
	text := writeTemplate(t, "alert.text", "{{.TypeWords}} {{.Check}}@{{.Entity}} {{.AckHint}} {{.Time.Format \"15:04\"}}")
	html := writeTemplate(t, "alert.html", "<p>{{.Summary}}</p>")
	broken := writeTemplate(t, "broken", "line one\n{{.Check\n")
	failing := writeTemplate(t, "failing", "{{.NoSuchField}}")
	builtin := func(m Message) string { return "built-in " + m.Check }

	load := func(settings map[string]string) (*Templates, error) {
		src := fakeSource{}
		for k, v := range settings {
			src[config.FlagName(TemplateSetting("email", k))] = v
		}
		table := append(config.Table{}, config.Core...)
		table = append(table, TemplateSettings("email", TemplateAlertText, TemplateAlertHTML)...)
		v, err := config.Load(table, "", src, nil)
		if err != nil {
			t.Fatal(err)
		}
		return LoadTemplates(v, "email", TemplateAlertText, TemplateAlertHTML)
	}

	tpl, err := load(map[string]string{TemplateAlertText: text, TemplateAlertHTML: html})
	if err != nil {
		t.Fatal(err)
	}
	m := NewMessage(testAlert(), time.UTC)
	if got := tpl.Render(TemplateAlertText, m, builtin, zap.NewNop()); got != "Problem HTTP@web-01 ACKID 8f4a2b1c 10:00" {
		t.Errorf("text %q", got)
	}
	if got := tpl.Render(TemplateAlertHTML, m, builtin, zap.NewNop()); got != "<p>HTTP 500 &lt;b&gt;</p>" {
		t.Errorf("html %q (must be escaped)", got)
	}
	if got := tpl.Render(TemplateAlertSubject, m, builtin, zap.NewNop()); got != "built-in HTTP" {
		t.Errorf("unset template %q, want the built-in", got)
	}

	if _, err := load(map[string]string{TemplateAlertText: broken}); err == nil ||
		!strings.Contains(err.Error(), "gateways.email.templates.alert.text") || !strings.Contains(err.Error(), "broken:3: unclosed action started at") {
		t.Errorf("parse error %v should name the setting, the file and the line", err)
	}
	tpl, err = load(map[string]string{TemplateAlertText: failing})
	if err != nil {
		t.Fatal(err)
	}
	if got := tpl.Render(TemplateAlertText, m, builtin, zap.NewNop()); got != "built-in HTTP" {
		t.Errorf("a template failing at render time gave %q, want the built-in text", got)
	}
	if _, err := RenderTemplateFile(TemplateAlertText, failing, m); err == nil {
		t.Error("RenderTemplateFile hid the render error")
	}
}

type fakeSource map[string]string

func (f fakeSource) IsSet(name string) bool    { _, ok := f[name]; return ok }
func (f fakeSource) String(name string) string { return f[name] }
