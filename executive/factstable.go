package executive

import (
	"math/bits"
	"runtime"
)

// factsTable is the facts cache's storage: an open-addressing hash table (linear probing) of
// fixed-size entries keyed by a non-zero 64-bit hash, in memory outside the Go heap where the
// platform allows (slotMemory). A Go map of the same entries would be part of the live heap,
// which the collector's target (GOGC 400, cmd/flapjack/gc.go) multiplies: 100,000 checks cost
// the executive 60 MiB more RSS that way, against the table's own 8 MiB here.
type factsTable struct {
	slots  []cachedFacts // a power of two long; key 0 marks an empty slot
	memory *slotRelease  // gives back the slots' memory, when it is outside the heap
	used   int
	max    int // entries kept at most; inserting beyond evicts
}

// slotRelease gives back a table's memory once the table is unreachable (an executive of a
// replay or a test), as the collector would for heap memory.
type slotRelease struct{ release func() }

// minTableSlots is the table's first size; it doubles as it fills, up to what max needs.
const minTableSlots = 1024

func newFactsTable(max int) *factsTable {
	t := &factsTable{max: max, memory: &slotRelease{}}
	runtime.AddCleanup(t, func(m *slotRelease) {
		if m.release != nil {
			m.release()
		}
	}, t.memory)
	t.resize(minTableSlots)
	return t
}

// tableKey makes a hash usable as a key (0 marks empty slots).
func tableKey(h uint64) uint64 { return max(h, 1) }

// find returns the slot holding key, or the empty slot ending its probe sequence.
func (t *factsTable) find(key uint64) (int, bool) {
	mask := len(t.slots) - 1
	for i := int(key) & mask; ; i = (i + 1) & mask {
		switch t.slots[i].key {
		case key:
			return i, true
		case 0:
			return i, false
		}
	}
}

func (t *factsTable) get(key uint64) (cachedFacts, bool) {
	i, ok := t.find(key)
	if !ok {
		return cachedFacts{}, false
	}
	return t.slots[i], true
}

// put stores e under e.key; at max entries it first evicts the entry whose probe sequence
// starts where e's does, or the next one along.
func (t *factsTable) put(e cachedFacts) {
	i, ok := t.find(e.key)
	if ok {
		t.slots[i] = e
		return
	}
	if t.used >= t.max {
		mask := len(t.slots) - 1
		j := int(e.key) & mask
		for t.slots[j].key == 0 {
			j = (j + 1) & mask
		}
		t.remove(j)
		i, _ = t.find(e.key)
	}
	t.slots[i] = e
	t.used++
	// at most three quarters full while growing; the last size takes max at up to seven eighths
	if t.used*4 > len(t.slots)*3 && len(t.slots) < slotsFor(t.max) {
		t.resize(2 * len(t.slots))
	}
}

// slotsFor is the table size that holds n entries at most seven eighths full.
func slotsFor(n int) int { return 1 << bits.Len(uint(max(n*8/7, minTableSlots)-1)) }

func (t *factsTable) delete(key uint64) {
	if i, ok := t.find(key); ok {
		t.remove(i)
	}
}

// remove empties slot i and moves later entries of the run back, so no probe sequence is broken
// (deletion without tombstones).
func (t *factsTable) remove(i int) {
	mask := len(t.slots) - 1
	t.slots[i] = cachedFacts{}
	t.used--
	for j := (i + 1) & mask; t.slots[j].key != 0; j = (j + 1) & mask {
		home := int(t.slots[j].key) & mask
		// the entry at j stays if its home lies cyclically in (i, j]
		if (i < j && i < home && home <= j) || (i > j && (home > i || home <= j)) {
			continue
		}
		t.slots[i], t.slots[j] = t.slots[j], cachedFacts{}
		i = j
	}
}

func (t *factsTable) clear() {
	clear(t.slots)
	t.used = 0
}

func (t *factsTable) resize(n int) {
	old, release := t.slots, t.memory.release
	t.slots, t.memory.release = slotMemory(n)
	t.used = 0
	for _, e := range old {
		if e.key != 0 {
			i, _ := t.find(e.key)
			t.slots[i] = e
			t.used++
		}
	}
	if release != nil {
		release()
	}
}
