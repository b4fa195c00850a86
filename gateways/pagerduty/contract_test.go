package pagerduty

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/internal/testing/testpagerduty"
)

// This file holds local HTTP servers that enforce PagerDuty's documented API contracts (Events
// API v2 and v1, REST API v2 and v1 incidents). They are peers, not mocks of our code: every
// request is validated as PagerDuty would, and a request that breaks the contract is answered
// like PagerDuty answers it (400 with its error JSON, 401...) and recorded as a violation, which
// the tests assert never happens.

// ---- Events API ----

// reply is how the events server answers one valid request.
type reply struct {
	status     int    // 0: 202 (v2) / 200 (v1)
	retryAfter string // Retry-After header; "in:<duration>" sends the HTTP date that far ahead
	hang       bool   // never answer (until the client gives up or the test ends)
	errors     []string
}

// acceptedEvent is an event the server accepted (answered 2xx).
type acceptedEvent struct {
	Version int // 1 or 2
	V2      testpagerduty.V2Event
	V1      testpagerduty.V1Event
	At      time.Time
}

type eventsServer struct {
	t   *testing.T
	srv *httptest.Server

	mu         sync.Mutex
	script     []reply // answers to the next valid requests, in order
	fallback   reply   // answer once the script is used up
	requests   int
	accepted   []acceptedEvent
	violations []string
	release    chan struct{} // closed at cleanup: hanging handlers return
}

func newEventsServer(t *testing.T) *eventsServer {
	t.Helper()
	s := &eventsServer{t: t, release: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc(testpagerduty.V2Path, s.v2)
	mux.HandleFunc(testpagerduty.V1Path, s.v1)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.violation("unexpected %s %s", r.Method, r.URL.Path)
		http.NotFound(w, r)
	})
	s.srv = httptest.NewServer(mux)
	t.Cleanup(func() {
		close(s.release)
		s.srv.Close()
	})
	return s
}

// answer sets the replies to the next valid requests; after them the server answers fallback.
func (s *eventsServer) answer(fallback reply, script ...reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script, s.fallback = script, fallback
}

func (s *eventsServer) violation(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.violations = append(s.violations, fmt.Sprintf(format, args...))
}

func (s *eventsServer) snapshot() (requests int, accepted []acceptedEvent, violations []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests, append([]acceptedEvent(nil), s.accepted...), append([]string(nil), s.violations...)
}

// next takes the reply to a valid request and counts it.
func (s *eventsServer) next() reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests++
	if len(s.script) > 0 {
		r := s.script[0]
		s.script = s.script[1:]
		return r
	}
	return s.fallback
}

// invalid answers as PagerDuty does to an event that breaks the contract, and records it.
func (s *eventsServer) invalid(w http.ResponseWriter, problems []string) {
	s.violation("invalid event: %s", strings.Join(problems, "; "))
	s.mu.Lock()
	s.requests++
	s.mu.Unlock()
	testpagerduty.WriteInvalid(w, problems)
}

func (s *eventsServer) v2(w http.ResponseWriter, r *http.Request) {
	s.serve(w, r, func(body []byte) (acceptedEvent, []string) {
		ev, problems := testpagerduty.CheckV2(r, body)
		return acceptedEvent{Version: 2, V2: ev}, problems
	}, func(a acceptedEvent) { testpagerduty.WriteAccepted(w, *a.V2.DedupKey) })
}

func (s *eventsServer) v1(w http.ResponseWriter, r *http.Request) {
	s.serve(w, r, func(body []byte) (acceptedEvent, []string) {
		ev, problems := testpagerduty.CheckV1(r, body)
		return acceptedEvent{Version: 1, V1: ev}, problems
	}, func(a acceptedEvent) {
		testpagerduty.WriteJSON(w, http.StatusOK, map[string]any{"status": "success", "message": "Event processed",
			"incident_key": a.V1.IncidentKey})
	})
}

