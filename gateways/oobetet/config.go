package oobetet

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/flapjackgo/flapjack/gateways/jabber"
)

// Name is oobetet's name: the section of its settings (gateways.oobetet.), its stage and the
// "stage" field of its logs.
const Name = "oobetet"

// Defaults of the settings.
const (
	DefaultPort       = 5222
	DefaultAlias      = "oobetet"
	DefaultMaxLatency = 300 * time.Second
	// DefaultCheckEvery is the longest time between two looks at the clock; shorter
	// max_latency values are looked at ten times per max_latency.
	DefaultCheckEvery = 10 * time.Second
)

// Connection defaults; they are not settings (the Jabber gateway's are).
const (
	defaultKeepalive        = 60 * time.Second
	defaultKeepaliveTimeout = 10 * time.Second
	defaultReconnectMin     = 1 * time.Second
	defaultReconnectMax     = 60 * time.Second
	defaultDialTimeout      = 15 * time.Second
)

// Config is the `gateways.oobetet` section. Zero values take the defaults noted on each field.
type Config struct {
	// Server is the XMPP host to connect to (gateways.oobetet.server); default: the domain of
	// JabberID. Port is its port (gateways.oobetet.port); default 5222.
	Server string
	Port   int
	// JabberID is oobetet's own JID, user@domain[/resource] (gateways.oobetet.jabberid): another
	// account than the Jabber gateway's. The resource "/<hostname>" is added when none is given.
	JabberID string
	// Password of JabberID (gateways.oobetet.password); never logged.
	Password jabber.Secret
	// Alias is oobetet's nickname in the rooms (gateways.oobetet.alias); default "oobetet". It
	// must differ from the Jabber gateway's alias.
	Alias string
	// Rooms are the MUC rooms to watch, bare JIDs like ops@conference.example.com
	// (gateways.oobetet.rooms): those the Jabber gateway sends the canary's alerts to. At least
	// one.
	Rooms []string
	// TLS, AllowPlaintext and InsecureSkipVerify are as the Jabber gateway's
	// (gateways.oobetet.tls, allow_plaintext, insecure_skip_verify).
	TLS                string
	AllowPlaintext     bool
	InsecureSkipVerify bool
	// WatchedEntity and WatchedCheck name the canary (gateways.oobetet.watched_entity,
	// watched_check); both required. The entity compares case-insensitively (events lower-case
	// it), the check exactly.
	WatchedEntity string
	WatchedCheck  string
	// MaxLatency is how long a problem alert, or a recovery alert, of the canary may go unseen
	// before the alarm is raised (gateways.oobetet.max_latency); default 300s.
	MaxLatency time.Duration
	// PagerDutyContact is the PagerDuty routing key (Events API v2 integration key, or a v1
	// service key with gateways.pagerduty.use_v1_events) paged on a breach
	// (gateways.oobetet.pagerduty_contact); "" pages no one and only the rooms are told.
	PagerDutyContact jabber.Secret
	// InjectInterval, when not 0, makes oobetet inject the canary itself
	// (gateways.oobetet.inject_interval): a critical event for WatchedEntity:WatchedCheck every
	// InjectInterval (with initial and repeat failure delays of 0, so it alerts at once) and an
	// ok event half an interval after each. It must be shorter than MaxLatency.
	InjectInterval time.Duration
}

// withDefaults fills zero values and normalises spacing and case.
func (c Config) withDefaults() Config {
	if c.Port == 0 {
		c.Port = DefaultPort
	}
	c.Server = strings.TrimSpace(c.Server)
	c.JabberID = strings.TrimSpace(c.JabberID)
	c.Alias = strings.TrimSpace(c.Alias)
	if c.Alias == "" {
		c.Alias = DefaultAlias
	}
	c.TLS = strings.ToLower(strings.TrimSpace(c.TLS))
	if c.TLS == "" {
		c.TLS = jabber.TLSStartTLS
	}
	c.WatchedEntity = strings.TrimSpace(c.WatchedEntity)
	c.WatchedCheck = strings.TrimSpace(c.WatchedCheck)
	if c.MaxLatency == 0 {
		c.MaxLatency = DefaultMaxLatency
	}
	c.PagerDutyContact = jabber.Secret(strings.TrimSpace(string(c.PagerDutyContact)))
	var rooms []string
	for _, r := range c.Rooms {
		if r = strings.ToLower(strings.TrimSpace(r)); r != "" {
			rooms = append(rooms, r)
		}
	}
	c.Rooms = rooms
	return c
}

