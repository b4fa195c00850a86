package jabber

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"
)

// TLS modes (setting gateways.jabber.tls).
const (
	// TLSStartTLS connects in the clear and upgrades with STARTTLS before authenticating (RFC 6120);
	// a server that does not offer STARTTLS is refused.
	TLSStartTLS = "starttls"
	// TLSDirect speaks TLS from the first byte (XEP-0368 "direct TLS", usually port 5223).
	TLSDirect = "tls"
	// TLSPlain never encrypts; the password travels in the clear. Only with AllowPlaintext.
	TLSPlain = "plain"
)

// Defaults of the settings.
const (
	DefaultPort             = 5222
	DefaultAlias            = "flapjack"
	DefaultAckDuration      = 4 * time.Hour
	DefaultKeepalive        = 60 * time.Second
	DefaultKeepaliveTimeout = 10 * time.Second
	DefaultReconnectMin     = 2 * time.Second
	DefaultReconnectMax     = 60 * time.Second
	DefaultSendTimeout      = 15 * time.Second
	DefaultDialTimeout      = 15 * time.Second
)

// Secret is a string that never prints: String, GoString, text and JSON encodings (and so zap
// and fmt) show "[redacted]". Use string(s) where the value itself is needed.
type Secret string

const redacted = "[redacted]"

func (Secret) String() string                 { return redacted }
func (Secret) GoString() string               { return redacted }
func (Secret) MarshalText() ([]byte, error)   { return []byte(redacted), nil }
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }

// Config is the `gateways.jabber` section. Zero values take the defaults noted on each field.
//
// go-xmpp, the XMPP library, sends the connection through an HTTP CONNECT proxy when HTTP_PROXY
// (or http_proxy) is set in the environment, or through SOCKS5 when it is socks5://…; add the
// server to NO_PROXY to connect directly.
type Config struct {
	// Server is the host to connect to (gateways.jabber.server); default: the domain of JabberID.
	Server string
	// Port is the server's port (gateways.jabber.port); default 5222.
	Port int
	// JabberID is the bot's JID, user@domain[/resource] (gateways.jabber.jabberid); the resource
	// "/<hostname>" is added when none is given.
	JabberID string
	// Password of JabberID (gateways.jabber.password); never logged.
	Password Secret
	// Alias is the bot's nickname in rooms and a name it answers to (gateways.jabber.alias);
	// default "flapjack". It also prefixes the ACKID hint in alerts.
	Alias string
	// Identifiers are more names the bot answers to in rooms (gateways.jabber.identifiers); the
	// alias is always one.
	Identifiers []string
	// Rooms are the MUC rooms to join, as bare JIDs like ops@conference.example.com
	// (gateways.jabber.rooms). Alerts addressed to one of them go as groupchat.
	Rooms []string
	// TLS is TLSStartTLS (default), TLSDirect or TLSPlain (gateways.jabber.tls).
	TLS string
	// AllowPlaintext must be true for TLS = "plain" (gateways.jabber.allow_plaintext).
	AllowPlaintext bool
	// InsecureSkipVerify accepts any server certificate (gateways.jabber.insecure_skip_verify);
	// for tests and self-signed servers only.
	InsecureSkipVerify bool
	// AllowedJIDs are the bare JIDs whose direct-chat commands are obeyed
	// (gateways.jabber.allowed_jids); occupants of the configured rooms are always obeyed, and
	// anyone else gets no reply (the attempt is logged).
	AllowedJIDs []string
	// AckDuration is the length of an acknowledgement when ACKID gives no usable duration
	// (gateways.jabber.ack_duration); default 4h.
	AckDuration time.Duration
	// Keepalive is the idle time after which the server is pinged (XEP-0199)
	// (gateways.jabber.keepalive); default 60s. KeepaliveTimeout is how long the answer may
	// take before the connection counts as dead (gateways.jabber.keepalive_timeout); default 10s.
	Keepalive        time.Duration
	KeepaliveTimeout time.Duration
	// ReconnectMin and ReconnectMax bound the wait between connection attempts
	// (gateways.jabber.reconnect_min / reconnect_max): the first attempt after a disconnect is
	// immediate, then the waits double from ReconnectMin (default 2s) up to ReconnectMax
	// (default 60s).
	ReconnectMin time.Duration
	ReconnectMax time.Duration
	// SendTimeout is how long the server may take to confirm a sent alert
	// (gateways.jabber.send_timeout); default 15s. DialTimeout bounds establishing the TCP
	// connection (gateways.jabber.dial_timeout); default 15s.
	SendTimeout time.Duration
	DialTimeout time.Duration
}

// DefaultConfig is a Config with every default filled in (JabberID and Password stay empty).
func DefaultConfig() Config {
	return Config{}.withDefaults()
}

// withDefaults fills zero values with the defaults and normalises case and spacing.
func (c Config) withDefaults() Config {
	if c.Port == 0 {
		c.Port = DefaultPort
	}
	c.Alias = strings.TrimSpace(c.Alias)
	if c.Alias == "" {
		c.Alias = DefaultAlias
	}
	c.TLS = strings.ToLower(strings.TrimSpace(c.TLS))
	if c.TLS == "" {
		c.TLS = TLSStartTLS
	}
	c.JabberID = strings.TrimSpace(c.JabberID)
	c.Server = strings.TrimSpace(c.Server)
	if c.AckDuration == 0 {
		c.AckDuration = DefaultAckDuration
	}
	if c.Keepalive == 0 {
		c.Keepalive = DefaultKeepalive
	}
	if c.KeepaliveTimeout == 0 {
		c.KeepaliveTimeout = DefaultKeepaliveTimeout
	}
	if c.ReconnectMin == 0 {
		c.ReconnectMin = DefaultReconnectMin
	}
	if c.ReconnectMax == 0 {
		c.ReconnectMax = max(DefaultReconnectMax, c.ReconnectMin)
	}
	if c.SendTimeout == 0 {
		c.SendTimeout = DefaultSendTimeout
	}
	if c.DialTimeout == 0 {
		c.DialTimeout = DefaultDialTimeout
	}
	c.Rooms = normaliseJIDs(c.Rooms)
	c.AllowedJIDs = normaliseJIDs(c.AllowedJIDs)
	return c
}

