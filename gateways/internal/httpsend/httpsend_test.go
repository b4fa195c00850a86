package httpsend

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/gateways"
)

func TestClassify(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)
	h := func(kv ...string) http.Header {
		out := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			out.Set(kv[i], kv[i+1])
		}
		return out
	}
	cases := []struct {
		name      string
		r         Response
		permanent bool
		after     time.Duration
	}{
		{"400", Response{Status: 400}, true, 0},
		{"401", Response{Status: 401}, true, 0},
		{"404", Response{Status: 404}, true, 0},
		{"301", Response{Status: 301}, true, 0},
		{"408", Response{Status: 408}, false, 0},
		{"429 seconds", Response{Status: 429, Header: h("Retry-After", "30")}, false, 30 * time.Second},
		{"429 date", Response{Status: 429, Header: h("Retry-After", now.Add(time.Minute).Format(http.TimeFormat))}, false, time.Minute},
		{"429 none", Response{Status: 429, Header: h()}, false, DefaultRetryAfter},
		{"429 garbage", Response{Status: 429, Header: h("Retry-After", "soon")}, false, DefaultRetryAfter},
		{"429 huge", Response{Status: 429, Header: h("Retry-After", "999999")}, false, MaxRetryAfter},
		{"500", Response{Status: 500, Header: h()}, false, 0},
		{"503 with Retry-After", Response{Status: 503, Header: h("Retry-After", "2")}, false, 2 * time.Second},
	}
	for _, tc := range cases {
		err := Classify(tc.r, now, errors.New("x"))
		var de *gateways.DeliveryError
		if !errors.As(err, &de) || de.Permanent != tc.permanent || de.RetryAfter != tc.after {
			t.Errorf("%s: %+v, want permanent %v after %s", tc.name, de, tc.permanent, tc.after)
		}
	}
}

func TestDoNamesNoURL(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("hang") != "" {
			<-r.Context().Done()
			return
		}
		w.Header().Set("Location", "/elsewhere")
		w.WriteHeader(http.StatusFound)
		_, _ = w.Write([]byte(strings.Repeat("x", MaxBody+100)))
	}))
	defer srv.Close()
	client := NewClient(200 * time.Millisecond)
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/path?Pwd=hunter2-secret", nil)
	r, err := Do(context.Background(), client, time.Second, req, "MessageNet")
	if err != nil || r.Status != http.StatusFound || len(r.Body) != MaxBody {
		t.Fatalf("redirect followed or body unbounded: %d, %d bytes, %v", r.Status, len(r.Body), err)
	}
	req, _ = http.NewRequest(http.MethodGet, srv.URL+"/path?hang=1&Pwd=hunter2-secret", nil)
	_, err = Do(context.Background(), client, 200*time.Millisecond, req, "MessageNet")
	if err == nil || strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), srv.URL) ||
		!strings.Contains(err.Error(), "GET MessageNet: no answer within 200ms") || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("timeout error %v", err)
	}
	srv.Close()
	req, _ = http.NewRequest(http.MethodGet, srv.URL+"/path?Pwd=hunter2-secret", nil)
	if _, err = Do(context.Background(), client, time.Second, req, "MessageNet"); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("connection error %v", err)
	}
}

func TestRedaction(t *testing.T) {
	t.Parallel()
	if got := Scrub("key 0123456789abcdef0123 and abc", "0123456789abcdef0123", "abc"); got != "key …0123 and abc" {
		t.Errorf("scrub %q", got)
	}
	if got := Excerpt([]byte("  bad\n  token tok3n-s3cret  "), "tok3n-s3cret"); got != "bad token [redacted]" {
		t.Errorf("excerpt %q", got)
	}
	for in, want := range map[string]string{
		"https://hooks.slack.com/services/T0/B0/XYZ": "https://hooks.slack.com/…",
		"http://127.0.0.1:8080":                      "http://127.0.0.1:8080",
		"https://h.example/?token=x":                 "https://h.example/…",
	} {
		u, _ := url.Parse(in)
		if got := Origin(u); got != want {
			t.Errorf("Origin(%s) = %s, want %s", in, got, want)
		}
	}
	for _, bad := range []string{"ftp://x", "http://", "https://u:p@h", "https://h/?q=1", "::"} {
		if CheckBaseURL(bad) == nil {
			t.Errorf("%q accepted as a base URL", bad)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		header string
		want   time.Duration
	}{
		{"", DefaultRetryAfter},
		{"1", time.Second},
		{"120", 2 * time.Minute},
		{"0", DefaultRetryAfter},
		{"-3", DefaultRetryAfter},
		{"soon", DefaultRetryAfter},
		{"999999", MaxRetryAfter},
		{now.Add(30 * time.Second).Format(http.TimeFormat), 30 * time.Second},
		{now.Add(-time.Minute).Format(http.TimeFormat), DefaultRetryAfter},
		{now.Add(24 * time.Hour).Format(http.TimeFormat), MaxRetryAfter},
	}
	for _, tt := range tests {
		h := http.Header{}
		if tt.header != "" {
			h.Set("Retry-After", tt.header)
		}
		if got := RetryAfter(h, now); got != tt.want {
			t.Errorf("RetryAfter(%q) = %s, want %s", tt.header, got, tt.want)
		}
	}
}

func TestRedact(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"R0UT1NGk3y5ecret0123456789abcdef", "…cdef"},
		{"short", "[redacted]"},
		{"", "[redacted]"},
		{"0123456789abcdef", "…cdef"},
	}
	for _, tt := range tests {
		if got := Redact(tt.in); got != tt.want {
			t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestTidyNumber(t *testing.T) {
	for in, want := range map[string]string{"+61 414 123-456": "+61414123456", "(02) 9876.5432": "0298765432", "\t0044 7700\t": "00447700", "": ""} {
		if got := TidyNumber(in); got != want {
			t.Errorf("TidyNumber(%q) = %q, want %q", in, got, want)
		}
	}
}
