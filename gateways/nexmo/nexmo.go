// Package nexmo is the sms_nexmo medium (docs/flapjack-1x.md 4.4): each alert of
// `sms_nexmo_notifications` becomes one SMS sent through the Vonage (formerly Nexmo) SMS API,
// POST /sms/json with api_key, api_secret, from, to and text, behind the shared queue runner
// of package gateways. Vonage answers HTTP 200 for refused messages too, with a status per
// message: "0" is delivered, 1 (throttled), 5 (internal error) and 10 (too many binds) are
// retried, every other status is dead-lettered with Vonage's error text. The API secret never
// appears in logs or errors.
package nexmo

import (
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
	"github.com/flapjackgo/flapjack/schema"
)

// Medium is the medium name (alerts' "media", the list sms_nexmo_notifications).
const Medium = "sms_nexmo"

// DefaultEndpoint is the SMS API's host.
const DefaultEndpoint = "https://rest.nexmo.com"

// Config is the gateways.sms_nexmo section.
type Config struct {
	APIKey   string        // api_key
	Secret   string        // secret: the API secret
	From     string        // from: a number or an alphanumeric sender id (up to 11 characters)
	Endpoint string        // endpoint: API base URL, default DefaultEndpoint
	Timeout  time.Duration // timeout of one request, default httpsend.DefaultTimeout
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
	errs := httpsend.Required(Medium, "api_key", c.APIKey, "secret", c.Secret, "from", c.From)
	errs = append(errs, httpsend.CheckEndpoint(Medium, c.Endpoint))
	errs = append(errs, httpsend.CheckTimeout(Medium, c.Timeout))
	return errors.Join(errs...)
}

// Options wire a Sender.
type Options = httpsend.Options[Config]

// Sender sends alerts as SMS through the Vonage SMS API; it implements gateways.Sender.
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
	return &Sender{cfg: cfg, Base: o.Base("sms_nexmo_sender", cfg.Timeout)}, nil
}

// PhoneNumber is an address as the SMS API wants it: the international number without "+"
// or "00", and without the spaces, dashes, dots and brackets people write ("+44 7700 900000"
// → "447700900000").
func PhoneNumber(address string) string {
	n := strings.TrimPrefix(httpsend.TidyNumber(address), "+")
	return strings.TrimPrefix(n, "00")
}

// Send implements gateways.Sender.
func (s *Sender) Send(ctx context.Context, a schema.Alert) error {
	_, err := s.SendReceipt(ctx, a)
	return err
}

// SendReceipt implements gateways.ReceiptSender: the message id is Vonage's message-id of the
// first part (a long text is sent in several).
func (s *Sender) SendReceipt(ctx context.Context, a schema.Alert) (string, error) {
	to := PhoneNumber(a.Address)
	if to == "" {
		return "", gateways.Permanent(errors.New("alert has no phone number (address)"))
	}
	text := gateways.RenderSMS(s.Tpl, a, s.Loc, s.Log)
	form := url.Values{"api_key": {s.cfg.APIKey}, "api_secret": {s.cfg.Secret}, "from": {s.cfg.From}, "to": {to}, "text": {text}}
	if !GSM(text) {
		form.Set("type", "unicode") // else Vonage sends the characters outside GSM 03.38 garbled
	}
	req, err := http.NewRequest(http.MethodPost, s.cfg.Endpoint+"/sms/json", strings.NewReader(form.Encode()))
	if err != nil {
		return "", gateways.Permanent(fmt.Errorf("building the Vonage request: %w", err))
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := httpsend.Do(ctx, s.Client, s.cfg.Timeout, req, "Vonage SMS API")
	if err != nil {
		return "", gateways.Retryable(httpsend.ScrubError(err, s.cfg.Secret), 0)
	}
	if !httpsend.OK(resp.Status) {
		return "", httpsend.Classify(resp, s.Now(), fmt.Errorf("the Vonage SMS API answered HTTP %d for %s: %s",
			resp.Status, a.EventID, httpsend.Excerpt(resp.Body, s.cfg.Secret)))
	}
	return s.outcome(resp.Body, a)
}

// answer is the SMS API's answer: one entry per message part sent.
type answer struct {
	Messages []struct {
		Status    string `json:"status"`
		ErrorText string `json:"error-text"`
		MessageID string `json:"message-id"`
	} `json:"messages"`
}

// Statuses Vonage documents as temporary: throttled, internal error, too many binds.
var retryable = map[string]bool{"1": true, "5": true, "10": true}

// statusNames are Vonage's names of the documented statuses.
var statusNames = map[string]string{
	"1": "Throttled", "2": "Missing Parameters", "3": "Invalid Parameters", "4": "Invalid Credentials",
	"5": "Internal Error", "6": "Invalid Message", "7": "Number Barred", "8": "Partner Account Barred",
	"9": "Partner Quota Violation", "10": "Too Many Existing Binds", "11": "Account Not Enabled For HTTP",
	"12": "Message Too Long", "14": "Invalid Signature", "15": "Invalid Sender Address", "22": "Invalid Network Code",
	"23": "Invalid Callback Url", "29": "Non-Whitelisted Destination", "32": "Signature And API Secret Disallowed",
	"33": "Number De-activated",
}

// outcome reads the per-message statuses of a 200 answer, and the first part's message-id.
func (s *Sender) outcome(body []byte, a schema.Alert) (string, error) {
	var ans answer
	if err := json.Unmarshal(body, &ans); err != nil || len(ans.Messages) == 0 {
		// Sent or not, we cannot tell: retrying risks a duplicate SMS, not a lost alert.
		return "", gateways.Retryable(fmt.Errorf("the Vonage SMS API answered %s with no message status: %s",
			a.EventID, httpsend.Excerpt(body, s.cfg.Secret)), 0)
	}
	for _, m := range ans.Messages {
		if m.Status == "0" {
			continue
		}
		name := statusNames[m.Status]
		if name == "" {
			name = "undocumented status"
		}
		err := fmt.Errorf("the Vonage SMS API refused the message for %s: status %s (%s): %s",
			a.EventID, m.Status, name, httpsend.Excerpt([]byte(m.ErrorText), s.cfg.Secret))
		if retryable[m.Status] {
			return "", gateways.Retryable(err, 0)
		}
		return "", gateways.Permanent(err)
	}
	s.Log.Debug("message accepted", zap.String("check", a.EventID), zap.Int("parts", len(ans.Messages)))
	return ans.Messages[0].MessageID, nil
}

// gsm7 is the GSM 03.38 alphabet with its extension table.
const gsm7 = "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà" +
	"\f^{}\\[~]|€"

// GSM reports whether text keeps to the GSM 03.38 alphabet (SMS type "text"); otherwise it
// must be sent as "unicode".
func GSM(text string) bool {
	for _, r := range text {
		if !strings.ContainsRune(gsm7, r) {
			return false
		}
	}
	return true
}
