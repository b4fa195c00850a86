package model

import (
	"fmt"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/schema"
)

// QueueDelivery adds to ops the delivery log's record of an alert pushed onto its medium's list
// at `at` (unix seconds): status queued, indexed by time, check and contact. The notifier writes
// it in the same atomic write as the push, so an alert on a list always has its record.
func QueueDelivery(ops *Ops, keys schema.Keys, a schema.Alert, at int64) {
	if a.ID == "" {
		return
	}
	fields := append(deliveryIdentity(a, at), schema.DeliveryFieldStatus, schema.DeliveryQueued, schema.DeliveryFieldUpdatedAt, at)
	ops.HSet(keys.Delivery(a.ID), fields...)
	indexDelivery(ops, keys, a, at)
}

func deliveryIdentity(a schema.Alert, queuedAt int64) []any {
	fields := []any{
		schema.DeliveryFieldID, a.ID, schema.DeliveryFieldCheck, a.EventID, schema.DeliveryFieldContact, a.ContactID,
		schema.DeliveryFieldMedium, a.Media, schema.DeliveryFieldType, a.AlertType(), schema.DeliveryFieldState, a.State,
		schema.DeliveryFieldQueuedAt, queuedAt,
	}
	if e := a.Escalation; e != nil {
		fields = append(fields, schema.DeliveryFieldEscalation, fmt.Sprintf("%s step %d of %d", e.PolicyID, e.Step, e.Steps))
	}
	return fields
}

func indexDelivery(ops *Ops, keys schema.Keys, a schema.Alert, at int64) {
	ops.ZAdd(keys.Deliveries(), at, a.ID)
	ops.ZAdd(keys.CheckDeliveries(a.EventID), at, a.ID)
	if a.ContactID != "" {
		ops.ZAdd(keys.ContactDeliveries(a.ContactID), at, a.ID)
	}
}

// Attempt is what a gateway made of one try to deliver an alert.
type Attempt struct {
	At        int64  // unix seconds, from the injected clock
	Status    string // schema.DeliveryRetrying, DeliveryDelivered or DeliveryFailed
	MessageID string // the provider's id of the message, when it gives one
	Error     string // why the try failed
	// Tried counts the attempt (false for an alert rejected before any try).
	Tried bool
}

// RecordAttempt writes a gateway's attempt into the alert's delivery record. An alert queued
// by another tool has no record yet: it is created, queued at the attempt's time.
func RecordAttempt(conn redis.Conn, keys schema.Keys, a schema.Alert, t Attempt) error {
	if a.ID == "" {
		return nil
	}
	key := keys.Delivery(a.ID)
	_, err := redis.Int64(conn.Do("HGET", key, schema.DeliveryFieldQueuedAt))
	if err != nil && err != redis.ErrNil {
		return fmt.Errorf("read delivery record of alert %s: %w", a.ID, err)
	}
	var ops Ops
	if err == redis.ErrNil {
		ops.HSet(key, deliveryIdentity(a, t.At)...)
		indexDelivery(&ops, keys, a, t.At)
	}
	fields := []any{schema.DeliveryFieldStatus, t.Status, schema.DeliveryFieldUpdatedAt, t.At}
	if t.MessageID != "" {
		fields = append(fields, schema.DeliveryFieldMessageID, t.MessageID)
	}
	if t.Error != "" {
		fields = append(fields, schema.DeliveryFieldError, t.Error)
	}
	ops.HSet(key, fields...)
	if t.Tried {
		ops.HIncrBy(key, schema.DeliveryFieldAttempts, 1)
	}
	if _, err := Apply(conn, ApplyTarget{}, []Record{{Ops: ops}}); err != nil {
		return fmt.Errorf("record delivery attempt of alert %s: %w", a.ID, err)
	}
	return nil
}
