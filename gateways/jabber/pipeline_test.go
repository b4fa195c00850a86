package jabber

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/executive"
	"github.com/flapjackgo/flapjack/notifier"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/schema"
)

// pipeline runs the real executive (on the env's fake clock) over the env's Redis, so the
// bot's acknowledgements are checked against what the executive makes of them.
type pipeline struct {
	t *testing.T
	e *env
	x *executive.Executive
}

func newPipeline(t *testing.T, e *env) *pipeline {
	t.Helper()
	x := executive.New(executive.Options{Pool: e.db.Pool, Keys: e.keys, Config: executive.DefaultConfig(),
		Clock: e.clk, Identity: queue.LocalIdentity(), Version: "test"})
	return &pipeline{t: t, e: e, x: x}
}

// event LPUSHes a raw event, as monitoring systems do, and processes the queue.
func (p *pipeline) event(raw string) {
	p.t.Helper()
	p.e.db.Do(p.t, "LPUSH", p.e.keys.Events(), raw)
	p.process()
}

// process runs the executive until `events` is empty.
func (p *pipeline) process() {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.x.Run(ctx, true); err != nil {
		p.t.Fatalf("executive: %v", err)
	}
	if n := p.e.llen(p.e.keys.Events()); n != 0 {
		p.t.Fatalf("executive left %d events", n)
	}
}

// lastNotification is the newest notification on `notifications` (the executive RPUSHes).
func (p *pipeline) lastNotification() schema.Notification {
	p.t.Helper()
	raw, err := redis.String(p.e.db.Do(p.t, "LINDEX", p.e.keys.Notifications(), -1), nil)
	if err != nil {
		p.t.Fatalf("no notification on %s: %v", p.e.keys.Notifications(), err)
	}
	var n schema.Notification
	if err := json.Unmarshal([]byte(raw), &n); err != nil {
		p.t.Fatalf("notification %s: %v", raw, err)
	}
	return n
}

// contact seeds a contact interested in every check with jid as its jabber address, and no
// rules (so it gets everything, docs/decisions.md D6).
func (p *pipeline) contact(id, jid string) {
	p.t.Helper()
	k := p.e.keys
	p.e.db.Do(p.t, "HSET", k.Contact(id), "first_name", "Alice", "last_name", "Example", "email", "alice@example.com")
	p.e.db.Do(p.t, "HSET", k.ContactMedia(id), "jabber", jid)
	p.e.db.Do(p.t, "SADD", k.ContactsFor(schema.AllContactsID), id)
	p.e.db.Do(p.t, "SADD", k.AllContacts(), id)
}

// routeNotifications drains `notifications` through the real notifier, so the alerts it queues
// on jabber_notifications are delivered by the running gateway.
func (p *pipeline) routeNotifications() {
	p.t.Helper()
	n := notifier.New(notifier.Options{Pool: p.e.db.Pool, Keys: p.e.keys, Config: notifierConfig(),
		Clock: p.e.clk, Identity: queue.Identity{Host: "pipeline-notifier", PID: 1}, Version: "test"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := n.Run(ctx, true); err != nil {
		p.t.Fatalf("notifier: %v", err)
	}
}

// notifierConfig queues the jabber medium on its default list.
func notifierConfig() notifier.Config {
	cfg := notifier.DefaultConfig()
	cfg.MediaQueues = map[string]string{Medium: schema.DefaultMediumQueue(Medium)}
	return cfg
}
