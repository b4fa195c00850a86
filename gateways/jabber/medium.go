package jabber

import (
	"github.com/flapjackgo/flapjack/config"
	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/lifecycle"
)

// Spec describes the jabber medium: the XMPP connection (which also answers commands in chat) and
// the delivery loop feeding it.
var Spec = gateways.Medium{
	Name: Medium,
	Settings: []config.Setting{
		{Key: "gateways.jabber.server", Default: "", Usage: "XMPP server host"},
		{Key: "gateways.jabber.port", Kind: config.Int, Default: "5222", Usage: "XMPP server port"},
		{Key: "gateways.jabber.jabberid", Default: "", Usage: "the bot's JID user@domain (a resource /<hostname> is added when none is given)"},
		{Key: "gateways.jabber.password", Default: "", Usage: "the bot's password", Secret: true},
		{Key: "gateways.jabber.alias", Default: "flapjack", Usage: "nickname in rooms, also a command prefix"},
		{Key: "gateways.jabber.identifiers", Kind: config.List, Usage: "more names the bot answers to in rooms"},
		{Key: "gateways.jabber.rooms", Kind: config.List, Usage: "MUC rooms to join (alerts addressed to them go as groupchat)"},
		{Key: "gateways.jabber.tls", Default: "starttls", Choices: []string{"starttls", "tls", "plain"}, Usage: "starttls, tls (direct) or plain (needs gateways.jabber.allow_plaintext)"},
		{Key: "gateways.jabber.allow_plaintext", Kind: config.Bool, Default: "false", Usage: "allow a plaintext XMPP connection"},
		{Key: "gateways.jabber.insecure_skip_verify", Kind: config.Bool, Default: "false", Usage: "do not verify the XMPP server certificate (testing only)"},
		{Key: "gateways.jabber.allowed_jids", Kind: config.List, Usage: "bare JIDs whose direct-chat commands are obeyed (room occupants always are)"},
		{Key: "gateways.jabber.ack_duration", Kind: config.Duration, Default: "4h", Usage: "acknowledgement length when ACKID gives none"},
		{Key: "gateways.jabber.keepalive", Kind: config.Duration, Default: "60s", Usage: "idle time after which the server is pinged"},
		{Key: "gateways.jabber.keepalive_timeout", Kind: config.Duration, Default: "10s", Usage: "how long a ping answer may take before the connection counts as dead"},
		{Key: "gateways.jabber.reconnect_min", Kind: config.Duration, Default: "2s", Usage: "first wait between reconnection attempts (the first attempt is immediate; waits double)"},
		{Key: "gateways.jabber.reconnect_max", Kind: config.Duration, Default: "60s", Usage: "longest wait between reconnection attempts"},
		{Key: "gateways.jabber.send_timeout", Kind: config.Duration, Default: "15s", Usage: "how long the server may take to confirm a sent alert"},
		{Key: "gateways.jabber.dial_timeout", Kind: config.Duration, Default: "15s", Usage: "how long establishing the connection may take"},
	},
	Stages: stages,
}

func stages(env gateways.Env) ([]lifecycle.Stage, error) {
	bot, err := NewClient(ClientOptions{Config: configFrom(env.Values), Pool: env.Pool, Keys: env.Keys,
		EventsQueue: env.Values.String("executive.queue"), Clock: env.Clock, Log: env.Log, Metrics: env.Metrics,
		Version: env.Version})
	if err != nil {
		return nil, err
	}
	delivery := gateways.New(env.Delivery(Medium), bot)
	return []lifecycle.Stage{{Name: "jabber connection", Run: bot.Run}, {Name: "jabber gateway", Run: delivery.Run}}, nil
}

// configFrom reads gateways.jabber.*.
func configFrom(v *config.Values) Config {
	return Config{
		Server: v.String("gateways.jabber.server"), Port: v.Int("gateways.jabber.port"),
		JabberID: v.String("gateways.jabber.jabberid"), Password: Secret(v.String("gateways.jabber.password")),
		Alias: v.String("gateways.jabber.alias"), Identifiers: v.List("gateways.jabber.identifiers"),
		Rooms: v.List("gateways.jabber.rooms"), TLS: v.String("gateways.jabber.tls"),
		AllowPlaintext:     v.Bool("gateways.jabber.allow_plaintext"),
		InsecureSkipVerify: v.Bool("gateways.jabber.insecure_skip_verify"),
		AllowedJIDs:        v.List("gateways.jabber.allowed_jids"),
		AckDuration:        v.Duration("gateways.jabber.ack_duration"),
		Keepalive:          v.Duration("gateways.jabber.keepalive"), KeepaliveTimeout: v.Duration("gateways.jabber.keepalive_timeout"),
		ReconnectMin: v.Duration("gateways.jabber.reconnect_min"), ReconnectMax: v.Duration("gateways.jabber.reconnect_max"),
		SendTimeout: v.Duration("gateways.jabber.send_timeout"), DialTimeout: v.Duration("gateways.jabber.dial_timeout"),
	}
}
