package views

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/schema"
)

// DeliveryFilter selects delivery log records; zero values select everything.
type DeliveryFilter struct {
	Check   string // ENTITY:CHECK
	Contact string // contact id
	Since   int64  // queued at or after (unix seconds)
	Until   int64  // queued before (unix seconds; 0: no bound)
	Limit   int    // the newest Limit records (0: DefaultDeliveryLimit)
}

// DefaultDeliveryLimit is how many records a read returns unless told otherwise.
const DefaultDeliveryLimit = 1000

// ReadDeliveries returns the delivery log records f selects, oldest first: each alert the
// notifier queued (or a gateway took) with its fate. A record retention forgot between the
// index read and the record read is left out.
func ReadDeliveries(conn redis.Conn, keys schema.Keys, f DeliveryFilter) ([]schema.DeliveryRecord, error) {
	index := keys.Deliveries()
	switch {
	case f.Check != "":
		index = keys.CheckDeliveries(f.Check)
	case f.Contact != "":
		index = keys.ContactDeliveries(f.Contact)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = DefaultDeliveryLimit
	}
	until := "+inf"
	if f.Until > 0 {
		until = "(" + strconv.FormatInt(f.Until, 10)
	}
	ids, err := redis.Strings(conn.Do("ZREVRANGEBYSCORE", index, until, f.Since, "LIMIT", 0, limit))
	if err != nil {
		return nil, fmt.Errorf("read delivery log index %s: %w", index, err)
	}
	slices.Reverse(ids)
	for _, id := range ids {
		if err := conn.Send("HGETALL", keys.Delivery(id)); err != nil {
			return nil, fmt.Errorf("read delivery log: %w", err)
		}
	}
	if err := conn.Flush(); err != nil {
		return nil, fmt.Errorf("read delivery log: %w", err)
	}
	out := make([]schema.DeliveryRecord, 0, len(ids))
	for _, id := range ids {
		h, err := redis.StringMap(conn.Receive())
		if err != nil {
			return nil, fmt.Errorf("read delivery record %s: %w", id, err)
		}
		if len(h) == 0 || (f.Contact != "" && h[schema.DeliveryFieldContact] != f.Contact) {
			continue
		}
		out = append(out, deliveryRecord(h))
	}
	return out, nil
}

func deliveryRecord(h map[string]string) schema.DeliveryRecord {
	num := func(field string) int64 {
		n, _ := strconv.ParseInt(h[field], 10, 64)
		return n
	}
	return schema.DeliveryRecord{
		ID: h[schema.DeliveryFieldID], Check: h[schema.DeliveryFieldCheck], Contact: h[schema.DeliveryFieldContact],
		Medium: h[schema.DeliveryFieldMedium], Type: h[schema.DeliveryFieldType], State: h[schema.DeliveryFieldState],
		QueuedAt: num(schema.DeliveryFieldQueuedAt), Status: h[schema.DeliveryFieldStatus],
		UpdatedAt: num(schema.DeliveryFieldUpdatedAt), Attempts: int(num(schema.DeliveryFieldAttempts)),
		MessageID: h[schema.DeliveryFieldMessageID], Error: h[schema.DeliveryFieldError],
		Escalation: h[schema.DeliveryFieldEscalation],
	}
}

// DeliveryLine is a record in one sentence, as `flapjack log`, `flapjack explain` and the web
// check page say it: "sent" only for a delivered alert.
func DeliveryLine(d schema.DeliveryRecord) string {
	what := fmt.Sprintf("%s %s alert for %s to %s on %s", d.Type, d.State, d.Check, d.Contact, d.Medium)
	switch d.Status {
	case schema.DeliveryDelivered:
		s := fmt.Sprintf("%s: delivered", what)
		if d.MessageID != "" {
			s += " (message id " + d.MessageID + ")"
		}
		return s + retriedText(d)
	case schema.DeliveryFailed:
		return fmt.Sprintf("%s: failed after %d attempts: %s", what, d.Attempts, d.Error)
	case schema.DeliveryRetrying:
		return fmt.Sprintf("%s: not delivered yet, %d attempts failed, last: %s", what, d.Attempts, d.Error)
	}
	return what + ": queued, not yet taken by a gateway"
}

func retriedText(d schema.DeliveryRecord) string {
	switch n := d.Retried(); n {
	case 0:
		return ""
	case 1:
		return ", retried once"
	default:
		return fmt.Sprintf(", retried %d times", n)
	}
}
