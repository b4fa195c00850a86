package model

import (
	"github.com/flapjackgo/flapjack/schema"
)

// Indexes gathers the "this check is current" writes of many checks touched at one instant
// (docs/flapjack-1x.md 2.3), which Apply sends in a section of their own (ApplyTarget.Indexes): each
// check with the record that touched it, its name and id once, the script adding the score and
// writing one multi-member ZADD per index for the checks whose records it applied. Sent as ops,
// every member came with its score and each entity's checks twice, and a check was marked
// current even when its record conflicted.
type Indexes struct {
	keys     schema.Keys
	now      int64
	count    int
	order    []string
	entities map[string][]any // per entity: record (1-based), check name, check id, ...
}

// NewIndexes starts gathering for instant now.
func NewIndexes(keys schema.Keys, now int64) *Indexes {
	return &Indexes{keys: keys, now: now, entities: map[string][]any{}}
}

// Touch marks entity:check current if the record at index record (in Apply's records) applies.
func (x *Indexes) Touch(record int, entity, check string) {
	if _, seen := x.entities[entity]; !seen {
		x.order = append(x.order, entity)
	}
	x.entities[entity] = append(x.entities[entity], record+1, check, schema.CheckID(entity, check))
	x.count++
}

// touched is how many checks were touched (0 for a nil x).
func (x *Indexes) touched() int {
	if x == nil {
		return 0
	}
	return x.count
}

// size is the number of script arguments args appends.
func (x *Indexes) size() int {
	if x.touched() == 0 {
		return 0
	}
	return 4 + 4*len(x.order) + 3*x.count
}

// args appends the apply script's index section (see apply.lua).
func (x *Indexes) args(args []any) []any {
	if x.touched() == 0 {
		return args
	}
	keys := x.keys
	args = append(args, keys.AllChecks(), keys.CurrentEntities(), x.now, len(x.order))
	for _, e := range x.order {
		members := x.entities[e]
		args = append(args, e, keys.AllChecksFor(e), keys.CurrentChecks(e), len(members)/3)
		args = append(args, members...)
	}
	return args
}
