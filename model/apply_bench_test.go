package model

import (
	"testing"

	"github.com/flapjackgo/flapjack/schema"
)

// BenchmarkApplyArgs guards the encoding of a batch's writes (per record: what an ok event on an
// ok check writes, the commonest case), reported per record.
func BenchmarkApplyArgs(b *testing.B) {
	keys := schema.NewKeys("")
	const n = 256
	t := ApplyTarget{Processing: "executive_processing:bench:1", Counters: keys.EventCounters(), PerMinute: "stats:events:202601051000", PerMinuteTTL: 900}
	b.ReportAllocs()
	for b.Loop() {
		records := make([]Record, n)
		for i := range records {
			r := &records[i]
			r.Item, r.Counter = `{"entity":"host-1.example.com","check":"HTTP","type":"service","state":"ok"}`, "ok"
			r.Guards = []Guard{{Key: "check:host-1.example.com:HTTP", Revision: 9}}
			r.Ops.HSet(r.Guards[0].Key, "last_update", int64(1767607200), "last_event_time", int64(1767607200),
				"last_sequence", int64(1000+i), "revision", int64(10))
		}
		if args := applyArgs(ScriptHead, t, records); len(args) < n*15 {
			b.Fatalf("%d arguments", len(args))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/record")
}
