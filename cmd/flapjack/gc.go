package main

import "runtime/debug"

// defaultGCPercent is the garbage collector's target (GOGC) of every flapjack command unless the
// GOGC environment variable sets one. The stages' live heap is small (a few MiB: a batch's events
// and their writes) but they allocate per event, so with Go's default of 100 the collector ran
// every few batches and cost a third of the executive's CPU; at 400 it runs a quarter as often,
// for a heap that may grow to five times the live data instead of twice (32 → 49 MiB RSS for
// `flapjack server` under full load).
const defaultGCPercent = 400

// serverGCPercent is the target of `flapjack server`, where every stage shares one heap: with
// the executive and a notifier that keeps up with it working at once, 400 let the heap grow
// past the 64 MiB the server is meant to stay under (63–67 MiB RSS under full load against
// 57–58 MiB at 300, for about 1 µs more CPU per event).
const serverGCPercent = 300

// setGCPercent applies percent unless lookup finds GOGC set (the runtime has read it then); it
// returns the target in force.
func setGCPercent(lookup func(string) (string, bool), percent int) int {
	if _, set := lookup("GOGC"); set {
		current := debug.SetGCPercent(100)
		debug.SetGCPercent(current)
		return current
	}
	debug.SetGCPercent(percent)
	return percent
}
