package gateways

import (
	"bytes"
	"fmt"
	htmltemplate "html/template"
	"os"
	"slices"
	"strings"
	texttemplate "text/template"
	"time"

	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/config"
	"github.com/flapjackgo/flapjack/internal/humantime"
	"github.com/flapjackgo/flapjack/schema"
)

// Template names a medium may override with gateways.<medium>.templates.<name> = a file
// (Flapjack 1.x's `templates:` setting, with Go templates instead of ERB). A name ending in
// .html is an html/template (escaped), every other a text/template.
const (
	TemplateAlertText      = "alert.text"
	TemplateAlertSubject   = "alert_subject.text"
	TemplateAlertHTML      = "alert.html"
	TemplateRollupText     = "rollup.text"
	TemplateRollupSubject  = "rollup_subject.text"
	TemplateRollupHTML     = "rollup.html"
	templatesSettingPrefix = "templates."
)

// TemplateSettings are the settings of a medium's template names.
func TemplateSettings(medium string, names ...string) []config.Setting {
	out := make([]config.Setting, 0, len(names))
	for _, n := range names {
		out = append(out, config.Setting{Key: TemplateSetting(medium, n),
			Usage: fmt.Sprintf("file with a Go template replacing the built-in %s of %s alerts (empty: built in)", n, medium)})
	}
	return out
}

// TemplateSetting is the setting holding the file of a medium's template.
func TemplateSetting(medium, name string) string {
	return "gateways." + medium + "." + templatesSettingPrefix + name
}

// Message is what a template sees: the alert, and its parts in words.
type Message struct {
	Alert      schema.Alert
	Entity     string
	Check      string
	State      string // "critical"
	StateWords string // "Critical"
	Type       string // "problem", "recovery", "acknowledgement", "test", "rollup_problem", ...
	TypeWords  string // "Problem", "Problem summary", ...
	Summary    string
	Details    string
	Perfdata   string
	// Time is the event's time in the contact's timezone (zero when the alert has none).
	Time time.Time
	// Duration is how long the check has been in its state ("" when not known), in words.
	Duration string
	// AckHint is how to acknowledge from the medium ("ACKID 8f4a2b1c"); empty when none applies.
	AckHint string
	// ReplyHint is how to acknowledge by replying to an SMS ("Reply ACK 4821"); empty when the
	// medium takes no replies. SMS texts end with it instead of the AckHint.
	ReplyHint string
	// Escalation names the escalation step of an escalation alert ("Escalation (step 2 of 3,
	// nobody acknowledged for 15 minutes)"), "" for other alerts; TypeWords starts with it.
	Escalation string
	// Rollup lists the rolled-up checks, longest failing last (rollup alerts only).
	Rollup []RollupLine
	// Text is the built-in one-line text (gateways.AlertText).
	Text string
	// FirstName and LastName are the contact's; LastState, LastStateWords and LastSummary the
	// check's before this change (empty when unknown).
	FirstName, LastName                    string
	LastState, LastStateWords, LastSummary string
}

// RollupLine is one check of a rollup alert.
type RollupLine struct {
	Check, State, StateWords, Summary, Duration string
}

