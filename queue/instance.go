package queue

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/schema"
)

// Default heartbeat timing: a record is refreshed every Beat and kept for 3 beats; a peer whose
// last heartbeat is older than StaleAfter is dead and its claimed items are requeued.
const (
	DefaultBeat       = 5 * time.Second
	DefaultStaleAfter = 15 * time.Second
)

// Registry keeps one instance's record (`<stage>_instance:HOST:PID`: boot_time, heartbeat,
// version, host, pid, queue and counters) alive, and recovers the claimed items of dead peers of
// the same stage. The set `<stage>_instances` lists the instances so dead ones are found without
// scanning keys.
//
// A missing record or an old heartbeat proves death only to a judge that has itself been
// connected to Redis for longer than StaleAfter: after an outage every record has expired, and a
// live peer needs a beat to write its own again. So a registry judges peers by their records
// only once its heartbeats have succeeded, without a gap, for longer than StaleAfter; before
// that it reaps only peers on its own host whose process is gone (an exact test, so a restarted
// stage still redoes its predecessor's work first).
type Registry struct {
	Pool       *redis.Pool
	Keys       schema.Keys
	Spec       Spec
	ID         Identity
	Clock      clock.Clock
	Version    string
	Beat       time.Duration
	StaleAfter time.Duration
	Log        *zap.Logger
	// Stats, when set, adds fields (processed counts...) to every heartbeat.
	Stats func() map[string]int64
	// Fields are more fields written with every heartbeat (a process record's stages).
	Fields map[string]string
	// KeepAlive lists more keys of this instance whose expiry every heartbeat renews, with their
	// time to live (the executive's event_counters:HOST:PID, 12 days as in Flapjack).
	KeepAlive map[string]time.Duration

	boot time.Time

	mu     sync.Mutex
	lastOK time.Time // the last heartbeat that succeeded
	since  time.Time // the first heartbeat of the current unbroken run; zero while failing
}

func (r *Registry) beat() time.Duration {
	if r.Beat <= 0 {
		return DefaultBeat
	}
	return r.Beat
}

func (r *Registry) staleAfter() time.Duration {
	if r.StaleAfter <= 0 {
		return 3 * r.beat()
	}
	return r.StaleAfter
}

// Register writes the instance record and joins the instance set. Call it before claiming
// anything, so every processing list belongs to a registered instance.
func (r *Registry) Register(ctx context.Context) error {
	r.boot = r.Clock.Now()
	return r.Heartbeat(ctx)
}

// Heartbeat refreshes the record.
func (r *Registry) Heartbeat(ctx context.Context) error {
	conn, err := r.Pool.GetContext(ctx)
	if err != nil {
		return fmt.Errorf("heartbeat %s: %w", r.ID.ID(), err)
	}
	defer conn.Close()
	record := r.Keys.Instance(r.Spec.Stage, r.ID.ID())
	bootID, pidNS, start := processFingerprint(r.ID.PID)
	args := redis.Args{record,
		"boot_id", bootID, "pid_namespace", pidNS, "process_start", start,
		"boot_time", r.boot.Unix(),
		"heartbeat", r.Clock.Now().Unix(),
		"version", r.Version,
		"host", r.ID.Host,
		"pid", r.ID.PID,
		"queue", r.Spec.Source,
		"processing", r.Keys.Processing(r.Spec.Stage, r.ID.ID()),
	}
	if r.Stats != nil {
		for k, v := range r.Stats() {
			args = args.Add(k, v)
		}
	}
	for k, v := range r.Fields {
		args = args.Add(k, v)
	}
	ttl := int64((3 * r.beat()).Seconds())
	if ttl < 1 {
		ttl = 1
	}
	conn.Send("MULTI")
	conn.Send("HSET", args...)
	conn.Send("EXPIRE", record, ttl)
	conn.Send("SADD", r.Keys.Instances(r.Spec.Stage), r.ID.ID())
	for key, keep := range r.KeepAlive {
		conn.Send("EXPIRE", key, int64(keep/time.Second))
	}
	if _, err := conn.Do("EXEC"); err != nil {
		r.noteHeartbeat(false)
		return fmt.Errorf("heartbeat %s: %w", r.ID.ID(), err)
	}
	r.noteHeartbeat(true)
	return nil
}

// noteHeartbeat keeps the time since which this instance's heartbeats have succeeded without a
// gap. A gap longer than two beats (a frozen Redis, this process stopped) starts a new run:
// peers' records may have expired meanwhile too.
func (r *Registry) noteHeartbeat(ok bool) {
	now := r.Clock.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if !ok {
		r.since = time.Time{}
		return
	}
	if r.since.IsZero() || now.Sub(r.lastOK) > 2*r.beat() {
		r.since = now
	}
	r.lastOK = now
}

// LostRedis records that a command of this instance failed (a stage's claim or apply): until
// its heartbeats succeed again for longer than StaleAfter it judges no peer by its record.
func (r *Registry) LostRedis() { r.noteHeartbeat(false) }

// judges reports whether this instance has been connected long enough to take a missing record
// or an old heartbeat as proof of death.
func (r *Registry) judges(now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.since.IsZero() && now.Sub(r.since) > r.staleAfter()
}

