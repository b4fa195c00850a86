// Package receiver turns external input into Flapjack events: Nagios perfdata lines read from the
// named pipe Nagios writes to (docs/flapjack-1x.md 5.3), the external command lines the nsca daemon writes
// into its pipe (docs/decisions.md D18), streams of JSON events, either in Flapjack's own event format
// (docs/flapjack-1x.md 1.2) or as Sensu 1.x / Sensu Go handler input (see SENSU.md), and the events a
// Flapjack 1.x archives in its Redis (the mirror).
//
// Receivers do not queue events themselves. Every record is validated with package schema
// (schema.ParseEvent, or schema.ValidateEvent for events built field by field), exactly as the
// executive validates what it pops, and each accepted event is handed, as the JSON schema.Event
// encodes to, to an Enqueuer or an events.Publisher (one LPUSH per batch onto `events`). The
// mirror alone reads a Redis: the source's archive lists, never written. Rejected records are
// never dropped silently (docs/decisions.md D2): each is logged with its line number and every reason,
// counted, and passed to the caller's OnReject callback where there is one.
package receiver
