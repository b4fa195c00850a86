// Package receiver turns external input into Flapjack events: Nagios perfdata lines read from the
// named pipe Nagios writes to (reference §5.3), and streams of JSON events, either in Flapjack's
// own event format (reference §1.2) or as Sensu 1.x / Sensu Go handler input (see SENSU.md).
//
// A receiver never talks to Redis. Every record is validated with schema.ParseEvent, exactly as
// the executive validates what it pops, and each accepted event is handed, as the JSON
// schema.Event marshals to, to an Enqueuer (in production one that LPUSHes onto `events`).
// Rejected records are never dropped silently (SPEC 4.2): each is logged with its line number
// and every reason, counted in the Report, and passed to the caller's OnReject callback, which
// may keep the raw input (for example in events_rejected:YYYYMMDDHH).
package receiver
