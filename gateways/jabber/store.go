package jabber

import (
	"context"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/events"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/model/views"
	"github.com/flapjackgo/flapjack/oncall"
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
	CheckStatuses(ctx context.Context, now time.Time, refs []model.CheckRef) ([]views.CheckStatus, error)
	// FailingChecks maps each entity with failing current checks to their names, sorted.
	FailingChecks(ctx context.Context) (map[string][]string, error)
	// Enqueue pushes events for the executive, in order, all or none.
	Enqueue(ctx context.Context, evs ...schema.Event) error
	// CreateScheduledMaintenance stores a scheduled maintenance window on each check in turn
	// and says on how many it did before an error.
	CreateScheduledMaintenance(ctx context.Context, refs []model.CheckRef, start time.Time, duration time.Duration,
		summary string, now time.Time) (created int, err error)
	// Schedules reads the on-call schedules, sorted by id.
	Schedules(ctx context.Context) ([]*oncall.Schedule, error)
}

// Schedules implements Store; a stored schedule that cannot be read is left out.
func (r RedisStore) Schedules(ctx context.Context) ([]*oncall.Schedule, error) {
	c, err := r.conn(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	out, _, err := roster.Schedules(c, r.Keys)
	return out, err
}

// RedisStore is the Store on Redis: reads through model/views' lookups, events queued through
// events.Publisher.
type RedisStore struct {
	Pool *redis.Pool
	Keys schema.Keys
	// EventsQueue is the name of the executive's event list (executive.queue; "" = events).
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
	return views.CheckByHash(c, r.Keys, hash)
}

// EntityNames implements Store.
func (r RedisStore) EntityNames(ctx context.Context) ([]string, error) {
	c, err := r.conn(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return views.EntityNames(c, r.Keys)
}

// EntityExists implements Store.
func (r RedisStore) EntityExists(ctx context.Context, name string) (bool, error) {
	c, err := r.conn(ctx)
	if err != nil {
		return false, err
	}
	defer c.Close()
	return views.EntityExists(c, r.Keys, name)
}

// CurrentChecks implements Store.
func (r RedisStore) CurrentChecks(ctx context.Context, entities []string) (map[string][]string, error) {
	c, err := r.conn(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return checkstate.CurrentChecksOf(c, r.Keys, entities)
}

// CheckStatuses implements Store.
func (r RedisStore) CheckStatuses(ctx context.Context, now time.Time, refs []model.CheckRef) ([]views.CheckStatus, error) {
	c, err := r.conn(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return views.CheckStatuses(c, r.Keys, now, refs)
}

// FailingChecks implements Store.
func (r RedisStore) FailingChecks(ctx context.Context) (map[string][]string, error) {
	c, err := r.conn(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return views.CurrentFailingChecks(c, r.Keys)
}

// Enqueue implements Store: the events go onto the executive's list through the one publisher.
func (r RedisStore) Enqueue(ctx context.Context, evs ...schema.Event) error {
	if _, err := events.NewPublisher(r.Pool, r.Keys, r.EventsQueue).Publish(ctx, evs...); err != nil {
		return fmt.Errorf("push events: %w", err)
	}
	return nil
}

// CreateScheduledMaintenance implements Store through checkstate.CreateScheduledMaintenance (the
// writer of `flapjack maintenance create`), one check at a time on one connection.
func (r RedisStore) CreateScheduledMaintenance(ctx context.Context, refs []model.CheckRef, start time.Time,
	duration time.Duration, summary string, now time.Time) (int, error) {
	c, err := r.conn(ctx)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	for i, ref := range refs {
		if err := ctx.Err(); err != nil {
			return i, err
		}
		if err := checkstate.CreateScheduledMaintenance(c, r.Keys, ref.Entity, ref.Check, start, duration, summary, now); err != nil {
			return i, err
		}
	}
	return len(refs), nil
}
