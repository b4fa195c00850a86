package testpagerduty

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const key = "0123456789abcdef0123456789abcdef"

func request(method, contentType string) *http.Request {
	r := httptest.NewRequest(method, V2Path, nil)
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	return r
}

func TestCheckV2(t *testing.T) {
	t.Parallel()
	trigger := `{"routing_key": "` + key + `", "event_action": "trigger", "dedup_key": "web:http",
		"payload": {"summary": "Problem: web:http is CRITICAL", "source": "web", "severity": "critical",
			"timestamp": "2026-11-23T05:00:00Z"}}`
	cases := []struct {
		name        string
		method      string
		contentType string
		body        string
		problem     string // "": accepted; otherwise a part of the expected problem
	}{
		{"trigger", "POST", "application/json", trigger, ""},
		{"content type with charset", "POST", "application/json; charset=utf-8", trigger, ""},
		{"resolve needs no payload", "POST", "application/json",
			`{"routing_key": "` + key + `", "event_action": "resolve", "dedup_key": "web:http"}`, ""},
		{"GET", "GET", "application/json", trigger, "method must be POST"},
		{"form content type", "POST", "application/x-www-form-urlencoded", trigger, "Content-Type"},
		{"unknown field", "POST", "application/json",
			`{"routing_key": "` + key + `", "event_action": "resolve", "dedup_key": "x", "severity": "critical"}`, "unknown field"},
		{"short routing key", "POST", "application/json",
			`{"routing_key": "abc", "event_action": "resolve", "dedup_key": "x"}`, "routing_key"},
		{"bad action", "POST", "application/json",
			`{"routing_key": "` + key + `", "event_action": "ack", "dedup_key": "x"}`, "event_action"},
		{"no dedup key", "POST", "application/json",
			`{"routing_key": "` + key + `", "event_action": "resolve"}`, "dedup_key"},
		{"long dedup key", "POST", "application/json",
			`{"routing_key": "` + key + `", "event_action": "resolve", "dedup_key": "` + strings.Repeat("k", 256) + `"}`, "255"},
		{"trigger without payload", "POST", "application/json",
			`{"routing_key": "` + key + `", "event_action": "trigger", "dedup_key": "x"}`, "'payload' is missing"},
		{"bad severity", "POST", "application/json", strings.Replace(trigger, `"critical"`, `"high"`, 1), "payload.severity"},
		{"no source", "POST", "application/json", strings.Replace(trigger, `"source": "web"`, `"source": ""`, 1), "payload.source"},
		{"summary too long", "POST", "application/json",
			strings.Replace(trigger, "Problem: web:http is CRITICAL", strings.Repeat("é", 1025), 1), "payload.summary"},
		{"bad timestamp", "POST", "application/json", strings.Replace(trigger, "2026-11-23T05:00:00Z", "yesterday", 1), "timestamp"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, problems := CheckV2(request(tc.method, tc.contentType), []byte(tc.body))
			assertProblem(t, problems, tc.problem)
		})
	}
}

func TestCheckV1(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		body    string
		problem string
	}{
		{"trigger", `{"service_key": "` + key + `", "event_type": "trigger", "description": "Problem"}`, ""},
		{"acknowledge", `{"service_key": "` + key + `", "event_type": "acknowledge", "incident_key": "web:http"}`, ""},
		{"acknowledge without incident key", `{"service_key": "` + key + `", "event_type": "acknowledge"}`, "Incident key"},
		{"trigger without description", `{"service_key": "` + key + `", "event_type": "trigger"}`, "Description"},
		{"short service key", `{"service_key": "abc", "event_type": "trigger", "description": "x"}`, "Service key"},
		{"bad event type", `{"service_key": "` + key + `", "event_type": "page", "incident_key": "x"}`, "Event type"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, problems := CheckV1(request("POST", "application/json"), []byte(tc.body))
			assertProblem(t, problems, tc.problem)
		})
	}
}

func assertProblem(t *testing.T, problems []string, want string) {
	t.Helper()
	if want == "" {
		if len(problems) > 0 {
			t.Fatalf("refused a valid event: %v", problems)
		}
		return
	}
	if len(problems) == 0 {
		t.Fatalf("accepted an event that breaks the contract (want a problem about %q)", want)
	}
	if !strings.Contains(strings.Join(problems, "; "), want) {
		t.Fatalf("problems %v do not mention %q", problems, want)
	}
}

func TestWriteInvalidAnswersLikePagerDuty(t *testing.T) {
	t.Parallel()
	w := httptest.NewRecorder()
	WriteInvalid(w, []string{"'dedup_key' is missing or blank"})
	if w.Code != http.StatusBadRequest || w.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("answer %d %q, want 400 application/json", w.Code, w.Header().Get("Content-Type"))
	}
	want := `{"errors":["'dedup_key' is missing or blank"],"message":"Event object is invalid","status":"invalid event"}`
	if got := strings.TrimSpace(w.Body.String()); got != want {
		t.Fatalf("body %s, want %s", got, want)
	}
}
