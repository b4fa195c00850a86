// Package slack is the slack medium (docs/flapjack-1x.md 4.4): each alert of `slack_notifications` is
// posted to a Slack incoming webhook as JSON, behind the shared queue runner of package
// gateways. The address is either a webhook URL (https://hooks.slack.com/services/…), posted to
// directly, or a channel name, posted to the configured endpoint with "channel" set. The
// message is the alert's line in an attachment coloured by state. Webhook URLs are secrets:
// logs and errors name only their host.
package slack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/gateways/internal/httpsend"
	"github.com/flapjackgo/flapjack/internal/text"
	"github.com/flapjackgo/flapjack/schema"
)

// Medium is the medium name (alerts' "media", the list slack_notifications).
const Medium = "slack"

// DefaultIcon is Flapjack's icon_emoji.
const DefaultIcon = ":ghost:"

// maxSectionText is Slack's limit on a section block's text.
const maxSectionText = 3000

// Config is the gateways.slack section.
type Config struct {
	// Endpoint is the webhook alerts addressed to a channel name are posted to ("" : such
	// alerts are dead-lettered).
	Endpoint string
	// From is the username the message shows (legacy webhooks honour it; "" : the webhook's).
	From string
	// IconEmoji is the message's icon (legacy webhooks honour it), default DefaultIcon.
	IconEmoji string
	Timeout   time.Duration // timeout of one request, default httpsend.DefaultTimeout
	// SigningSecret is the Slack app's signing secret: when set, problem alerts carry an
	// Acknowledge button, whose clicks Actions verifies with it.
	SigningSecret string
}

func (c Config) withDefaults() Config {
	c.Endpoint = strings.TrimSpace(c.Endpoint)
	if c.IconEmoji == "" {
		c.IconEmoji = DefaultIcon
	}
	c.Timeout = httpsend.TimeoutOr(c.Timeout)
	return c
}

// Validate reports every problem, each naming its setting.
func (c Config) Validate() error {
	c = c.withDefaults()
	var errs []error
	if c.Endpoint != "" {
		if _, err := webhookURL(c.Endpoint); err != nil {
			errs = append(errs, fmt.Errorf("gateways.%s.endpoint %w", Medium, err))
		}
	}
	if c.IconEmoji != "none" && (len(c.IconEmoji) < 3 || !strings.HasPrefix(c.IconEmoji, ":") || !strings.HasSuffix(c.IconEmoji, ":")) {
		errs = append(errs, fmt.Errorf("gateways.%s.icon_emoji must look like :ghost: (or be none), got %q", Medium, c.IconEmoji))
	}
	errs = append(errs, httpsend.CheckTimeout(Medium, c.Timeout))
	return errors.Join(errs...)
}

// webhookURL accepts an absolute http(s) URL with a host.
func webhookURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return nil, errors.New("is not a URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, errors.New("must be an http:// or https:// URL")
	case u.Host == "":
		return nil, errors.New("has no host")
	}
	return u, nil
}

// Options wire a Sender.
type Options = httpsend.Options[Config]

// Sender posts alerts to Slack webhooks; it implements gateways.Sender: nil on 2xx,
// gateways.Retryable for 429 (after Retry-After), 5xx and network errors, gateways.Permanent
// for other answers (invalid_payload, channel_not_found, channel_is_archived, …).
type Sender struct {
	httpsend.Base
	cfg Config
}

var _ gateways.Sender = (*Sender)(nil)

// NewSender validates the configuration and builds a Sender.
func NewSender(o Options) (*Sender, error) {
	if err := o.Config.Validate(); err != nil {
		return nil, err
	}
	cfg := o.Config.withDefaults()
	return &Sender{cfg: cfg, Base: o.Base("slack_sender", cfg.Timeout)}, nil
}

// Message is a Slack webhook message.
type Message struct {
	Channel     string       `json:"channel,omitempty"`
	Username    string       `json:"username,omitempty"`
	IconEmoji   string       `json:"icon_emoji,omitempty"`
	Text        string       `json:"text"`
	Attachments []Attachment `json:"attachments"`
}

// Attachment carries the coloured bar.
type Attachment struct {
	Color    string  `json:"color"`
	Fallback string  `json:"fallback"`
	Blocks   []Block `json:"blocks"`
}

// Block is a section (Text), a context line (Elements) or a row of buttons (Buttons).
type Block struct {
	Type     string       `json:"type"`
	Text     *TextObject  `json:"text,omitempty"`
	Elements []TextObject `json:"elements,omitempty"`
	Buttons  []Button     `json:"-"`
}

// MarshalJSON writes an actions block's Buttons as its elements.
func (b Block) MarshalJSON() ([]byte, error) {
	type plain Block
	if b.Type != "actions" {
		return json.Marshal(plain(b))
	}
	return json.Marshal(struct {
		Type     string   `json:"type"`
		Elements []Button `json:"elements"`
	}{b.Type, b.Buttons})
}

// Button is a Block Kit button element.
type Button struct {
	Type     string     `json:"type"` // "button"
	Text     TextObject `json:"text"` // plain_text
	ActionID string     `json:"action_id"`
	Value    string     `json:"value"`
	Style    string     `json:"style,omitempty"`
}

