package alertmanager

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/events"
	"github.com/flapjackgo/flapjack/schema"
)

// Sources name the two intakes in the rejected list.
const (
	SourceWebhook = schema.ViaAlertmanager
	SourceAPI     = schema.ViaPrometheus
)

// Paths of the two intakes on http.addr.
const (
	WebhookPath = "/integrations/alertmanager"
	AlertsPath  = "/api/v2/alerts"
)

// Publisher queues encoded events together with other commands (*events.Publisher).
type Publisher interface {
	PublishEncodedWith(ctx context.Context, also []events.Command, payloads ...[]byte) error
}

// Rejection is one refused input kept in the rejected list.
type Rejection struct {
	Input   string
	Reasons []string
}

// Options wire the intake.
type Options struct {
	Mapping   Mapping
	Publisher Publisher
	Keys      schema.Keys
	// Reject keeps refused input in the rejected list under source.
	Reject func(ctx context.Context, source string, rejected []Rejection) error
	Clock  clock.Clock
	Log    *zap.Logger
}

// Webhook serves POST /integrations/alertmanager, given the request's body (the HTTP listener
// reads it, within http.max_body_bytes).
func (o Options) Webhook() func(http.ResponseWriter, *http.Request, []byte) {
	return o.handler(webhookAlerts)
}

// Alerts serves POST /api/v2/alerts, given the request's body.
func (o Options) Alerts() func(http.ResponseWriter, *http.Request, []byte) {
	return o.handler(apiAlerts)
}

// decision is how one alert of a payload is to be read.
type decision struct {
	resolved bool
	ttl      int64 // seconds; 0 = none
}

// reader splits a payload into its alerts and decides each one's state.
type reader struct {
	source string
	split  func(body []byte) ([]json.RawMessage, error)
	decide func(a alert, m Mapping, now time.Time) (decision, error)
}

var webhookAlerts = reader{source: SourceWebhook, split: splitWebhook, decide: decideWebhook}

var apiAlerts = reader{source: SourceAPI, split: splitAPI, decide: decideAPI}

