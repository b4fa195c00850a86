package pagerduty

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/flapjackgo/flapjack/internal/text"
)

// Retry-After bounds: a 429 without a usable Retry-After waits DefaultRetryAfter; a longer
// Retry-After than MaxRetryAfter is cut to it, so one odd header cannot stall the queue.
const (
	DefaultRetryAfter = 5 * time.Second
	MaxRetryAfter     = 15 * time.Minute
)

// maxBody is how much of a response body is read.
const maxBody = 1 << 20

func newHTTPClient() *http.Client {
	t, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return &http.Client{}
	}
	return &http.Client{Transport: t.Clone()}
}

// response is a completed HTTP exchange.
type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends req with the timeout and reads the body. Errors are the transport's, with the URL
// reduced to its path (the query and host carry nothing secret, but errors stay short and the
// rule "no URL with credentials in errors" holds by construction).
func do(ctx context.Context, client *http.Client, timeout time.Duration, req *http.Request) (response, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := client.Do(req.WithContext(ctx))
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
			err = fmt.Errorf("no answer within %s", timeout)
		}
		return response{}, fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return response{}, fmt.Errorf("%s %s: HTTP %d, reading the body: %w", req.Method, req.URL.Path, resp.StatusCode, err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: body}, nil
}

// retryAfter reads a Retry-After header (delay in seconds, or an HTTP date) at now; missing,
// unreadable or past values give DefaultRetryAfter, and long ones are cut to MaxRetryAfter.
func retryAfter(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	d := time.Duration(0)
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs > int64(MaxRetryAfter/time.Second) {
			return MaxRetryAfter
		}
		d = time.Duration(secs) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	}
	switch {
	case d <= 0:
		return DefaultRetryAfter
	case d > MaxRetryAfter:
		return MaxRetryAfter
	}
	return d
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
	return scrub(msg, secrets...)
}

// scrub replaces every occurrence of each secret in s by its redacted form.
func scrub(s string, secrets ...string) string {
	for _, secret := range secrets {
		if len(secret) >= 4 {
			s = strings.ReplaceAll(s, secret, Redact(secret))
		}
	}
	return s
}
