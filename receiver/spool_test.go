package receiver

import (
	"fmt"
	"os"
	"testing"
)

func spoolEvents(from, n int) [][]byte {
	var out [][]byte
	for i := from; i < from+n; i++ {
		out = append(out, []byte(fmt.Sprintf(`{"n":%06d}`, i))) // 13 bytes + newline
	}
	return out
}

func drainAll(t *testing.T, s *Spool) []string {
	t.Helper()
	var got []string
	for {
		seq, evs, err := s.Oldest()
		if err != nil {
			t.Fatal(err)
		}
		if evs == nil {
			return got
		}
		for _, e := range evs {
			got = append(got, string(e))
		}
		if err := s.Remove(seq); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSpoolOrderedAndPersistent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, err := OpenSpool(dir, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	for b := range 10 {
		if d, err := s.Append(spoolEvents(b*100, 100)); err != nil || d != 0 {
			t.Fatalf("append: dropped %d, %v", d, err)
		}
	}
	s.Close()
	s, err = OpenSpool(dir, 1<<20) // a restart keeps what was spooled
	if err != nil {
		t.Fatal(err)
	}
	if s.Len() != 1000 {
		t.Fatalf("reopened spool holds %d, want 1000", s.Len())
	}
	got := drainAll(t, s)
	if len(got) != 1000 {
		t.Fatalf("drained %d, want 1000", len(got))
	}
	for i, g := range got {
		if g != fmt.Sprintf(`{"n":%06d}`, i) {
			t.Fatalf("event %d is %s: out of order", i, g)
		}
	}
	if s.Len() != 0 || s.Bytes() != 0 {
		t.Errorf("after draining: %d events, %d bytes", s.Len(), s.Bytes())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("%d files left in the spool directory", len(entries))
	}
}

func TestSpoolBoundedDropsOldestCounted(t *testing.T) {
	t.Parallel()
	const maxBytes = 64 << 10 // segments of 64 KiB: the bound holds one
	s, err := OpenSpool(t.TempDir(), 4*maxBytes)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	dropped := 0
	for b := range 200 {
		d, err := s.Append(spoolEvents(b*500, 500)) // 7,000 bytes a batch
		if err != nil {
			t.Fatal(err)
		}
		dropped += d
		total += 500
		if s.Bytes() > 4*maxBytes {
			t.Fatalf("spool is %d bytes, over its %d bound", s.Bytes(), 4*maxBytes)
		}
	}
	if dropped == 0 || int64(dropped) != s.Dropped() {
		t.Fatalf("dropped %d (spool counts %d), want the same non-zero count", dropped, s.Dropped())
	}
	got := drainAll(t, s)
	if len(got)+dropped != total {
		t.Fatalf("kept %d + dropped %d != appended %d", len(got), dropped, total)
	}
	// What is kept is the newest, in order, ending with the last event appended.
	for i, g := range got {
		if want := fmt.Sprintf(`{"n":%06d}`, dropped+i); g != want {
			t.Fatalf("kept event %d is %s, want %s", i, g, want)
		}
	}
	// A batch larger than the whole bound is itself dropped, and counted.
	if d, _ := s.Append(spoolEvents(0, 30000)); d != 30000 {
		t.Errorf("oversized batch: dropped %d, want 30000", d)
	}
}
