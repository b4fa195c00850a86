// Package roster owns who is told about what: contacts, their media, PagerDuty credentials,
// notification rules and escalation policies (with the ladders escalating a check), their
// validation, and the routing reads the notifier makes (scripts/routing.lua); and the entities
// and checks operators configure and link contacts to (names, tags, renames). Its
// writes are guarded transactions (guard.go): they WATCH what they read and commit through
// model's apply script, so concurrent writers from the API, the importer and demo seeding never
// act on a state that is gone.
package roster
