// Package messagenet is the sms medium (docs/flapjack-1x.md 4.4): each alert of `sms_notifications`
// becomes one SMS lodged with MessageNet by an HTTP GET of the configured endpoint with
// Username, Pwd, PhoneNumber and PhoneMessage, as Flapjack 1.x did, behind the shared queue
// runner of package gateways. 200 to 206 is sent (Flapjack's range). The password travels in
// the query string (MessageNet's API): it never appears in logs or errors, which name no URL.
package messagenet

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/gateways/internal/httpsend"
	"github.com/flapjackgo/flapjack/schema"
)

// Medium is the medium name (alerts' "media", the list sms_notifications).
const Medium = "sms"

// DefaultEndpoint is MessageNet's lodge call, as Flapjack 1.x called it.
const DefaultEndpoint = "https://www.messagenet.com.au/dotnet/Lodge.asmx/LodgeSMSMessage"

// Config is the gateways.sms section.
type Config struct {
	Username string        // username
	Password string        // password (secret)
	Endpoint string        // endpoint: the lodge call's URL, default DefaultEndpoint
	Timeout  time.Duration // timeout of one request, default httpsend.DefaultTimeout
}

func (c Config) withDefaults() Config {
	c.Endpoint = strings.TrimSpace(c.Endpoint)
	if c.Endpoint == "" {
		c.Endpoint = DefaultEndpoint
	}
	c.Timeout = httpsend.TimeoutOr(c.Timeout)
	return c
}

// Validate reports every problem, each naming its setting.
func (c Config) Validate() error {
	c = c.withDefaults()
	errs := httpsend.Required(Medium, "username", c.Username, "password", c.Password)
	errs = append(errs, httpsend.CheckEndpoint(Medium, c.Endpoint))
	errs = append(errs, httpsend.CheckTimeout(Medium, c.Timeout))
	return errors.Join(errs...)
}

// Options wire a Sender.
type Options = httpsend.Options[Config]

// Sender lodges alerts as SMS with MessageNet; it implements gateways.Sender.
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
	return &Sender{cfg: cfg, Base: o.Base("sms_sender", cfg.Timeout)}, nil
}

// Send implements gateways.Sender.
func (s *Sender) Send(ctx context.Context, a schema.Alert) error {
	number := httpsend.TidyNumber(a.Address)
	if number == "" {
		return gateways.Permanent(errors.New("alert has no phone number (address)"))
	}
	u, err := url.Parse(s.cfg.Endpoint)
	if err != nil {
		return gateways.Permanent(errors.New("gateways.sms.endpoint is not a URL"))
	}
	u.RawQuery = url.Values{"Username": {s.cfg.Username}, "Pwd": {s.cfg.Password}, "PhoneNumber": {number},
		"PhoneMessage": {gateways.RenderSMS(s.Tpl, a, s.Loc, s.Log)}}.Encode()
	req, err := http.NewRequest(http.MethodGet, u.String(), nil)
	if err != nil {
		return gateways.Permanent(errors.New("building the MessageNet request failed"))
	}
	req.Header.Set("Cache-Control", "no-cache") // a cached answer would not be a sent SMS
	resp, err := httpsend.Do(ctx, s.Client, s.cfg.Timeout, req, "MessageNet")
	if err != nil {
		return gateways.Retryable(httpsend.ScrubError(err, s.cfg.Password), 0)
	}
	if resp.Status >= 200 && resp.Status <= 206 {
		s.Log.Debug("message lodged", zap.String("check", a.EventID), zap.Int("status", resp.Status))
		return nil
	}
	return httpsend.Classify(resp, s.Now(), fmt.Errorf("MessageNet answered HTTP %d for %s: %s",
		resp.Status, a.EventID, httpsend.Excerpt(resp.Body, s.cfg.Password)))
}
