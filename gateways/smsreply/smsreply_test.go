package smsreply

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/schema"
)

type queued []schema.Event

func (q *queued) Publish(_ context.Context, evs ...schema.Event) ([]schema.Event, error) {
	*q = append(*q, evs...)
	return evs, nil
}

// Which replies acknowledge: "ACK" and the live code of the number, in any case and spacing.
func TestReplyText(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	keys := schema.NewKeys("")
	clk := clock.NewFake(time.Unix(1_800_000_000, 0))
	for _, tc := range []struct {
		text string
		acks bool
		err  error
	}{
		{"ACK CODE", true, nil},
		{"  ack   CODE. ", true, nil},
		{"Ack CODE!", true, nil},
		{"ACK", false, ErrNotAnAcknowledgement},
		{"ACK CODE please", false, ErrNotAnAcknowledgement},
		{"ACK 12345", false, ErrNotAnAcknowledgement},
		{"STOP", false, ErrNotAnAcknowledgement},
	} {
		conn := db.Pool.Get()
		code, err := model.IssueReplyCode(conn, keys, "61414123456", model.ReplyCode{Check: "web-01:HTTP", Contact: "ops",
			Expires: clk.Now().Add(time.Hour).Unix()}, clk.Now().Unix())
		conn.Close()
		if err != nil {
			t.Fatal(err)
		}
		var q queued
		a := &Acknowledger{Pool: db.Pool, Keys: keys, Clock: clk, Events: &q, Codes: gateways.ReplyCodes{Lifetime: time.Hour, MaxFailures: 100},
			AckDuration: 4 * time.Hour, Log: zap.NewNop()}
		text := strings.ReplaceAll(tc.text, "CODE", code)
		_, err = a.Reply(context.Background(), "test", "+61 414 123 456", text)
		if !errors.Is(err, tc.err) || (len(q) == 1) != tc.acks {
			t.Errorf("%q: error %v, %d events; want %v, acknowledged %v", text, err, len(q), tc.err, tc.acks)
		}
	}
}
