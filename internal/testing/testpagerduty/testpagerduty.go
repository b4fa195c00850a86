// Package testpagerduty holds PagerDuty's documented Events API contract (v2 and the v1
// generic integration) for the local HTTP servers that tests run in PagerDuty's place. It
// checks a request as PagerDuty does and answers a broken one as PagerDuty answers it, so that
// every such server enforces the same rules: the gateway's contract tests and the reliability
// suite's crash tests must not disagree about what PagerDuty accepts.
package testpagerduty

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"time"
	"unicode/utf8"
)

// Paths of the Events API endpoints, under the configured base URL.
const (
	V2Path = "/v2/enqueue"
	V1Path = "/generic/2010-04-15/create_event.json"
)

// V2Event is an Events API v2 event. Decoding refuses fields PagerDuty does not document.
type V2Event struct {
	RoutingKey  string          `json:"routing_key"`
	EventAction string          `json:"event_action"`
	DedupKey    *string         `json:"dedup_key"`
	Client      string          `json:"client"`
	ClientURL   string          `json:"client_url"`
	Payload     *V2Payload      `json:"payload"`
	Images      json.RawMessage `json:"images"`
	Links       json.RawMessage `json:"links"`
}

// V2Payload is the payload of a v2 trigger.
type V2Payload struct {
	Summary       string         `json:"summary"`
	Source        string         `json:"source"`
	Severity      string         `json:"severity"`
	Timestamp     string         `json:"timestamp"`
	Component     string         `json:"component"`
	Group         string         `json:"group"`
	Class         string         `json:"class"`
	CustomDetails map[string]any `json:"custom_details"`
}

// V1Event is a v1 generic integration event.
type V1Event struct {
	ServiceKey  string            `json:"service_key"`
	EventType   string            `json:"event_type"`
	IncidentKey string            `json:"incident_key"`
	Description string            `json:"description"`
	Details     map[string]string `json:"details"`
	Client      string            `json:"client"`
	ClientURL   string            `json:"client_url"`
}

var (
	actions    = map[string]bool{"trigger": true, "acknowledge": true, "resolve": true}
	severities = map[string]bool{"critical": true, "error": true, "warning": true, "info": true}
)

// CheckV2 reads an Events API v2 request (its body already read) and returns the event and
// every rule of the contract it breaks (none: PagerDuty would accept it).
func CheckV2(r *http.Request, body []byte) (V2Event, []string) {
	var ev V2Event
	problems := decode(r, body, &ev)
	if len(problems) > 0 {
		return ev, problems
	}
	if len(ev.RoutingKey) != 32 {
		problems = append(problems, "Length of 'routing_key' is incorrect (should be 32 characters)")
	}
	if !actions[ev.EventAction] {
		problems = append(problems, fmt.Sprintf("'event_action' is invalid (must be one of the following: 'trigger', 'acknowledge' or 'resolve'), got %q", ev.EventAction))
	}
	if ev.DedupKey == nil || *ev.DedupKey == "" {
		problems = append(problems, "'dedup_key' is missing or blank")
	} else if len(*ev.DedupKey) > 255 {
		problems = append(problems, "'dedup_key' is longer than 255 characters")
	}
	if ev.EventAction == "trigger" {
		problems = append(problems, checkPayload(ev.Payload)...)
	}
	return ev, problems
}

func checkPayload(p *V2Payload) []string {
	if p == nil {
		return []string{"'payload' is missing"}
	}
	var problems []string
	if n := utf8.RuneCountInString(p.Summary); n == 0 || n > 1024 {
		problems = append(problems, fmt.Sprintf("'payload.summary' must be 1 to 1024 characters, got %d", n))
	}
	if p.Source == "" {
		problems = append(problems, "'payload.source' is missing or blank")
	}
	if !severities[p.Severity] {
		problems = append(problems, fmt.Sprintf("'payload.severity' is invalid (must be one of critical, error, warning or info), got %q", p.Severity))
	}
	if p.Timestamp != "" {
		if _, err := time.Parse(time.RFC3339, p.Timestamp); err != nil {
			problems = append(problems, fmt.Sprintf("'payload.timestamp' is not ISO 8601: %q", p.Timestamp))
		}
	}
	return problems
}

// CheckV1 reads a v1 generic integration request (its body already read) and returns the event
// and every rule of the contract it breaks.
func CheckV1(r *http.Request, body []byte) (V1Event, []string) {
	var ev V1Event
	problems := decode(r, body, &ev)
	if len(problems) > 0 {
		return ev, problems
	}
	if len(ev.ServiceKey) != 32 {
		problems = append(problems, "Service key is the wrong length (should be 32 characters)")
	}
	if !actions[ev.EventType] {
		problems = append(problems, fmt.Sprintf("Event type is invalid: %q", ev.EventType))
	}
	if ev.EventType != "trigger" && ev.IncidentKey == "" {
		problems = append(problems, "Incident key is required for acknowledge and resolve")
	}
	if ev.EventType == "trigger" {
		if n := utf8.RuneCountInString(ev.Description); n == 0 || n > 1024 {
			problems = append(problems, "Description must be 1 to 1024 characters")
		}
	}
	return ev, problems
}

// decode checks method and content type and decodes the body strictly.
func decode(r *http.Request, body []byte, out any) []string {
	var problems []string
	if r.Method != http.MethodPost {
		problems = append(problems, "method must be POST, got "+r.Method)
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		problems = append(problems, fmt.Sprintf("Content-Type must be application/json, got %q", r.Header.Get("Content-Type")))
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		problems = append(problems, "body is not a valid event object: "+err.Error())
	}
	return problems
}

// WriteInvalid answers a request that breaks the contract as PagerDuty does.
func WriteInvalid(w http.ResponseWriter, problems []string) {
	WriteJSON(w, http.StatusBadRequest, map[string]any{
		"status": "invalid event", "message": "Event object is invalid", "errors": problems})
}

// WriteAccepted answers a valid v2 event as PagerDuty does.
func WriteAccepted(w http.ResponseWriter, dedupKey string) {
	WriteJSON(w, http.StatusAccepted, map[string]any{"status": "success", "message": "Event processed", "dedup_key": dedupKey})
}

// WriteJSON writes v as a JSON answer with status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
