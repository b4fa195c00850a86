package executive

import (
	"context"
	"errors"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/schema"
)

// The batch transport: how claimed batches travel between Redis and the executive. A batch is
// claimed (or was claimed ahead, behind the previous batch's last part) and parsed; once its
// round is decided it is applied in one call, or, a whole batch of minBatchInParts items or more,
// in parts on a spare connection, each part sent while the next is decided, the next batch's
// claim sent behind the last part under a backlog. After a failure, what is left of the batch
// and the batch claimed ahead are read back from the processing list with the sequence numbers
// they were claimed with.

// batches is the executive's batch transport (used by one goroutine at a time, as the Executive).
type batches struct {
	pool      *redis.Pool
	consumer  *queue.Consumer
	batchSize int
	metrics   *Metrics
	log       *zap.Logger
	// ahead is the batch claimed behind the last one's last part, processed next
	ahead *parsedBatch
	// readBack holds the sequence numbers of a failed batch's events and of the batch claimed
	// ahead of it, by item, for their reading back from the processing list (renumberReadBack)
	readBack map[string][]int64
}

// next is the batch to process: the one claimed ahead, else one claimed now (blocking up to wait
// for its first event); nil when none came.
func (b *batches) next(ctx context.Context, wait time.Duration) (*parsedBatch, error) {
	if next := b.takeAhead(); next != nil {
		return next, nil
	}
	batch, err := b.consumer.Next(ctx, b.batchSize, wait)
	if err != nil {
		return nil, err
	}
	next := parseBatch(batch)
	b.renumberReadBack(next)
	if len(batch.Items) == 0 {
		return nil, nil
	}
	return next, nil
}

// takeAhead hands over the batch claimed ahead, if any.
func (b *batches) takeAhead() *parsedBatch {
	next := b.ahead
	b.ahead = nil
	return next
}

// partsConn is the spare connection a round's items are applied on in parts, or nil when they
// are applied in one call: a batch smaller than minBatchInParts, or no connection to spare.
func (b *batches) partsConn(ctx context.Context, items int) redis.Conn {
	if items < minBatchInParts {
		return nil
	}
	return b.spareConn(ctx)
}

// dropAhead follows a failed batch: what is left of it, and the batch claimed ahead of it, stay
// in the processing list and are read from there, in claim order (see renumberReadBack).
func (b *batches) dropAhead(failed *parsedBatch) {
	b.consumer.MarkUnfinished()
	b.readBack = make(map[string][]int64)
	for _, p := range []*parsedBatch{failed, b.ahead} {
		if p == nil {
			continue
		}
		for _, e := range p.pending {
			if e.seq > 0 {
				b.readBack[e.raw] = append(b.readBack[e.raw], e.seq)
			}
		}
	}
	b.ahead = nil
}

// renumberReadBack gives the events of a batch read back from the processing list after a
// failure the sequence numbers they were claimed with (an item's copies take theirs in claim
// order): read back, events carry none, and one would not be ordered against a peer's result
// for its check in the same second.
func (b *batches) renumberReadBack(p *parsedBatch) {
	claimed := b.readBack
	b.readBack = nil
	if p.batch.FirstSequence != 0 {
		return
	}
	for i := range p.pending {
		e := &p.pending[i]
		if seqs := claimed[e.raw]; len(seqs) > 0 {
			e.seq, claimed[e.raw] = seqs[0], seqs[1:]
		}
	}
}

// split cuts the round into the parts whose items have the slots [bounds[k], bounds[k+1]); each
// part archives its own items (the whole batch's, in slot order), so the archive is written with
// the removal of the items it holds: when a later part fails, the items read back from the
// processing list were not archived yet.
func (p *roundPart) split(bounds []int) []*roundPart {
	parts := make([]*roundPart, 0, len(bounds)-1)
	events, rejected, lo := 0, 0, bounds[0]
	for _, hi := range bounds[1:] {
		e, j := events, rejected
		for e < len(p.events) && p.events[e].slot < hi {
			e++
		}
		for j < len(p.rejected) && p.rejected[j].Slot < hi {
			j++
		}
		part := &roundPart{events: p.events[events:e], facts: p.facts[events:e],
			cached: p.cached[events:e], rejected: p.rejected[rejected:j]}
		if p.archive != nil {
			part.archive = p.archive[lo:hi]
		}
		parts = append(parts, part)
		events, rejected, lo = e, j, hi
	}
	return parts
}

// minBatchInParts is the smallest batch applied in parts; firstPart is its first part's size.
const (
	minBatchInParts = 64
	firstPart       = 16
)

// partBounds splits a batch of n claimed items into slot ranges [b[k], b[k+1]) applied one after
// the other while the next is decided: the first small, so Redis waits little for its
// decisions, each next twice the last, as deciding an event costs the executive about half of
// what applying it costs Redis.
func partBounds(n int) []int {
	bounds := []int{0}
	for at, size := 0, firstPart; at < n; size *= 2 {
		at = min(n, at+size)
		bounds = append(bounds, at)
	}
	return bounds
}

