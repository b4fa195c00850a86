package jabber

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	ok := Config{JabberID: "flapjack@example.com", Password: "pw"}
	tests := []struct {
		name string
		mod  func(*Config)
		want []string // substrings of the error; none = valid
	}{
		{"minimal is valid", func(*Config) {}, nil},
		{"everything set", func(c *Config) {
			c.Server, c.Port, c.TLS, c.Rooms, c.AllowedJIDs = "xmpp.example.com", 5223, "tls", []string{"ops@conference.example.com"}, []string{"Ada@Example.com"}
			c.Identifiers, c.AckDuration = []string{"bot"}, time.Hour
		}, nil},
		{"plain with allow_plaintext", func(c *Config) { c.TLS, c.AllowPlaintext = "plain", true }, nil},
		{"no jabberid", func(c *Config) { c.JabberID = "" }, []string{"gateways.jabber.jabberid is required"}},
		{"jabberid without domain", func(c *Config) { c.JabberID = "flapjack" }, []string{`gateways.jabber.jabberid must be a JID like flapjack@example.com, got "flapjack"`}},
		{"no password", func(c *Config) { c.Password = "" }, []string{"gateways.jabber.password is required"}},
		{"plain without allow_plaintext", func(c *Config) { c.TLS = "plain" }, []string{`gateways.jabber.tls is "plain" but gateways.jabber.allow_plaintext is false`}},
		{"unknown tls", func(c *Config) { c.TLS = "ssl" }, []string{`gateways.jabber.tls must be one of starttls, tls or plain, got "ssl"`}},
		{"bad port", func(c *Config) { c.Port = 70000 }, []string{"gateways.jabber.port must be between 1 and 65535"}},
		{"room with resource", func(c *Config) { c.Rooms = []string{"ops@conference.example.com/flapjack"} }, []string{"gateways.jabber.rooms must be bare room JIDs"}},
		{"allowed jid without domain", func(c *Config) { c.AllowedJIDs = []string{"ada"} }, []string{"gateways.jabber.allowed_jids must be bare JIDs"}},
		{"alias with space", func(c *Config) { c.Alias = "flap jack" }, []string{"gateways.jabber.alias must be a single word"}},
		{"negative ack duration", func(c *Config) { c.AckDuration = -time.Second }, []string{"gateways.jabber.ack_duration must be positive"}},
		{"reconnect max below min", func(c *Config) { c.ReconnectMin, c.ReconnectMax = time.Minute, time.Second }, []string{"gateways.jabber.reconnect_max (1s) must not be shorter than gateways.jabber.reconnect_min (1m0s)"}},
		{"every problem at once", func(c *Config) { c.JabberID, c.Password, c.TLS = "", "", "plain" },
			[]string{"gateways.jabber.jabberid", "gateways.jabber.password", "gateways.jabber.allow_plaintext"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := ok
			tc.mod(&c)
			err := c.Validate()
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate() = %q, want it to contain %q", err, w)
				}
			}
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	t.Parallel()
	c := Config{JabberID: "flapjack@example.com", Password: "pw", Rooms: []string{" Ops@Conference.Example.com "},
		Identifiers: []string{"bot", "FLAPJACK"}}.withDefaults()
	if c.Port != 5222 || c.Alias != "flapjack" || c.TLS != TLSStartTLS || c.AckDuration != 4*time.Hour ||
		c.Keepalive != 60*time.Second || c.ReconnectMin != 2*time.Second || c.ReconnectMax != 60*time.Second {
		t.Errorf("defaults: %+v", c)
	}
	if c.Rooms[0] != "ops@conference.example.com" {
		t.Errorf("room not normalised: %q", c.Rooms[0])
	}
	if got := c.identifiers(); strings.Join(got, ",") != "flapjack,bot" {
		t.Errorf("identifiers = %v", got)
	}
	if got := c.host(); got != "example.com:5222" {
		t.Errorf("host = %q", got)
	}
	bare, res := c.account()
	if bare != "flapjack@example.com" || res != hostname() {
		t.Errorf("account = %q %q", bare, res)
	}
	c.JabberID = "flapjack@example.com/bot"
	if _, res := c.account(); res != "bot" {
		t.Errorf("configured resource = %q", res)
	}
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	g := &Client{cfg: DefaultConfig()}
	backoff := g.reconnectBackoff()
	var got []string
	for f := 1; f <= 8; f++ {
		got = append(got, backoff.Delay(f-1).String())
	}
	if want := "2s 4s 8s 16s 32s 1m0s 1m0s 1m0s"; strings.Join(got, " ") != want {
		t.Errorf("backoff = %v, want %s", got, want)
	}
}

func TestSecretNeverPrints(t *testing.T) {
	t.Parallel()
	c := Config{JabberID: "flapjack@example.com", Password: "hunter2"}
	b, _ := json.Marshal(c)
	for _, s := range []string{fmt.Sprint(c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c), string(b)} {
		if strings.Contains(s, "hunter2") {
			t.Errorf("password printed: %s", s)
		}
	}
}

func TestProxyFor(t *testing.T) {
	t.Parallel()
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	tests := []struct {
		getenv func(string) string
		want   string
	}{
		{env(), ""},
		{env("HTTP_PROXY", "http://proxy:3128"), "http://proxy:3128"},
		{env("http_proxy", "socks5://proxy:1080"), "socks5://proxy:1080"},
		{env("HTTP_PROXY", "http://proxy:3128", "NO_PROXY", "localhost, XMPP.example.com"), ""},
		{env("HTTP_PROXY", "http://proxy:3128", "no_proxy", "other.example.com"), "http://proxy:3128"},
	}
	for i, tc := range tests {
		if got := proxyFor("xmpp.example.com:5222", tc.getenv); got != tc.want {
			t.Errorf("case %d: proxyFor = %q, want %q", i, got, tc.want)
		}
	}
}
