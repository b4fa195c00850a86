package pagerduty

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/gateways/internal/httpsend"
	"github.com/flapjackgo/flapjack/schema"
)

// Event actions of the Events API v2 (event_type in v1).
const (
	ActionTrigger     = "trigger"
	ActionAcknowledge = "acknowledge"
	ActionResolve     = "resolve"
)

// Client is what this gateway calls itself in events.
const Client = "flapjack"

// SenderOptions wire a Sender.
type SenderOptions struct {
	Config Config
	// HTTPClient sends the requests; nil: a client on a clone of the default transport (which
	// honours HTTPS_PROXY / NO_PROXY). Config.Timeout applies either way.
	HTTPClient *http.Client
	Log        *zap.Logger
	// Now reads the wall clock to interpret a Retry-After HTTP date; default time.Now.
	Now func() time.Time
}

// Sender delivers alerts to PagerDuty's Events API. It implements gateways.Sender: nil once
// PagerDuty accepted the event, gateways.Permanent for a rejected one (HTTP 400 and other
// 4xx), gateways.Retryable for 429 (with Retry-After), 5xx, timeouts and network errors.
type Sender struct {
	cfg    Config
	client *http.Client
	log    *zap.Logger
	now    func() time.Time
}

var _ gateways.ReceiptSender = (*Sender)(nil)

