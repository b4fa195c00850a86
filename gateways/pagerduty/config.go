// Package pagerduty is the PagerDuty medium (docs/flapjack-1x.md 4.2, docs/decisions.md D13). Sender delivers the
// alerts of `pagerduty_notifications` through the Events API v2 (trigger, acknowledge, resolve,
// deduplicated on ENTITY:CHECK, see DedupKey) behind the shared queue runner of package gateways, which does
// the retries and dead-lettering; Sender only delivers and classifies failures. AckPoller
// brings acknowledgements made in PagerDuty back: it looks for acknowledged incidents of the
// failing checks and pushes one acknowledgement event per check onto `events`.
//
// Routing keys, API tokens and passwords never appear in logs, errors or metric labels; where
// one must be identified, only its last four characters are shown (Redact).
package pagerduty

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/flapjackgo/flapjack/gateways/internal/httpsend"
)

// Medium is the medium name of this gateway (alerts' "media", the queue pagerduty_notifications).
const Medium = "pagerduty"

// Defaults of the settings.
const (
	DefaultEventsBaseURL    = "https://events.pagerduty.com"
	DefaultAPIBaseURL       = "https://api.pagerduty.com"
	DefaultV1APIURLTemplate = "https://%s.pagerduty.com/api/v1"
	DefaultTimeout          = 10 * time.Second
	DefaultAckPollInterval  = 10 * time.Second
	// DefaultAckLockTTL is Flapjack's expiry of sem_pagerduty_acks_running: how long a crashed
	// poller can keep the others from running.
	DefaultAckLockTTL  = time.Hour
	DefaultSinceWindow = 7 * 24 * time.Hour
	DefaultAckDuration = 4 * time.Hour
)

// Config is the `gateways.pagerduty` section. Zero values take the defaults noted on each
// field, except AckPollInterval (0 disables polling, as the setting documents).
type Config struct {
	// EventsBaseURL is where events are sent (gateways.pagerduty.events_base_url); default
	// https://events.pagerduty.com. Events API v2 requests go to <base>/v2/enqueue, v1 ones
	// (UseV1Events) to <base>/generic/2010-04-15/create_event.json.
	EventsBaseURL string
	// APIBaseURL is the REST API v2 (gateways.pagerduty.api_base_url), queried for acknowledged
	// incidents with a contact's token; default https://api.pagerduty.com.
	APIBaseURL string
	// V1APIURLTemplate is the REST API v1 of old subdomain accounts
	// (gateways.pagerduty.v1_api_url_template), queried with a contact's username and password;
	// %s is the contact's subdomain. Default "https://%s.pagerduty.com/api/v1".
	V1APIURLTemplate string
	// UseV1Events sends every alert through the Events API v1 (generic create_event.json, as
	// Flapjack 1.x did) instead of v2 (gateways.pagerduty.use_v1_events); default false. v1 and
	// v2 integration keys look alike (32 characters), so this is a switch, not a guess per alert.
	UseV1Events bool
	// Timeout bounds each HTTP request, connection and body included (gateways.pagerduty.timeout);
	// default 10s. A request that times out is retried like a network error.
	Timeout time.Duration
	// AckPollInterval is the time between two looks for acknowledgements made in PagerDuty
	// (gateways.pagerduty.ack_poll_interval). 0 disables polling; DefaultConfig has 10s.
	AckPollInterval time.Duration
	// AckLockTTL is the expiry of the lock (sem_pagerduty_acks_running) that keeps one poller
	// running at a time across all instances (gateways.pagerduty.ack_lock_ttl); default 1h, as
	// Flapjack. The expiry only matters when a poller dies holding the lock: a run that ends
	// releases it at once (leaving a note of when the next run is due), and a run is cut short
	// before the lock could expire under it.
	AckLockTTL time.Duration
	// SinceWindow is how far back acknowledged incidents are looked for
	// (gateways.pagerduty.since_window); default 7 days, as Flapjack.
	SinceWindow time.Duration
	// AckDuration is the length of the acknowledgement (unscheduled maintenance) created for an
	// incident acknowledged in PagerDuty (gateways.pagerduty.ack_duration); default 4h.
	AckDuration time.Duration
}

// DefaultConfig is a Config with every default filled in.
func DefaultConfig() Config {
	return Config{AckPollInterval: DefaultAckPollInterval}.withDefaults()
}

// withDefaults fills zero values (but AckPollInterval) and trims URLs.
func (c Config) withDefaults() Config {
	c.EventsBaseURL = strings.TrimRight(strings.TrimSpace(c.EventsBaseURL), "/")
	if c.EventsBaseURL == "" {
		c.EventsBaseURL = DefaultEventsBaseURL
	}
	c.APIBaseURL = strings.TrimRight(strings.TrimSpace(c.APIBaseURL), "/")
	if c.APIBaseURL == "" {
		c.APIBaseURL = DefaultAPIBaseURL
	}
	c.V1APIURLTemplate = strings.TrimRight(strings.TrimSpace(c.V1APIURLTemplate), "/")
	if c.V1APIURLTemplate == "" {
		c.V1APIURLTemplate = DefaultV1APIURLTemplate
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.AckLockTTL == 0 {
		c.AckLockTTL = DefaultAckLockTTL
	}
	if c.SinceWindow == 0 {
		c.SinceWindow = DefaultSinceWindow
	}
	if c.AckDuration == 0 {
		c.AckDuration = DefaultAckDuration
	}
	return c
}

// Validate checks the settings (zero values count as their defaults) and reports every
// problem, each naming its setting as gateways.pagerduty.<field>.
func (c Config) Validate() error {
	c = c.withDefaults()
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	for _, u := range []struct{ name, v string }{
		{"events_base_url", c.EventsBaseURL}, {"api_base_url", c.APIBaseURL},
	} {
		if err := httpsend.CheckBaseURL(u.v); err != nil {
			bad("gateways.pagerduty.%s %v", u.name, err)
		}
	}
	switch n := strings.Count(c.V1APIURLTemplate, "%"); {
	case n != 1 || !strings.Contains(c.V1APIURLTemplate, "%s"):
		bad("gateways.pagerduty.v1_api_url_template must contain %%s (the subdomain) and no other %%, got %q", c.V1APIURLTemplate)
	default:
		if err := httpsend.CheckBaseURL(fmt.Sprintf(c.V1APIURLTemplate, "subdomain")); err != nil {
			bad("gateways.pagerduty.v1_api_url_template %v", err)
		}
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"timeout", c.Timeout}, {"ack_lock_ttl", c.AckLockTTL},
		{"since_window", c.SinceWindow}, {"ack_duration", c.AckDuration},
	} {
		if d.v < 0 {
			bad("gateways.pagerduty.%s must be positive, got %s", d.name, d.v)
		}
	}
	if c.AckPollInterval < 0 {
		bad("gateways.pagerduty.ack_poll_interval must be positive (or 0 to disable polling), got %s", c.AckPollInterval)
	}
	if c.AckDuration > 0 && c.AckDuration < time.Second {
		bad("gateways.pagerduty.ack_duration must be at least 1s, got %s", c.AckDuration)
	}
	if c.AckLockTTL > 0 && c.AckLockTTL < 2*time.Second {
		bad("gateways.pagerduty.ack_lock_ttl must be at least 2s, got %s", c.AckLockTTL)
	}
	return errors.Join(errs...)
}
