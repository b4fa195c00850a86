package jabber

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/schema"
)

// Store is what the bot's commands read and write. RedisStore implements it on the documented
// layout; tests may substitute their own.
type Store interface {
	// CheckByHash finds the check of an acknowledgement hash (found false when unknown).
	CheckByHash(ctx context.Context, hash string) (ref model.CheckRef, found bool, err error)
	// EntityNames lists every known entity name, sorted.
	EntityNames(ctx context.Context) ([]string, error)
	// EntityExists reports whether an entity is known.
	EntityExists(ctx context.Context, name string) (bool, error)
	// CurrentChecks maps each entity with current checks to their names, sorted.
	CurrentChecks(ctx context.Context, entities []string) (map[string][]string, error)
	// CheckStatuses reads the status and active maintenance of checks at now.
	CheckStatuses(ctx context.Context, now time.Time, refs []model.CheckRef) ([]model.CheckStatus, error)
	// Enqueue pushes an event for the executive.
	Enqueue(ctx context.Context, ev schema.Event) error
}

// RedisStore is the Store on Redis: reads through model's lookups, events LPUSHed onto the
// executive's queue as producers do.
type RedisStore struct {
	Pool *redis.Pool
	Keys schema.Keys
	// EventsQueue is the name of the executive's event list (default "events").
	EventsQueue string
}

func (r RedisStore) conn(ctx context.Context) (redis.Conn, error) {
	c, err := r.Pool.GetContext(ctx)
	if err != nil {
		return nil, fmt.Errorf("redis: %w", err)
	}
	return c, nil
}

// CheckByHash implements Store.
func (r RedisStore) CheckByHash(ctx context.Context, hash string) (model.CheckRef, bool, error) {
	c, err := r.conn(ctx)
	if err != nil {
		return model.CheckRef{}, false, err
	}
	defer c.Close()
	return model.CheckByHash(c, r.Keys, hash)
}

// EntityNames implements Store.
func (r RedisStore) EntityNames(ctx context.Context) ([]string, error) {
	c, err := r.conn(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return model.EntityNames(c, r.Keys)
}

// EntityExists implements Store.
func (r RedisStore) EntityExists(ctx context.Context, name string) (bool, error) {
	c, err := r.conn(ctx)
	if err != nil {
		return false, err
	}
	defer c.Close()
	return model.EntityExists(c, r.Keys, name)
}

// CurrentChecks implements Store.
func (r RedisStore) CurrentChecks(ctx context.Context, entities []string) (map[string][]string, error) {
	c, err := r.conn(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return model.CurrentChecksOf(c, r.Keys, entities)
}

// CheckStatuses implements Store.
func (r RedisStore) CheckStatuses(ctx context.Context, now time.Time, refs []model.CheckRef) ([]model.CheckStatus, error) {
	c, err := r.conn(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return model.CheckStatuses(c, r.Keys, now, refs)
}

// Enqueue implements Store: LPUSH onto the events list, where monitoring systems push.
func (r RedisStore) Enqueue(ctx context.Context, ev schema.Event) error {
	payload, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("encode event: %w", err)
	}
	c, err := r.conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	queue := r.EventsQueue
	if queue == "" {
		queue = "events"
	}
	if _, err := c.Do("LPUSH", r.Keys.Queue(queue), payload); err != nil {
		return fmt.Errorf("push event: %w", err)
	}
	return nil
}