// serve checks a request against the contract, then answers it with the next scripted reply,
// or accepts it: records it and answers as PagerDuty does (accept).
func (s *eventsServer) serve(w http.ResponseWriter, r *http.Request, check func([]byte) (acceptedEvent, []string),
	accept func(acceptedEvent)) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.invalid(w, []string{"body could not be read: " + err.Error()})
		return
	}
	ev, problems := check(body)
	if len(problems) > 0 {
		s.invalid(w, problems)
		return
	}
	if s.respondScripted(w, r, s.next()) {
		return
	}
	ev.At = time.Now()
	s.mu.Lock()
	s.accepted = append(s.accepted, ev)
	s.mu.Unlock()
	accept(ev)
}

// respondScripted answers a non-accepting reply and reports whether it did.
func (s *eventsServer) respondScripted(w http.ResponseWriter, r *http.Request, rep reply) bool {
	switch {
	case rep.hang:
		select {
		case <-r.Context().Done():
		case <-s.release:
		}
		return true
	case rep.status == 0 || rep.status/100 == 2:
		return false
	}
	if in, ok := strings.CutPrefix(rep.retryAfter, "in:"); ok {
		d, _ := time.ParseDuration(in)
		w.Header().Set("Retry-After", time.Now().Add(d).UTC().Format(http.TimeFormat))
	} else if rep.retryAfter != "" {
		w.Header().Set("Retry-After", rep.retryAfter)
	}
	switch {
	case rep.status == http.StatusBadRequest:
		testpagerduty.WriteJSON(w, rep.status, map[string]any{"status": "invalid event", "message": "Event object is invalid", "errors": rep.errors})
	case rep.status == http.StatusTooManyRequests:
		testpagerduty.WriteJSON(w, rep.status, map[string]any{"status": "throttle event", "message": "Requests for this service are arriving too quickly. Please retry later."})
	case rep.status >= 500:
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(rep.status)
		fmt.Fprint(w, "<html><body>Internal Server Error</body></html>")
	default:
		testpagerduty.WriteJSON(w, rep.status, map[string]any{"status": "error", "message": http.StatusText(rep.status)})
	}
	return true
}

// ---- REST API (incidents) ----

// incident is one incident known to the REST server.
type incident struct {
	key            string
	status         string // triggered, acknowledged, resolved
	created        time.Time
	acknowledgers  []string // v2 acknowledgements, oldest first
	lastChangeName string   // v1 last_status_change_by.name
}

// restRequest records a REST query.
type restRequest struct {
	API   int // 1 or 2
	Auth  string
	Query map[string][]string
	Path  string
}

type restServer struct {
	t   *testing.T
	srv *httptest.Server
	now func() time.Time // the tests' clock, to check since/until

	token      string            // the only valid v2 token
	basic      map[string]string // subdomain -> "user:password" for v1
	pageSize   int               // answers at most this many incidents per page (0: as asked)
	trustless  bool              // ignore the status filter (the client must filter itself)
	forceCode  int               // answer every request with this status
	entered    chan struct{}     // if set, receives once per request before it is answered
	gate       chan struct{}     // if set, requests wait until it is closed
	mu         sync.Mutex
	incidents  []incident
	requests   []restRequest
	violations []string
}

func newRESTServer(t *testing.T, now func() time.Time) *restServer {
	t.Helper()
	s := &restServer{t: t, now: now, basic: map[string]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /incidents", s.v2)
	mux.HandleFunc("GET /v1/{subdomain}/api/v1/incidents", s.v1)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.violation("unexpected %s %s", r.Method, r.URL.Path)
		http.NotFound(w, r)
	})
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.srv.Close)
	return s
}

// v1Template is the Config.V1APIURLTemplate pointing at this server.
func (s *restServer) v1Template() string { return s.srv.URL + "/v1/%s/api/v1" }

func (s *restServer) add(inc incident) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.incidents = append(s.incidents, inc)
}

