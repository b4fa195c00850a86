// Package jabber is the Jabber (XMPP) medium (reference §4.1): a bot that delivers alerts from
// `jabber_notifications` to people (chat) and rooms (groupchat), and takes commands — ACKID
// acknowledgements, test notifications, status queries — from them.
//
// Gateway owns the XMPP connection: Run logs in (STARTTLS, direct TLS or, when explicitly
// allowed, plain), joins the configured rooms without history, greets them, keeps the
// connection alive with XEP-0199 pings and reconnects with capped backoff, rejoining the rooms.
// It implements gateways.Sender and gateways.Readier, so the shared runner (gateways.New) claims
// alerts only while connected: alerts wait in the queue during an outage instead of being
// retried into the dead-letter list. Each sent alert is followed by a ping whose answer proves
// the server took the message; an alert is only reported delivered after that.
//
// Commands are parsed by ParseCommand (pure) and executed against a Store (RedisStore in
// production), replies go back to the room or to the sender's bare JID.
package jabber

import (
	"context"
	"crypto/tls"
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/prometheus/client_golang/prometheus"
	xmpp "github.com/xmppo/go-xmpp"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/gateways"
	fjtext "github.com/flapjackgo/flapjack/internal/text"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/schema"
)

// Medium is the medium name of this gateway (metric label, queue jabber_notifications).
const Medium = "jabber"

// stableSession is how long a session must last for the next reconnect to be immediate again;
// shorter sessions keep backing off (a server that drops us at once is not hammered).
const stableSession = 30 * time.Second

// Options wires a Gateway.
type Options struct {
	Config Config
	// Pool and Keys reach Redis for the commands (ignored when Store is set).
	Pool *redis.Pool
	Keys schema.Keys
	// EventsQueue is the list acknowledgement and test events are pushed onto: the executive's
	// queue (executive.queue, default "events").
	EventsQueue string
	// Store overrides the Redis store of the commands.
	Store   Store
	Clock   clock.Clock
	Log     *zap.Logger
	Metrics *gateways.Metrics
	Version string
}

// Gateway is the Jabber bot. Run it once; Send and Ready may be called concurrently.
type Gateway struct {
	cfg       Config
	account   string // bare JID
	resource  string
	domain    string
	rooms     map[string]bool
	allowed   map[string]bool
	ids       []string
	bot       *bot
	clock     clock.Clock
	log       *zap.Logger
	connected prometheus.Gauge
	version   string
	running   atomic.Bool

	mu       sync.Mutex
	cur      *session      // nil while disconnected
	up       chan struct{} // closed while connected
	sessions int           // sessions started so far
}

// New validates the configuration and builds the gateway; it connects only when Run is called.
func New(o Options) (*Gateway, error) {
	if err := o.Config.Validate(); err != nil {
		return nil, err
	}
	cfg := o.Config.withDefaults()
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	if o.Metrics == nil {
		o.Metrics = gateways.NewMetrics(nil)
	}
	if o.Store == nil {
		if o.Pool == nil {
			return nil, errors.New("jabber gateway: a Redis pool or a Store is required")
		}
		o.Store = RedisStore{Pool: o.Pool, Keys: o.Keys, EventsQueue: o.EventsQueue}
	}
	log := o.Log.With(zap.String("stage", gateways.Stage(Medium)))
	account, resource := cfg.account()
	_, domain, _ := splitJID(account)
	g := &Gateway{
		cfg: cfg, account: account, resource: resource, domain: domain,
		rooms: map[string]bool{}, allowed: map[string]bool{}, ids: cfg.identifiers(),
		bot:   newBot(cfg, o.Store, o.Clock, log, o.Version),
		clock: o.Clock, log: log, version: o.Version,
		connected: o.Metrics.Connected.WithLabelValues(Medium),
		up:        make(chan struct{}),
	}
	for _, r := range cfg.Rooms {
		g.rooms[r] = true
	}
	for _, j := range cfg.AllowedJIDs {
		g.allowed[j] = true
	}
	g.connected.Set(0)
	return g, nil
}

