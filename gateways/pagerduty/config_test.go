package pagerduty

import (
	"strings"
	"testing"
	"time"
)

func TestDefaultConfig(t *testing.T) {
	t.Parallel()
	got := DefaultConfig()
	want := Config{
		EventsBaseURL: "https://events.pagerduty.com", APIBaseURL: "https://api.pagerduty.com",
		V1APIURLTemplate: "https://%s.pagerduty.com/api/v1", Timeout: 10 * time.Second,
		AckPollInterval: 10 * time.Second, AckLockTTL: time.Hour, SinceWindow: 7 * 24 * time.Hour,
		AckDuration: 4 * time.Hour,
	}
	if got != want {
		t.Fatalf("DefaultConfig() =\n%+v\nwant\n%+v", got, want)
	}
	if err := got.Validate(); err != nil {
		t.Fatalf("defaults do not validate: %v", err)
	}
	// The zero Config is valid, takes every default, and does not poll.
	if err := (Config{}).Validate(); err != nil {
		t.Fatalf("zero config: %v", err)
	}
	if z := (Config{}).withDefaults(); z.AckPollInterval != 0 || z.Timeout != DefaultTimeout {
		t.Fatalf("zero config with defaults: %+v", z)
	}
	if c := (Config{EventsBaseURL: " http://127.0.0.1:9/ "}).withDefaults(); c.EventsBaseURL != "http://127.0.0.1:9" {
		t.Fatalf("base URL not trimmed: %q", c.EventsBaseURL)
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  Config
		want []string // substrings of the error; none: valid
	}{
		{"local URLs", Config{EventsBaseURL: "http://127.0.0.1:8080", APIBaseURL: "http://localhost/pd",
			V1APIURLTemplate: "http://localhost/%s/api/v1"}, nil},
		{"events URL not http", Config{EventsBaseURL: "ftp://events"}, []string{"gateways.pagerduty.events_base_url must be an http:// or https:// URL"}},
		{"api URL without host", Config{APIBaseURL: "https://"}, []string{"gateways.pagerduty.api_base_url has no host"}},
		{"URL with credentials", Config{APIBaseURL: "https://user:hunter2@api.example.com"}, []string{"gateways.pagerduty.api_base_url must not contain credentials"}},
		{"URL with query", Config{EventsBaseURL: "https://events.example.com/?x=1"}, []string{"gateways.pagerduty.events_base_url must not have a query"}},
		{"template without %s", Config{V1APIURLTemplate: "https://acme.pagerduty.com/api/v1"}, []string{"gateways.pagerduty.v1_api_url_template must contain %s"}},
		{"template with two verbs", Config{V1APIURLTemplate: "https://%s.pagerduty.com/%d"}, []string{"gateways.pagerduty.v1_api_url_template must contain %s"}},
		{"negative durations", Config{Timeout: -1, AckPollInterval: -time.Second, AckLockTTL: -1, SinceWindow: -1, AckDuration: -1}, []string{
			"gateways.pagerduty.timeout must be positive", "gateways.pagerduty.ack_poll_interval must be positive (or 0",
			"gateways.pagerduty.ack_lock_ttl must be positive", "gateways.pagerduty.since_window must be positive",
			"gateways.pagerduty.ack_duration must be positive"}},
		{"sub-second ack", Config{AckDuration: time.Millisecond}, []string{"gateways.pagerduty.ack_duration must be at least 1s"}},
		{"tiny lock ttl", Config{AckLockTTL: time.Second}, []string{"gateways.pagerduty.ack_lock_ttl must be at least 2s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.cfg.Validate()
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate() = %q\nwant it to contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("Validate() leaks a password: %q", err)
			}
		})
	}
}
