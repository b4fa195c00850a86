package gateways

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/config"
	"github.com/flapjackgo/flapjack/schema"
)

func TestSMSText(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	base := testAlert() // problem, critical, 2026-01-05 10:00 UTC, hash 8f4a2b1c
	with := func(f func(a *schema.Alert)) schema.Alert { a := base; f(&a); return a }
	str := func(s string) *string { return &s }
	rollup := with(func(a *schema.Alert) {
		a.Rollup, a.Summary = str(schema.RollupProblem), nil
		a.RollupAlerts = map[string]schema.RollupEntry{
			"a:1": {State: "critical"}, "b:1": {State: "critical"}, "c:1": {State: "critical"}, "d:1": {State: "critical"},
			"e:1": {State: "warning"},
		}
	})
	long := strings.Repeat("é", 200)
	cases := []struct {
		name string
		a    schema.Alert
		loc  *time.Location
		want string
	}{
		{"problem", base, time.UTC, "Problem: 'HTTP' on web-01 is Critical at 5 Jan 10:00, HTTP 500 <b> (ACKID 8f4a2b1c)"},
		{"in the contacts' zone", base, berlin, "Problem: 'HTTP' on web-01 is Critical at 5 Jan 11:00, HTTP 500 <b> (ACKID 8f4a2b1c)"},
		{"recovery has no hint", with(func(a *schema.Alert) { a.NotificationType, a.State, a.Summary = "recovery", "ok", str("fine") }), time.UTC,
			"Recovery: 'HTTP' on web-01 is OK at 5 Jan 10:00, fine"},
		{"acknowledgement has no state", with(func(a *schema.Alert) { a.NotificationType, a.Summary = "acknowledgement", str("ada: on it") }), time.UTC,
			"Acknowledgement: 'HTTP' on web-01 at 5 Jan 10:00, ada: on it"},
		{"test", with(func(a *schema.Alert) {
			a.NotificationType, a.State, a.EventID = "test", "test_notifications", "web-01:test"
		}), time.UTC,
			"Test: 'test' on web-01 at 5 Jan 10:00, HTTP 500 <b>"},
		{"no time, no summary, lines folded", with(func(a *schema.Alert) { a.Time, a.Summary, a.EventHash = nil, str(" a\n b "), nil }), time.UTC,
			"Problem: 'HTTP' on web-01 is Critical, a b"},
		{"not entity:check", with(func(a *schema.Alert) { a.EventID, a.EventHash = "lonely", nil }), time.UTC,
			"Problem: 'lonely' is Critical at 5 Jan 10:00, HTTP 500 <b>"},
		{"cut before the hint, rune-safe", with(func(a *schema.Alert) { a.Summary = &long }), time.UTC,
			"Problem: 'HTTP' on web-01 is Critical at 5 Jan 10:00, " + strings.Repeat("é", 159-len(" (ACKID 8f4a2b1c)")-len("...")-len("Problem: 'HTTP' on web-01 is Critical at 5 Jan 10:00, ")) + "... (ACKID 8f4a2b1c)"},
		{"rollup, 3 per state", rollup, time.UTC,
			"Problem summary: Critical: 4, Warning: 1 (Critical: a:1, b:1, c:1, ...; Warning: e:1)"},
	}
	for _, tc := range cases {
		got := SMSText(NewMessage(tc.a, tc.loc))
		if got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
		if n := utf8.RuneCountInString(got); n > SMSMaxLength || !utf8.ValidString(got) {
			t.Errorf("%s: %d characters, valid UTF-8 %v", tc.name, n, utf8.ValidString(got))
		}
	}
}

func TestRenderSMS(t *testing.T) {
	long := writeTemplate(t, "alert.text", `{{.Check}} {{range $i := .Alert.Tags}}{{$i}}{{end}}`+strings.Repeat("ü", 300))
	empty := writeTemplate(t, "rollup.text", "  \n")
	src := fakeSource{config.FlagName(TemplateSetting("sms", TemplateAlertText)): long,
		config.FlagName(TemplateSetting("sms", TemplateRollupText)): empty}
	table := append(append(config.Table{}, config.Core...), TemplateSettings("sms", TemplateAlertText, TemplateRollupText)...)
	v, err := config.Load(table, "", src, nil)
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := LoadTemplates(v, "sms", TemplateAlertText, TemplateRollupText)
	if err != nil {
		t.Fatal(err)
	}
	got := RenderSMS(tpl, testAlert(), time.UTC, zap.NewNop())
	if !strings.HasPrefix(got, "HTTP üü") || utf8.RuneCountInString(got) != SMSMaxLength || !strings.HasSuffix(got, "ü...") {
		t.Errorf("template text %q (%d characters) should be cut to %d", got, utf8.RuneCountInString(got), SMSMaxLength)
	}
	r := schema.RollupProblem
	a := testAlert()
	a.Rollup, a.RollupAlerts = &r, map[string]schema.RollupEntry{"x:y": {State: "critical"}}
	if got := RenderSMS(tpl, a, time.UTC, zap.NewNop()); got != "Problem summary: Critical: 1 (Critical: x:y)" {
		t.Errorf("an empty template gave %q, want the built-in text", got)
	}
	if got := RenderSMS(nil, testAlert(), time.UTC, nil); !strings.HasPrefix(got, "Problem: 'HTTP'") {
		t.Errorf("no templates: %q", got)
	}
}

func TestShortTextUncut(t *testing.T) {
	a := testAlert()
	long := strings.Repeat("ü", 500)
	a.Summary = &long
	if got := ShortText(NewMessage(a, time.UTC), 0); !strings.Contains(got, long+" (ACKID 8f4a2b1c)") {
		t.Errorf("ShortText(0) cut the text: %d characters", utf8.RuneCountInString(got))
	}
}