// Ready blocks until the gateway is connected or ctx ends (gateways.Readier).
func (g *Gateway) Ready(ctx context.Context) error {
	_, err := g.session(ctx)
	return err
}

// Connected reports whether a session is up.
func (g *Gateway) Connected() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.cur != nil
}

// session waits for the current session.
func (g *Gateway) session(ctx context.Context) (*session, error) {
	for {
		g.mu.Lock()
		s, up := g.cur, g.up
		g.mu.Unlock()
		if s != nil {
			return s, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-up:
		}
	}
}

// Send delivers one alert (gateways.Sender): groupchat when the address is a configured room,
// chat otherwise. It waits for a connection, and returns once the server has confirmed the
// message; a connection lost on the way gives a retryable error.
func (g *Gateway) Send(ctx context.Context, a schema.Alert) error {
	to := strings.TrimSpace(a.Address)
	if local, domain, _ := splitJID(to); local == "" || domain == "" || strings.ContainsAny(to, " \t\n") {
		return gateways.Permanent(fmt.Errorf("address %q is not a JID", a.Address))
	}
	msg := xmpp.Chat{Remote: to, Type: "chat", Text: Text(a, g.cfg.Alias)}
	if g.rooms[bareJID(to)] {
		msg.Remote, msg.Type = bareJID(to), "groupchat"
	}
	s, err := g.session(ctx)
	if err != nil {
		return gateways.Retryable(fmt.Errorf("not connected to the XMPP server: %w", err), 0)
	}
	if err := s.sendConfirmed(ctx, msg, g.cfg.SendTimeout); err != nil {
		if strings.Contains(err.Error(), "exceeds server limit") {
			return gateways.Permanent(fmt.Errorf("send to %s: %w", to, err))
		}
		return gateways.Retryable(fmt.Errorf("send to %s: %w", to, err), 0)
	}
	return nil
}

// Run owns the connection until ctx ends: connect, serve, and reconnect with capped backoff
// (first attempt immediate, then ReconnectMin doubling up to ReconnectMax). It returns nil
// when ctx ends.
func (g *Gateway) Run(ctx context.Context) error {
	if !g.running.CompareAndSwap(false, true) {
		return errors.New("jabber gateway: Run called twice")
	}
	defer g.running.Store(false)
	if proxy := proxyFor(g.cfg.host(), os.Getenv); proxy != "" {
		g.log.Warn("connecting to the XMPP server through the proxy set in HTTP_PROXY (add the server to NO_PROXY to connect directly)",
			zap.String("server", g.cfg.host()))
	}
	failures := 0
	for ctx.Err() == nil {
		if failures > 0 {
			delay := g.backoff(failures)
			g.log.Info("reconnecting to the XMPP server", zap.Duration("in", delay), zap.Int("attempt", failures+1))
			sleep(ctx, delay)
			if ctx.Err() != nil {
				break
			}
		}
		client, err := g.dial(ctx)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			failures++
			g.log.Warn("cannot connect to the XMPP server", zap.String("server", g.cfg.host()),
				zap.String("jid", g.account), zap.String("tls", g.cfg.TLS), zap.Error(err))
			continue
		}
		started := time.Now()
		err = g.serve(ctx, client)
		if ctx.Err() != nil {
			break
		}
		g.log.Warn("XMPP connection lost", zap.Error(err), zap.Duration("after", time.Since(started)))
		if time.Since(started) >= stableSession {
			failures = 0
		} else {
			failures++
		}
	}
	g.log.Info("jabber gateway stopped")
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

