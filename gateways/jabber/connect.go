package jabber

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	xmpp "github.com/xmppo/go-xmpp"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/queue"
)

// Run owns the connection until ctx ends: connect, serve, and reconnect with capped backoff
// (first attempt immediate, then ReconnectMin doubling up to ReconnectMax). It returns nil
// when ctx ends.
func (c *Client) Run(ctx context.Context) error {
	if !c.running.CompareAndSwap(false, true) {
		return errors.New("jabber gateway: Run called twice")
	}
	defer c.running.Store(false)
	if proxy := proxyFor(c.cfg.host(), os.Getenv); proxy != "" {
		c.log.Warn("connecting to the XMPP server through the proxy set in HTTP_PROXY (add the server to NO_PROXY to connect directly)",
			zap.String("server", c.cfg.host()))
	}
	c.login().KeepConnected(ctx, c.log, c.reconnectBackoff(), c.serve)
	c.log.Info("jabber gateway stopped")
	return nil
}

// proxyFor tells whether go-xmpp will dial addr through a proxy: it honours HTTP_PROXY /
// http_proxy unless an entry of NO_PROXY / no_proxy is a substring of the address.
func proxyFor(addr string, getenv func(string) string) string {
	proxy := getenv("HTTP_PROXY")
	if proxy == "" {
		proxy = getenv("http_proxy")
	}
	if proxy == "" {
		return ""
	}
	noProxy := getenv("NO_PROXY")
	if noProxy == "" {
		noProxy = getenv("no_proxy")
	}
	for _, np := range strings.Split(noProxy, ",") {
		if np = strings.TrimSpace(np); np != "" && strings.Contains(strings.ToUpper(addr), strings.ToUpper(np)) {
			return ""
		}
	}
	return proxy
}

// reconnectBackoff spaces connection attempts: ReconnectMin doubling up to ReconnectMax.
func (c *Client) reconnectBackoff() queue.Backoff {
	return queue.Backoff{First: c.cfg.ReconnectMin, Max: c.cfg.ReconnectMax}
}

// login is the Client's XMPP account.
func (c *Client) login() Login {
	return Login{Host: c.cfg.host(), User: c.account, Password: string(c.cfg.Password), Resource: c.resource,
		Domain: c.domain, TLS: c.cfg.TLS, InsecureSkipVerify: c.cfg.InsecureSkipVerify,
		DialTimeout: c.cfg.DialTimeout, Keepalive: c.cfg.Keepalive, KeepaliveTimeout: c.cfg.KeepaliveTimeout,
		Software: "flapjack", Version: c.version}
}

// serve runs one logged-in session until the connection fails or ctx ends.
func (c *Client) serve(ctx context.Context, client *xmpp.Client) error {
	s := &session{domain: c.domain, pending: map[string]chan struct{}{}, occupants: map[string]map[string]string{}}
	s.Stream = StartStream(client, errSessionEnded, s.consumed)

	c.mu.Lock()
	c.sessions++
	first := c.sessions == 1
	c.mu.Unlock()
	c.log.Info("connected to the XMPP server", zap.String("server", c.cfg.host()), zap.String("jid", c.account+"/"+c.resource),
		zap.String("tls", c.cfg.TLS), zap.Bool("encrypted", client.IsEncrypted()), zap.Strings("rooms", c.cfg.Rooms))
	if err := c.joinRooms(s, first); err != nil {
		c.closeSession(s)
		return fmt.Errorf("join rooms: %w", err)
	}
	c.setConnected(s)
	defer c.closeSession(s)
	return s.Serve(ctx, func(st any) { c.handle(ctx, s, st) })
}

// closeSession ends a session: senders waiting on it fail (retryably), and the stream is
// closed (Stream.Close).
func (c *Client) closeSession(s *session) {
	c.setDisconnected(s)
	s.Close(c.log)
}

func (c *Client) joinRooms(s *session, first bool) error {
	// The greeting must not start with an identifier: another bot in the room would take it
	// for a command.
	greeting := fmt.Sprintf("Flapjack's Jabber gateway (version %s) started at %s, hello! Try typing '%s: help'.",
		c.version, c.clock.Now().Format("2006-01-02 15:04:05 MST"), c.cfg.Alias)
	if !first {
		greeting = fmt.Sprintf("Flapjack's Jabber gateway is back (reconnected at %s). Try typing '%s: help'.",
			c.clock.Now().Format("2006-01-02 15:04:05 MST"), c.cfg.Alias)
	}
	for _, room := range c.cfg.Rooms {
		err := s.Write(func(x *xmpp.Client) error {
			// Zero history: no transcript replay, so old commands are never re-run.
			if _, err := x.JoinMUC(room, c.cfg.Alias, xmpp.StanzaHistory, 0, nil); err != nil {
				return err
			}
			_, err := x.Send(xmpp.Chat{Remote: room, Type: "groupchat", Text: greeting})
			return err
		})
		if err != nil {
			return fmt.Errorf("%s: %w", room, err)
		}
	}
	return nil
}
