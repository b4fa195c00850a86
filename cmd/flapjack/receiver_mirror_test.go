package main

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/testing/testbinary"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/schema"
)

// archiveAs1x archives events as Flapjack 1.x's processor does: BRPOPLPUSH into the hour's
// events_archive list (newest at the head), indexed in known_events_archive_keys.
func archiveAs1x(t *testing.T, db *testredis.DB, at time.Time, evs ...string) {
	t.Helper()
	k := schema.NewKeys("")
	for _, ev := range evs {
		db.Do(t, "LPUSH", "incoming_1x", ev)
		db.Do(t, "BRPOPLPUSH", "incoming_1x", k.EventsArchive(at), 1)
		db.Do(t, "SADD", k.KnownEventsArchiveKeys(), k.EventsArchive(at))
	}
}

// TestReceiverMirror: `receiver mirror -s URL -a -i REGEX` queues the matching archived events
// of another Redis here, in order, and reports what it did; --follow (-f) queues what is
// archived after it started and, started again, continues where it stopped.
func TestReceiverMirror(t *testing.T) {
	t.Parallel()
	src, dst := testredis.StartServer(t).NewDB(t), testredis.StartServer(t).NewDB(t)
	at := time.Now().UTC()
	ev := func(entity, summary string) string {
		return fmt.Sprintf(`{"entity":%q,"check":"HTTP","type":"service","state":"critical","summary":%q,"time":%d}`, entity, summary, at.Unix())
	}
	archiveAs1x(t, src, at.Add(-time.Hour), ev("web-01", "a"), ev("db-01", "b"))
	archiveAs1x(t, src, at, ev("web-01", "c"))
	env := []string{"FLAPJACK_REDIS_URL=" + dst.URL()}

	_, stderr, code := flapjack(t, env, "", "receiver", "mirror", "-s", src.URL(), "-a", "-i", "^web-")
	if code != 0 || !strings.Contains(stderr, "3 archived events read: 2 queued, 1 skipped (--include, --since), 0 rejected") {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if got := queuedIDs(t, dst); !slices.Equal(got, []string{"web-01:HTTP", "web-01:HTTP"}) {
		t.Fatalf("queued %q", got)
	}
	if _, stderr, code := flapjack(t, env, "", "receiver", "mirror", "-s", src.URL()); code != 2 || !strings.Contains(stderr, "give one of --all and --follow") {
		t.Fatalf("without --all or --follow: exit %d\n%s", code, stderr)
	}

	dst.Do(t, "DEL", "events")
	follow := func() *testbinary.Process {
		p := testbinary.Start(t, env, "receiver", "mirror", "-s", src.URL(), "-f")
		p.WaitMatch(t, true, regexp.MustCompile(`following the source's archives`), 10*time.Second)
		return p
	}
	p := follow()
	archiveAs1x(t, src, at, ev("web-02", "d"))
	waitQueued(t, dst, []string{"web-02:HTTP"}, 5*time.Second)
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d\n%s", code, p.Text(true))
	}
	archiveAs1x(t, src, at, ev("web-03", "e"))
	p = follow()
	archiveAs1x(t, src, at, ev("web-04", "f"))
	waitQueued(t, dst, []string{"web-02:HTTP", "web-03:HTTP", "web-04:HTTP"}, 5*time.Second)
	// More polls: nothing is queued twice. Each pass starts by listing the source's archives
	// (SMEMBERS on the source's own server); the second listing from now starts only after a
	// whole pass begun after this point has queued whatever it found.
	passes := func() int {
		info, _ := redis.String(src.Do(t, "INFO", "commandstats"), nil)
		_, rest, _ := strings.Cut(info, "cmdstat_smembers:calls=")
		n, _ := strconv.Atoi(rest[:strings.IndexAny(rest+",", ",")])
		return n
	}
	from := passes()
	for deadline := time.Now().Add(10 * time.Second); passes() < from+2; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the mirror made no two passes within 10s")
		}
	}
	waitQueued(t, dst, []string{"web-02:HTTP", "web-03:HTTP", "web-04:HTTP"}, time.Second)
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d\n%s", code, p.Text(true))
	}
	cursors, err := redis.Int64Map(dst.Do(t, "HGETALL", "mirror_cursors:"+src.URL()), nil)
	if err != nil || cursors[schema.NewKeys("").EventsArchive(at)] != 4 {
		t.Fatalf("cursors %v, %v", cursors, err)
	}
}
