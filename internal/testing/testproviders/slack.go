package testproviders

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"unicode/utf8"
)

// A Slack incoming webhook:
//
//	POST <the webhook URL>
//	Content-Type: application/json
//	{"text": "...", "attachments": [{"color": "danger", "fallback": "...", "blocks": [...]}],
//	 "channel": "#ops", "username": "flapjack", "icon_emoji": ":ghost:"}
//
// answered 200 "ok"; a refused message gets a plain-text reason (400 invalid_payload, no_text;
// 403 invalid_token, action_prohibited; 404 channel_not_found; 410 channel_is_archived; 429
// with Retry-After; 500 rollup_error).

// Slack's limits on what a webhook message may hold.
const (
	SlackMaxText        = 40000
	SlackMaxSectionText = 3000
	SlackMaxBlocks      = 50
	SlackMaxContext     = 10
)

var (
	slackColor   = regexp.MustCompile(`^(good|warning|danger|#[0-9A-Fa-f]{6})$`)
	slackChannel = regexp.MustCompile(`^([#@][^\s]{1,80}|[CGD][A-Z0-9]{8,})$`)
	slackEmoji   = regexp.MustCompile(`^:[a-z0-9_+'-]+:$`)
	// slackEntity is an escape Slack documents (&amp; &lt; &gt;): any other & < > in mrkdwn
	// text is unescaped.
	slackEntity = regexp.MustCompile(`&(amp|lt|gt);`)
)

type slackText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type slackBlock struct {
	Type     string         `json:"type"`
	Text     *slackText     `json:"text"`
	Elements []slackElement `json:"elements"`
	BlockID  string         `json:"block_id"`
}

// slackElement is a context block's text object (Text a string) or an actions block's button
// (Text a plain_text object).
type slackElement struct {
	Type     string          `json:"type"`
	Text     json.RawMessage `json:"text"`
	ActionID string          `json:"action_id"`
	Value    string          `json:"value"`
	Style    string          `json:"style"`
	URL      string          `json:"url"`
}

// PlainText is a context element's text, or a button's label.
func (e slackElement) PlainText() string {
	var s string
	if json.Unmarshal(e.Text, &s) == nil {
		return s
	}
	var t slackText
	_ = json.Unmarshal(e.Text, &t)
	return t.Text
}

// Slack's limits on a button.
const (
	SlackMaxButtonText = 75
	SlackMaxActionID   = 255
	SlackMaxValue      = 2000
	SlackMaxActions    = 25
)

type slackAttachment struct {
	Color    string       `json:"color"`
	Fallback string       `json:"fallback"`
	Text     string       `json:"text"`
	Blocks   []slackBlock `json:"blocks"`
}

// SlackMessage is a webhook message; decoding refuses fields Slack does not document for
// incoming webhooks.
type SlackMessage struct {
	Text        string            `json:"text"`
	Blocks      []slackBlock      `json:"blocks"`
	Attachments []slackAttachment `json:"attachments"`
	Channel     string            `json:"channel"`
	Username    string            `json:"username"`
	IconEmoji   string            `json:"icon_emoji"`
	IconURL     string            `json:"icon_url"`
	Mrkdwn      *bool             `json:"mrkdwn"`
	UnfurlLinks *bool             `json:"unfurl_links"`
	UnfurlMedia *bool             `json:"unfurl_media"`
	ThreadTS    string            `json:"thread_ts"`
	// ReplaceOriginal, DeleteOriginal and ResponseType are fields of a message posted to an
	// interaction's response_url (SlackResponsePath), not of a webhook message.
	ReplaceOriginal *bool  `json:"replace_original"`
	DeleteOriginal  *bool  `json:"delete_original"`
	ResponseType    string `json:"response_type"`
}

// SlackResponsePath is the path of the response_urls the tests hand out in interactions
// (Slack's are https://hooks.slack.com/actions/T…/…/…): a message posted there may say
// replace_original.
const SlackResponsePath = "/actions/"

// DecodeSlack decodes a webhook message strictly.
func DecodeSlack(body []byte) (SlackMessage, error) {
	var m SlackMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	err := dec.Decode(&m)
	return m, err
}

// Slack is the incoming-webhook contract, on any path (a webhook's URL is its secret).
func Slack() Contract {
	return Contract{
		Name: "Slack incoming webhook",
		Check: func(r *http.Request, body []byte) ([]string, int) {
			problems := requireMethodAndType(r, http.MethodPost, "application/json")
			if len(problems) > 0 {
				return problems, http.StatusBadRequest
			}
			m, err := DecodeSlack(body)
			if err != nil {
				return []string{"invalid_payload: " + err.Error()}, http.StatusBadRequest
			}
			if strings.TrimSpace(m.Text) == "" && len(m.Blocks) == 0 && len(m.Attachments) == 0 {
				return []string{"no_text"}, http.StatusBadRequest
			}
			if n := utf8.RuneCountInString(m.Text); n > SlackMaxText {
				problems = append(problems, fmt.Sprintf("msg_too_long: text has %d characters", n))
			}
			problems = append(problems, checkMrkdwn("text", m.Text)...)
			problems = append(problems, checkBlocks("blocks", m.Blocks)...)
			for i, a := range m.Attachments {
				if a.Color != "" && !slackColor.MatchString(a.Color) {
					problems = append(problems, fmt.Sprintf("invalid_attachments: attachments[%d].color %q", i, a.Color))
				}
				if a.Fallback == "" && a.Text == "" {
					problems = append(problems, fmt.Sprintf("invalid_attachments: attachments[%d] has neither fallback nor text", i))
				}
				problems = append(problems, checkBlocks(fmt.Sprintf("attachments[%d].blocks", i), a.Blocks)...)
			}
			if m.Channel != "" && !slackChannel.MatchString(m.Channel) {
				problems = append(problems, fmt.Sprintf("channel_not_found: %q", m.Channel))
			}
			if m.IconEmoji != "" && !slackEmoji.MatchString(m.IconEmoji) {
				problems = append(problems, fmt.Sprintf("invalid_payload: icon_emoji %q", m.IconEmoji))
			}
			if (m.ReplaceOriginal != nil || m.DeleteOriginal != nil || m.ResponseType != "") && !strings.HasPrefix(r.URL.Path, SlackResponsePath) {
				problems = append(problems, "invalid_payload: replace_original, delete_original and response_type belong to a response_url")
			}
			return problems, http.StatusBadRequest
		},
		Success: func(w http.ResponseWriter, req Request) {
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte("ok"))
		},
		Failure: func(w http.ResponseWriter, status int, message string) {
			reason := map[int]string{400: "invalid_payload", 403: "action_prohibited", 404: "channel_not_found",
				410: "channel_is_archived", 429: "rate_limited", 500: "rollup_error"}[status]
			if strings.Contains(message, ":") || strings.HasPrefix(message, "no_text") {
				reason, _, _ = strings.Cut(message, ":")
			}
			if reason == "" {
				reason = "error"
			}
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(status)
			_, _ = w.Write([]byte(reason))
		},
	}
}