// Validate checks the settings (zero values count as their defaults) and reports every
// problem, each naming its setting as gateways.oobetet.<field>.
func (c Config) Validate() error {
	c = c.withDefaults()
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	switch local, domain, _ := jabber.SplitJID(c.JabberID); {
	case c.JabberID == "":
		bad("gateways.oobetet.jabberid is required (oobetet's own JID, like flapjacktest@example.com)")
	case local == "" || domain == "" || strings.ContainsAny(c.JabberID, " \t"):
		bad("gateways.oobetet.jabberid must be a JID like flapjacktest@example.com, got %q", c.JabberID)
	}
	if c.Password == "" {
		bad("gateways.oobetet.password is required")
	}
	if c.Port < 1 || c.Port > 65535 {
		bad("gateways.oobetet.port must be between 1 and 65535, got %d", c.Port)
	}
	if strings.ContainsAny(c.Server, " /@") {
		bad("gateways.oobetet.server must be a host name or address, got %q", c.Server)
	}
	switch c.TLS {
	case jabber.TLSStartTLS, jabber.TLSDirect:
	case jabber.TLSPlain:
		if !c.AllowPlaintext {
			bad("gateways.oobetet.tls is %q but gateways.oobetet.allow_plaintext is false: the password would travel unencrypted; set allow_plaintext: true to accept that", jabber.TLSPlain)
		}
	default:
		bad("gateways.oobetet.tls must be one of starttls, tls or plain, got %q", c.TLS)
	}
	if strings.ContainsAny(c.Alias, " \t/:@") {
		bad("gateways.oobetet.alias must be a single word without '/', ':' or '@', got %q", c.Alias)
	}
	if len(c.Rooms) == 0 {
		bad("gateways.oobetet.rooms is required: the rooms the Jabber gateway sends the canary's alerts to")
	}
	for _, r := range c.Rooms {
		if local, domain, res := jabber.SplitJID(r); local == "" || domain == "" || res != "" {
			bad("gateways.oobetet.rooms must be bare room JIDs like ops@conference.example.com, got %q", r)
		}
	}
	switch {
	case c.WatchedEntity == "":
		bad("gateways.oobetet.watched_entity is required (the entity of the canary check)")
	case strings.Contains(c.WatchedEntity, ":"):
		bad("gateways.oobetet.watched_entity must not contain ':' (it separates entity and check), got %q", c.WatchedEntity)
	}
	if c.WatchedCheck == "" {
		bad("gateways.oobetet.watched_check is required (the canary check)")
	}
	if strings.Contains(c.WatchedCheck, `"`) {
		bad("gateways.oobetet.watched_check must not contain '\"' (alerts quote the check), got %q", c.WatchedCheck)
	}
	if c.MaxLatency < time.Second {
		bad("gateways.oobetet.max_latency must be at least 1s, got %s", c.MaxLatency)
	}
	switch {
	case c.InjectInterval < 0:
		bad("gateways.oobetet.inject_interval must be positive (or 0: no injection), got %s", c.InjectInterval)
	case c.InjectInterval > 0 && c.InjectInterval >= c.MaxLatency:
		bad("gateways.oobetet.inject_interval (%s) must be shorter than gateways.oobetet.max_latency (%s), or every gap between two injected failures is a breach", c.InjectInterval, c.MaxLatency)
	}
	if k := string(c.PagerDutyContact); k != "" && (len(k) != 32 || strings.ContainsAny(k, " \t")) {
		bad("gateways.oobetet.pagerduty_contact must be a 32-character PagerDuty routing key")
	}
	return errors.Join(errs...)
}

// checkEvery is the time between two looks at the clock: a tenth of MaxLatency, at most
// DefaultCheckEvery, at least 10ms.
func (c Config) checkEvery() time.Duration {
	return min(max(c.MaxLatency/10, 10*time.Millisecond), DefaultCheckEvery)
}

// host is where to connect, host:port.
func (c Config) host() string {
	server := c.Server
	if server == "" {
		_, server, _ = jabber.SplitJID(c.JabberID)
	}
	return net.JoinHostPort(server, strconv.Itoa(c.Port))
}
