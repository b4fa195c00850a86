package email

import (
	"bytes"
	"cmp"
	"embed"
	htmltemplate "html/template"
	"slices"
	"strings"
	texttemplate "text/template"
	"time"

	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/internal/humantime"
	"github.com/flapjackgo/flapjack/schema"
)

// Templates are the names of the texts operators may replace
// (gateways.email.templates.<name>); each has a built-in version.
var Templates = []string{
	gateways.TemplateAlertSubject, gateways.TemplateAlertText, gateways.TemplateAlertHTML,
	gateways.TemplateRollupSubject, gateways.TemplateRollupText, gateways.TemplateRollupHTML,
}

// The built-in bodies (docs/flapjack-1x.md 4.3), executed on a view: the alert's Message plus the rows
// and sentences they need. Operators' templates see gateways.Message, as every medium's do.
//
//go:embed templates
var builtinFiles embed.FS

var (
	textFuncs   = texttemplate.FuncMap{"indent": indent}
	alertText   = texttemplate.Must(texttemplate.New("alert.text").Funcs(textFuncs).ParseFS(builtinFiles, "templates/alert.text"))
	rollupText  = texttemplate.Must(texttemplate.New("rollup.text").Funcs(textFuncs).ParseFS(builtinFiles, "templates/rollup.text"))
	alertHTML   = htmltemplate.Must(htmltemplate.New("alert.html").ParseFS(builtinFiles, "templates/alert.html"))
	rollupHTML  = htmltemplate.Must(htmltemplate.New("rollup.html").ParseFS(builtinFiles, "templates/rollup.html"))
	valueIndent = strings.Repeat(" ", 18)
)

// durationShownAfter: a state younger than this has no Duration row (Flapjack's 40 s).
const durationShownAfter = 40

// content is one mail's words.
type content struct {
	Subject, Text, HTML string
}

// renderer turns an alert into its content through the operator's templates or the built-in
// ones.
type renderer struct {
	tpl *gateways.Templates
	log *zap.Logger
}

func isRollup(a schema.Alert) bool { return a.Rollup != nil && *a.Rollup != "" }

// render is the alert's subject, text and HTML, with times in loc.
func (r renderer) render(a schema.Alert, loc *time.Location) content {
	tpl := r.tpl
	if tpl == nil {
		tpl = &gateways.Templates{}
	}
	m := gateways.NewMessage(a, loc)
	subject, text, html := gateways.TemplateAlertSubject, gateways.TemplateAlertText, gateways.TemplateAlertHTML
	if isRollup(a) {
		subject, text, html = gateways.TemplateRollupSubject, gateways.TemplateRollupText, gateways.TemplateRollupHTML
	}
	return content{
		Subject: tpl.Render(subject, m, Subject, r.log),
		Text:    tpl.Render(text, m, Text, r.log),
		HTML:    tpl.Render(html, m, HTML, r.log),
	}
}

// Subject is the built-in subject (docs/flapjack-1x.md 4.3):
//
//	Problem: 'HTTP' on web-01 is Critical
//	Acknowledgement: 'HTTP' on web-01
//	Problem summary: Critical: 2, Warning: 1
func Subject(m gateways.Message) string {
	a := m.Alert
	if isRollup(a) {
		if s := gateways.RollupSummary(a); s != "" {
			return m.TypeWords + ": " + s
		}
		return m.TypeWords
	}
	check, entity := m.Check, m.Entity
	if entity == "" {
		check = a.EventID // not ENTITY:CHECK: the id whole rather than nothing
	}
	s := m.TypeWords + ": '" + check + "'"
	if entity != "" {
		s += " on " + entity
	}
	if a.NotificationType != schema.NotificationAcknowledgement && a.NotificationType != schema.NotificationTest {
		s += " is " + m.StateWords
	}
	return s
}

// Text is the built-in text body: the alert's rows, or a rollup's list of checks.
func Text(m gateways.Message) string {
	var b bytes.Buffer
	t := alertText
	if isRollup(m.Alert) {
		t = rollupText
	}
	if err := t.Execute(&b, newView(m)); err != nil {
		return m.Text // cannot happen with the built-in templates (a test renders every kind)
	}
	return b.String()
}

// HTML is the built-in HTML body: the Text's content as a table.
func HTML(m gateways.Message) string {
	var b bytes.Buffer
	t := alertHTML
	if isRollup(m.Alert) {
		t = rollupHTML
	}
	if err := t.Execute(&b, newView(m)); err != nil {
		return htmltemplate.HTMLEscapeString(m.Text)
	}
	return b.String()
}

// view is what the built-in bodies show.
type view struct {
	gateways.Message
	Greeting string // "Hi Ada," or, without a first name, "Hi,"
	Rows     []row
	// Rollups: the checks by how long they have failed, shortest first; whether summary mode
	// ends; the contact's threshold (0: unknown).
	Checks    []rollupCheck
	Finishing bool
	Threshold int
}

type row struct{ Label, Value string }

type rollupCheck struct{ Entity, Check, StateWords, Summary, Duration string }

func newView(m gateways.Message) view {
	a := m.Alert
	v := view{Message: m, Greeting: "Hi,"}
	if name := strings.TrimSpace(schema.Deref(a.ContactFirstName)); name != "" {
		v.Greeting = "Hi " + name + ","
	}
	if isRollup(a) {
		v.Finishing = *a.Rollup == schema.RollupRecovery
		if a.RollupThreshold != nil {
			v.Threshold = *a.RollupThreshold
		}
		v.Checks = rollupChecks(a)
		return v
	}
	add := func(label, value string) {
		if strings.TrimSpace(value) != "" {
			v.Rows = append(v.Rows, row{label, value})
		}
	}
	check := m.Check
	if m.Entity == "" {
		check = a.EventID
	}
	add("Entity", m.Entity)
	add("Check", check)
	add("State", m.StateWords)
	add("Summary", m.Summary)
	add("Details", m.Details)
	if !m.Time.IsZero() {
		add("Time", m.Time.Format("2006-01-02 15:04:05 MST"))
	}
	if a.StateDuration != nil && *a.StateDuration > durationShownAfter {
		add("Duration", m.Duration)
	}
	if a.LastState != nil && *a.LastState != "" {
		add("Previous State", gateways.StateWords(*a.LastState))
	}
	add("Previous Summary", schema.Deref(a.LastSummary))
	return v
}

// rollupChecks lists a rollup's checks, shortest failing first (then by id).
func rollupChecks(a schema.Alert) []rollupCheck {
	type entry struct {
		id string
		r  schema.RollupEntry
	}
	entries := make([]entry, 0, len(a.RollupAlerts))
	for id, r := range a.RollupAlerts {
		entries = append(entries, entry{id, r})
	}
	slices.SortFunc(entries, func(x, y entry) int {
		return cmp.Or(cmp.Compare(x.r.Duration, y.r.Duration), strings.Compare(x.id, y.id))
	})
	out := make([]rollupCheck, 0, len(entries))
	for _, e := range entries {
		entity, check, ok := schema.SplitCheckID(e.id)
		if !ok {
			entity, check = "", e.id
		}
		c := rollupCheck{Entity: entity, Check: check, StateWords: gateways.StateWords(e.r.State), Summary: e.r.Summary}
		if e.r.Duration > 0 {
			c.Duration = humantime.Words(time.Duration(e.r.Duration) * time.Second)
		}
		out = append(out, c)
	}
	return out
}

// indent keeps a multi-line value under its column in the text body.
func indent(s string) string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+valueIndent)
}