func checkBlocks(where string, blocks []slackBlock) []string {
	var problems []string
	if len(blocks) > SlackMaxBlocks {
		problems = append(problems, fmt.Sprintf("invalid_blocks: %s has %d blocks, more than %d", where, len(blocks), SlackMaxBlocks))
	}
	for i, b := range blocks {
		at := fmt.Sprintf("%s[%d]", where, i)
		switch b.Type {
		case "section":
			if b.Text == nil || (b.Text.Type != "mrkdwn" && b.Text.Type != "plain_text") {
				problems = append(problems, "invalid_blocks: "+at+" needs a text object of type mrkdwn or plain_text")
				continue
			}
			if n := utf8.RuneCountInString(b.Text.Text); n == 0 || n > SlackMaxSectionText {
				problems = append(problems, fmt.Sprintf("invalid_blocks: %s.text must have 1 to %d characters, got %d", at, SlackMaxSectionText, n))
			}
			if b.Text.Type == "mrkdwn" {
				problems = append(problems, checkMrkdwn(at+".text", b.Text.Text)...)
			}
		case "context":
			if len(b.Elements) == 0 || len(b.Elements) > SlackMaxContext {
				problems = append(problems, fmt.Sprintf("invalid_blocks: %s must have 1 to %d elements", at, SlackMaxContext))
			}
			for j, e := range b.Elements {
				var text string
				if (e.Type != "mrkdwn" && e.Type != "plain_text") || json.Unmarshal(e.Text, &text) != nil || text == "" || e.ActionID != "" {
					problems = append(problems, fmt.Sprintf("invalid_blocks: %s.elements[%d] is not a text object", at, j))
				} else if e.Type == "mrkdwn" {
					problems = append(problems, checkMrkdwn(fmt.Sprintf("%s.elements[%d]", at, j), text)...)
				}
			}
		case "actions":
			problems = append(problems, checkButtons(at, b.Elements)...)
		case "divider":
		default:
			problems = append(problems, fmt.Sprintf("invalid_blocks: %s has type %q", at, b.Type))
		}
	}
	return problems
}

// checkButtons enforces Block Kit's rules for an actions block of buttons: 1 to 25 elements,
// a plain_text text of 1 to 75 characters, an action_id (up to 255, unique in the block), a
// value up to 2000 characters, style primary or danger if any.
func checkButtons(at string, elements []slackElement) []string {
	var problems []string
	if len(elements) == 0 || len(elements) > SlackMaxActions {
		problems = append(problems, fmt.Sprintf("invalid_blocks: %s must have 1 to %d elements", at, SlackMaxActions))
	}
	ids := map[string]bool{}
	for j, e := range elements {
		where := fmt.Sprintf("invalid_blocks: %s.elements[%d]", at, j)
		var text slackText
		if e.Type != "button" {
			problems = append(problems, fmt.Sprintf("%s has type %q, not button", where, e.Type))
			continue
		}
		if json.Unmarshal(e.Text, &text) != nil || text.Type != "plain_text" {
			problems = append(problems, where+".text must be a plain_text object")
		} else if n := utf8.RuneCountInString(text.Text); n == 0 || n > SlackMaxButtonText {
			problems = append(problems, fmt.Sprintf("%s.text must have 1 to %d characters", where, SlackMaxButtonText))
		}
		if e.ActionID == "" || len(e.ActionID) > SlackMaxActionID || ids[e.ActionID] {
			problems = append(problems, where+".action_id must be set, unique and at most 255 characters")
		}
		ids[e.ActionID] = true
		if len(e.Value) > SlackMaxValue {
			problems = append(problems, fmt.Sprintf("%s.value is over %d characters", where, SlackMaxValue))
		}
		if e.Style != "" && e.Style != "primary" && e.Style != "danger" {
			problems = append(problems, fmt.Sprintf("%s.style %q is not primary or danger", where, e.Style))
		}
	}
	return problems
}

// checkMrkdwn enforces Slack's rule for message text: &, < and > are escaped as &amp;, &lt;
// and &gt; (flapjack sends no links or mentions, so a < or > is always an unescaped one).
func checkMrkdwn(where, s string) []string {
	rest := slackEntity.ReplaceAllString(s, "")
	if strings.ContainsAny(rest, "&<>") {
		return []string{fmt.Sprintf("invalid_payload: %s has an unescaped &, < or >: %q", where, s)}
	}
	return nil
}
