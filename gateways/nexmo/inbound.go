package nexmo

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/clock"
)

// InboundPath is where Vonage posts the SMS a number receives (its inbound webhook), on
// http.addr.
const InboundPath = "/integrations/nexmo/sms"

// MaxSignedAge is how far a signed request's timestamp may be from now.
const MaxSignedAge = 5 * time.Minute

// Replier acknowledges from a reply (smsreply.Acknowledger).
type Replier interface {
	Reply(ctx context.Context, provider, from, text string) (string, error)
}

// Inbound answers Vonage's inbound SMS webhook (POST, as a form or JSON). With a signature
// secret, a request must carry Vonage's `sig` (SHA-256 HMAC signing) and a `timestamp` within
// MaxSignedAge, else it is refused with 401; without one, every request is taken (the number
// and the code must still match).
type Inbound struct {
	SignatureSecret string
	Clock           clock.Clock
	Replies         Replier
	Log             *zap.Logger
}

// Handle is the api.BodyHandler of InboundPath; Vonage wants 200 (or 204) for a message it
// should not send again.
func (in *Inbound) Handle(w http.ResponseWriter, r *http.Request, body []byte) {
	params, err := inboundParams(r, body)
	if err == nil && in.SignatureSecret != "" {
		err = in.verify(params)
	}
	if err != nil {
		in.Log.Warn("refused a Vonage request", zap.Error(err))
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
		return
	}
	if _, err := in.Replies.Reply(r.Context(), "vonage", params["msisdn"], params["text"]); err != nil && !errors.Is(err, context.Canceled) {
		in.Log.Debug("Vonage reply handled", zap.Error(err))
	}
	w.WriteHeader(http.StatusNoContent)
}

// inboundParams are the request's parameters: its form or JSON fields (the query as well).
func inboundParams(r *http.Request, body []byte) (map[string]string, error) {
	out := map[string]string{}
	for k, v := range r.URL.Query() {
		out[k] = v[0]
	}
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct == "application/json" {
		var fields map[string]any
		if err := json.Unmarshal(body, &fields); err != nil {
			return nil, fmt.Errorf("body is not a JSON object: %w", err)
		}
		for k, v := range fields {
			out[k] = fmt.Sprint(v)
		}
		return out, nil
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, errors.New("the body is not a form")
	}
	for k, v := range form {
		out[k] = v[0]
	}
	return out, nil
}

func (in *Inbound) verify(params map[string]string) error {
	ts, err := strconv.ParseInt(params["timestamp"], 10, 64)
	if err != nil {
		return errors.New("a signed request needs its timestamp")
	}
	if age := in.Clock.Now().Sub(time.Unix(ts, 0)); age > MaxSignedAge || age < -MaxSignedAge {
		return fmt.Errorf("timestamp is %s away from now, more than %s", age.Round(time.Second), MaxSignedAge)
	}
	want := signature(in.SignatureSecret, params)
	if !hmac.Equal([]byte(strings.ToLower(params["sig"])), []byte(want)) {
		return errors.New("sig does not match the parameters")
	}
	return nil
}

// signature is Vonage's SHA-256 HMAC signature of a request's parameters: the parameters but
// sig, sorted by name, each as "&name=value" with & and = in values replaced by _, keyed with
// the signature secret; lower-case hex (Vonage's may be upper case: compare without case).
func signature(secret string, params map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(params)) {
		if k == "sig" {
			continue
		}
		b.WriteString("&" + k + "=" + strings.NewReplacer("&", "_", "=", "_").Replace(params[k]))
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(b.String()))
	return hex.EncodeToString(m.Sum(nil))
}
