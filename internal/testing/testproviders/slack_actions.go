package testproviders

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Slack's interactivity requests, as Slack sends them to an app's Request URL when someone
// clicks a button of a message:
//
//	POST <Request URL>
//	Content-Type: application/x-www-form-urlencoded
//	X-Slack-Request-Timestamp: 1531420618
//	X-Slack-Signature: v0=<hex HMAC-SHA256 with the app's signing secret of "v0:" + timestamp + ":" + body>
//	payload=<URL-encoded JSON: {"type":"block_actions","user":{...},"actions":[...],"response_url":...}>

// SlackClick is a person clicking a button of a message.
type SlackClick struct {
	UserID, UserName string
	ActionID, Value  string
	ResponseURL      string
}

// Body is the form body Slack posts for the click.
func (c SlackClick) Body() []byte {
	payload, _ := json.Marshal(map[string]any{
		"type":       "block_actions",
		"user":       map[string]string{"id": c.UserID, "username": c.UserName, "name": c.UserName, "team_id": "T0001"},
		"api_app_id": "A0001", "token": "verification-token-deprecated", "trigger_id": "1.2.3",
		"team":      map[string]string{"id": "T0001", "domain": "example"},
		"container": map[string]any{"type": "message", "message_ts": "1767607200.000100", "channel_id": "C0001", "is_ephemeral": false},
		"channel":   map[string]string{"id": "C0001", "name": "ops"},
		"actions": []map[string]any{{"type": "button", "action_id": c.ActionID, "block_id": "b1", "value": c.Value,
			"text": map[string]any{"type": "plain_text", "text": "Acknowledge"}, "action_ts": "1767607260.000200"}},
		"response_url": c.ResponseURL,
	})
	return []byte(url.Values{"payload": {string(payload)}}.Encode())
}

// SlackSignature is the X-Slack-Signature Slack sends with body at timestamp.
func SlackSignature(secret string, timestamp int64, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("v0:" + strconv.FormatInt(timestamp, 10) + ":" + string(body)))
	return "v0=" + hex.EncodeToString(m.Sum(nil))
}

// SlackRequest is the request Slack sends to target with body, signed with secret at timestamp
// (signature "" : the correct one).
func SlackRequest(target, secret string, timestamp int64, body []byte, signature string) (*http.Request, error) {
	req, err := http.NewRequest(http.MethodPost, target, strings.NewReader(string(body)))
	if err != nil {
		return nil, err
	}
	if signature == "" {
		signature = SlackSignature(secret, timestamp, body)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(timestamp, 10))
	req.Header.Set("X-Slack-Signature", signature)
	return req, nil
}