// Deregister removes the record, after the processing list has been emptied.
func (r *Registry) Deregister(ctx context.Context) error {
	conn, err := r.Pool.GetContext(ctx)
	if err != nil {
		return fmt.Errorf("deregister %s: %w", r.ID.ID(), err)
	}
	defer conn.Close()
	conn.Send("MULTI")
	conn.Send("DEL", r.Keys.Instance(r.Spec.Stage, r.ID.ID()))
	conn.Send("SREM", r.Keys.Instances(r.Spec.Stage), r.ID.ID())
	if _, err := conn.Do("EXEC"); err != nil {
		return fmt.Errorf("deregister %s: %w", r.ID.ID(), err)
	}
	return nil
}

// RecoverDead requeues the processing lists of dead peers (see alive) and forgets them. It
// returns how many items went back to the queue.
func (r *Registry) RecoverDead(ctx context.Context) (int, error) {
	conn, err := r.Pool.GetContext(ctx)
	if err != nil {
		return 0, fmt.Errorf("list %s instances: %w", r.Spec.Stage, err)
	}
	members, err := redis.Strings(conn.Do("SMEMBERS", r.Keys.Instances(r.Spec.Stage)))
	conn.Close()
	if err != nil {
		return 0, fmt.Errorf("list %s instances: %w", r.Spec.Stage, err)
	}
	now := r.Clock.Now()
	total := 0
	for _, member := range members {
		if member == r.ID.ID() {
			continue
		}
		alive, err := r.alive(ctx, member, now)
		if err != nil {
			return total, err
		}
		if alive {
			continue
		}
		n, err := r.reap(ctx, member)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// alive judges a peer. The process check comes first: a peer on this host whose record carries
// a fingerprint of this boot and PID namespace is dead when that process is gone, whoever
// judges. Otherwise the peer is dead when its record is gone or its heartbeat is older than
// StaleAfter, but only if this instance judges (see judges): a judge that has just reconnected
// leaves it alive. A running local process that stopped beating (wedged) is judged so too.
func (r *Registry) alive(ctx context.Context, member string, now time.Time) (bool, error) {
	conn, err := r.Pool.GetContext(ctx)
	if err != nil {
		return false, fmt.Errorf("read instance %s: %w", member, err)
	}
	defer conn.Close()
	v, err := redis.Strings(conn.Do("HMGET", r.Keys.Instance(r.Spec.Stage, member),
		"heartbeat", "host", "pid", "boot_id", "pid_namespace", "process_start"))
	if err != nil {
		return false, fmt.Errorf("read instance %s: %w", member, err)
	}
	if pid, err := strconv.Atoi(v[2]); err == nil && v[1] == r.ID.Host {
		if known, dead := localPeer(pid, v[3], v[4], v[5]); known && dead {
			return false, nil
		}
	}
	if !r.judges(now) {
		return true, nil
	}
	last, err := strconv.ParseInt(v[0], 10, 64)
	if err != nil {
		return false, nil // no record: it expired three beats after the last heartbeat
	}
	return now.Sub(time.Unix(last, 0)) <= r.staleAfter(), nil
}

func (r *Registry) reap(ctx context.Context, member string) (int, error) {
	n := 0
	// A registry without a queue (the process records) has nothing to requeue: it only forgets.
	if r.Spec.Source != "" {
		var err error
		if n, err = Requeue(ctx, r.Pool, r.Keys.Processing(r.Spec.Stage, member), r.Spec); err != nil {
			return n, fmt.Errorf("recover items of dead %s %s: %w", r.Spec.Stage, member, err)
		}
	}
	conn, err := r.Pool.GetContext(ctx)
	if err != nil {
		return n, fmt.Errorf("forget dead %s %s: %w", r.Spec.Stage, member, err)
	}
	defer conn.Close()
	conn.Send("MULTI")
	conn.Send("SREM", r.Keys.Instances(r.Spec.Stage), member)
	conn.Send("DEL", r.Keys.Instance(r.Spec.Stage, member))
	if _, err := conn.Do("EXEC"); err != nil {
		return n, fmt.Errorf("forget dead %s %s: %w", r.Spec.Stage, member, err)
	}
	r.Log.Warn("recovered items of a dead instance", zap.String("instance", member),
		zap.Int("requeued", n), zap.String("queue", r.Spec.Source))
	return n, nil
}

// Run refreshes the heartbeat and reaps dead peers every beat until ctx ends. Errors are logged
// (rate-limited by the beat itself) and retried; Redis outages must not stop a stage.
func (r *Registry) Run(ctx context.Context) {
	t := time.NewTicker(r.beat())
	defer t.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		err := r.Heartbeat(ctx)
		if err == nil {
			if _, err = r.RecoverDead(ctx); err != nil {
				r.LostRedis()
			}
		}
		switch {
		case err != nil && !failing:
			r.Log.Error("heartbeat failed; retrying every beat", zap.Error(err))
			failing = true
		case err == nil && failing:
			r.Log.Info("heartbeat restored")
			failing = false
		}
	}
}
