package pagerduty

import (
	"context"
	_ "embed"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/gomodule/redigo/redis"
)

var (
	//go:embed scripts/claim.lua
	claimSource string
	claimScript = redis.NewScript(1, claimSource)

	//go:embed scripts/forget.lua
	forgetSource string
	forgetScript = redis.NewScript(1, forgetSource)
)

// queuedExpiry is how long pagerduty_acks_queued stays in Redis after the last claim: garbage
// collection only, far beyond PendingAckHold (the stored times decide, by the injected clock).
const queuedExpiry = 24 * time.Hour

// queuedAcks is pagerduty_acks_queued as read at the start of a run: check id -> unix ms at
// which some poller queued an acknowledgement event for it, as stored.
type queuedAcks map[string]string

// held reports whether an acknowledgement of id was queued less than PendingAckHold before now.
// An unreadable time holds nothing (and is forgotten).
func (q queuedAcks) held(id string, now time.Time) bool {
	raw, ok := q[id]
	if !ok {
		return false
	}
	at, err := strconv.ParseInt(raw, 10, 64)
	return err == nil && now.UnixMilli() < at+PendingAckHold.Milliseconds()
}

// readQueued reads every queued acknowledgement.
func (p *AckPoller) readQueued(ctx context.Context) (queuedAcks, error) {
	conn, err := p.pool.GetContext(ctx)
	if err != nil {
		return nil, fmt.Errorf("read queued acknowledgements: %w", err)
	}
	defer conn.Close()
	m, err := redis.StringMap(conn.Do("HGETALL", p.keys.PagerdutyAcksQueued()))
	if err != nil {
		return nil, fmt.Errorf("read queued acknowledgements: %w", err)
	}
	return queuedAcks(m), nil
}

// claim records, atomically across pollers, that an acknowledgement event for id is about to be
// queued at now; false when another poller queued one less than PendingAckHold ago.
func (p *AckPoller) claim(ctx context.Context, id string, now time.Time) (bool, error) {
	conn, err := p.pool.GetContext(ctx)
	if err != nil {
		return false, fmt.Errorf("claim acknowledgement of %s: %w", id, err)
	}
	defer conn.Close()
	n, err := redis.Int(claimScript.Do(conn, p.keys.PagerdutyAcksQueued(), id, now.UnixMilli(),
		PendingAckHold.Milliseconds(), queuedExpiry.Milliseconds()))
	if err != nil {
		return false, fmt.Errorf("claim acknowledgement of %s: %w", id, err)
	}
	return n == 1, nil
}

// forget removes entries (check id -> the value read) that still hold what was read.
func (p *AckPoller) forget(ctx context.Context, entries queuedAcks) error {
	if len(entries) == 0 {
		return nil
	}
	conn, err := p.pool.GetContext(ctx)
	if err != nil {
		return fmt.Errorf("forget queued acknowledgements: %w", err)
	}
	defer conn.Close()
	args := []any{p.keys.PagerdutyAcksQueued()}
	for _, id := range slices.Sorted(maps.Keys(entries)) {
		args = append(args, id, entries[id])
	}
	if _, err := forgetScript.Do(conn, args...); err != nil {
		return fmt.Errorf("forget queued acknowledgements: %w", err)
	}
	return nil
}