func (s *restServer) violation(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.violations = append(s.violations, fmt.Sprintf(format, args...))
}

func (s *restServer) snapshot() ([]restRequest, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]restRequest(nil), s.requests...), append([]string(nil), s.violations...)
}

func (s *restServer) record(api int, auth string, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, restRequest{API: api, Auth: auth, Query: r.URL.Query(), Path: r.URL.Path})
	s.mu.Unlock()
	if s.entered != nil {
		s.entered <- struct{}{}
	}
	if s.gate != nil {
		<-s.gate
	}
}

// window checks since/until: ISO 8601, since = now - 7 days, until after now.
func (s *restServer) window(q map[string][]string) (since, until time.Time, problems []string) {
	var err error
	if since, err = time.Parse(time.RFC3339, first(q, "since")); err != nil {
		problems = append(problems, fmt.Sprintf("since is not ISO 8601: %q", first(q, "since")))
	}
	if until, err = time.Parse(time.RFC3339, first(q, "until")); err != nil {
		problems = append(problems, fmt.Sprintf("until is not ISO 8601: %q", first(q, "until")))
	}
	if len(problems) == 0 {
		now := s.now()
		if !since.Equal(now.Add(-DefaultSinceWindow).Truncate(time.Second)) {
			problems = append(problems, fmt.Sprintf("since %s is not 7 days before the clock's %s", since, now))
		}
		if !until.After(now) || until.Sub(since) > 180*24*time.Hour {
			problems = append(problems, fmt.Sprintf("until %s must be after now and within 6 months of since", until))
		}
	}
	return since, until, problems
}

func first(q map[string][]string, k string) string {
	if v := q[k]; len(v) > 0 {
		return v[0]
	}
	return ""
}

func (s *restServer) matching(key string, since, until time.Time) []incident {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []incident
	for _, inc := range s.incidents {
		if inc.key != key || inc.created.Before(since) || inc.created.After(until) {
			continue
		}
		if !s.trustless && inc.status != "acknowledged" {
			continue
		}
		out = append(out, inc)
	}
	return out
}

func (s *restServer) v2(w http.ResponseWriter, r *http.Request) {
	auth := r.Header.Get("Authorization")
	s.record(2, auth, r)
	if s.forceCode != 0 {
		testpagerduty.WriteJSON(w, s.forceCode, map[string]any{"error": map[string]any{"message": http.StatusText(s.forceCode), "code": 2001}})
		return
	}
	if auth != "Token token="+s.token || s.token == "" {
		testpagerduty.WriteJSON(w, http.StatusUnauthorized, map[string]any{"error": map[string]any{"message": "Unauthorized", "code": 2006}})
		return
	}
	q := r.URL.Query()
	var problems []string
	if got := r.Header.Get("Accept"); got != "application/vnd.pagerduty+json;version=2" {
		problems = append(problems, fmt.Sprintf("Accept must select REST v2, got %q", got))
	}
	if st := q["statuses[]"]; len(st) != 1 || st[0] != "acknowledged" {
		problems = append(problems, fmt.Sprintf("statuses[] must be [acknowledged], got %v", st))
	}
	key := first(q, "incident_key")
	if key == "" {
		problems = append(problems, "incident_key is missing")
	}
	since, until, wp := s.window(q)
	problems = append(problems, wp...)
	limit, err1 := strconv.Atoi(first(q, "limit"))
	offset, err2 := strconv.Atoi(first(q, "offset"))
	if err1 != nil || err2 != nil || limit < 1 || limit > 100 || offset < 0 {
		problems = append(problems, fmt.Sprintf("limit/offset invalid: %q/%q", first(q, "limit"), first(q, "offset")))
	}
	for k := range q {
		switch k {
		case "statuses[]", "incident_key", "since", "until", "limit", "offset":
		default:
			problems = append(problems, "unexpected parameter "+k)
		}
	}
	if len(problems) > 0 {
		s.violation("REST v2: %s", strings.Join(problems, "; "))
		testpagerduty.WriteJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"message": "Invalid Input Provided", "code": 2001, "errors": problems}})
		return
	}
	if s.pageSize > 0 && limit > s.pageSize {
		limit = s.pageSize
	}
	all := s.matching(key, since, until)
	end := min(offset+limit, len(all))
	var page []map[string]any
	for i := min(offset, len(all)); i < end; i++ {
		inc := all[i]
		var acks []map[string]any
		for j, name := range inc.acknowledgers {
			acks = append(acks, map[string]any{
				"at":           inc.created.Add(time.Duration(j+1) * time.Minute).UTC().Format(time.RFC3339),
				"acknowledger": map[string]any{"id": fmt.Sprintf("PUSER%d", j), "type": "user_reference", "summary": name},
			})
		}
		page = append(page, map[string]any{
			"id": fmt.Sprintf("PINC%d", i), "type": "incident", "incident_number": i + 1,
			"incident_key": inc.key, "status": inc.status, "created_at": inc.created.UTC().Format(time.RFC3339),
			"acknowledgements": acks,
		})
	}
	testpagerduty.WriteJSON(w, http.StatusOK, map[string]any{"incidents": page, "limit": limit, "offset": offset,
		"more": end < len(all), "total": nil})
}

