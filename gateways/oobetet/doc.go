// Package oobetet is Flapjack 1.6's "out-of-band end-to-end test" (docs/flapjack-1x.md 4.4): a separate
// XMPP client that sits in the rooms the Jabber gateway alerts, watches for the alerts of one
// canary check, and raises the alarm when they stop arriving — the proof that the whole path
// (events → executive → notifier → jabber gateway → XMPP server) still works, told through a
// channel that does not depend on it (PagerDuty), and in the rooms themselves.
//
// oobetet is not a medium: it consumes no alert queue, so it is not in gateways/media.All.
// Spec describes it like one (its settings under gateways.oobetet. and its stages) for the
// commands that run it.
//
//   - Match (match.go) reads a room message: a Problem, Recovery or Acknowledgement alert of the
//     watched check, in the wording of the Jabber gateway (gateways.AlertText), or nothing.
//   - Watch (watch.go) is the decision, a pure function of the last sightings and now: healthy,
//     newly breached, still breached or recovered. As in Flapjack, a breach is a problem alert
//     or a recovery alert not seen for longer than max_latency (both must keep flowing); the
//     clock starts when the watcher starts.
//   - Watcher (watcher.go) runs the XMPP connection (xmpp.go) and, on a ticker, reads the clock,
//     decides, and raises the alarm once per breach: a PagerDuty Events API trigger (through
//     gateways/pagerduty's Sender, to pagerduty_contact) and a room message; when alerts flow
//     again it resolves the incident and says so. Optionally it injects the canary itself: a
//     failure event for watched_entity:watched_check every inject_interval, and its recovery
//     half an interval later, through the events publisher.
//   - Its health is Watcher.Health (for a /readyz-style check) and the gauges
//     flapjack_oobetet_breached and flapjack_oobetet_last_seen_timestamp_seconds.
package oobetet
