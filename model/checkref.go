package model

import (
	"github.com/flapjackgo/flapjack/schema"
)

// CheckRef names one check.
type CheckRef struct {
	Entity, Check string
}

// ID is ENTITY:CHECK.
func (r CheckRef) ID() string { return schema.CheckID(r.Entity, r.Check) }
