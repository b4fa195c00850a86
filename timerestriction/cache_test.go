package timerestriction

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

func TestCache(t *testing.T) {
	t.Parallel()
	ny, syd := mustLoc(t, "America/New_York"), mustLoc(t, "Australia/Sydney")
	raw := "[" + weekdays818 + "]"
	// Monday 09:00 in New York is Tuesday 01:00 in Sydney.
	at := local(t, ny, "2026-11-23 09:00:00")

	t.Run("memoises by raw value and location", func(t *testing.T) {
		t.Parallel()
		c := NewCache(8)
		rs1, _ := c.ParseList(raw, ny)
		rs2, _ := c.ParseList(raw, ny)
		if len(rs1) != 1 || len(rs2) != 1 || rs1[0] != rs2[0] {
			t.Fatalf("second lookup did not return the cached restriction: %v %v", rs1, rs2)
		}
		if c.Len() != 1 {
			t.Errorf("Len = %d, want 1", c.Len())
		}
		rs3, _ := c.ParseList(raw, syd)
		if c.Len() != 2 || rs3[0] == rs1[0] {
			t.Errorf("another location must be another entry (Len %d)", c.Len())
		}
		if !rs1[0].Active(at) || rs3[0].Active(at) {
			t.Errorf("cached restrictions answer for the wrong location")
		}
	})
	t.Run("returned slices are the caller's own", func(t *testing.T) {
		t.Parallel()
		c := NewCache(8)
		rs, _ := c.ParseList(raw, ny)
		rs[0] = nil
		again, _ := c.ParseList(raw, ny)
		if again[0] == nil {
			t.Error("modifying a returned slice changed the cache")
		}
	})
	t.Run("bounded", func(t *testing.T) {
		t.Parallel()
		c := NewCache(3)
		for i := range 10 {
			c.ParseList(fmt.Sprintf(`[{"start_time": "2013-02-0%d 08:00:00", "end_time": "2013-02-09 18:00:00"}]`, i), ny)
		}
		if c.Len() != 3 {
			t.Errorf("Len = %d, want 3", c.Len())
		}
	})
	t.Run("errors are cached too", func(t *testing.T) {
		t.Parallel()
		c := NewCache(0) // default size
		bad := `[{"start_time": "2013-02-01 08:00:00"}]`
		for range 2 {
			rs, errs := c.ParseList(bad, ny)
			if len(rs) != 0 || len(errs) != 1 {
				t.Fatalf("got %v, %v", rs, errs)
			}
		}
		if c.Len() != 1 {
			t.Errorf("Len = %d, want 1", c.Len())
		}
	})
	t.Run("Active counts unreadable restrictions as inactive", func(t *testing.T) {
		t.Parallel()
		c := NewCache(8)
		cases := []struct {
			name, raw string
			want      bool
			errs      int
		}{
			{"none", "", true, 0},
			{"empty list", "[]", true, 0},
			{"active", raw, true, 0},
			{"only a bad one", `[{"end_time": "2013-02-01 08:00:00"}]`, false, 1},
			{"a bad one and an active one", `[{"end_time": "x"}, ` + weekdays818 + `]`, true, 1},
			{"garbage", `{"not": "a list"}`, false, 1},
		}
		for _, tc := range cases {
			got, errs := c.Active(tc.raw, ny, at)
			if got != tc.want || len(errs) != tc.errs {
				t.Errorf("%s: Active = %v with %d errors, want %v with %d", tc.name, got, len(errs), tc.want, tc.errs)
			}
		}
	})
}

// TestConcurrentUse runs evaluations of shared restrictions from many goroutines at different
// instants (so each rule's kept restart point keeps changing) under the race detector, and
// checks every answer against a single-threaded one.
func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	ny := mustLoc(t, "America/New_York")
	c := NewCache(DefaultCacheSize)
	raws := []string{
		"[" + weekdays818 + "]",
		`[{"start_time": "2013-02-01 09:00:00", "end_time": "2013-02-01 17:00:00",
			"rrule": "RRULE:FREQ=DAILY\nEXRULE:FREQ=WEEKLY;BYDAY=SA,SU\nEXDATE:20261225T090000"}]`,
		`[{"start_time": "2013-02-01 09:00:00", "end_time": "2013-02-01 09:20:00",
			"rrule": "FREQ=MINUTELY;INTERVAL=30;BYHOUR=9,10,11;BYDAY=MO,WE"}]`,
	}
	base := local(t, ny, "2026-11-20 00:00:00")
	instant := func(i int) time.Time { return base.Add(time.Duration(i*7919) * time.Second) }
	want := make([][]bool, len(raws))
	for j, raw := range raws {
		rs, errs := ParseList(raw, ny)
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		for i := range 200 {
			want[j] = append(want[j], AnyActive(rs, instant(i)))
		}
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 200 {
				i := (k*13 + g*29) % 200
				j := (k + g) % len(raws)
				got, errs := c.Active(raws[j], ny, instant(i))
				if len(errs) > 0 || got != want[j][i] {
					t.Errorf("goroutine %d: restriction %d at %v: got %v (%v), want %v", g, j, instant(i), got, errs, want[j][i])
					return
				}
			}
		}()
	}
	wg.Wait()
}
