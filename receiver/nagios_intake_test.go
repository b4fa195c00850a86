package receiver

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/events"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/schema"
	"go.uber.org/zap"
)

// BenchmarkNagiosLineToQueued measures the Nagios receiver's path from a perfdata line read to
// its event queued on a real Redis (parse, batch, one LPUSH per batch), per line; run with
// -benchmem to see the allocations per line.
func BenchmarkNagiosLineToQueued(b *testing.B) {
	db := testredis.New(b)
	pub := events.NewPublisher(db.Pool, schema.NewKeys(""), "")
	var in bytes.Buffer
	for i := range 10000 {
		fmt.Fprintf(&in, "[SERVICEPERFDATA]\t%d\thost-%d.example.com\tcheck-%d\tOK\t0.012\t0.101\tgenerated %d\ttime=0.012s;1;2;0\tlong\\noutput\n",
			1700000000+i, i/10, i%10, i)
	}
	lines := in.Bytes()
	stats := NewNagiosStats(nil)
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n += 10000 {
		snd := newSender(pub, nil, stats, zap.NewNop())
		done := make(chan struct{})
		go func() { defer close(done); snd.run(context.Background()) }()
		r := nagiosReader{log: zap.NewNop(), out: snd.batches, stats: stats}
		if err := r.read(context.Background(), bytes.NewReader(lines)); err != nil {
			b.Fatal(err)
		}
		close(snd.batches)
		<-done
		b.StopTimer()
		db.Do(b, "DEL", pub.Key())
		b.StartTimer()
	}
	if stats.Rejected.Load() != 0 || stats.Enqueued.Load() < int64(b.N) {
		b.Fatalf("%d rejected, %d enqueued of %d", stats.Rejected.Load(), stats.Enqueued.Load(), b.N)
	}
}

// Events read back from the spool are validated again (someone else may have written the
// files): an invalid one is refused and counted, the others are queued in order.
func TestSpoolDrainValidatesAgain(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	pub := events.NewPublisher(db.Pool, schema.NewKeys(""), "")
	spool, err := OpenSpool(t.TempDir(), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := spool.Append([][]byte{
		[]byte(`{"entity":"web-01","check":"a","type":"service","state":"ok"}`),
		[]byte(`{"entity":"web-01","check":"b","type":"service","state":"sideways"}`),
		[]byte(`{"entity":"web-01","check":"c","type":"service","state":"critical"}`),
	}); err != nil {
		t.Fatal(err)
	}
	stats := NewNagiosStats(nil)
	snd := newSender(pub, spool, stats, zap.NewNop())
	if !snd.drainOne(context.Background()) {
		t.Fatal("drain failed")
	}
	got, err := redis.Strings(db.Do(t, "LRANGE", pub.Key(), 0, -1), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`{"check":"c","entity":"web-01","state":"critical","type":"service"}`, `{"check":"a","entity":"web-01","state":"ok","type":"service"}`}
	if !reflect.DeepEqual(got, want) || stats.Rejected.Load() != 1 || spool.Len() != 0 {
		t.Fatalf("queued %q (want %q), rejected %d (want 1), spooled %d (want 0)", got, want, stats.Rejected.Load(), spool.Len())
	}
}
