// Package twilio is the sms_twilio medium (docs/flapjack-1x.md 4.4): each alert of
// `sms_twilio_notifications` becomes one SMS sent through Twilio's Programmable Messaging API
// (POST /2010-04-01/Accounts/{AccountSid}/Messages.json with To, From and Body, basic auth
// AccountSid:AuthToken), behind the shared queue runner of package gateways, which retries and
// dead-letters; Sender only delivers and classifies Twilio's answer. The auth token never
// appears in logs or errors.
package twilio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/gateways/internal/httpsend"
	"github.com/flapjackgo/flapjack/schema"
)

// Medium is the medium name (alerts' "media", the list sms_twilio_notifications).
const Medium = "sms_twilio"

// DefaultEndpoint is Twilio's API.
const DefaultEndpoint = "https://api.twilio.com"

// Config is the gateways.sms_twilio section.
type Config struct {
	AccountSID string        // account_sid: AC…, the user of the basic auth and part of the path
	AuthToken  string        // auth_token (secret)
	From       string        // from: a Twilio number (+15017122661), an alphanumeric sender id, or a Messaging Service SID (MG…)
	Endpoint   string        // endpoint: API base URL, default DefaultEndpoint
	Timeout    time.Duration // timeout of one request, default httpsend.DefaultTimeout
}

func (c Config) withDefaults() Config {
	c.Endpoint = strings.TrimRight(strings.TrimSpace(c.Endpoint), "/")
	if c.Endpoint == "" {
		c.Endpoint = DefaultEndpoint
	}
	c.Timeout = httpsend.TimeoutOr(c.Timeout)
	return c
}

// Validate reports every problem, each naming its setting.
func (c Config) Validate() error {
	c = c.withDefaults()
	errs := httpsend.Required(Medium, "account_sid", c.AccountSID, "auth_token", c.AuthToken, "from", c.From)
	errs = append(errs, httpsend.CheckEndpoint(Medium, c.Endpoint))
	errs = append(errs, httpsend.CheckTimeout(Medium, c.Timeout))
	return errors.Join(errs...)
}

// Options wire a Sender.
type Options = httpsend.Options[Config]

// Sender sends alerts as SMS through Twilio. It implements gateways.Sender: nil once Twilio
// accepted the message (201), gateways.Retryable for 429 (after Retry-After), 408, 5xx and
// network errors, gateways.Permanent for every other answer (an invalid number, bad
// credentials).
type Sender struct {
	httpsend.Base
	cfg Config
}

var _ gateways.ReceiptSender = (*Sender)(nil)

// NewSender validates the configuration and builds a Sender.
func NewSender(o Options) (*Sender, error) {
	if err := o.Config.Validate(); err != nil {
		return nil, err
	}
	cfg := o.Config.withDefaults()
	return &Sender{cfg: cfg, Base: o.Base("sms_twilio_sender", cfg.Timeout)}, nil
}

// messagingService is a Messaging Service SID, sent as MessagingServiceSid instead of From.
var messagingService = regexp.MustCompile(`^MG[0-9a-f]{32}$`)

// Send implements gateways.Sender.
func (s *Sender) Send(ctx context.Context, a schema.Alert) error {
	_, err := s.SendReceipt(ctx, a)
	return err
}

// SendReceipt implements gateways.ReceiptSender: the message id is the Message resource's sid.
func (s *Sender) SendReceipt(ctx context.Context, a schema.Alert) (string, error) {
	to := httpsend.TidyNumber(a.Address)
	if to == "" {
		return "", gateways.Permanent(errors.New("alert has no phone number (address)"))
	}
	form := url.Values{"To": {to}, "Body": {gateways.RenderSMS(s.Tpl, a, s.Loc, s.Log)}}
	if messagingService.MatchString(s.cfg.From) {
		form.Set("MessagingServiceSid", s.cfg.From)
	} else {
		form.Set("From", s.cfg.From)
	}
	endpoint := s.cfg.Endpoint + "/2010-04-01/Accounts/" + url.PathEscape(s.cfg.AccountSID) + "/Messages.json"
	req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return "", gateways.Permanent(fmt.Errorf("building the Twilio request: %w", err))
	}
	req.SetBasicAuth(s.cfg.AccountSID, s.cfg.AuthToken)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := httpsend.Do(ctx, s.Client, s.cfg.Timeout, req, "Twilio")
	if err != nil {
		return "", gateways.Retryable(httpsend.ScrubError(err, s.cfg.AuthToken), 0)
	}
	if httpsend.OK(resp.Status) {
		var m struct {
			SID string `json:"sid"`
		}
		_ = json.Unmarshal(resp.Body, &m) // an answer without a sid is still an accepted message
		s.Log.Debug("message accepted", zap.String("check", a.EventID), zap.Int("status", resp.Status), zap.String("sid", m.SID))
		return m.SID, nil
	}
	return "", httpsend.Classify(resp, s.Now(), fmt.Errorf("the Twilio API answered HTTP %d for %s: %s",
		resp.Status, a.EventID, errorMessage(resp.Body, s.cfg.AuthToken)))
}

// errorMessage is Twilio's explanation of a refusal ({"code", "message", "more_info"}), or the
// start of the body.
func errorMessage(body []byte, secrets ...string) string {
	var e struct {
		Code     int    `json:"code"`
		Message  string `json:"message"`
		MoreInfo string `json:"more_info"`
	}
	if json.Unmarshal(body, &e) != nil || e.Message == "" {
		return httpsend.Excerpt(body, secrets...)
	}
	msg := e.Message
	if e.Code != 0 {
		msg = fmt.Sprintf("error %d: %s", e.Code, msg)
	}
	if e.MoreInfo != "" {
		msg += " (" + e.MoreInfo + ")"
	}
	return httpsend.Excerpt([]byte(msg), secrets...)
}
