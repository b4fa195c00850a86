package receiver

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/events"
	"github.com/flapjackgo/flapjack/internal/text"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/schema"
)

// MirrorOptions configures RunMirror.
type MirrorOptions struct {
	// Source is the Flapjack 1.x's Redis (its archive lists are only read), SourceName what
	// identifies it in the cursor key: its URL without the password.
	Source     events.Pool
	SourceName string
	// Dest is this Flapjack's Redis, where the cursors are kept (Keys.MirrorCursors): the one
	// the Publisher queues on.
	Dest events.Pool
	Keys schema.Keys
	// All queues everything archived now, from the oldest event, and returns. Otherwise
	// (--follow) RunMirror tails the archives until ctx ends, continuing from the cursors of an
	// earlier run or, on the first run, from Since or else from the end of what is archived.
	All bool
	// Include, when set, keeps only events whose ENTITY:CHECK it matches.
	Include *regexp.Regexp
	// Since, when set, skips events archived in hours before it and events whose time is before it.
	Since time.Time
	// Poll is how long --follow waits when nothing new was archived (0: a second).
	Poll time.Duration
}

// MirrorReport counts what RunMirror did.
type MirrorReport struct {
	Read     int // events read from the source's archives
	Queued   int // events queued here
	Skipped  int // events --include or --since left out
	Rejected int // events refused by validation (logged with their reasons)
}

// mirrorChunk is how many archived events are read, and queued with their cursor, at a time.
const mirrorChunk = 1000

// RunMirror queues here, in order, the events a Flapjack 1.x archived (archive_events) in
// events_archive:YYYYMMDDHH, the lists named in its known_events_archive_keys: hour by hour, each list from its oldest end (its tail: Flapjack 1.x
// archives with BRPOPLPUSH, newest at the head). The position reached in each list is kept in
// Keys.MirrorCursors(SourceName) here, moved in the same transaction as the events queued
// (events.Publisher.PublishEncodedWith), so a mirror stopped at any point and started again
// neither repeats nor skips an event. Invalid archived events are logged and counted, not
// queued. With All it returns after one pass over what is archived; otherwise it follows until
// ctx ends, retrying with backoff while either Redis is unavailable.
func RunMirror(ctx context.Context, opts MirrorOptions, pub *events.Publisher, log *zap.Logger) (MirrorReport, error) {
	if log == nil {
		log = zap.NewNop()
	}
	if opts.Poll <= 0 {
		opts.Poll = time.Second
	}
	m := &mirror{opts: opts, pub: pub, log: log.With(zap.String("receiver", "mirror"), zap.String("source", opts.SourceName)),
		cursorKey: opts.Keys.MirrorCursors(opts.SourceName), sourceKeys: schema.NewKeys("")}
	backoff := queue.Backoff{First: retryFirst, Max: retryMax}
	started := false
	for {
		var err error
		if !started {
			err = m.start(ctx)
			started = err == nil
		}
		progressed := false
		if err == nil {
			progressed, err = m.pass(ctx)
		}
		switch {
		case ctx.Err() != nil:
			return m.rep, nil
		case err != nil && opts.All:
			return m.rep, err
		case err != nil:
			delay := backoff.Next()
			m.log.Error("mirroring failed; retrying", zap.Error(err), zap.Duration("retry_in", delay))
			if !sleep(ctx, delay) {
				return m.rep, nil
			}
			continue
		case opts.All:
			m.log.Info("mirrored everything archived", zap.Int("read", m.rep.Read), zap.Int("queued", m.rep.Queued),
				zap.Int("skipped", m.rep.Skipped), zap.Int("rejected", m.rep.Rejected))
			return m.rep, nil
		}
		backoff = queue.Backoff{First: retryFirst, Max: retryMax}
		if !progressed && !sleep(ctx, opts.Poll) {
			return m.rep, nil
		}
	}
}

