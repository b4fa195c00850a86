// Package roster owns who is told about what: contacts, their media, PagerDuty credentials,
// notification rules and escalation policies (with the ladders escalating a check), their
// validation, the routing reads the notifier makes (scripts/routing.lua), and the changes the
// notifier's decisions make to contacts' notification state and to the record of whom a
// check's on-call schedules reached (alertwrites.go). Its writes are
// guarded transactions (guard.go): they WATCH what they read and commit through model's apply
// script, so concurrent writers from the API, the importer and demo seeding never act on a
// state that is gone; model/inventory's writes use them too.
package roster
