package api

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestIndex(t *testing.T) {
	t.Parallel()
	srv, _ := server(t, "s3cret", nil)
	get := func(t *testing.T, url, method, accept string) (int, string, string) {
		t.Helper()
		req, _ := http.NewRequest(method, url, nil)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
	}
	endpoints := []string{"POST /events", "GET /metrics", "GET /healthz", "GET /readyz"}

	cases := []struct {
		name, accept, wantType string
	}{
		{"no Accept", "", "text/plain"},
		{"curl", "*/*", "text/plain"},
		{"plain asked", "text/plain", "text/plain"},
		{"plain preferred", "text/html;q=0.5, text/plain", "text/plain"},
		{"browser", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", "text/html"},
		{"html only", "text/html", "text/html"},
		{"html refused", "text/html;q=0, */*", "text/plain"},
		{"text family", "text/*", "text/plain"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			code, typ, body := get(t, srv.URL+"/", http.MethodGet, c.accept)
			if code != 200 || !strings.HasPrefix(typ, c.wantType) {
				t.Fatalf("%d %s, want 200 %s", code, typ, c.wantType)
			}
			for _, e := range endpoints {
				line := lineWith(body, e)
				if line == "" {
					t.Errorf("%s missing:\n%s", e, body)
				}
				if e == "POST /events" && !strings.Contains(line, "Bearer") {
					t.Errorf("the token requirement is not said: %q", line)
				}
			}
			if c.wantType == "text/html" && !strings.Contains(body, `<a href="metrics">GET /metrics</a>`) {
				t.Errorf("no link to metrics:\n%s", body)
			}
		})
	}

	t.Run("only exactly /", func(t *testing.T) {
		t.Parallel()
		for _, path := range []string{"/nope", "/index.html", "/events/", "/healthz/x"} {
			if code, _, _ := get(t, srv.URL+path, http.MethodGet, ""); code != 404 {
				t.Errorf("GET %s: %d, want 404", path, code)
			}
		}
		if code, _, body := get(t, srv.URL+"/", http.MethodHead, ""); code != 200 || body != "" {
			t.Errorf("HEAD /: %d %q", code, body)
		}
	})

	t.Run("lists only what is mounted", func(t *testing.T) {
		t.Parallel()
		bare := httptest.NewServer(Handler(Options{}))
		defer bare.Close()
		_, _, body := get(t, bare.URL+"/", http.MethodGet, "")
		if strings.Contains(body, "/events") || strings.Contains(body, "/metrics") || lineWith(body, "GET /readyz") == "" {
			t.Errorf("index of a listener without events or metrics:\n%s", body)
		}
		if code, _, _ := get(t, bare.URL+"/metrics", http.MethodGet, ""); code != 404 {
			t.Errorf("unmounted /metrics: %d", code)
		}
		withMetrics := httptest.NewServer(Handler(Options{Gatherer: prometheus.NewRegistry()}))
		defer withMetrics.Close()
		if _, _, body := get(t, withMetrics.URL+"/", http.MethodGet, ""); lineWith(body, "GET /metrics") == "" {
			t.Errorf("metrics not listed:\n%s", body)
		}
	})
}

// lineWith returns the first line of body containing s, or "".
func lineWith(body, s string) string {
	for _, l := range strings.Split(body, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}