// backoff is the wait before reconnecting after failures consecutive failures (at least 1).
func (g *Gateway) backoff(failures int) time.Duration {
	reconnect := queue.Backoff{First: g.cfg.ReconnectMin, Max: g.cfg.ReconnectMax}
	return reconnect.Delay(failures - 1)
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// options are the go-xmpp options of a connection. Never log them: they hold the password.
func (g *Gateway) options() xmpp.Options {
	o := xmpp.Options{
		Host: g.cfg.host(), User: g.account, Password: string(g.cfg.Password), Resource: g.resource,
		DialTimeout: g.cfg.DialTimeout,
		Status:      "chat", StatusMessage: "flapjack " + g.version,
		PeriodicServerPings:        true,
		PeriodicServerPingsPeriod:  int(g.cfg.Keepalive / time.Millisecond),
		PeriodicServerPingsTimeout: int(g.cfg.KeepaliveTimeout / time.Millisecond),
		SoftwareName:               "flapjack", SoftwareVersion: g.version,
	}
	tlsConfig := &tls.Config{ServerName: g.domain, InsecureSkipVerify: g.cfg.InsecureSkipVerify, MinVersion: tls.VersionTLS12}
	switch g.cfg.TLS {
	case TLSDirect:
		// go-xmpp: NoTLS false means TLS from the first byte.
		o.TLSConfig = tlsConfig
	case TLSStartTLS:
		o.NoTLS, o.StartTLS, o.TLSConfig = true, true, tlsConfig
	case TLSPlain:
		o.NoTLS, o.InsecureAllowUnencryptedAuth = true, true
	}
	return o
}

// dial logs in. go-xmpp cannot be interrupted while it connects, so the attempt runs aside and a
// client that arrives after ctx ended is closed.
func (g *Gateway) dial(ctx context.Context) (*xmpp.Client, error) {
	type result struct {
		c   *xmpp.Client
		err error
	}
	done := make(chan result, 1)
	opts := g.options()
	go func() {
		c, err := opts.NewClient()
		done <- result{c, err}
	}()
	select {
	case r := <-done:
		return r.c, r.err
	case <-ctx.Done():
		go func() {
			if r := <-done; r.c != nil {
				r.c.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

// serve runs one logged-in session until the connection fails or ctx ends.
func (g *Gateway) serve(ctx context.Context, client *xmpp.Client) error {
	s := &session{client: client, domain: g.domain, done: make(chan struct{}),
		pending: map[string]chan struct{}{}, occupants: map[string]map[string]string{}}
	incoming := make(chan any, 64)
	recvErr := make(chan error, 1)
	recvDone := make(chan struct{})
	go func() {
		defer close(recvDone)
		for {
			st, err := client.Recv()
			if err != nil {
				recvErr <- err
				return
			}
			if iq, ok := st.(xmpp.IQ); ok && s.confirm(iq.ID) {
				continue
			}
			select {
			case incoming <- st:
			case <-s.done:
				return
			}
		}
	}()

	g.mu.Lock()
	g.sessions++
	first := g.sessions == 1
	g.mu.Unlock()
	g.log.Info("connected to the XMPP server", zap.String("server", g.cfg.host()), zap.String("jid", g.account+"/"+g.resource),
		zap.String("tls", g.cfg.TLS), zap.Bool("encrypted", client.IsEncrypted()), zap.Strings("rooms", g.cfg.Rooms))
	if err := g.joinRooms(s, first); err != nil {
		g.closeSession(s, recvDone)
		return fmt.Errorf("join rooms: %w", err)
	}
	g.setConnected(s)
	defer g.closeSession(s, recvDone)

	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-recvErr:
			return err
		case st := <-incoming:
			g.handle(ctx, s, st)
		}
	}
}

// closeSession ends a session: senders waiting on it fail (retryably), the server is asked to
// close the stream so the reader's Recv fails, and once the reader has stopped the client is
// closed. go-xmpp's Close must not run while Recv does; when the server does not answer within
// a few seconds the reader is left to the keepalive, which closes the connection.
func (g *Gateway) closeSession(s *session, recvDone <-chan struct{}) {
	g.setDisconnected(s)
	s.end()
	s.writeMu.Lock()
	_, _ = s.client.SendOrg("</stream:stream>")
	s.writeMu.Unlock()
	select {
	case <-recvDone:
		go s.client.Close()
	case <-time.After(3 * time.Second):
		g.log.Warn("the XMPP server did not close the stream; leaving the connection to the keepalive")
	}
}

func (g *Gateway) joinRooms(s *session, first bool) error {
	// The greeting must not start with an identifier: another bot in the room would take it
	// for a command.
	greeting := fmt.Sprintf("Flapjack's Jabber gateway (version %s) started at %s, hello! Try typing '%s: help'.",
		g.version, g.clock.Now().Format("2006-01-02 15:04:05 MST"), g.cfg.Alias)
	if !first {
		greeting = fmt.Sprintf("Flapjack's Jabber gateway is back (reconnected at %s). Try typing '%s: help'.",
			g.clock.Now().Format("2006-01-02 15:04:05 MST"), g.cfg.Alias)
	}
	for _, room := range g.cfg.Rooms {
		err := s.write(func(c *xmpp.Client) error {
			// Zero history: no transcript replay, so old commands are never re-run.
			if _, err := c.JoinMUC(room, g.cfg.Alias, xmpp.StanzaHistory, 0, nil); err != nil {
				return err
			}
			_, err := c.Send(xmpp.Chat{Remote: room, Type: "groupchat", Text: greeting})
			return err
		})
		if err != nil {
			return fmt.Errorf("%s: %w", room, err)
		}
	}
	return nil
}

func (g *Gateway) setConnected(s *session) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.cur = s
	close(g.up)
	g.connected.Set(1)
}

func (g *Gateway) setDisconnected(s *session) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cur == s && s != nil {
		g.cur = nil
		g.up = make(chan struct{})
		g.connected.Set(0)
	}
}

// handle treats one received stanza (on the serve goroutine).
func (g *Gateway) handle(ctx context.Context, s *session, st any) {
	switch v := st.(type) {
	case xmpp.Chat:
		g.handleMessage(ctx, s, v)
	case xmpp.Presence:
		g.handlePresence(s, v)
	}
}

func (g *Gateway) handlePresence(s *session, p xmpp.Presence) {
	room := bareJID(p.From)
	if !g.rooms[room] {
		return
	}
	nick := strings.TrimPrefix(resourcePart(p.From), "/")
	if nick == "" {
		return
	}
	switch p.Type {
	case "error":
		if strings.EqualFold(nick, g.cfg.Alias) {
			g.log.Error("cannot join room", zap.String("room", room), zap.String("error", p.Error))
		}
	case "unavailable":
		delete(s.occupants[room], nick)
	default:
		if s.occupants[room] == nil {
			s.occupants[room] = map[string]string{}
		}
		s.occupants[room][nick] = bareJID(p.JID)
	}
}

// isOccupant reports whether bare is the real JID of an occupant of a configured room (known
// when the room shows real JIDs to the bot).
func (s *session) isOccupant(bare string) bool {
	for _, nicks := range s.occupants {
		for _, real := range nicks {
			if real != "" && real == bare {
				return true
			}
		}
	}
	return false
}

func (g *Gateway) handleMessage(ctx context.Context, s *session, m xmpp.Chat) {
	if m.Type == "error" {
		g.log.Warn("the XMPP server bounced a message", zap.String("from", m.Remote), zap.String("text", fjtext.Truncate(m.Text, 200)))
		return
	}
	if strings.TrimSpace(m.Text) == "" || m.Type == "headline" {
		return // chat states, receipts, subjects
	}
	from := m.Remote
	bare := bareJID(from)
	nick := strings.TrimPrefix(resourcePart(from), "/")
	var text, replyTo, replyType, who string
	switch {
	case m.Type == "groupchat":
		if !g.rooms[bare] || nick == "" || strings.EqualFold(nick, g.cfg.Alias) {
			return
		}
		if !m.Stamp.IsZero() {
			return // room history: never re-run old commands
		}
		cmd, ok := roomCommand(m.Text, g.ids)
		if !ok {
			return
		}
		text, replyTo, replyType, who = cmd, bare, "groupchat", nick
	case g.rooms[bare]:
		// A private message from a room occupant.
		if nick == "" {
			return
		}
		text, replyTo, replyType, who = chatCommand(m.Text, g.ids), from, "chat", nick
	default:
		if !g.allowed[bare] && !s.isOccupant(bare) {
			g.log.Warn("ignoring a command from a JID that is neither in gateways.jabber.allowed_jids nor in a room",
				zap.String("from", from), zap.String("text", fjtext.Truncate(m.Text, 200)))
			return
		}
		text, replyTo, replyType, who = chatCommand(m.Text, g.ids), bare, "chat", bare
	}
	if text == "" {
		return
	}
	if !m.Stamp.IsZero() {
		// Stored while the bot was offline (prosody's mod_offline): too old to act on blindly.
		g.log.Warn("ignoring a command sent while the gateway was offline", zap.String("from", from),
			zap.Time("sent", m.Stamp), zap.String("text", fjtext.Truncate(text, 200)))
		s.reply(g.log, replyTo, replyType, fmt.Sprintf("I was offline when you sent '%s' (at %s), so I did nothing; send it again if it still applies.",
			fjtext.Truncate(text, 200), m.Stamp.UTC().Format("2006-01-02 15:04:05 MST")))
		return
	}
	cmd := ParseCommand(text)
	g.log.Info("command", zap.String("from", from), zap.String("command", commandName(cmd)))
	reply := g.bot.execute(ctx, cmd, who)
	s.reply(g.log, replyTo, replyType, reply)
}

// session is one logged-in connection.
type session struct {
	client  *xmpp.Client
	domain  string
	writeMu sync.Mutex // serialises our writes (go-xmpp writes each stanza with one Write)
	done    chan struct{}
	endOnce sync.Once

	mu      sync.Mutex
	pending map[string]chan struct{} // ping id -> closed when answered
	seq     atomic.Uint64

	// occupants maps room -> nick -> real bare JID ("" when the room hides it); serve goroutine
	// only.
	occupants map[string]map[string]string
}

var errSessionEnded = errors.New("XMPP connection lost")

func (s *session) end() { s.endOnce.Do(func() { close(s.done) }) }

// write runs fn with the write lock, unless the session has ended.
func (s *session) write(fn func(*xmpp.Client) error) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	select {
	case <-s.done:
		return errSessionEnded
	default:
	}
	return fn(s.client)
}

