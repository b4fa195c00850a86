// Package smsreply owns what the SMS media share about replies (docs/decisions.md D25): reading
// "ACK 4821" from a reply, taking the code of the number it came from, and acknowledging the
// check through the one acknowledgement event. The providers' webhooks (Twilio's, Vonage's)
// check their own signatures and hand the reply here.
package smsreply

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/events"
	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/internal/humantime"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/schema"
)

// Publisher queues events (events.Publisher).
type Publisher interface {
	Publish(ctx context.Context, evs ...schema.Event) ([]schema.Event, error)
}

// Acknowledger acknowledges checks from SMS replies.
type Acknowledger struct {
	Pool   *redis.Pool
	Keys   schema.Keys
	Clock  clock.Clock
	Events Publisher
	Codes  gateways.ReplyCodes
	// AckDuration is executive.acknowledgement_duration, the length the answer states.
	AckDuration time.Duration
	Log         *zap.Logger
}

var ackReply = regexp.MustCompile(`(?i)^\s*ack\s+([0-9]{4})\s*[.!]?\s*$`)

// ErrNotAnAcknowledgement is a reply that does not read "ACK 1234".
var ErrNotAnAcknowledgement = errors.New(`the reply is not "ACK" and a 4-digit code`)

// Reply handles the text of a reply from number (as the provider gives it) and returns what to
// answer the sender. Only "ACK CODE" naming a live code issued to that very number acknowledges;
// anything else acknowledges nothing, is logged, and is answered as such.
func (a *Acknowledger) Reply(ctx context.Context, provider, from, text string) (string, error) {
	number := model.ReplyNumber(from)
	m := ackReply.FindStringSubmatch(text)
	if m == nil || number == "" {
		a.Log.Warn("SMS reply acknowledges nothing", zap.String("provider", provider), zap.String("from", from),
			zap.Error(ErrNotAnAcknowledgement))
		return "To acknowledge, reply ACK and the 4-digit code of the alert.", ErrNotAnAcknowledgement
	}
	now := a.Clock.Now()
	conn, err := a.Pool.GetContext(ctx)
	if err != nil {
		return "", fmt.Errorf("take reply code: %w", err)
	}
	defer conn.Close()
	rc, err := model.ConsumeReplyCode(conn, a.Keys, number, m[1], now.Unix(), a.Codes.MaxFailures, int64(a.Codes.Lifetime/time.Second))
	if errors.Is(err, model.ErrUnknownReplyCode) || errors.Is(err, model.ErrReplyBlocked) {
		a.Log.Warn("SMS reply acknowledges nothing", zap.String("provider", provider), zap.String("from", from),
			zap.String("code", m[1]), zap.Error(err))
		return "No alert to acknowledge with code " + m[1] + " from this number.", err
	}
	if err != nil {
		return "", err
	}
	entity, check, ok := schema.SplitCheckID(rc.Check)
	if !ok {
		return "", fmt.Errorf("reply code %s names %q, not ENTITY:CHECK", m[1], rc.Check)
	}
	who := rc.Contact
	if who == "" {
		who = from
	}
	ev := events.Acknowledgement(entity, check, "acknowledged by "+who+" by SMS reply", 0, now)
	if _, err := a.Events.Publish(ctx, ev); err != nil {
		return "", fmt.Errorf("queue the acknowledgement: %w", err)
	}
	a.Log.Info("check acknowledged by SMS reply", zap.String("provider", provider), zap.String("check", rc.Check),
		zap.String("contact", rc.Contact))
	return fmt.Sprintf("Acknowledged %s for %s.", rc.Check, humantime.Words(a.AckDuration)), nil
}
