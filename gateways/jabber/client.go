package jabber

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gomodule/redigo/redis"
	"github.com/prometheus/client_golang/prometheus"
	xmpp "github.com/xmppo/go-xmpp"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/schema"
)

// Medium is the medium name of this gateway (metric label, queue jabber_notifications).
const Medium = "jabber"

// ClientOptions wires a Client.
type ClientOptions struct {
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

// Client is the Jabber bot's XMPP client. Run it once; Send and Ready may be called concurrently.
type Client struct {
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

// NewClient validates the configuration and builds the client; it connects only when Run is called.
func NewClient(o ClientOptions) (*Client, error) {
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
	_, domain, _ := SplitJID(account)
	c := &Client{
		cfg: cfg, account: account, resource: resource, domain: domain,
		rooms: map[string]bool{}, allowed: map[string]bool{}, ids: cfg.identifiers(),
		bot:   newBot(cfg, o.Store, o.Clock, log, o.Version),
		clock: o.Clock, log: log, version: o.Version,
		connected: o.Metrics.Connected.WithLabelValues(Medium),
		up:        make(chan struct{}),
	}
	for _, r := range cfg.Rooms {
		c.rooms[r] = true
	}
	for _, j := range cfg.AllowedJIDs {
		c.allowed[j] = true
	}
	c.connected.Set(0)
	return c, nil
}

// Ready blocks until the client is connected or ctx ends (gateways.Readier).
func (c *Client) Ready(ctx context.Context) error {
	_, err := c.session(ctx)
	return err
}

// Connected reports whether a session is up.
func (c *Client) Connected() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cur != nil
}

// session waits for the current session.
func (c *Client) session(ctx context.Context) (*session, error) {
	for {
		c.mu.Lock()
		s, up := c.cur, c.up
		c.mu.Unlock()
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
func (c *Client) Send(ctx context.Context, a schema.Alert) error {
	to := strings.TrimSpace(a.Address)
	if local, domain, _ := SplitJID(to); local == "" || domain == "" || strings.ContainsAny(to, " \t\n") {
		return gateways.Permanent(fmt.Errorf("address %q is not a JID", a.Address))
	}
	msg := xmpp.Chat{Remote: to, Type: "chat", Text: Text(a, c.cfg.Alias)}
	if c.rooms[bareJID(to)] {
		msg.Remote, msg.Type = bareJID(to), "groupchat"
	}
	s, err := c.session(ctx)
	if err != nil {
		return gateways.Retryable(fmt.Errorf("not connected to the XMPP server: %w", err), 0)
	}
	if err := s.sendConfirmed(ctx, msg, c.cfg.SendTimeout); err != nil {
		if strings.Contains(err.Error(), "exceeds server limit") {
			return gateways.Permanent(fmt.Errorf("send to %s: %w", to, err))
		}
		return gateways.Retryable(fmt.Errorf("send to %s: %w", to, err), 0)
	}
	return nil
}

func (c *Client) setConnected(s *session) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cur = s
	close(c.up)
	c.connected.Set(1)
}

func (c *Client) setDisconnected(s *session) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur == s && s != nil {
		c.cur = nil
		c.up = make(chan struct{})
		c.connected.Set(0)
	}
}
