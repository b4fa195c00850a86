package lifecycle

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
)

// untilCancelled is a stage that runs until stopped, taking finish to wind down.
func untilCancelled(name string, finish time.Duration, stopped chan<- string) Stage {
	return Stage{Name: name, Run: func(ctx context.Context) error {
		<-ctx.Done()
		time.Sleep(finish)
		stopped <- name
		return ctx.Err()
	}}
}

func TestRun(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	cases := []struct {
		name    string
		first   Stage
		wantErr string
	}{
		{"a main stage ending stops the others", Stage{Name: "batch", Run: func(context.Context) error { return nil }}, ""},
		{"a failing stage stops the others and is reported", Stage{Name: "broken", Run: func(context.Context) error { return boom }}, "broken: boom"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stopped := make(chan string, 1)
			tr := &Tracker{}
			err := Run(context.Background(), zap.NewNop(), []Stage{c.first, untilCancelled("server", 0, stopped)}, tr, time.Second)
			if (err == nil) != (c.wantErr == "") || (err != nil && err.Error() != c.wantErr) {
				t.Fatalf("err %v, want %q", err, c.wantErr)
			}
			if got := <-stopped; got != "server" {
				t.Fatalf("stopped %q", got)
			}
			if tr.Ready() == nil || len(tr.Running()) != 0 {
				t.Fatalf("tracker: ready %v, running %v", tr.Ready(), tr.Running())
			}
		})
	}
}

func TestAuxiliaryStageEndingStopsNothing(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan string, 1)
	aux := Stage{Name: "poller", Auxiliary: true, Run: func(context.Context) error { return nil }}
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, zap.NewNop(), []Stage{aux, untilCancelled("server", 0, stopped)}, &Tracker{}, time.Second)
	}()
	select {
	case <-stopped:
		t.Fatal("the main stage stopped when an auxiliary one ended")
	case <-time.After(100 * time.Millisecond):
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestGraceExceeded(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	stopped := make(chan string, 1)
	err := Run(ctx, zap.NewNop(), []Stage{untilCancelled("slow", time.Second, stopped)}, &Tracker{}, 50*time.Millisecond)
	if !errors.Is(err, ErrGraceExceeded) || !strings.Contains(err.Error(), "slow") {
		t.Fatalf("err %v, want the grace error naming the stage", err)
	}
}
