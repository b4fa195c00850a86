package receiver

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/events"
	"github.com/flapjackgo/flapjack/executive"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/schema"
)

// archive1x archives events as Flapjack 1.x's processor does (docs/flapjack-1x.md 1.1): BRPOPLPUSH from
// its events list into events_archive:YYYYMMDDHH of the hour of processing (so the newest event
// is at the head), the key added to known_events_archive_keys and given its expiry.
func archive1x(t *testing.T, db *testredis.DB, at time.Time, evs ...string) {
	t.Helper()
	k := schema.NewKeys("")
	key := k.EventsArchive(at)
	for _, ev := range evs {
		db.Do(t, "LPUSH", "incoming_1x", ev)
		if got := db.Do(t, "BRPOPLPUSH", "incoming_1x", key, 1); got == nil {
			t.Fatal("BRPOPLPUSH found nothing")
		}
		db.Do(t, "SADD", k.KnownEventsArchiveKeys(), key)
		db.Do(t, "EXPIRE", key, 10800)
	}
}

func ev1x(entity, check, state, summary string, at time.Time) string {
	return fmt.Sprintf(`{"entity":%q,"check":%q,"type":"service","state":%q,"summary":%q,"time":%d}`, entity, check, state, summary, at.Unix())
}

// queuedSummaries are the summaries of the events on db's events list, oldest first.
func queuedSummaries(t *testing.T, db *testredis.DB) []string {
	t.Helper()
	raws, err := redis.ByteSlices(db.Do(t, "LRANGE", "events", 0, -1), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, raw := range slices.Backward(raws) {
		ev, err := schema.ParseEvent(raw)
		if err != nil {
			t.Fatalf("queued %s: %v", raw, err)
		}
		out = append(out, ev.Summary)
	}
	return out
}

// --all queues everything archived, hour after hour, oldest first, with --include and --since
// applied; the source is only read; a second --all queues everything again.
func TestMirrorAll(t *testing.T) {
	t.Parallel()
	src, dst := testredis.StartServer(t).NewDB(t), testredis.StartServer(t).NewDB(t)
	h1 := time.Date(2026, 11, 25, 9, 59, 0, 0, time.UTC)
	h2 := h1.Add(2 * time.Minute)
	archive1x(t, src, h1, ev1x("web-01", "HTTP", "ok", "1", h1), ev1x("db-01", "MySQL", "critical", "2", h1),
		`{"entity":"web-01","check":"HTTP","type":"service","state":"sideways"}`, ev1x("web-01", "HTTP", "critical", "3", h1.Add(time.Second)))
	archive1x(t, src, h2, ev1x("web-01", "HTTP", "ok", "4", h2), ev1x("db-01", "MySQL", "ok", "5", h2))
	before := src.Dump(t)

	pub := events.NewPublisher(dst.Pool, schema.NewKeys(""), "")
	opts := MirrorOptions{Source: src.Pool, SourceName: src.URL(), Dest: dst.Pool, All: true}
	rep, err := RunMirror(context.Background(), opts, pub, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := queuedSummaries(t, dst), []string{"1", "2", "3", "4", "5"}; !slices.Equal(got, want) {
		t.Fatalf("queued %q, want %q", got, want)
	}
	if rep != (MirrorReport{Read: 6, Queued: 5, Rejected: 1}) {
		t.Errorf("report %+v", rep)
	}
	if after := src.Dump(t); !maps.Equal(before, after) {
		t.Errorf("the source changed:\nbefore %v\nafter  %v", before, after)
	}

	dst.Do(t, "DEL", "events")
	opts.Include = regexp.MustCompile(`^web-01:`)
	opts.Since = h1.Add(time.Second)
	if _, err := RunMirror(context.Background(), opts, pub, zap.NewNop()); err != nil {
		t.Fatal(err)
	}
	if got, want := queuedSummaries(t, dst), []string{"3", "4"}; !slices.Equal(got, want) {
		t.Fatalf("with --include ^web-01: --since %s queued %q, want %q", opts.Since, got, want)
	}
}

// site is one Flapjack: a Redis and a real executive on a fake clock.
type site struct {
	db  *testredis.DB
	x   *executive.Executive
	clk *clock.Fake
}

func newSite(t *testing.T, name string) *site {
	t.Helper()
	s := &site{db: testredis.StartServer(t).NewDB(t), clk: clock.NewFake(time.Unix(0, 0))}
	s.x = executive.New(executive.Options{Pool: s.db.Pool, Keys: schema.NewKeys(""), Config: executive.DefaultConfig(), Clock: s.clk,
		HeartbeatClock: clock.Real{}, Identity: queue.Identity{Host: name, PID: 1}, Version: "test"})
	loop := s.x.Loop(false)
	if _, err := loop.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { loop.Close(context.Background()) })
	return s
}

// process runs the executive at at over everything queued.
func (s *site) process(t *testing.T, at time.Time) {
	t.Helper()
	s.clk.Set(at)
	for {
		n, err := s.x.ProcessNext(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
}

// checkData is what the executive keeps about checks: every key but the queues, the archive,
// instance records and counters, and the mirror's cursors.
func (s *site) checkData(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for k, v := range s.db.Dump(t) {
		switch {
		case k == "events", strings.HasPrefix(k, "events_archive:"), k == "known_events_archive_keys", strings.HasPrefix(k, "mirror_cursors:"),
			strings.Contains(k, "instance"), strings.HasPrefix(k, "event_counters"), strings.HasPrefix(k, "events_processing"),
			strings.HasPrefix(k, "executive"), strings.HasPrefix(k, "processes"), strings.HasPrefix(k, "stats"):
			continue
		}
		out[k] = v
	}
	return out
}

// --follow: a source Flapjack 1.x archives bursts of results while its executive processes them;
// the mirror queues each burst here in order, an executive here processes it at the same
// instant, and both end with the same check states and histories. The mirror is stopped and
// started again twice, once while the source archives a burst, and nothing is repeated or lost;
// its first run starts at the end of what was archived before it.
func TestMirrorFollow(t *testing.T) {
	t.Parallel()
	src, dst := newSite(t, "source"), newSite(t, "here")
	pub := events.NewPublisher(dst.db.Pool, schema.NewKeys(""), "")
	old := time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)
	archive1x(t, src.db, old, ev1x("old-01", "PING", "critical", "before the mirror started", old))

	source := &countingPool{Pool: src.db.Pool}
	var stop func() MirrorReport
	start := func() {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan MirrorReport, 1)
		go func() {
			rep, err := RunMirror(ctx, MirrorOptions{Source: source, SourceName: src.db.URL(), Dest: dst.db.Pool, Poll: 10 * time.Millisecond}, pub, zap.NewNop())
			if err != nil {
				t.Errorf("RunMirror: %v", err)
			}
			done <- rep
		}()
		stop = func() MirrorReport { cancel(); return <-done }
	}
	start()
	cursors := schema.NewKeys("").MirrorCursors(src.db.URL())
	waitFor(t, "the first run's cursors", 5*time.Second, func() bool {
		n, _ := redis.Int(dst.db.Do(t, "HLEN", cursors), nil)
		return n == 1
	})

	base := time.Date(2026, 11, 25, 10, 57, 0, 0, time.UTC) // the rounds cross into the next hour's archive
	checks := []string{"HTTP", "DISK", "Load: 5 min"}
	states := []string{"ok", "critical", "warning", "ok", "unknown", "critical", "ok"}
	for round := range 7 {
		at := base.Add(time.Duration(round) * 75 * time.Second)
		var burst []string
		for i, c := range checks {
			for j := range 2 { // two results of one check in a burst: their order decides its state
				state := states[(round+i+j)%len(states)]
				burst = append(burst, ev1x(fmt.Sprintf("web-%02d", i%2), c, state, fmt.Sprintf("round %d %s %d", round, c, j), at))
			}
		}
		if round == 2 || round == 5 {
			stop() // stopped at a round's start: its burst is archived while no mirror runs
		}
		archive1x(t, src.db, at, burst...)
		for _, ev := range burst {
			src.db.Do(t, "LPUSH", "events", ev)
		}
		src.process(t, at)
		if round == 2 || round == 5 {
			start()
		}
		waitFor(t, fmt.Sprintf("round %d mirrored", round), 5*time.Second, func() bool {
			n, _ := redis.Int(dst.db.Do(t, "LLEN", "events"), nil)
			return n == len(burst)
		})
		dst.process(t, at)
	}
	// More polls: nothing may be queued again. The source connection taken next starts a pass
	// begun after this point; a third one is taken only once that pass has queued whatever it
	// found (each round above was queued the same way).
	from := source.gets.Load()
	waitFor(t, "a whole pass after the last round", 5*time.Second, func() bool { return source.gets.Load() >= from+3 })
	rep := stop()
	if n, _ := redis.Int(dst.db.Do(t, "LLEN", "events"), nil); n != 0 {
		t.Fatalf("%d events queued again", n)
	}
	srcData, dstData := src.checkData(t), dst.checkData(t)
	if len(srcData) < 10 {
		t.Fatalf("the source holds only %v", srcData)
	}
	for k, v := range srcData {
		if dstData[k] != v {
			t.Errorf("%s: source %q, here %q", k, v, dstData[k])
		}
	}
	for k, v := range dstData {
		if _, ok := srcData[k]; !ok {
			t.Errorf("%s only here: %q", k, v)
		}
	}
	if _, ok := dstData["check:old-01:PING"]; ok {
		t.Error("the event archived before the first run was mirrored")
	}
	if rep.Rejected != 0 || rep.Queued != len(checks)*2*2 { // the last run mirrored rounds 5 and 6
		t.Errorf("the last run's report %+v", rep)
	}
}

// Flapjack 1.x archives an event it then rejects and removes it (LREM) right away: a mirror
// that looks in between does not count the removed event's position, so the event archived
// next is not skipped; an invalid event that stays is counted on the next look.
func TestMirrorFollowRejectedEventRemovedBy1x(t *testing.T) {
	t.Parallel()
	src, dst := testredis.StartServer(t).NewDB(t), testredis.StartServer(t).NewDB(t)
	pub := events.NewPublisher(dst.Pool, schema.NewKeys(""), "")
	at := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	m := &mirror{opts: MirrorOptions{Source: src.Pool, SourceName: "source", Dest: dst.Pool, Since: at}, pub: pub, log: zap.NewNop(),
		cursorKey: schema.NewKeys("").MirrorCursors("source"), sourceKeys: schema.NewKeys("")}
	if err := m.start(context.Background()); err != nil {
		t.Fatal(err)
	}
	pass := func() {
		t.Helper()
		if _, err := m.pass(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	bad := `{"entity":"web-01","check":"HTTP","type":"service","state":"sideways"}`
	archive1x(t, src, at, ev1x("web-01", "HTTP", "ok", "1", at), bad)
	pass() // sees the rejected event before 1.x removes it
	src.Do(t, "LREM", schema.NewKeys("").EventsArchive(at), 1, bad)
	archive1x(t, src, at, ev1x("web-01", "HTTP", "critical", "2", at), bad)
	pass()
	pass() // the second invalid event stayed: counted now
	archive1x(t, src, at, ev1x("web-01", "HTTP", "ok", "3", at))
	pass()
	if got, want := queuedSummaries(t, dst), []string{"1", "2", "3"}; !slices.Equal(got, want) {
		t.Fatalf("queued %q, want %q", got, want)
	}
	if m.rep.Rejected != 1 || m.cursors[schema.NewKeys("").EventsArchive(at)] != 4 {
		t.Fatalf("report %+v, cursors %v", m.rep, m.cursors)
	}
}

// The archive our own executive writes (executive.archive_events) is Flapjack 1.x's layout: a
// mirror of it queues the events in the order the source processed them, and an executive here
// ends with the same check states and histories.
func TestMirrorAllOfOurExecutivesArchive(t *testing.T) {
	t.Parallel()
	src, dst := newSite(t, "source"), newSite(t, "dest")
	cfg := executive.DefaultConfig()
	cfg.ArchiveEvents, cfg.ArchiveMaxAge = true, time.Hour
	src.x = executive.New(executive.Options{Pool: src.db.Pool, Keys: schema.NewKeys(""), Config: cfg, Clock: src.clk,
		HeartbeatClock: clock.Real{}, Identity: queue.Identity{Host: "source-archiving", PID: 1}, Version: "test"})
	at := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	pub := events.NewPublisher(src.db.Pool, schema.NewKeys(""), "")
	var want []string
	for i, state := range []string{"ok", "critical", "critical", "warning", "ok", "critical"} {
		summary := fmt.Sprintf("%d %s", i, state)
		want = append(want, summary)
		if _, err := pub.PublishRaw(context.Background(), []byte(ev1x("web-01", "HTTP", state, summary, at))); err != nil {
			t.Fatal(err)
		}
	}
	src.process(t, at)
	rep, err := RunMirror(context.Background(), MirrorOptions{Source: src.db.Pool, SourceName: src.db.URL(), Dest: dst.db.Pool, All: true},
		events.NewPublisher(dst.db.Pool, schema.NewKeys(""), ""), zap.NewNop())
	if err != nil || rep.Queued != len(want) {
		t.Fatalf("mirror: %+v, %v", rep, err)
	}
	if got := queuedSummaries(t, dst.db); !slices.Equal(got, want) {
		t.Fatalf("queued %q, want the source's order %q", got, want)
	}
	dst.process(t, at)
	if s, d := src.checkData(t), dst.checkData(t); !maps.Equal(s, d) {
		t.Errorf("check data differ:\nsource %v\nhere   %v", s, d)
	}
}

// countingPool counts the connections the mirror takes from the source: each pass takes one to
// list the archives, and one more per chunk it reads.
type countingPool struct {
	*redis.Pool
	gets atomic.Int64
}

func (p *countingPool) GetContext(ctx context.Context) (redis.Conn, error) {
	p.gets.Add(1)
	return p.Pool.GetContext(ctx)
}