type mirror struct {
	opts       MirrorOptions
	pub        *events.Publisher
	log        *zap.Logger
	cursorKey  string
	sourceKeys schema.Keys // Flapjack 1.x's keys have no prefix
	cursors    map[string]int64
	rep        MirrorReport
	held       string // ARCHIVE#POSITION of an invalid newest event left for one poll
}

// start loads the cursors, or sets where a first run begins.
func (m *mirror) start(ctx context.Context) error {
	m.cursors = map[string]int64{}
	if m.opts.All {
		return nil // everything archived, from the oldest event
	}
	conn, err := m.opts.Dest.GetContext(ctx)
	if err != nil {
		return fmt.Errorf("reading mirror cursors %s: %w", m.cursorKey, err)
	}
	defer conn.Close()
	saved, err := redis.Int64Map(conn.Do("HGETALL", m.cursorKey))
	if err != nil {
		return fmt.Errorf("reading mirror cursors %s: %w", m.cursorKey, err)
	}
	if len(saved) > 0 {
		m.cursors = saved
		m.log.Info("following the source's archives from the saved cursors", zap.String("cursors", m.cursorKey), zap.Any("positions", saved))
		return nil
	}
	if !m.opts.Since.IsZero() {
		m.log.Info("following the source's archives from --since", zap.Time("since", m.opts.Since))
		return nil
	}
	// First run: only what is archived from now on.
	keys, lens, err := m.archives(ctx)
	if err != nil {
		return err
	}
	var also []events.Command
	for i, k := range keys {
		m.cursors[k] = lens[i]
		also = append(also, events.Command{Name: "HSET", Args: []any{m.cursorKey, k, lens[i]}})
	}
	if err := m.pub.PublishEncodedWith(ctx, also); err != nil {
		return fmt.Errorf("saving mirror cursors %s: %w", m.cursorKey, err)
	}
	m.log.Info("following the source's archives from their current end", zap.Strings("archives", keys))
	return nil
}

// archives lists the source's archive lists, oldest hour first, with their lengths.
func (m *mirror) archives(ctx context.Context) ([]string, []int64, error) {
	conn, err := m.opts.Source.GetContext(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("source Redis: %w", err)
	}
	defer conn.Close()
	keys, err := redis.Strings(conn.Do("SMEMBERS", m.sourceKeys.KnownEventsArchiveKeys()))
	if err != nil {
		return nil, nil, fmt.Errorf("source Redis: reading %s: %w", m.sourceKeys.KnownEventsArchiveKeys(), err)
	}
	slices.Sort(keys) // events_archive:YYYYMMDDHH sorts by hour
	for _, k := range keys {
		conn.Send("LLEN", k)
	}
	conn.Flush()
	lens := make([]int64, len(keys))
	for i, k := range keys {
		if lens[i], err = redis.Int64(conn.Receive()); err != nil {
			return nil, nil, fmt.Errorf("source Redis: LLEN %s: %w", k, err)
		}
	}
	return keys, lens, nil
}

// pass queues what was archived since the cursors, list by list; true when it read anything.
func (m *mirror) pass(ctx context.Context) (bool, error) {
	keys, lens, err := m.archives(ctx)
	if err != nil {
		return false, err
	}
	progressed := false
	for i, key := range keys {
		if hour, ok := archiveHour(key); ok && !m.opts.Since.IsZero() && hour.Add(time.Hour).Before(m.opts.Since) && m.cursors[key] < lens[i] {
			// Archived wholly before --since: passed over, once.
			if err := m.advance(ctx, key, lens[i], nil); err != nil {
				return progressed, err
			}
			continue
		}
		for m.cursors[key] < lens[i] && ctx.Err() == nil {
			n, held, err := m.chunk(ctx, key)
			if err != nil {
				return progressed, err
			}
			progressed = progressed || n > 0
			if n == 0 || held {
				break // the list shrank (expired, or an event removed), or its newest event waits
			}
		}
	}
	// Lists the source no longer indexes (expired) need no cursor.
	var gone []any
	for key := range m.cursors {
		if _, found := slices.BinarySearch(keys, key); !found {
			gone = append(gone, key)
			delete(m.cursors, key)
		}
	}
	if len(gone) > 0 && !m.opts.All {
		if err := m.pub.PublishEncodedWith(ctx, []events.Command{{Name: "HDEL", Args: append([]any{m.cursorKey}, gone...)}}); err != nil {
			return progressed, err
		}
	}
	return progressed, nil
}

