// Package model owns the one way flapjack writes to Redis and the names every store package
// shares: Ops (the writes of a decision), Record and Guard (a unit applied atomically, refused
// when what the decision read has changed), Apply and its Lua script (every write of every
// package goes through it), the script runner the store's other scripts share, Indexes (the
// "check is current" writes batched per claim), CheckRef, and the decoding of integer replies.
//
// The stores are layered, each importing only those before it: model, then model/checkstate
// (check state on the hot path), then model/roster (contacts and what routes to them), then
// model/inventory (entities and checks as operators configure them); model/views (read-only
// views for the surfaces) imports only model and model/checkstate.
// Package schema names every key; decisions live in executive and notifier.
package model