// TextObject is a Slack text object.
type TextObject struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// Send implements gateways.Sender.
func (s *Sender) Send(ctx context.Context, a schema.Alert) error {
	target, channel, err := s.destination(a.Address)
	if err != nil {
		return gateways.Permanent(err)
	}
	msg := s.Build(a)
	msg.Channel = channel
	body, err := json.Marshal(msg)
	if err != nil {
		return gateways.Permanent(fmt.Errorf("encoding the Slack message: %w", err))
	}
	req, err := http.NewRequest(http.MethodPost, target.String(), bytes.NewReader(body))
	if err != nil {
		return gateways.Permanent(errors.New("building the Slack request failed"))
	}
	req.Header.Set("Content-Type", "application/json")
	origin := httpsend.Origin(target)
	resp, err := httpsend.Do(ctx, s.Client, s.cfg.Timeout, req, origin)
	if err != nil {
		return gateways.Retryable(httpsend.ScrubError(err, target.String(), target.Path), 0)
	}
	if httpsend.OK(resp.Status) {
		s.Log.Debug("message posted", zap.String("check", a.EventID), zap.String("webhook", origin))
		return nil
	}
	return httpsend.Classify(resp, s.Now(), fmt.Errorf("slack webhook %s answered HTTP %d for %s: %s",
		origin, resp.Status, a.EventID, httpsend.Excerpt(resp.Body, target.Path)))
}

// destination is where an alert goes: its address when that is a webhook URL, else the
// endpoint with the address as channel ("ops" and "#ops" → "#ops"; "@ada" stays).
func (s *Sender) destination(address string) (*url.URL, string, error) {
	address = strings.TrimSpace(address)
	if strings.HasPrefix(address, "https://") || strings.HasPrefix(address, "http://") {
		u, err := webhookURL(address)
		if err != nil {
			return nil, "", fmt.Errorf("address: a webhook URL that %v", err)
		}
		return u, "", nil
	}
	if s.cfg.Endpoint == "" {
		return nil, "", fmt.Errorf("address %q is a channel and gateways.%s.endpoint is not set (or give the contact a webhook URL)", address, Medium)
	}
	u, err := webhookURL(s.cfg.Endpoint)
	if err != nil {
		return nil, "", err
	}
	channel := address
	if !strings.HasPrefix(channel, "@") {
		channel = "#" + strings.TrimPrefix(channel, "#")
	}
	return u, channel, nil
}

// Build is the message for an alert (without its channel): the text (template alert.text or
// rollup.text, else the alert's line as on Jabber) in an attachment coloured by state, with a
// context line of the time and the ACKID, and, with a signing secret, an Acknowledge button on
// a problem.
func (s *Sender) Build(a schema.Alert) Message {
	m := gateways.NewMessage(a, s.Loc)
	name := gateways.TemplateAlertText
	if a.Rollup != nil && *a.Rollup != "" {
		name = gateways.TemplateRollupText
	}
	builtin := func(m gateways.Message) string { return m.Text }
	out := builtin(m)
	if s.Tpl != nil {
		out = s.Tpl.Render(name, m, builtin, s.Log)
	}
	if strings.TrimSpace(out) == "" {
		out = m.Text
	}
	line := text.TruncateRunes(Escape(strings.TrimSpace(out)), maxSectionText)
	blocks := []Block{{Type: "section", Text: &TextObject{Type: "mrkdwn", Text: line}}}
	var footer []TextObject
	if !m.Time.IsZero() {
		footer = append(footer, TextObject{Type: "mrkdwn", Text: Escape(m.Time.Format("2 Jan 15:04 MST"))})
	}
	if m.AckHint != "" {
		footer = append(footer, TextObject{Type: "mrkdwn", Text: "`" + Escape(m.AckHint) + "`"})
	}
	if len(footer) > 0 {
		blocks = append(blocks, Block{Type: "context", Elements: footer})
	}
	if s.cfg.SigningSecret != "" && a.AlertType() == schema.NotificationProblem {
		// One check's problem: a rollup names several checks, a recovery needs no acknowledgement.
		blocks = append(blocks, Block{Type: "actions", Buttons: []Button{{Type: "button",
			Text: TextObject{Type: "plain_text", Text: "Acknowledge"}, ActionID: ActionAcknowledge, Value: a.EventID, Style: "primary"}}})
	}
	msg := Message{Username: s.cfg.From, Text: line,
		Attachments: []Attachment{{Color: Color(a), Fallback: line, Blocks: blocks}}}
	if s.cfg.IconEmoji != "none" {
		msg.IconEmoji = s.cfg.IconEmoji
	}
	return msg
}

// Escape escapes what Slack's text formatting reserves: &, < and >.
func Escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// Color is the attachment colour of an alert: danger (critical), warning, purple (unknown),
// good (recoveries, ok), blue (acknowledgements), grey (tests); a rollup takes its worst state
// (critical, then warning, then unknown).
func Color(a schema.Alert) string {
	switch {
	case a.Rollup != nil && *a.Rollup == schema.RollupRecovery:
		return "good"
	case a.Rollup != nil && *a.Rollup != "":
		worst, rank := "", map[string]int{schema.StateCritical: 3, schema.StateWarning: 2, schema.StateUnknown: 1}
		for _, r := range a.RollupAlerts {
			if rank[r.State] > rank[worst] {
				worst = r.State
			}
		}
		return stateColor(worst)
	case a.NotificationType == schema.NotificationAcknowledgement:
		return "#439FE0"
	case a.NotificationType == schema.NotificationTest:
		return "#9E9E9E"
	case a.NotificationType == schema.NotificationRecovery || a.State == schema.StateOK:
		return "good"
	}
	return stateColor(a.State)
}

func stateColor(state string) string {
	switch state {
	case schema.StateCritical:
		return "danger"
	case schema.StateWarning:
		return "warning"
	case schema.StateUnknown:
		return "#8E44AD"
	}
	return "danger"
}
