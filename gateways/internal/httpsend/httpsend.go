// Package httpsend is what the HTTP media (sms, sms_twilio, sms_nexmo, slack, webhook,
// pagerduty) share:
// a client with timeouts that follows no redirect unless told to, one exchange with a bounded
// response body and errors that name no URL (URLs may carry secrets: a Slack hook's path, a
// MessageNet password in the query), and the classification of an answer into the gateways'
// contract: 2xx delivered; 408, 429 and 5xx retried (429 and 503 after Retry-After); every other
// status dead-lettered at once.
package httpsend

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/internal/text"
)

// Defaults shared by the HTTP media.
const (
	// DefaultTimeout bounds one request, connection, answer and body included.
	DefaultTimeout = 10 * time.Second
	// MaxBody is how much of an answer is read; the rest is discarded unread.
	MaxBody = 64 << 10
	// DefaultRetryAfter is the wait after a 429 without a usable Retry-After.
	DefaultRetryAfter = 5 * time.Second
	// MaxRetryAfter caps a Retry-After, so one odd header cannot stall a queue for hours.
	MaxRetryAfter = 15 * time.Minute
)

// NewClient is an HTTP client on a clone of the default transport (which honours HTTPS_PROXY
// and NO_PROXY) with timeout as its overall limit. It follows no redirect: an API that
// answers 3xx is misconfigured, and the 3xx is reported (and dead-lettered) as it is.
func NewClient(timeout time.Duration) *http.Client {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	c := &http.Client{Timeout: timeout, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		c.Transport = t.Clone()
	}
	return c
}

// Response is a completed exchange.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Do sends req within timeout and reads at most MaxBody of the answer. target names the peer
// in errors ("Twilio", "https://hooks.slack.com/…"): the request's URL never appears in them.
// A transport error is returned as it is (wrapped); the caller decides whether it is retried.
func Do(ctx context.Context, client *http.Client, timeout time.Duration, req *http.Request, target string) (Response, error) {
	return DoUpTo(ctx, client, timeout, req, target, MaxBody)
}

// DoUpTo is Do reading at most maxBody of the answer (an API whose answers are listings, such
// as PagerDuty's incidents, needs more than MaxBody).
func DoUpTo(ctx context.Context, client *http.Client, timeout time.Duration, req *http.Request, target string, maxBody int64) (Response, error) {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := client.Do(req.WithContext(ctx))
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its text holds the whole URL
		}
		var ne net.Error
		if (errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil) || (errors.As(err, &ne) && ne.Timeout()) {
			err = fmt.Errorf("no answer within %s: %w", timeout, context.DeadlineExceeded)
		}
		return Response{}, fmt.Errorf("%s %s: %w", req.Method, target, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return Response{}, fmt.Errorf("%s %s: HTTP %d, reading the answer: %w", req.Method, target, resp.StatusCode, err)
	}
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: body}, nil
}

// OK reports a 2xx status.
func OK(status int) bool { return status >= 200 && status < 300 }

// Classify turns an answer that is not a success into the gateways' contract: describe is the
// error to report (it must name no secret). 429 waits for Retry-After (DefaultRetryAfter when
// absent), 408 and 5xx are retried (after Retry-After when given), everything else is
// permanent: retrying the same request cannot change a 400, 401, 403 or 404.
func Classify(r Response, now time.Time, describe error) error {
	switch {
	case r.Status == http.StatusTooManyRequests:
		return gateways.Retryable(describe, RetryAfter(r.Header, now))
	case r.Status == http.StatusRequestTimeout || r.Status >= 500:
		after := time.Duration(0)
		if r.Header.Get("Retry-After") != "" {
			after = RetryAfter(r.Header, now)
		}
		return gateways.Retryable(describe, after)
	default:
		return gateways.Permanent(describe)
	}
}

// RetryAfter reads a Retry-After header (seconds, or an HTTP date) at now. Missing, unreadable
// or past values give DefaultRetryAfter; long ones are cut to MaxRetryAfter.
func RetryAfter(h http.Header, now time.Time) time.Duration {
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

// Excerpt is the start of an answer's body on one line (at most 300 characters), with every
// secret redacted: for error messages.
func Excerpt(body []byte, secrets ...string) string {
	s := strings.Join(strings.Fields(string(body)), " ")
	if s == "" {
		return "no explanation in the answer"
	}
	return Scrub(text.TruncateRunes(s, 300), secrets...)
}

// Redact shows a secret as its last four characters ("…c0de"), or "[redacted]" when it is
// too short for a suffix to be safe to show.
func Redact(secret string) string {
	if len(secret) < 16 {
		return "[redacted]"
	}
	return "…" + secret[len(secret)-4:]
}

// Scrub replaces every occurrence of each secret (of 4 characters or more) in s.
func Scrub(s string, secrets ...string) string {
	for _, secret := range secrets {
		if len(secret) >= 4 {
			s = strings.ReplaceAll(s, secret, Redact(secret))
		}
	}
	return s
}

// ScrubError is err with every secret removed from its text (err itself when none occurs, so
// errors.Is still sees through it).
func ScrubError(err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if clean := Scrub(msg, secrets...); clean != msg {
		return errors.New(clean)
	}
	return err
}

// Origin is how a URL is named in logs and errors: scheme and host only ("https://hooks.slack.com/…"),
// since paths and queries may be credentials.
func Origin(u *url.URL) string {
	if u == nil || u.Host == "" {
		return "(no host)"
	}
	s := u.Scheme + "://" + u.Host
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		s += "/…"
	}
	return s
}

// CheckBaseURL accepts an absolute http(s) URL without credentials, query or fragment (a
// setting such as gateways.sms_twilio.endpoint).
func CheckBaseURL(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return fmt.Errorf("is not a URL: %q", s)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("must be an http:// or https:// URL, got %q", s)
	case u.Host == "":
		return fmt.Errorf("has no host: %q", s)
	case u.User != nil:
		return errors.New("must not contain credentials")
	case u.RawQuery != "" || u.Fragment != "":
		return fmt.Errorf("must not have a query or fragment, got %q", s)
	}
	return nil
}
