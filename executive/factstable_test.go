package executive

import (
	"math/rand"
	"testing"
	"unsafe"
)

// TestFactsTableAgreesWithAMap runs random puts and deletes (keys chosen to share probe runs)
// against a map and checks every key after each step: what the table holds is what the map
// holds, except entries it evicted, and it never holds more than max.
func TestFactsTableAgreesWithAMap(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		max      int
		keys     int
		clashes  bool // keys whose low bits collide, so their probe runs overlap and wrap
		evicting bool // more keys than max
	}{
		{name: "grows", max: 10_000, keys: 5_000},
		{name: "evicts at max", max: 700, keys: 3_000, evicting: true},
		{name: "clashing keys", max: 2_000, keys: 600, clashes: true}, // 1,800 keys
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rnd := rand.New(rand.NewSource(1))
			key := func() uint64 {
				k := uint64(rnd.Intn(c.keys)) + 1
				if c.clashes {
					return k<<20 | uint64(minTableSlots-1-rnd.Intn(3)) // homes at the table's end
				}
				return k * 0x9e3779b97f4a7c15
			}
			table := newFactsTable(c.max)
			want := map[uint64]int64{}
			for step := 0; step < 40_000; step++ {
				k := key()
				if rnd.Intn(4) == 0 {
					table.delete(k)
					delete(want, k)
				} else {
					rev := int64(step)
					table.put(cachedFacts{key: k, revision: rev})
					want[k] = rev
				}
				if table.used > c.max {
					t.Fatalf("step %d: %d entries, max %d", step, table.used, c.max)
				}
				if e, ok := table.get(k); want[k] != 0 && (!ok || e.revision != want[k]) {
					t.Fatalf("step %d: key %x just written reads %v %v", step, k, e, ok)
				}
			}
			held := 0
			for k, rev := range want {
				e, ok := table.get(k)
				if ok {
					held++
					if e.revision != rev {
						t.Fatalf("key %x: revision %d, want %d", k, e.revision, rev)
					}
				}
			}
			if held != table.used {
				t.Fatalf("%d keys found, %d counted", held, table.used)
			}
			if !c.evicting && held != len(want) {
				t.Fatalf("%d of %d keys held below max", held, len(want))
			}
			if got, limit := len(table.slots), slotsFor(c.max); got > limit {
				t.Fatalf("%d slots for max %d, want at most %d", got, c.max, limit)
			}
		})
	}
}

// TestFactsTableSize: the default cache's table stays within the memory its setting documents.
func TestFactsTableSize(t *testing.T) {
	if size := unsafe.Sizeof(cachedFacts{}); size != 64 {
		t.Errorf("an entry is %d bytes, want 64", size)
	}
	if mib := float64(slotsFor(defaultFactsCacheChecks)) * 64 / (1 << 20); mib > 8 {
		t.Errorf("the default table takes %.1f MiB", mib)
	}
}
