package checkstate

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/text"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/schema"
)

// Rejected is an input refused before it became a decision: an event the executive could not
// parse, or a line a receiver could not read (Source names the receiver; "" for the executive).
type Rejected struct {
	Source  string
	Input   string
	Reasons []string
}

// RejectedRecord keeps r where rejections are kept: the raw input in events_rejected:YYYYMMDDHH
// and {time, reasons, event, source} at the same position of events_rejected_reasons:YYYYMMDDHH,
// both expiring after ttl.
func RejectedRecord(keys schema.Keys, r Rejected, now time.Time, ttl time.Duration) model.Record {
	var rec model.Record
	list, reasons := keys.EventsRejected(now), keys.EventsRejectedReasons(now)
	why, _ := json.Marshal(schema.RejectedReason{Time: now.Unix(), Reasons: r.Reasons,
		Event: text.Truncate(r.Input, schema.RejectedInputMax), Source: r.Source})
	seconds := int64(ttl / time.Second)
	rec.Ops.LPush(list, r.Input)
	rec.Ops.Expire(list, seconds)
	rec.Ops.LPush(reasons, why)
	rec.Ops.Expire(reasons, seconds)
	return rec
}

// KeepRejected keeps a receiver's rejections now, in one atomic write.
func KeepRejected(ctx context.Context, conn redis.Conn, keys schema.Keys, batch []Rejected, now time.Time, ttl time.Duration) error {
	records := make([]model.Record, len(batch))
	for i, r := range batch {
		records[i] = RejectedRecord(keys, r, now, ttl)
	}
	if _, err := model.Apply(conn, model.ApplyTarget{}, records); err != nil {
		return fmt.Errorf("keep rejected inputs: %w", err)
	}
	return nil
}
