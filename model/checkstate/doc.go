// Package checkstate owns the state of checks on the hot path: reading in one script call the
// facts a decision needs (state, history, maintenance windows, notification history; facts.go,
// its layout in facts_layout.go, scripts/check_facts.lua), the writes of a decision's effects
// (CheckWriter: state changes, service updates, acknowledgement hashes, notifications,
// maintenance), staleness deadlines, the index of current checks, rejected events kept for
// inspection, and maintenance and enabling set by operators. Everything it writes goes through
// model.Apply, on the documented Flapjack 1.x layout.
package checkstate