// chunk queues up to mirrorChunk events of key after its cursor and moves the cursor with them;
// it returns how many events it took, and whether it left the newest for the next poll.
func (m *mirror) chunk(ctx context.Context, key string) (taken int, held bool, err error) {
	n := m.cursors[key]
	conn, err := m.opts.Source.GetContext(ctx)
	if err != nil {
		return 0, false, fmt.Errorf("source Redis: %w", err)
	}
	// Counted from the tail, where the oldest events are: positions do not move as new events
	// are pushed at the head.
	raws, err := redis.ByteSlices(conn.Do("LRANGE", key, -(n + mirrorChunk), -(n + 1)))
	conn.Close()
	if err != nil {
		return 0, false, fmt.Errorf("source Redis: LRANGE %s: %w", key, err)
	}
	slices.Reverse(raws) // oldest first
	if len(raws) > 0 && len(raws) < mirrorChunk && !m.opts.All {
		// The newest event, when invalid, may be about to go: Flapjack 1.x removes (LREM) an
		// event it rejects from the archive right after archiving it, which would shift the next
		// event onto a position already counted. It is left for the next poll.
		at := key + "#" + strconv.FormatInt(n+int64(len(raws)), 10)
		if _, err := schema.ParseEvent(raws[len(raws)-1]); err != nil && m.held != at {
			raws, m.held, held = raws[:len(raws)-1], at, true
		}
	}
	var payloads [][]byte
	var buf []byte
	for _, raw := range raws {
		m.rep.Read++
		ev, err := schema.ParseEvent(raw)
		if err != nil {
			m.rep.Rejected++
			m.log.Warn("archived event rejected", zap.String("archive", key), zap.Strings("reasons", schema.RejectReasons(err)),
				zap.String("event", text.Truncate(string(raw), logInputBytes)))
			continue
		}
		if !m.wanted(&ev) {
			m.rep.Skipped++
			continue
		}
		start := len(buf)
		buf = ev.AppendJSON(buf)
		payloads = append(payloads, buf[start:len(buf):len(buf)])
	}
	if err := m.advance(ctx, key, n+int64(len(raws)), payloads); err != nil {
		return 0, false, err
	}
	m.rep.Queued += len(payloads)
	return len(raws), held, nil
}

// advance queues payloads and sets key's cursor to pos, in one transaction.
func (m *mirror) advance(ctx context.Context, key string, pos int64, payloads [][]byte) error {
	if err := m.pub.PublishEncodedWith(ctx, []events.Command{{Name: "HSET", Args: []any{m.cursorKey, key, pos}}}, payloads...); err != nil {
		return err
	}
	m.cursors[key] = pos
	return nil
}

func (m *mirror) wanted(ev *schema.Event) bool {
	if m.opts.Include != nil && !m.opts.Include.MatchString(ev.ID()) {
		return false
	}
	return m.opts.Since.IsZero() || !ev.HasTime || ev.Time >= m.opts.Since.Unix()
}

// archiveHour reads the hour of events_archive:YYYYMMDDHH.
func archiveHour(key string) (time.Time, bool) {
	i := strings.LastIndexByte(key, ':')
	if i < 0 {
		return time.Time{}, false
	}
	t, err := time.Parse("2006010215", key[i+1:])
	return t, err == nil
}