func (s *restServer) v1(w http.ResponseWriter, r *http.Request) {
	user, pass, ok := r.BasicAuth()
	s.record(1, r.Header.Get("Authorization"), r)
	if s.forceCode != 0 {
		testpagerduty.WriteJSON(w, s.forceCode, map[string]any{"error": map[string]any{"message": http.StatusText(s.forceCode), "code": 2001}})
		return
	}
	want, known := s.basic[r.PathValue("subdomain")]
	if !ok || !known || user+":"+pass != want {
		testpagerduty.WriteJSON(w, http.StatusUnauthorized, map[string]any{"error": map[string]any{"message": "Unauthorized", "code": 2006}})
		return
	}
	q := r.URL.Query()
	var problems []string
	if got := first(q, "fields"); got != "incident_number,status,last_status_change_by" {
		problems = append(problems, "fields must be incident_number,status,last_status_change_by, got "+got)
	}
	if first(q, "status") != "acknowledged" {
		problems = append(problems, "status must be acknowledged")
	}
	key := first(q, "incident_key")
	if key == "" {
		problems = append(problems, "incident_key is missing")
	}
	since, until, wp := s.window(q)
	problems = append(problems, wp...)
	if len(problems) > 0 {
		s.violation("REST v1: %s", strings.Join(problems, "; "))
		testpagerduty.WriteJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"message": "Invalid Input Provided", "code": 2001, "errors": problems}})
		return
	}
	all := s.matching(key, since, until)
	var incs []map[string]any
	for i, inc := range all {
		m := map[string]any{"incident_number": i + 1, "status": inc.status}
		if inc.lastChangeName != "" {
			m["last_status_change_by"] = map[string]any{"id": "PUSER", "name": inc.lastChangeName, "email": "ops@example.com"}
		}
		incs = append(incs, m)
	}
	testpagerduty.WriteJSON(w, http.StatusOK, map[string]any{"incidents": incs, "limit": 100, "offset": 0, "total": len(incs)})
}

// ---- shared test data ----

const (
	// routingKey is the (fake) 32-character integration key the tests deliver to.
	routingKey = "R0UT1NGk3y5ecret0123456789abcdef"
	// apiToken and password are the REST credentials of the tests' contacts.
	apiToken = "T0KENs3cret-abcdefghijklmnop"
	password = "pa55w0rd-s3cret-xyz"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func TestRoutingKeyIs32Characters(t *testing.T) {
	t.Parallel()
	if len(routingKey) != 32 {
		t.Fatalf("routingKey has %d characters", len(routingKey))
	}
}
