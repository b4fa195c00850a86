package queue

import (
	"math"
	"strings"
	"testing"
	"time"
)

// The delays each user of Backoff had before it was shared, written out.
func TestBackoff(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		b    Backoff
		want string // the first 8 delays
	}{
		{"stages (zero value)", Backoff{}, "100ms 200ms 400ms 800ms 1s 1s 1s 1s"},
		{"gateway retries", Backoff{First: time.Second, Max: time.Minute}, "1s 2s 4s 8s 16s 32s 1m0s 1m0s"},
		{"jabber reconnect", Backoff{First: 2 * time.Second, Max: 60 * time.Second}, "2s 4s 8s 16s 32s 1m0s 1m0s 1m0s"},
		{"nagios enqueue", Backoff{First: 100 * time.Millisecond, Max: 5 * time.Second}, "100ms 200ms 400ms 800ms 1.6s 3.2s 5s 5s"},
		{"first above max", Backoff{First: time.Hour, Max: time.Minute}, "1m0s 1m0s 1m0s 1m0s 1m0s 1m0s 1m0s 1m0s"},
		{"max only", Backoff{Max: 300 * time.Millisecond}, "100ms 200ms 300ms 300ms 300ms 300ms 300ms 300ms"},
		{"first only", Backoff{First: 300 * time.Millisecond}, "300ms 600ms 1s 1s 1s 1s 1s 1s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var next, delay []string
			for n := range 8 {
				next = append(next, tt.b.Next().String())
				delay = append(delay, tt.b.Delay(n).String())
			}
			if got := strings.Join(next, " "); got != tt.want {
				t.Errorf("Next: %s, want %s", got, tt.want)
			}
			if got := strings.Join(delay, " "); got != tt.want {
				t.Errorf("Delay: %s, want %s", got, tt.want)
			}
			tt.b.Reset()
			if got := tt.b.Next().String(); got != strings.Fields(tt.want)[0] {
				t.Errorf("after Reset: %s", got)
			}
		})
	}
}

func TestBackoffBounds(t *testing.T) {
	t.Parallel()
	huge := Backoff{First: time.Duration(math.MaxInt64 / 3), Max: time.Duration(math.MaxInt64)}
	for n := range 70 {
		if d := huge.Delay(n); d < huge.First || d > huge.Max {
			t.Fatalf("Delay(%d) = %d: overflowed", n, d)
		}
	}
	// As before it was shared, doubling stops after 20 steps even when Max is further away.
	far := Backoff{First: time.Millisecond, Max: 24 * time.Hour}
	if d := far.Delay(1000); d != time.Millisecond<<20 {
		t.Errorf("Delay(1000) = %s, want %s", d, time.Millisecond<<20)
	}
	if d := far.Delay(-1); d != time.Millisecond {
		t.Errorf("Delay(-1) = %s, want the first delay", d)
	}
}