func normaliseJIDs(in []string) []string {
	var out []string
	for _, j := range in {
		if j = strings.TrimSpace(j); j != "" {
			out = append(out, lowerBare(j)+resourcePart(j))
		}
	}
	return out
}

// Validate checks the settings (zero values count as their defaults) and reports every problem,
// each naming its setting as gateways.jabber.<field>.
func (c Config) Validate() error {
	c = c.withDefaults()
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	switch local, domain, _ := SplitJID(c.JabberID); {
	case c.JabberID == "":
		bad("gateways.jabber.jabberid is required (the bot's JID, like flapjack@example.com)")
	case local == "" || domain == "" || strings.ContainsAny(c.JabberID, " \t"):
		bad("gateways.jabber.jabberid must be a JID like flapjack@example.com, got %q", c.JabberID)
	}
	if c.Password == "" {
		bad("gateways.jabber.password is required")
	}
	if c.Port < 1 || c.Port > 65535 {
		bad("gateways.jabber.port must be between 1 and 65535, got %d", c.Port)
	}
	if strings.ContainsAny(c.Server, " /@") {
		bad("gateways.jabber.server must be a host name or address, got %q", c.Server)
	}
	switch c.TLS {
	case TLSStartTLS, TLSDirect:
	case TLSPlain:
		if !c.AllowPlaintext {
			bad("gateways.jabber.tls is %q but gateways.jabber.allow_plaintext is false: the password would travel unencrypted; set allow_plaintext: true to accept that", TLSPlain)
		}
	default:
		bad("gateways.jabber.tls must be one of starttls, tls or plain, got %q", c.TLS)
	}
	if strings.ContainsAny(c.Alias, " \t/:@") {
		bad("gateways.jabber.alias must be a single word without '/', ':' or '@', got %q", c.Alias)
	}
	for _, id := range c.Identifiers {
		if strings.TrimSpace(id) == "" || strings.ContainsAny(strings.TrimSpace(id), " \t:") {
			bad("gateways.jabber.identifiers must be single words without ':', got %q", id)
		}
	}
	for _, r := range c.Rooms {
		if local, domain, res := SplitJID(r); local == "" || domain == "" || res != "" {
			bad("gateways.jabber.rooms must be bare room JIDs like ops@conference.example.com, got %q", r)
		}
	}
	for _, j := range c.AllowedJIDs {
		if local, domain, res := SplitJID(j); local == "" || domain == "" || res != "" {
			bad("gateways.jabber.allowed_jids must be bare JIDs like ada@example.com, got %q", j)
		}
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"ack_duration", c.AckDuration}, {"keepalive", c.Keepalive}, {"keepalive_timeout", c.KeepaliveTimeout},
		{"reconnect_min", c.ReconnectMin}, {"reconnect_max", c.ReconnectMax},
		{"send_timeout", c.SendTimeout}, {"dial_timeout", c.DialTimeout},
	} {
		if d.v < 0 {
			bad("gateways.jabber.%s must be positive, got %s", d.name, d.v)
		}
	}
	if c.ReconnectMax < c.ReconnectMin {
		bad("gateways.jabber.reconnect_max (%s) must not be shorter than gateways.jabber.reconnect_min (%s)", c.ReconnectMax, c.ReconnectMin)
	}
	return errors.Join(errs...)
}

// host is where to connect, host:port.
func (c Config) host() string {
	server := c.Server
	if server == "" {
		_, server, _ = SplitJID(c.JabberID)
	}
	return net.JoinHostPort(server, fmt.Sprint(c.Port))
}

// account is the bare JID to log in with and the resource to bind: the configured one, else the
// host name.
func (c Config) account() (bare, resource string) {
	local, domain, res := SplitJID(c.JabberID)
	if res == "" {
		res = hostname()
	}
	return local + "@" + domain, res
}

// identifiers are the names the bot answers to in rooms: the alias first, then the configured
// identifiers, each once (compared case-insensitively).
func (c Config) identifiers() []string {
	seen := map[string]bool{}
	var out []string
	for _, id := range append([]string{c.Alias}, c.Identifiers...) {
		id = strings.TrimSpace(id)
		if id != "" && !seen[strings.ToLower(id)] {
			seen[strings.ToLower(id)] = true
			out = append(out, id)
		}
	}
	return out
}

func hostname() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "flapjack"
	}
	return h
}

// SplitJID parts a JID local@domain/resource (local and resource may be empty).
func SplitJID(jid string) (local, domain, resource string) {
	rest := jid
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		rest, resource = rest[:i], rest[i+1:]
	}
	if i := strings.IndexByte(rest, '@'); i >= 0 {
		local, domain = rest[:i], rest[i+1:]
	} else {
		domain = rest
	}
	return local, domain, resource
}

// bareJID is local@domain (lower-cased: both parts compare case-insensitively).
func bareJID(jid string) string { return lowerBare(jid) }

func lowerBare(jid string) string {
	if i := strings.IndexByte(jid, '/'); i >= 0 {
		jid = jid[:i]
	}
	return strings.ToLower(jid)
}

func resourcePart(jid string) string {
	if i := strings.IndexByte(jid, '/'); i >= 0 {
		return jid[i:]
	}
	return ""
}