// NewMessage builds the template data of an alert, with times in loc (nil: UTC).
func NewMessage(a schema.Alert, loc *time.Location) Message {
	if loc == nil {
		loc = time.UTC
	}
	entity, check := a.EntityCheck()
	m := Message{Alert: a, Entity: entity, Check: check, State: a.State, StateWords: StateWords(a.State),
		Type: a.AlertType(), TypeWords: TypeWords(a), Summary: schema.Deref(a.Summary), Details: schema.Deref(a.Details),
		Perfdata: schema.Deref(a.Perfdata), Text: AlertText(a, ""),
		FirstName: schema.Deref(a.ContactFirstName), LastName: schema.Deref(a.ContactLastName),
		LastSummary: schema.Deref(a.LastSummary)}
	if last := schema.Deref(a.LastState); last != "" {
		m.LastState, m.LastStateWords = last, StateWords(last)
	}
	if a.Time != nil {
		m.Time = time.Unix(*a.Time, 0).In(loc)
	}
	if a.StateDuration != nil && *a.StateDuration > 0 {
		m.Duration = humantime.Words(time.Duration(*a.StateDuration) * time.Second)
	}
	ackOrTest := a.NotificationType == schema.NotificationAcknowledgement || a.NotificationType == schema.NotificationTest
	if hash := schema.Deref(a.EventHash); hash != "" && !ackOrTest && a.State != schema.StateOK {
		m.AckHint = "ACKID " + hash
	}
	if a.ReplyCode != "" {
		m.ReplyHint = "Reply ACK " + a.ReplyCode
	}
	if a.Escalation != nil {
		m.Escalation = EscalationWords(*a.Escalation)
	}
	for id, r := range a.RollupAlerts {
		m.Rollup = append(m.Rollup, RollupLine{Check: id, State: r.State, StateWords: StateWords(r.State), Summary: r.Summary,
			Duration: humantime.Words(time.Duration(r.Duration) * time.Second)})
	}
	slices.SortFunc(m.Rollup, func(x, y RollupLine) int { return strings.Compare(x.Check, y.Check) })
	return m
}

// renderer is a parsed text or HTML template.
type renderer interface {
	Execute(w *bytes.Buffer, m Message) error
}

type textTemplate struct{ t *texttemplate.Template }

func (t textTemplate) Execute(w *bytes.Buffer, m Message) error { return t.t.Execute(w, m) }

type htmlTemplate struct{ t *htmltemplate.Template }

func (t htmlTemplate) Execute(w *bytes.Buffer, m Message) error { return t.t.Execute(w, m) }

// Templates are a medium's operator-supplied templates, parsed at start.
type Templates struct {
	medium string
	byName map[string]renderer
}

// LoadTemplates parses the template files configured for medium's names. A file that cannot be
// read or parsed is an error naming the setting, the file and the line: the gateway must not
// start with a template that can never work.
func LoadTemplates(v *config.Values, medium string, names ...string) (*Templates, error) {
	t := &Templates{medium: medium, byName: map[string]renderer{}}
	for _, name := range names {
		path := v.String(TemplateSetting(medium, name))
		if path == "" {
			continue
		}
		r, err := parseTemplateFile(name, path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", TemplateSetting(medium, name), err)
		}
		t.byName[name] = r
	}
	return t, nil
}

// RenderTemplateFile renders the template file at path, read as the template called name, for
// m: what `flapjack alert render` shows. Errors are returned, not replaced by the built-in text.
func RenderTemplateFile(name, path string, m Message) (string, error) {
	r, err := parseTemplateFile(name, path)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := r.Execute(&b, m); err != nil {
		return "", err
	}
	return b.String(), nil
}

// parseTemplateFile parses one template file as name says (.html: html/template).
func parseTemplateFile(name, path string) (renderer, error) {
	body, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	funcs := map[string]any{"words": humantime.Words, "upper": strings.ToUpper, "lower": strings.ToLower}
	if strings.HasSuffix(name, ".html") {
		t, err := htmltemplate.New(path).Funcs(funcs).Option("missingkey=error").Parse(string(body))
		if err != nil {
			return nil, err
		}
		return htmlTemplate{t}, nil
	}
	t, err := texttemplate.New(path).Funcs(funcs).Option("missingkey=error").Parse(string(body))
	if err != nil {
		return nil, err
	}
	return textTemplate{t}, nil
}

// Render is the named template's output for m, or builtin's when the operator gave none. A
// template that fails at render time falls back to builtin and logs why: an alert is never lost
// to a template bug.
func (t *Templates) Render(name string, m Message, builtin func(Message) string, log *zap.Logger) string {
	r, ok := t.byName[name]
	if !ok {
		return builtin(m)
	}
	var b bytes.Buffer
	if err := r.Execute(&b, m); err != nil {
		log.Warn("template failed; the built-in text is sent instead", zap.String("medium", t.medium),
			zap.String("template", name), zap.String("alert", m.Alert.ID), zap.Error(err))
		return builtin(m)
	}
	return b.String()
}