// NewSender validates the configuration and builds a Sender.
func NewSender(o SenderOptions) (*Sender, error) {
	if err := o.Config.Validate(); err != nil {
		return nil, err
	}
	s := &Sender{cfg: o.Config.withDefaults(), client: o.HTTPClient, log: o.Log, now: o.Now}
	if s.client == nil {
		s.client = newHTTPClient()
	}
	if s.log == nil {
		s.log = zap.NewNop()
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.log = s.log.With(zap.String("component", "pagerduty_sender"))
	return s, nil
}

// v2Event is an Events API v2 request body.
type v2Event struct {
	RoutingKey  string     `json:"routing_key"`
	EventAction string     `json:"event_action"`
	DedupKey    string     `json:"dedup_key"`
	Client      string     `json:"client,omitempty"`
	Payload     *v2Payload `json:"payload,omitempty"`
}

type v2Payload struct {
	Summary       string         `json:"summary"`
	Source        string         `json:"source"`
	Severity      string         `json:"severity"`
	Timestamp     string         `json:"timestamp,omitempty"`
	CustomDetails map[string]any `json:"custom_details,omitempty"`
}

// v1Event is a (generic, 2010-04-15) Events API v1 request body.
type v1Event struct {
	ServiceKey  string            `json:"service_key"`
	IncidentKey string            `json:"incident_key"`
	EventType   string            `json:"event_type"`
	Description string            `json:"description"`
	Client      string            `json:"client,omitempty"`
	Details     map[string]string `json:"details"`
}

// Action is the event action for an alert's notification type: trigger for problem and test,
// acknowledge for acknowledgement, resolve for recovery ("" for anything else).
func Action(a schema.Alert) string {
	switch a.NotificationType {
	case schema.NotificationProblem, schema.NotificationTest:
		return ActionTrigger
	case schema.NotificationAcknowledgement:
		return ActionAcknowledge
	case schema.NotificationRecovery:
		return ActionResolve
	}
	return ""
}

// Send implements gateways.Sender.
func (s *Sender) Send(ctx context.Context, a schema.Alert) error {
	_, err := s.SendReceipt(ctx, a)
	return err
}

// SendReceipt implements gateways.ReceiptSender: the message id is the dedup_key (v1:
// incident_key) PagerDuty answers with, the key of the incident the event went to.
func (s *Sender) SendReceipt(ctx context.Context, a schema.Alert) (string, error) {
	action := Action(a)
	if action == "" {
		return "", gateways.Permanent(fmt.Errorf("notification type %q has no PagerDuty event action (problem, test, acknowledgement or recovery)", a.NotificationType))
	}
	if a.Address == "" {
		return "", gateways.Permanent(errors.New("alert has no PagerDuty routing key (address)"))
	}
	if s.cfg.UseV1Events {
		return s.sendV1(ctx, a, action)
	}
	return s.sendV2(ctx, a, action)
}

func (s *Sender) sendV2(ctx context.Context, a schema.Alert, action string) (string, error) {
	ev := v2Event{RoutingKey: a.Address, EventAction: action, DedupKey: DedupKey(a.EventID)}
	if action == ActionTrigger {
		ev.Client = Client
		ev.Payload = payload(a)
	}
	return s.post(ctx, a, s.cfg.EventsBaseURL+"/v2/enqueue", ev, false)
}

func payload(a schema.Alert) *v2Payload {
	entity, check := a.EntityCheck()
	if entity == "" {
		entity, check = a.EventID, ""
	}
	p := &v2Payload{Summary: Summary(a), Source: entity, Severity: Severity(a)}
	if a.Time != nil && *a.Time > 0 {
		p.Timestamp = time.Unix(*a.Time, 0).UTC().Format(time.RFC3339)
	}
	d := map[string]any{"check": check, "state": a.State, "event_count": a.EventCount}
	for k, v := range map[string]*string{"summary": a.Summary, "details": a.Details, "perfdata": a.Perfdata} {
		if v != nil && *v != "" {
			d[k] = *v
		}
	}
	if a.StateDuration != nil {
		d["state_duration"] = *a.StateDuration
	}
	p.CustomDetails = d
	return p
}

func (s *Sender) sendV1(ctx context.Context, a schema.Alert, action string) (string, error) {
	entity, check := a.EntityCheck()
	ev := v1Event{ServiceKey: a.Address, IncidentKey: DedupKey(a.EventID), EventType: action, Description: Summary(a),
		Client: Client, Details: map[string]string{"HOSTNAME": entity, "SERVICE": check}}
	return s.post(ctx, a, s.cfg.EventsBaseURL+"/generic/2010-04-15/create_event.json", ev, true)
}

// post sends one event and classifies the outcome; accepted, it returns the incident key
// PagerDuty answered with.
func (s *Sender) post(ctx context.Context, a schema.Alert, url string, body any, v1 bool) (string, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return "", gateways.Permanent(fmt.Errorf("encode PagerDuty event: %w", err))
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(raw))
	if err != nil {
		return "", gateways.Permanent(fmt.Errorf("PagerDuty request: %w", err))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := do(ctx, s.client, s.cfg.Timeout, req)
	if err != nil {
		return "", gateways.Retryable(httpsend.ScrubError(err, a.Address), 0)
	}
	if err := s.classify(resp, a, v1); err != nil {
		return "", err
	}
	return acceptedKey(resp.Body), nil
}

// acceptedKey is the incident key of an accepted event's answer: v2's dedup_key, v1's
// incident_key ("" when the answer has neither: the event is accepted all the same).
func acceptedKey(body []byte) string {
	var m struct {
		DedupKey    string `json:"dedup_key"`
		IncidentKey string `json:"incident_key"`
	}
	_ = json.Unmarshal(body, &m)
	if m.DedupKey != "" {
		return m.DedupKey
	}
	return m.IncidentKey
}

// classify turns a PagerDuty answer into the gateways' contract.
func (s *Sender) classify(r httpsend.Response, a schema.Alert, v1 bool) error {
	key := httpsend.Redact(a.Address)
	describe := func() error {
		return fmt.Errorf("PagerDuty answered HTTP %d for %s (routing key %s): %s",
			r.Status, a.EventID, key, errorMessage(r.Body, a.Address))
	}
	switch {
	case r.Status >= 200 && r.Status < 300: // 202 (v2), 200 (v1)
		s.log.Debug("event accepted", zap.String("check", a.EventID), zap.String("action", Action(a)),
			zap.Int("status", r.Status))
		return nil
	case r.Status == http.StatusTooManyRequests || (v1 && r.Status == http.StatusForbidden):
		// v1 signals throttling with 403.
		return gateways.Retryable(describe(), httpsend.RetryAfter(r.Header, s.now()))
	case r.Status == http.StatusRequestTimeout:
		return gateways.Retryable(describe(), 0)
	case r.Status >= 500:
		after := time.Duration(0)
		if r.Header.Get("Retry-After") != "" {
			after = httpsend.RetryAfter(r.Header, s.now())
		}
		return gateways.Retryable(describe(), after)
	default:
		// 400: the event is invalid; 401/403/404/413...: retrying the same request cannot help.
		return gateways.Permanent(describe())
	}
}

// MaxDedupKeyLength is PagerDuty's limit on a dedup_key (v1: incident_key), counted here in
// bytes, which is never more than the characters PagerDuty counts.
const MaxDedupKeyLength = 255

// dedupHashLength is how many hex digits of the check id's SHA-256 end a derived key (128 bits).
const dedupHashLength = 32

// DedupKey is the dedup_key (v1 incident_key) of a check's incident, which is also the
// incident_key the acknowledgement poller asks PagerDuty about: the check's ENTITY:CHECK, as in
// Flapjack, when it fits in MaxDedupKeyLength; otherwise a stable shorter key: as much of it as
// fits, cut on a character boundary, then "~" and the first 32 hex digits of its SHA-256.
func DedupKey(checkID string) string {
	if len(checkID) <= MaxDedupKeyLength {
		return checkID
	}
	sum := sha256.Sum256([]byte(checkID))
	cut := MaxDedupKeyLength - 1 - dedupHashLength
	for cut > 0 && !utf8.RuneStart(checkID[cut]) {
		cut--
	}
	return checkID[:cut] + "~" + hex.EncodeToString(sum[:])[:dedupHashLength]
}
