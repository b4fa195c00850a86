package model

import (
	"crypto/rand"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/schema"
)

var (
	//go:embed scripts/consume_reply_code.lua
	consumeReplyCodeSource string
	consumeReplyCodeScript = redis.NewScript(0, consumeReplyCodeSource)
)

// ReplyCode is what a code of `sms_reply_codes:NUMBER` stands for.
type ReplyCode struct {
	Check   string `json:"check"`
	Contact string `json:"contact"`
	Alert   string `json:"alert"`
	Medium  string `json:"medium"`
	Expires int64  `json:"expires"`
}

// ReplyCodeDigits is the length of a reply code.
const ReplyCodeDigits = 4

// IssueReplyCode gives number a new random code for rc, unique among the number's live codes,
// and forgets the number's expired ones (now: unix seconds, from the injected clock).
func IssueReplyCode(conn redis.Conn, keys schema.Keys, number string, rc ReplyCode, now int64) (string, error) {
	key := keys.SMSReplyCodes(number)
	live, err := redis.StringMap(conn.Do("HGETALL", key))
	if err != nil {
		return "", fmt.Errorf("read reply codes: %w", err)
	}
	var ops Ops
	for code, raw := range live {
		var old ReplyCode
		if json.Unmarshal([]byte(raw), &old) != nil || old.Expires <= now {
			ops.HDel(key, code)
			delete(live, code)
		}
	}
	code := ""
	for tries := 0; code == "" || live[code] != ""; tries++ {
		if tries == 20 {
			return "", errors.New("no free reply code for the number")
		}
		if code, err = randomCode(); err != nil {
			return "", err
		}
	}
	payload, _ := json.Marshal(rc)
	ops.HSet(key, code, payload)
	ops.Expire(key, rc.Expires-now+86400)
	if _, err := Apply(conn, ApplyTarget{}, []Record{{Ops: ops}}); err != nil {
		return "", fmt.Errorf("write reply code: %w", err)
	}
	return code, nil
}

func randomCode() (string, error) {
	n, err := rand.Int(rand.Reader, big.NewInt(10000))
	if err != nil {
		return "", fmt.Errorf("draw a reply code: %w", err)
	}
	return fmt.Sprintf("%04d", n.Int64()), nil
}

// Reply code outcomes.
var (
	// ErrUnknownReplyCode: the number has no live code of that value (counted as a failure).
	ErrUnknownReplyCode = errors.New("no live reply code of that value for this number")
	// ErrReplyBlocked: the number named too many unknown codes lately; nothing was looked up.
	ErrReplyBlocked = errors.New("too many replies with unknown codes from this number")
)

// ConsumeReplyCode takes number's code: the code's record, removed so it acknowledges once. A
// number that named maxFailures unknown codes within window seconds is refused until the
// window has passed since the first.
func ConsumeReplyCode(conn redis.Conn, keys schema.Keys, number, code string, now int64, maxFailures int, window int64) (ReplyCode, error) {
	var rc ReplyCode
	reply, err := redis.Strings(consumeReplyCodeScript.Do(conn, keys.SMSReplyCodes(number), keys.SMSReplyFailures(number),
		code, now, maxFailures, window))
	if err != nil {
		return rc, fmt.Errorf("take reply code: %w", err)
	}
	switch reply[0] {
	case "ok":
		if err := json.Unmarshal([]byte(reply[1]), &rc); err != nil {
			return rc, fmt.Errorf("reply code record: %w", err)
		}
		return rc, nil
	case "blocked":
		return rc, ErrReplyBlocked
	}
	return rc, ErrUnknownReplyCode
}

// ReplyNumber is a phone number as reply codes are filed under: its digits, without a leading
// "+" or "00" ("+61 414 123 456", "0061414123456" and Vonage's "61414123456" are one number).
func ReplyNumber(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return strings.TrimPrefix(b.String(), "00")
}
