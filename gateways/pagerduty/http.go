package pagerduty

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/flapjackgo/flapjack/gateways/internal/httpsend"
	"github.com/flapjackgo/flapjack/internal/text"
)

// maxBody is how much of a response body is read: the REST API's incident listings can be
// larger than httpsend.MaxBody.
const maxBody = 1 << 20

func newHTTPClient() *http.Client {
	t, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return &http.Client{}
	}
	return &http.Client{Transport: t.Clone()}
}

// do sends req with the timeout and reads the body (httpsend.DoUpTo). Errors name the request
// by method and path only: the host and query carry nothing secret, but the rule "no URL with
// credentials in errors" then holds by construction.
func do(ctx context.Context, client *http.Client, timeout time.Duration, req *http.Request) (httpsend.Response, error) {
	return httpsend.DoUpTo(ctx, client, timeout, req, req.URL.Path, maxBody)
}

// errorMessage extracts PagerDuty's explanation from an error body: Events API
// {"status","message","errors":[...]}, REST {"error":{"message","code","errors":[...]}}, else
// the start of the body. Every secret given is redacted from it.
func errorMessage(body []byte, secrets ...string) string {
	var v struct {
		Status  string          `json:"status"`
		Message string          `json:"message"`
		Errors  []string        `json:"errors"`
		Error   json.RawMessage `json:"error"`
	}
	msg := ""
	if err := json.Unmarshal(body, &v); err == nil {
		var rest struct {
			Message string   `json:"message"`
			Code    int      `json:"code"`
			Errors  []string `json:"errors"`
		}
		if len(v.Error) > 0 && json.Unmarshal(v.Error, &rest) == nil && rest.Message != "" {
			v.Message, v.Errors = rest.Message, rest.Errors
			if rest.Code != 0 {
				v.Message = fmt.Sprintf("%s (code %d)", rest.Message, rest.Code)
			}
		}
		msg = v.Message
		if msg == "" {
			msg = v.Status
		}
		if len(v.Errors) > 0 {
			msg += ": " + strings.Join(v.Errors, "; ")
		}
	}
	if strings.TrimSpace(msg) == "" {
		msg = strings.Join(strings.Fields(string(body)), " ")
		if msg == "" {
			msg = "no explanation in the response"
		}
	}
	msg = text.TruncateRunes(msg, 500)
	return httpsend.Scrub(msg, secrets...)
}
