// Package testproviders holds the documented request contracts of the HTTP providers the
// gateways deliver to (Twilio, Vonage/Nexmo, MessageNet, Amazon SNS, Slack incoming webhooks,
// flapjack's own signed webhook) and a local HTTP server that enforces one of them. The server
// checks every request as the provider does and answers a broken one as the provider answers
// it, recording it as a violation that tests assert never happens; a valid request gets the
// provider's success answer, or what the test scripted (a 4xx, a 429 with Retry-After, a 5xx,
// a hang). They are peers, not mocks of our code.
package testproviders

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"
)

// Request is a request the server received and found valid.
type Request struct {
	Method string
	Path   string
	Header http.Header
	Query  url.Values
	Form   url.Values // form fields of a form-encoded body
	Body   []byte
	At     time.Time
}

// Reply is how the server answers one valid request.
type Reply struct {
	Status     int    // 0: the provider's success answer
	RetryAfter string // Retry-After header
	Hang       bool   // answer nothing until the client gives up (or the test ends)
	Body       string // a raw body instead of the provider's own (with Status, default 200)
	// ContentType of Body; default application/json.
	ContentType string
	// Location header (a redirect).
	Location string
}

// Contract is one provider's rules and answers.
type Contract struct {
	Name string
	// Check returns every rule of the contract the request breaks (none: the provider would
	// accept it) and the status the provider answers such a request with (400, 401, 403...).
	Check func(r *http.Request, body []byte) (problems []string, status int)
	// Success writes the provider's answer to an accepted request.
	Success func(w http.ResponseWriter, req Request)
	// Failure writes the provider's error answer with status.
	Failure func(w http.ResponseWriter, status int, message string)
}

// Server is a local HTTP server enforcing a Contract.
type Server struct {
	URL string
	t   testing.TB
	c   Contract
	srv *httptest.Server

	mu         sync.Mutex
	script     []Reply
	fallback   Reply
	requests   int // valid requests
	accepted   []Request
	arrivals   []time.Time
	violations []string
	release    chan struct{}
}

// NewServer starts a server on loopback for c; it stops when the test ends.
func NewServer(t testing.TB, c Contract) *Server {
	t.Helper()
	s := &Server{t: t, c: c, release: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	t.Cleanup(func() {
		close(s.release)
		s.srv.Close()
	})
	return s
}

// Close stops the server now (a provider that refuses connections).
func (s *Server) Close() { s.srv.Close() }

// Answer sets the replies to the next valid requests; after them the server answers fallback.
func (s *Server) Answer(fallback Reply, script ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script, s.fallback = script, fallback
}

// Snapshot is what happened so far: valid requests, those answered with success, and the
// contract violations (with the answer each got).
func (s *Server) Snapshot() (requests int, accepted []Request, violations []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests, append([]Request(nil), s.accepted...), append([]string(nil), s.violations...)
}

// Arrivals are the arrival times of the valid requests.
func (s *Server) Arrivals() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.arrivals...)
}

// AssertNoViolations fails the test when any request broke the contract.
func (s *Server) AssertNoViolations(t testing.TB) {
	t.Helper()
	if _, _, v := s.Snapshot(); len(v) > 0 {
		t.Fatalf("%s contract violations: %q", s.c.Name, v)
	}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		s.violation(r, []string{"unreadable body: " + err.Error()})
		s.c.Failure(w, http.StatusBadRequest, "unreadable body")
		return
	}
	if problems, status := s.c.Check(r, body); len(problems) > 0 {
		s.violation(r, problems)
		if status == 0 {
			status = http.StatusBadRequest
		}
		s.c.Failure(w, status, problems[0])
		return
	}
	req := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Query: r.URL.Query(), Body: body, At: time.Now()}
	if form, err := url.ParseQuery(string(body)); err == nil && isForm(r) {
		req.Form = form
	}
	s.mu.Lock()
	s.requests++
	s.arrivals = append(s.arrivals, req.At)
	reply := s.fallback
	if len(s.script) > 0 {
		reply, s.script = s.script[0], s.script[1:]
	}
	if reply.Status == 0 && reply.Body == "" && !reply.Hang {
		s.accepted = append(s.accepted, req)
	}
	s.mu.Unlock()
	if reply.Location != "" {
		w.Header().Set("Location", reply.Location)
	}
	switch {
	case reply.Hang:
		select {
		case <-r.Context().Done():
		case <-s.release:
		}
	case reply.Body != "":
		ct := reply.ContentType
		if ct == "" {
			ct = "application/json"
		}
		w.Header().Set("Content-Type", ct)
		if reply.RetryAfter != "" {
			w.Header().Set("Retry-After", reply.RetryAfter)
		}
		status := reply.Status
		if status == 0 {
			status = http.StatusOK
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, reply.Body)
	case reply.Status == 0:
		s.c.Success(w, req)
	default:
		if reply.RetryAfter != "" {
			w.Header().Set("Retry-After", reply.RetryAfter)
		}
		s.c.Failure(w, reply.Status, "scripted "+strconv.Itoa(reply.Status))
	}
}

func (s *Server) violation(r *http.Request, problems []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range problems {
		s.violations = append(s.violations, r.Method+" "+r.URL.Path+": "+p)
	}
}

func isForm(r *http.Request) bool {
	return mediaType(r.Header.Get("Content-Type")) == "application/x-www-form-urlencoded"
}