func splitWebhook(body []byte) ([]json.RawMessage, error) {
	var p struct {
		Alerts *[]json.RawMessage `json:"alerts"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, fmt.Errorf("body is not an Alertmanager webhook payload (a JSON object with alerts): %w", err)
	}
	if p.Alerts == nil {
		return nil, errors.New("body is not an Alertmanager webhook payload: it has no alerts array")
	}
	return *p.Alerts, nil
}

func decideWebhook(a alert, _ Mapping, _ time.Time) (decision, error) {
	switch a.Status {
	case "firing":
		return decision{}, nil
	case "resolved":
		return decision{resolved: true}, nil
	}
	return decision{}, fmt.Errorf("alert status %q is neither firing nor resolved", a.Status)
}

func splitAPI(body []byte) ([]json.RawMessage, error) {
	var list []json.RawMessage
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("body is not an Alertmanager API v2 alert list (a JSON array of alerts): %w", err)
	}
	return list, nil
}

// decideAPI reads an alert as Prometheus sends it: resolved once endsAt has passed; while
// firing, its ttl reaches to endsAt, so an alert Prometheus stops resending goes stale.
func decideAPI(a alert, m Mapping, now time.Time) (decision, error) {
	if a.EndsAt == "" {
		return decision{}, nil
	}
	ends, err := time.Parse(time.RFC3339Nano, a.EndsAt)
	if err != nil {
		return decision{}, fmt.Errorf("alert endsAt %q is not an RFC 3339 time", a.EndsAt)
	}
	if ends.IsZero() || ends.Year() <= 1 {
		return decision{}, nil
	}
	if !ends.After(now) {
		return decision{resolved: true}, nil
	}
	if !m.TTLFromEndsAt {
		return decision{}, nil
	}
	ttl := int64(math.Ceil(ends.Sub(now).Seconds()))
	return decision{ttl: min(ttl, schema.MaxTTL)}, nil
}

// result is what the intake did with a payload.
type result struct {
	Accepted int              `json:"accepted"`
	Rejected []events.Problem `json:"rejected,omitempty"`
}

func (o Options) handler(rd reader) func(http.ResponseWriter, *http.Request, []byte) {
	source := rd.source
	return func(w http.ResponseWriter, r *http.Request, body []byte) {
		raws, err := rd.split(body)
		if err != nil {
			o.reject(r.Context(), source, []Rejection{{Input: string(body), Reasons: []string{err.Error()}}})
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": err.Error()})
			return
		}
		res, err := o.intake(r.Context(), source, rd, raws)
		if err != nil {
			o.Log.Error("alerts not queued", zap.String("source", source), zap.Error(err))
			writeJSON(w, http.StatusServiceUnavailable, map[string]any{"error": "could not queue events: Redis unavailable"})
			return
		}
		status := http.StatusOK
		if res.Accepted == 0 && len(res.Rejected) > 0 {
			status = http.StatusBadRequest
		}
		writeJSON(w, status, res)
	}
}

// intake maps every alert, queues the events of those that map with their labels, and keeps
// the others in the rejected list.
func (o Options) intake(ctx context.Context, source string, rd reader, raws []json.RawMessage) (result, error) {
	now := o.Clock.Now()
	var res result
	var rejected []Rejection
	payloads := make([][]byte, 0, len(raws))
	labels := make([]any, 0, 2*len(raws)+1)
	labels = append(labels, o.Keys.AlertmanagerLabels())
	for i, raw := range raws {
		ev, payload, labelJSON, reasons := o.mapOne(rd, raw, now)
		if len(reasons) > 0 {
			rejected = append(rejected, Rejection{Input: string(raw), Reasons: reasons})
			res.Rejected = append(res.Rejected, events.Problem{Index: i, Reasons: reasons})
			continue
		}
		payloads = append(payloads, payload)
		labels = append(labels, ev.ID(), labelJSON)
	}
	if len(payloads) > 0 {
		also := []events.Command{{Name: "HSET", Args: labels}}
		if err := o.Publisher.PublishEncodedWith(ctx, also, payloads...); err != nil {
			return res, err
		}
	}
	res.Accepted = len(payloads)
	if len(rejected) > 0 {
		o.Log.Warn("alerts rejected; kept in the rejected list", zap.String("source", source),
			zap.Int("rejected", len(rejected)), zap.Int("accepted", res.Accepted), zap.Strings("first_reasons", rejected[0].Reasons))
		o.reject(ctx, source, rejected)
	}
	return res, nil
}

// mapOne reads, maps and validates one alert: its event, encoded, and its labels as JSON.
func (o Options) mapOne(rd reader, raw json.RawMessage, now time.Time) (ev schema.Event, payload, labelJSON []byte, reasons []string) {
	var a alert
	if err := json.Unmarshal(raw, &a); err != nil {
		return ev, nil, nil, []string{"alert is not an object of string labels and annotations: " + err.Error()}
	}
	d, err := rd.decide(a, o.Mapping, now)
	if err != nil {
		return ev, nil, nil, []string{err.Error()}
	}
	if ev, reasons = o.Mapping.event(a, d.resolved); len(reasons) > 0 {
		return ev, nil, nil, reasons
	}
	ev.Time, ev.HasTime = now.Unix(), true
	if d.ttl > 0 {
		ev.TTL, ev.HasTTL = d.ttl, true
	}
	if ev, err = schema.ValidateEvent(ev); err != nil {
		return ev, nil, nil, schema.RejectReasons(err)
	}
	if payload = ev.AppendJSON(nil); len(payload) > schema.MaxEventBytes {
		return ev, nil, nil, []string{fmt.Sprintf("the event of this alert would be %d bytes, over %d", len(payload), schema.MaxEventBytes)}
	}
	// Marshal sorts the names: the same labels are always the same text.
	if labelJSON, err = json.Marshal(schema.AlertLabels{Via: rd.source, Labels: a.Labels}); err != nil {
		return ev, nil, nil, []string{"labels: " + err.Error()}
	}
	return ev, payload, labelJSON, nil
}

func (o Options) reject(ctx context.Context, source string, rejected []Rejection) {
	if o.Reject == nil {
		return
	}
	if err := o.Reject(ctx, source, rejected); err != nil {
		o.Log.Warn("rejected alerts not kept in Redis", zap.String("source", source), zap.Error(err))
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