// sendConfirmed sends msg followed by a ping to the server and waits for the answer: the server
// handles a client's stanzas in order, so the answer proves it took the message.
func (s *session) sendConfirmed(ctx context.Context, msg xmpp.Chat, timeout time.Duration) error {
	id := fmt.Sprintf("flapjack-%d", s.seq.Add(1))
	answered := make(chan struct{})
	s.mu.Lock()
	s.pending[id] = answered
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.pending, id)
		s.mu.Unlock()
	}()
	var to strings.Builder
	_ = xml.EscapeText(&to, []byte(s.domain))
	err := s.write(func(c *xmpp.Client) error {
		if _, err := c.Send(msg); err != nil {
			return err
		}
		_, err := c.SendOrg(fmt.Sprintf("<iq type='get' id='%s' to='%s'><ping xmlns='urn:xmpp:ping'/></iq>", id, to.String()))
		return err
	})
	if err != nil {
		return err
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-answered:
		return nil
	case <-s.done:
		return fmt.Errorf("%w before the server confirmed the message", errSessionEnded)
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return fmt.Errorf("the server did not confirm the message within %s", timeout)
	}
}

// confirm marks a ping answered; false when id is not one of ours.
func (s *session) confirm(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, ok := s.pending[id]
	if ok {
		close(ch)
		delete(s.pending, id)
	}
	return ok
}

func (s *session) reply(log *zap.Logger, to, typ, text string) {
	err := s.write(func(c *xmpp.Client) error {
		_, err := c.Send(xmpp.Chat{Remote: to, Type: typ, Text: text})
		return err
	})
	if err != nil {
		log.Warn("cannot send a reply", zap.String("to", to), zap.Error(err))
	}
}