// applyInParts decides and applies round 0 of a whole batch whose checks all differ in parts,
// each sent down applier before the previous one's reply is read: while Redis applies one part,
// the executive decides the next, and Redis finds it waiting. Parts share no check, so a part's
// decisions never wait for the previous part's outcome; each part's items are the oldest left in
// the processing list, which names them by slot (model.ApplyTarget.ListLen).
func (b *batches) applyInParts(conn, applier redis.Conn, round *roundPart, n int, aheadWhile context.Context, steps partSteps) ([]pendingEvent, error) {
	type sentPart struct {
		part *roundPart
		call *model.ApplyCall
	}
	var inflight, again []sentPart // again: parts to send once no reply is pending
	var retry []pendingEvent
	claimSent := false
	defer func() {
		// after an error, the parts sent still count what they finished (the batch is retried
		// from the processing list, with the batch claimed ahead)
		for _, s := range inflight {
			if statuses, err := s.call.Receive(applier); err == nil || errors.As(err, new(*model.WriteError)) {
				_, _ = steps.settle(s.part, statuses, err)
			}
		}
		if claimSent {
			b.receiveAhead(applier)
		}
	}()
	settle := func(s sentPart, statuses []model.Status, err error) error {
		more, err := steps.settle(s.part, statuses, err)
		retry = append(retry, more...)
		return err
	}
	receive := func() error {
		s := inflight[0]
		inflight = inflight[1:]
		statuses, err := s.call.Receive(applier)
		if errors.Is(err, model.ErrSendAgain) {
			again = append(again, s)
			if len(again) > 1 {
				return nil // the parts after the first one sent again fail on its account
			}
			// when Redis forgot the script, the parts sent from now on find it
			return model.LoadApplyScript(conn)
		}
		return settle(s, statuses, err)
	}
	bounds := partBounds(n)
	for k, p := range round.split(bounds) {
		if err := steps.decide(p); err != nil {
			return nil, err
		}
		call := steps.prepare(p, bounds[k+1]-bounds[k], bounds[k])
		if err := call.Send(applier); err != nil {
			return nil, err
		}
		inflight = append(inflight, sentPart{p, call})
		if len(inflight) == 2 {
			if err := receive(); err != nil {
				return nil, err
			}
		}
	}
	if aheadWhile != nil && aheadWhile.Err() == nil && len(again) == 0 {
		// behind the last part: see receiveAhead
		if err := b.consumer.SendClaim(applier, b.batchSize); err != nil {
			return nil, err
		}
		claimSent = true
	}
	for len(inflight) > 0 {
		if err := receive(); err != nil {
			return nil, err
		}
	}
	if claimSent {
		claimSent = false
		b.receiveAhead(applier)
	}
	for _, s := range again {
		// named, its conflicted items stay where they are, older than any claimed ahead (named
		// even when none was: this path is rare, and the names cost only bytes)
		s.call.SendItems()
		statuses, err := s.call.Do(applier)
		if err := settle(s, statuses, err); err != nil {
			return nil, err
		}
	}
	return retry, nil
}

// receiveAhead reads the claim sent behind a batch's last part. Sent on the parts' connection,
// it runs once they have all run, so Redis finds it waiting instead of idling for a round trip,
// the executive parses the batch before it is needed, and the items the parts left claimed
// (conflicts) stay older in the processing list than the claimed ones: retried in this batch's
// later rounds, or read back in claim order with the claimed ones if this batch fails (see
// dropAhead). A part sent again after the claim names its items, for the same reason. Once this
// batch is finished the list holds the claimed batch alone (only a whole batch is applied in
// parts), so that one is whole.
func (b *batches) receiveAhead(applier redis.Conn) {
	batch, err := b.consumer.ReceiveClaim(applier)
	if err != nil {
		b.metrics.redisErrors.Inc()
		b.log.Warn("claiming the next batch ahead failed; the processing list is read before claiming again", zap.Error(err))
		return
	}
	if len(batch.Items) > 0 {
		batch.Whole = true
		b.ahead = parseBatch(batch)
	}
}

// spareWait bounds the wait for a second connection to apply a batch in parts.
const spareWait = 10 * time.Millisecond

// spareConn is a second connection, for applying a batch in parts, or nil when the pool cannot
// spare one soon (redis.pool_size 1, or every connection busy): the batch is then applied in
// one call rather than waiting for a connection while holding one.
func (b *batches) spareConn(ctx context.Context) redis.Conn {
	if b.pool.MaxActive == 1 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, spareWait)
	defer cancel()
	c, err := b.pool.GetContext(ctx)
	if err != nil {
		return nil
	}
	return c
}

// parsedBatch is a claimed batch parsed: its events, and the items that are not valid events.
type parsedBatch struct {
	batch    queue.Batch
	pending  []pendingEvent
	failures []parseFailure
}

// parseFailure is a claimed item that is not a valid event; it becomes a rejected record when
// its batch is applied, at that batch's time.
type parseFailure struct {
	raw  string
	slot int
	err  error
}

// parseBatch validates every claimed item.
func parseBatch(batch queue.Batch) *parsedBatch {
	p := &parsedBatch{batch: batch, pending: make([]pendingEvent, 0, len(batch.Items))}
	for i, raw := range batch.Items {
		seq := int64(0)
		if batch.FirstSequence > 0 {
			seq = batch.FirstSequence + int64(i)
		}
		ev, err := schema.ParseEventString(raw)
		if err != nil {
			p.failures = append(p.failures, parseFailure{raw: raw, slot: i, err: err})
			continue
		}
		p.pending = append(p.pending, pendingEvent{raw: raw, seq: seq, slot: i, event: ev})
	}
	return p
}
