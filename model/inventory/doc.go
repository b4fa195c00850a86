// Package inventory owns the entities and checks operators configure, as the JSON API and
// `flapjack import` write them: entities (names, tags, their contacts), renames and merges of an
// entity with the data of its checks (scripts/rename_entity.lua), and checks (creation, tags,
// listings). Its writes are model/roster's guarded transactions: they WATCH what they read,
// contacts included, and commit through model's apply script.
package inventory
