package oobetet

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/config"
)

func validConfig() Config {
	return Config{JabberID: "flapjacktest@example.com", Password: "pw", Rooms: []string{"ops@conference.example.com"},
		WatchedEntity: "canary", WatchedCheck: "oobetet canary"}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(*Config)
		want   []string // substrings of the error; none: valid
	}{
		{"valid", func(*Config) {}, nil},
		{"valid with injection and PagerDuty", func(c *Config) {
			c.InjectInterval, c.MaxLatency, c.PagerDutyContact = time.Minute, 5*time.Minute, "0123456789abcdef0123456789abcdef"
		}, nil},
		{"everything missing", func(c *Config) { *c = Config{} }, []string{
			"gateways.oobetet.jabberid is required", "gateways.oobetet.password is required", "gateways.oobetet.rooms is required",
			"gateways.oobetet.watched_entity is required", "gateways.oobetet.watched_check is required"}},
		{"bad JID and room", func(c *Config) { c.JabberID, c.Rooms = "nodomain", []string{"ops@conference.example.com/nick"} },
			[]string{"gateways.oobetet.jabberid must be a JID", "gateways.oobetet.rooms must be bare room JIDs"}},
		{"plain without allow_plaintext", func(c *Config) { c.TLS = "plain" }, []string{"gateways.oobetet.allow_plaintext is false"}},
		{"unknown tls", func(c *Config) { c.TLS = "ssl" }, []string{"gateways.oobetet.tls must be one of"}},
		{"entity with a colon", func(c *Config) { c.WatchedEntity = "a:b" }, []string{"gateways.oobetet.watched_entity must not contain ':'"}},
		{"check with a quote", func(c *Config) { c.WatchedCheck = `say "hi"` }, []string{"gateways.oobetet.watched_check must not contain"}},
		{"max_latency too short", func(c *Config) { c.MaxLatency = 500 * time.Millisecond }, []string{"gateways.oobetet.max_latency must be at least 1s"}},
		{"inject_interval not shorter than max_latency", func(c *Config) { c.InjectInterval = DefaultMaxLatency },
			[]string{"gateways.oobetet.inject_interval (5m0s) must be shorter than gateways.oobetet.max_latency (5m0s)"}},
		{"negative inject_interval", func(c *Config) { c.InjectInterval = -time.Second }, []string{"gateways.oobetet.inject_interval must be positive"}},
		{"short routing key", func(c *Config) { c.PagerDutyContact = "short" }, []string{"gateways.oobetet.pagerduty_contact must be a 32-character"}},
		{"alias with a colon", func(c *Config) { c.Alias = "oob:et" }, []string{"gateways.oobetet.alias must be a single word"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := validConfig()
			tt.change(&c)
			err := c.Validate()
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate accepted %+v", c)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if k := string(c.PagerDutyContact); k != "" && strings.Contains(err.Error(), k) {
				t.Errorf("error %q shows the routing key", err)
			}
		})
	}
}

// TestSettings reads every setting of Spec through config.Load, as a command would once the
// settings are in its table.
func TestSettings(t *testing.T) {
	t.Parallel()
	for _, s := range Spec.Settings {
		if !strings.HasPrefix(s.Key, "gateways.oobetet.") {
			t.Errorf("setting %s is not under gateways.oobetet.", s.Key)
		}
	}
	table := append(append(config.Table{}, config.Core...), Spec.Settings...)
	v, err := config.Load(table, "", nil, []string{
		"FLAPJACK_GATEWAYS_OOBETET_JABBERID=flapjacktest@example.com", "FLAPJACK_GATEWAYS_OOBETET_PASSWORD=pw",
		"FLAPJACK_GATEWAYS_OOBETET_ROOMS=ops@conference.example.com, dev@conference.example.com",
		"FLAPJACK_GATEWAYS_OOBETET_WATCHED_ENTITY=canary", "FLAPJACK_GATEWAYS_OOBETET_WATCHED_CHECK=oobetet canary",
		"FLAPJACK_GATEWAYS_OOBETET_INJECT_INTERVAL=1 minute", "FLAPJACK_GATEWAYS_OOBETET_TLS=tls",
	})
	if err != nil {
		t.Fatal(err)
	}
	c := configFrom(v)
	want := Config{Port: 5222, JabberID: "flapjacktest@example.com", Password: "pw", Alias: "oobetet",
		Rooms: []string{"ops@conference.example.com", "dev@conference.example.com"}, TLS: "tls",
		WatchedEntity: "canary", WatchedCheck: "oobetet canary", MaxLatency: DefaultMaxLatency, InjectInterval: time.Minute}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("configFrom:\n got %+v\nwant %+v", c, want)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}
