// Package webhook is the webhook medium: each alert of `webhook_notifications` is POSTed, as
// the JSON exactly as it was queued (docs/decisions.md I2, the shape third-party gateways read), to the URL
// that is the contact's address, behind the shared queue runner of package gateways. With a
// shared secret the request carries `X-Flapjack-Signature: sha256=<hex HMAC-SHA256 of the
// body>`. The gateway follows redirects only to the same host, keeping the POST and never
// downgrading https; reads at most 64 KiB of an answer; and, when `allowed_hosts` is set, posts
// only to those hosts. URLs (which may hold tokens) are named by scheme and host only.
package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/gateways/internal/httpsend"
	"github.com/flapjackgo/flapjack/schema"
)

// Medium is the medium name (alerts' "media", the list webhook_notifications).
const Medium = "webhook"

// SignatureHeader carries the body's HMAC when a secret is set.
const SignatureHeader = "X-Flapjack-Signature"

// maxRedirects is how many same-host redirects are followed.
const maxRedirects = 3

// Config is the gateways.webhook section.
type Config struct {
	// Secret signs each body (X-Flapjack-Signature); "": unsigned.
	Secret string
	// Timeout of one request, default httpsend.DefaultTimeout.
	Timeout time.Duration
	// AllowedHosts, when set, are the only hosts alerts are posted to: "hooks.example.com",
	// "hooks.example.com:8443" (that port only), "*.example.com" (its subdomains).
	AllowedHosts []string
}

func (c Config) withDefaults() Config {
	c.Timeout = httpsend.TimeoutOr(c.Timeout)
	hosts := make([]string, 0, len(c.AllowedHosts))
	for _, h := range c.AllowedHosts {
		hosts = append(hosts, strings.ToLower(strings.TrimSpace(h)))
	}
	c.AllowedHosts = hosts
	return c
}

// Validate reports every problem, each naming its setting.
func (c Config) Validate() error {
	c = c.withDefaults()
	errs := []error{httpsend.CheckTimeout(Medium, c.Timeout)}
	for _, h := range c.AllowedHosts {
		if h == "" || strings.ContainsAny(h, "/@?# ") || strings.Contains(strings.TrimPrefix(h, "*."), "*") {
			errs = append(errs, fmt.Errorf("gateways.%s.allowed_hosts: %q is not a host name (host, host:port or *.domain)", Medium, h))
		}
	}
	return errors.Join(errs...)
}

// Options wire a Sender.
type Options struct {
	Config Config
	// HTTPClient sends the requests; nil: a client on httpsend's transport that follows only
	// same-host redirects. A given client's CheckRedirect is replaced by that rule.
	HTTPClient *http.Client
	Log        *zap.Logger
	// Version is sent in the User-Agent (flapjack/<version>).
	Version string
	Now     func() time.Time // wall clock for Retry-After dates; default time.Now
}

// Sender posts alerts to webhook receivers. It implements gateways.PayloadSender (the runner
// hands it the queued JSON) and gateways.Sender: nil on 2xx, gateways.Retryable for 408, 429
// (after Retry-After), 5xx and network errors, gateways.Permanent for other answers, refused
// hosts and refused redirects.
type Sender struct {
	httpsend.Base // Tpl and Loc unused: the queued JSON is posted as it is
	cfg           Config
	ua            string
}

var (
	_ gateways.Sender        = (*Sender)(nil)
	_ gateways.PayloadSender = (*Sender)(nil)
)

// errRedirect marks a redirect the gateway does not follow.
var errRedirect = errors.New("redirect refused")

// NewSender validates the configuration and builds a Sender.
func NewSender(o Options) (*Sender, error) {
	if err := o.Config.Validate(); err != nil {
		return nil, err
	}
	cfg := o.Config.withDefaults()
	client := httpsend.NewClient(cfg.Timeout)
	if o.HTTPClient != nil {
		c := *o.HTTPClient
		client = &c
	}
	client.CheckRedirect = checkRedirect
	s := &Sender{cfg: cfg, ua: "flapjack/" + o.Version,
		Base: httpsend.NewBase("webhook_sender", cfg.Timeout, client, nil, nil, o.Log, o.Now)}
	if o.Version == "" {
		s.ua = "flapjack/dev"
	}
	return s, nil
}

