package main

import (
	"runtime/debug"
	"testing"
)

// TestGCPercent checks flapjack's default collector target and the server's, and that GOGC in
// the environment wins over them.
func TestGCPercent(t *testing.T) {
	before := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(before) })

	unset := func(string) (string, bool) { return "", false }
	if got := setGCPercent(unset, serverGCPercent); got != serverGCPercent || debug.SetGCPercent(serverGCPercent) != serverGCPercent {
		t.Errorf("server without GOGC: %d, want %d", got, serverGCPercent)
	}
	if got := setGCPercent(unset, defaultGCPercent); got != defaultGCPercent {
		t.Errorf("without GOGC: %d, want %d", got, defaultGCPercent)
	}
	if got := debug.SetGCPercent(250); got != defaultGCPercent {
		t.Errorf("without GOGC the runtime's target is %d, want %d", got, defaultGCPercent)
	}
	// GOGC=250 as the runtime read it at start
	set := func(string) (string, bool) { return "250", true }
	if got := setGCPercent(set, serverGCPercent); got != 250 {
		t.Errorf("with GOGC=250: %d", got)
	}
	if got := debug.SetGCPercent(100); got != 250 {
		t.Errorf("with GOGC=250 the runtime's target is %d", got)
	}
}
