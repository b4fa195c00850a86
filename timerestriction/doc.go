// Package timerestriction owns the time restrictions of notification rules: reading them from
// the JSON stored in a rule's "time_restrictions" field and deciding whether one is active at an
// instant. It is a pure library: no Redis, no clock; "now" is always a parameter and the contact's
// timezone is passed in.
//
// # Formats
//
// One restriction is a JSON object. Two ways to give the recurrence are accepted (docs/decisions.md D9):
//
//   - Flapjack 1.x / ice_cube hashes: "start_time" and "end_time" (or "start_date"/"end_date",
//     used only when the *_time key is absent), "rrules" (a list of ice_cube rule hashes),
//     "rtimes" and "extimes". "exrules" is ignored, as Flapjack 1.x discards it (#715).
//   - An RFC 5545 string under "rrule": RRULE, EXRULE, RDATE and EXDATE lines separated by
//     newlines; a bare "FREQ=..." line is one RRULE. "start_time" is the DTSTART, so a DTSTART
//     line is refused rather than guessed about.
//
// Giving a non-empty "rrules" together with "rrule" is an error because nothing says how the two
// would combine; "rrules": [] (which ice_cube writes by default) next to "rrule" is accepted.
// "rtimes" and "extimes" apply in both forms. Without any rule the restriction is the single
// occurrence start..end (plus any rtimes/RDATEs), as in ice_cube. With rules, the start itself is
// an occurrence only if the rules produce it (ice_cube 0.12 and rrule-go agree on this).
//
// # Times and timezones
//
// Every time written without a zone (start, end, until, rtimes, extimes, RDATE, EXDATE, UNTIL)
// is a wall-clock time in the contact's location. A string with an explicit offset or Z, or an
// ice_cube {"time", "zone"} object, names an instant, which is then expressed in the contact's
// location: recurrences are always computed in the contact's location, as Flapjack 1.x did.
// An unknown "zone" name falls back to the contact's location instead of failing.
//
// # Occurrence length across DST changes
//
// The first occurrence lasts end_time - start_time in real elapsed time. Later occurrences keep
// the wall-clock length instead: each one ends at its start's wall-clock time plus the wall-clock
// difference between start_time and end_time, in the contact's location. So a 09:00-17:00 window
// is 09:00-17:00 local on both sides of a DST change, and a 22:00-06:00 night window ends at 06:00
// local even on the night the clocks change (lasting 7 or 9 real hours). This is what people mean
// when they write such a window; a fixed real duration would shift the end by an hour twice a year.
// An end that would fall in the hour skipped by a spring-forward change moves past the gap.
//
// # Wall times that do not exist or exist twice
//
// An RFC 5545 restriction ("rrule") follows RFC 5545. A recurrence instance whose wall-clock
// time a spring-forward gap skips (02:30 that night) is ignored and not counted towards COUNT
// (§3.3.10). A written local time (start_time as the DTSTART, end_time, RDATE, EXDATE, UNTIL,
// rtimes, extimes) in a gap is read with the UTC offset before the gap, so it lands one gap
// later (02:30 is 03:30 EDT in New York and 03:30 CEST in Berlin), and one that occurs twice (a
// fall-back night) is the first of its two instants (§3.3.5); recurrence instances in such an
// overlap are likewise the first. A start_time in a gap is therefore an occurrence at 03:30 if
// the rules produce its 02:30, and the rules keep recurring at the 02:30 it names.
//
// An ice_cube restriction ("rrules") keeps the reading it always had, rrule-go's: every wall
// time is time.Date's normalisation of it. West of UTC a time in a gap lands an hour early
// (02:30 is 01:30 EST) and of two instants the first is taken; east of UTC a time in a gap
// lands after it (03:30 CEST) and of two instants the second is taken. Occurrences in a gap
// are kept, and a start in a gap recurs at the time it was normalised to.
//
// An occurrence o covers the instants o <= t < end(o). An extime/EXDATE removes the occurrence
// starting exactly at that instant; a date-only EXDATE (VALUE=DATE or YYYYMMDD) removes every
// occurrence starting on that local date, a date-only RDATE adds one at start_time's time of
// day, and a date-only UNTIL includes its whole day. A restriction whose end equals its start is
// never active.
//
// # Refused rules
//
// Besides malformed input, Parse refuses what rrule-go would evaluate wrongly or without end:
// BYDAY mixing numbered and plain weekdays (rrule-go requires both, RFC 5545 either), numbered
// weekdays outside MONTHLY/YEARLY or beyond ±5 within a month, BYEASTER, BYHOUR/BYMINUTE/
// BYSECOND that an HOURLY/MINUTELY/SECONDLY interval never reaches, BYSETPOS that no DAILY or
// shorter period can satisfy, intervals longer than about 27 years (1000 for MONTHLY and YEARLY),
// COUNT above 100000, and a DTSTART line (start_time is the DTSTART).
//
// # Performance
//
// Rules are re-read for every notification, so evaluation avoids rrule-go's habit of iterating
// from DTSTART: Active restarts each rule from a point on the rule's own lattice (a whole number
// of intervals after DTSTART: wall-clock seconds, minutes and hours, days, weeks, calendar months
// or years) just before the instant of interest, with every default rrule-go derives from
// DTSTART pinned explicitly so the restarted rule yields exactly the same occurrences. rrule-go
// runs on wall-clock times written as UTC, and each occurrence is placed in the contact's
// location the way rrule-go itself would (this is also faster, and right in zones whose DST
// change happens at midnight, where rrule-go in the location repeats or skips a day). COUNT is
// turned into the equivalent UNTIL once, at parse time; rules that never occur are found at parse
// time; DAILY and shorter rules take their day-level parts (BYMONTH, BYDAY...) from a table of
// allowed days, so rare days cost nothing to skip. Cache memoises parsing.
package timerestriction