// checkRedirect follows a redirect only to the same host, keeping the method (307, 308: a
// 301/302/303 would turn the POST into a GET without the alert) and never from https to http.
func checkRedirect(req *http.Request, via []*http.Request) error {
	first := via[0]
	switch {
	case len(via) > maxRedirects:
		return fmt.Errorf("%w: more than %d redirects", errRedirect, maxRedirects)
	case !strings.EqualFold(req.URL.Host, first.URL.Host):
		return fmt.Errorf("%w: to another host (%s)", errRedirect, req.URL.Host)
	case first.URL.Scheme == "https" && req.URL.Scheme != "https":
		return fmt.Errorf("%w: from https to %s", errRedirect, req.URL.Scheme)
	case req.Method != first.Method:
		return fmt.Errorf("%w: it would turn the %s into a %s (only 307 and 308 keep it)", errRedirect, first.Method, req.Method)
	}
	return nil
}

// Send implements gateways.Sender for a caller without the queued JSON: the alert is encoded
// again (the runner calls SendPayload instead).
func (s *Sender) Send(ctx context.Context, a schema.Alert) error {
	body, err := json.Marshal(a)
	if err != nil {
		return gateways.Permanent(fmt.Errorf("encoding the alert: %w", err))
	}
	return s.SendPayload(ctx, a, body)
}

// SendPayload implements gateways.PayloadSender: payload is posted unchanged.
func (s *Sender) SendPayload(ctx context.Context, a schema.Alert, payload []byte) error {
	target, err := s.target(a.Address)
	if err != nil {
		return gateways.Permanent(err)
	}
	origin := httpsend.Origin(target)
	req, err := http.NewRequest(http.MethodPost, target.String(), bytes.NewReader(payload))
	if err != nil {
		return gateways.Permanent(fmt.Errorf("building the request to %s failed", origin))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", s.ua)
	if s.cfg.Secret != "" {
		req.Header.Set(SignatureHeader, Sign(s.cfg.Secret, payload))
	}
	secrets := urlSecrets(target, s.cfg.Secret)
	resp, err := httpsend.Do(ctx, s.Client, s.cfg.Timeout, req, origin)
	if err != nil {
		if errors.Is(err, errRedirect) {
			return gateways.Permanent(httpsend.ScrubError(err, secrets...))
		}
		return gateways.Retryable(httpsend.ScrubError(err, secrets...), 0)
	}
	if httpsend.OK(resp.Status) {
		s.Log.Debug("alert posted", zap.String("check", a.EventID), zap.String("webhook", origin), zap.Int("status", resp.Status))
		return nil
	}
	return httpsend.Classify(resp, s.Now(), fmt.Errorf("webhook %s answered HTTP %d for %s: %s",
		origin, resp.Status, a.EventID, httpsend.Excerpt(resp.Body, secrets...)))
}

// urlSecrets is what of a URL may be a credential, to keep out of errors even when a receiver
// echoes it: the URL, its user info, query values and longer path segments.
func urlSecrets(u *url.URL, more ...string) []string {
	out := append([]string{u.String(), u.RawQuery, u.User.String()}, more...)
	for _, vs := range u.Query() {
		out = append(out, vs...)
	}
	for _, seg := range strings.Split(u.Path, "/") {
		if len(seg) >= 8 {
			out = append(out, seg)
		}
	}
	return out
}

// target checks an address: an absolute http(s) URL on an allowed host.
func (s *Sender) target(address string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(address))
	switch {
	case err != nil:
		return nil, errors.New("address is not a URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("address must be an http:// or https:// URL, got scheme %q", u.Scheme)
	case u.Host == "":
		return nil, errors.New("address has no host")
	case !s.allowed(u):
		return nil, fmt.Errorf("host %s is not in gateways.%s.allowed_hosts", u.Host, Medium)
	}
	return u, nil
}

// allowed reports whether u's host may be posted to.
func (s *Sender) allowed(u *url.URL) bool {
	if len(s.cfg.AllowedHosts) == 0 {
		return true
	}
	hostport, host := strings.ToLower(u.Host), strings.ToLower(u.Hostname())
	if _, _, err := net.SplitHostPort(hostport); err != nil {
		hostport = ""
	}
	for _, h := range s.cfg.AllowedHosts {
		switch {
		case strings.HasPrefix(h, "*."):
			if strings.HasSuffix(host, h[1:]) {
				return true
			}
		case h == host || (hostport != "" && h == hostport):
			return true
		}
	}
	return false
}

// Sign is the X-Flapjack-Signature of body under secret: "sha256=" and the hex HMAC-SHA256.
// A receiver recomputes it over the raw body and compares in constant time.
func Sign(secret string, body []byte) string {
	h := hmac.New(sha256.New, []byte(secret))
	h.Write(body)
	return "sha256=" + hex.EncodeToString(h.Sum(nil))
}
