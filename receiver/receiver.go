package receiver

import (
	"context"
	"errors"

	"github.com/flapjackgo/flapjack/internal/text"
	"github.com/flapjackgo/flapjack/schema"
	"go.uber.org/zap"
)

// Enqueuer accepts one validated event (JSON as schema.Event marshals it).
type Enqueuer interface {
	Enqueue(ctx context.Context, event []byte) error
}

// EnqueuerFunc adapts a function to Enqueuer.
type EnqueuerFunc func(ctx context.Context, event []byte) error

// Enqueue calls f.
func (f EnqueuerFunc) Enqueue(ctx context.Context, event []byte) error { return f(ctx, event) }

// Rejection describes one input record that did not become an event.
type Rejection struct {
	// Record is the 1-based position of the record in the input: the JSON value's ordinal for
	// RunJSON (elements of a top-level array count one each), the line number for Nagios input.
	Record int
	// Line is the 1-based line on which the record starts.
	Line int
	// Input is the raw record. Records over the size limit keep only their first bytes, so a
	// huge record cannot exhaust memory.
	Input string
	// Reasons lists every problem found (schema.RejectError's reasons where validation failed).
	Reasons []string
}

// Report counts what a receiver did with its input.
type Report struct {
	Records  int // records read (lines for Nagios input, JSON values for RunJSON)
	Enqueued int // records handed to the Enqueuer
	Rejected int // records refused; each was logged and passed to OnReject
}

// logInputBytes bounds how much of a rejected record goes into a log line.
const logInputBytes = 512

// reasonsOf extracts the reasons from a parse error: every schema reason when it is a
// *schema.RejectError, else the error text.
func reasonsOf(err error) []string {
	var rej *schema.RejectError
	if errors.As(err, &rej) {
		return rej.Reasons
	}
	return []string{err.Error()}
}

// reject logs one rejected record, counts it and hands it to onReject.
func reject(log *zap.Logger, rep *Report, onReject func(Rejection), r Rejection) {
	rep.Rejected++
	log.Warn("record rejected",
		zap.Int("line", r.Line),
		zap.Int("record", r.Record),
		zap.Strings("reasons", r.Reasons),
		zap.String("input", text.Truncate(r.Input, logInputBytes)))
	if onReject != nil {
		onReject(r)
	}
}
