package oobetet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	xmpp "github.com/xmppo/go-xmpp"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/gateways/jabber"
	"github.com/flapjackgo/flapjack/queue"
)

// errNotConnected is returned by say while no session is up.
var errNotConnected = errors.New("not connected to the XMPP server")

// roomConn is oobetet's XMPP connection: it logs in, joins the rooms without history, greets
// them, hands every live groupchat message of a room to heard, and reconnects with capped
// backoff. The Jabber gateway's session is not reused: its Client obeys room messages as
// commands, and its connection code is unexported.
type roomConn struct {
	cfg      Config
	account  string // bare JID
	resource string
	domain   string
	rooms    map[string]bool
	version  string
	log      *zap.Logger
	// heard is called on the connection's goroutine for each live room message.
	heard func(room, nick, text string)
	// greeting is the text said in the rooms on joining; first is false after a reconnect.
	greeting func(first bool) string
	// changed is called when the connection comes up (after the rooms are joined) or goes down.
	changed func(up bool)

	mu       sync.Mutex
	cur      *jabber.Stream // nil while down
	sessions int
}

func newRoomConn(cfg Config, version string, log *zap.Logger) *roomConn {
	local, domain, resource := jabber.SplitJID(cfg.JabberID)
	if resource == "" {
		resource = hostname()
	}
	c := &roomConn{cfg: cfg, account: local + "@" + domain, resource: resource, domain: domain,
		rooms: map[string]bool{}, version: version, log: log}
	for _, r := range cfg.Rooms {
		c.rooms[r] = true
	}
	return c
}

func hostname() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "oobetet"
	}
	return h
}

// connected reports whether a session is up.
func (c *roomConn) connected() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cur != nil
}

// say sends text to every room; it fails while disconnected or when a write fails.
func (c *roomConn) say(text string) error {
	c.mu.Lock()
	s := c.cur
	c.mu.Unlock()
	if s == nil {
		return errNotConnected
	}
	return s.Write(func(x *xmpp.Client) error {
		for _, room := range c.cfg.Rooms {
			if _, err := x.Send(xmpp.Chat{Remote: room, Type: "groupchat", Text: text}); err != nil {
				return fmt.Errorf("%s: %w", room, err)
			}
		}
		return nil
	})
}

// run owns the connection until ctx ends: connect, serve, and reconnect (first attempt
// immediate, then waits doubling up to a minute).
func (c *roomConn) run(ctx context.Context) {
	c.login().KeepConnected(ctx, c.log, queue.Backoff{First: defaultReconnectMin, Max: defaultReconnectMax}, c.serve)
}

// login is oobetet's XMPP account, connected as the Jabber gateway connects.
func (c *roomConn) login() jabber.Login {
	return jabber.Login{Host: c.cfg.host(), User: c.account, Password: string(c.cfg.Password), Resource: c.resource,
		Domain: c.domain, TLS: c.cfg.TLS, InsecureSkipVerify: c.cfg.InsecureSkipVerify,
		DialTimeout: defaultDialTimeout, Keepalive: defaultKeepalive, KeepaliveTimeout: defaultKeepaliveTimeout,
		Software: "flapjack oobetet", Version: c.version}
}

// serve runs one session until the connection fails or ctx ends.
func (c *roomConn) serve(ctx context.Context, client *xmpp.Client) error {
	s := jabber.StartStream(client, errNotConnected, nil)
	c.mu.Lock()
	c.sessions++
	first := c.sessions == 1
	c.mu.Unlock()
	c.log.Info("connected to the XMPP server", zap.String("server", c.cfg.host()), zap.String("jid", c.account+"/"+c.resource),
		zap.String("tls", c.cfg.TLS), zap.Bool("encrypted", client.IsEncrypted()), zap.Strings("rooms", c.cfg.Rooms))
	greeting := c.greeting(first)
	err := s.Write(func(x *xmpp.Client) error {
		for _, room := range c.cfg.Rooms {
			// Zero history: old alerts replayed on joining would count as fresh ones.
			if _, err := x.JoinMUC(room, c.cfg.Alias, xmpp.StanzaHistory, 0, nil); err != nil {
				return fmt.Errorf("join %s: %w", room, err)
			}
			if _, err := x.Send(xmpp.Chat{Remote: room, Type: "groupchat", Text: greeting}); err != nil {
				return fmt.Errorf("greet %s: %w", room, err)
			}
		}
		return nil
	})
	if err != nil {
		c.closeSession(s)
		return err
	}
	c.mu.Lock()
	c.cur = s
	c.mu.Unlock()
	c.changed(true)
	defer c.closeSession(s)
	return s.Serve(ctx, c.handle)
}

// handle passes on live groupchat messages of the rooms, and logs a refused join.
func (c *roomConn) handle(st any) {
	switch v := st.(type) {
	case xmpp.Chat:
		room, nick, _ := strings.Cut(v.Remote, "/")
		room = strings.ToLower(room)
		if v.Type != "groupchat" || !c.rooms[room] || nick == "" || nick == c.cfg.Alias {
			return
		}
		if !v.Stamp.IsZero() {
			return // delayed (room history): not a sign of alerts flowing now
		}
		c.heard(room, nick, v.Text)
	case xmpp.Presence:
		room, nick, _ := strings.Cut(v.From, "/")
		if v.Type == "error" && c.rooms[strings.ToLower(room)] && strings.EqualFold(nick, c.cfg.Alias) {
			c.log.Error("cannot join room: no alert can be seen there (is gateways.oobetet.alias taken?)",
				zap.String("room", room), zap.String("error", v.Error))
		}
	}
}

// closeSession ends a session and closes its stream (jabber.Stream.Close).
func (c *roomConn) closeSession(s *jabber.Stream) {
	c.mu.Lock()
	wasUp := c.cur == s
	if wasUp {
		c.cur = nil
	}
	c.mu.Unlock()
	if wasUp {
		c.changed(false)
	}
	s.Close(c.log)
}
