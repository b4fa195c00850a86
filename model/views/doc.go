// Package views owns the read-only views the surfaces show (the web UI, the JSON API, the
// Jabber bot, `flapjack status` and `checks`, metrics): listings of failing and current checks,
// lookups by acknowledgement hash or name, check statuses at an instant, reports of state and
// maintenance over a period, the store's metrics, the explain trail, and the triage order of
// failing checks with who each last alerted. None of them writes.
package views
