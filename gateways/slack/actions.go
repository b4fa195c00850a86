package slack

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/events"
	"github.com/flapjackgo/flapjack/gateways/internal/httpsend"
	"github.com/flapjackgo/flapjack/internal/humantime"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/schema"
)

// ActionsPath is where Slack posts the clicks on the messages' buttons (the app's
// Interactivity Request URL), on http.addr.
const ActionsPath = "/integrations/slack/actions"

// ActionAcknowledge is the action_id of the Acknowledge button; its value is the check id.
const ActionAcknowledge = "flapjack_acknowledge"

// MaxRequestAge is how old a request's X-Slack-Request-Timestamp may be (either way): Slack's
// advice, and the window replays are remembered for.
const MaxRequestAge = 5 * time.Minute

// responseClient posts message updates for Actions without a Client of their own.
var responseClient = httpsend.NewClient(httpsend.DefaultTimeout)

// Publisher queues events (events.Publisher).
type Publisher interface {
	Publish(ctx context.Context, evs ...schema.Event) ([]schema.Event, error)
}

// Actions answers Slack's interaction requests: it checks the request's signature, refuses an
// old or replayed one, and acknowledges the check of a clicked Acknowledge button.
type Actions struct {
	SigningSecret string
	Pool          *redis.Pool
	Keys          schema.Keys
	Clock         clock.Clock
	Events        Publisher
	// AckDuration is executive.acknowledgement_duration, the length the reply states.
	AckDuration time.Duration
	Client      *http.Client // posts the updated message to the response_url; nil: a client of its own
	Log         *zap.Logger
}

// interaction is the part of Slack's block_actions payload flapjack reads.
type interaction struct {
	Type string `json:"type"`
	User struct {
		ID       string `json:"id"`
		Username string `json:"username"`
		Name     string `json:"name"`
	} `json:"user"`
	Actions []struct {
		ActionID string `json:"action_id"`
		Value    string `json:"value"`
	} `json:"actions"`
	ResponseURL string `json:"response_url"`
}

// Handle is the api.BodyHandler of ActionsPath: 401 with nothing written for a request that is
// badly signed, too old or a replay; 400 for a signed payload it cannot read; 200 once the
// acknowledgement is queued, the message then updated through the response_url.
func (a *Actions) Handle(w http.ResponseWriter, r *http.Request, body []byte) {
	now := a.Clock.Now()
	sig := r.Header.Get("X-Slack-Signature")
	if err := a.verify(r.Header.Get("X-Slack-Request-Timestamp"), sig, body, now); err != nil {
		a.refuse(w, http.StatusUnauthorized, "refused a Slack request", err)
		return
	}
	ts, _ := strconv.ParseInt(r.Header.Get("X-Slack-Request-Timestamp"), 10, 64)
	fresh, err := a.remember(r.Context(), sig, ts, now)
	if err != nil {
		a.refuse(w, http.StatusServiceUnavailable, "cannot check a Slack request for a replay", err)
		return
	}
	if !fresh {
		a.refuse(w, http.StatusUnauthorized, "refused a Slack request", errors.New("replayed: its signature was already used"))
		return
	}
	in, ref, err := readAcknowledge(body)
	if err != nil {
		a.refuse(w, http.StatusBadRequest, "ignored a Slack interaction", err)
		return
	}
	who := firstOf(in.User.Name, in.User.Username, in.User.ID)
	ev := events.Acknowledgement(ref.Entity, ref.Check, "acknowledged by "+who+" via Slack", 0, now)
	if _, err := a.Events.Publish(r.Context(), ev); err != nil {
		a.refuse(w, http.StatusServiceUnavailable, "cannot queue a Slack acknowledgement", err)
		return
	}
	a.Log.Info("check acknowledged from Slack", zap.String("check", ref.ID()), zap.String("slack_user", who))
	a.update(r.Context(), in.ResponseURL, ref.ID(), who)
	w.WriteHeader(http.StatusOK)
}

// verify checks Slack's v0 signature: hex HMAC-SHA256 with the signing secret over
// "v0:" + timestamp + ":" + body, and that the timestamp is within MaxRequestAge of now.
func (a *Actions) verify(timestamp, signature string, body []byte, now time.Time) error {
	ts, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return errors.New("no valid X-Slack-Request-Timestamp")
	}
	if age := now.Sub(time.Unix(ts, 0)); age > MaxRequestAge || age < -MaxRequestAge {
		return fmt.Errorf("X-Slack-Request-Timestamp is %s away from now, more than %s", age.Round(time.Second), MaxRequestAge)
	}
	if !hmac.Equal([]byte(signature), []byte(sign(a.SigningSecret, timestamp, body))) {
		return errors.New("X-Slack-Signature does not match the body")
	}
	return nil
}

// sign is Slack's request signature of body sent at timestamp.
func sign(secret, timestamp string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("v0:" + timestamp + ":"))
	m.Write(body)
	return "v0=" + hex.EncodeToString(m.Sum(nil))
}

func (a *Actions) remember(ctx context.Context, sig string, ts int64, now time.Time) (bool, error) {
	conn, err := a.Pool.GetContext(ctx)
	if err != nil {
		return false, err
	}
	defer conn.Close()
	return model.RememberOnce(conn, a.Keys.SlackActionSignatures(), sig, ts, now.Add(-MaxRequestAge).Unix()-1)
}

// readAcknowledge reads the form field payload: a block_actions interaction whose action is
// the Acknowledge button of a check.
func readAcknowledge(body []byte) (interaction, model.CheckRef, error) {
	var in interaction
	form, err := url.ParseQuery(string(body))
	if err != nil || form.Get("payload") == "" {
		return in, model.CheckRef{}, errors.New("the body is not a form with a payload field")
	}
	if err := json.Unmarshal([]byte(form.Get("payload")), &in); err != nil {
		return in, model.CheckRef{}, fmt.Errorf("payload is not JSON: %w", err)
	}
	if in.Type != "block_actions" {
		return in, model.CheckRef{}, fmt.Errorf("interaction type %q is not block_actions", in.Type)
	}
	for _, act := range in.Actions {
		if act.ActionID != ActionAcknowledge {
			continue
		}
		entity, check, ok := schema.SplitCheckID(act.Value)
		if !ok {
			return in, model.CheckRef{}, fmt.Errorf("button value %q is not ENTITY:CHECK", act.Value)
		}
		return in, model.CheckRef{Entity: entity, Check: check}, nil
	}
	return in, model.CheckRef{}, errors.New("no Acknowledge action in the interaction")
}

// update replaces the clicked message, through the interaction's response_url, with one saying
// who acknowledged and for how long, without the button. A failure is logged: the
// acknowledgement itself is queued.
func (a *Actions) update(ctx context.Context, responseURL, checkID, who string) {
	if responseURL == "" {
		return
	}
	text := Escape(fmt.Sprintf("%s: Acknowledged by %s for %s", checkID, who, humantime.Words(a.AckDuration)))
	msg := map[string]any{"replace_original": true, "text": text,
		"blocks": []Block{{Type: "section", Text: &TextObject{Type: "mrkdwn", Text: text}}}}
	body, _ := json.Marshal(msg)
	req, err := http.NewRequest(http.MethodPost, responseURL, bytes.NewReader(body))
	if err != nil {
		a.Log.Error("cannot update the Slack message", zap.Error(err))
		return
	}
	req.Header.Set("Content-Type", "application/json")
	u, _ := url.Parse(responseURL)
	client := a.Client
	if client == nil {
		client = responseClient
	}
	resp, err := httpsend.Do(ctx, client, httpsend.DefaultTimeout, req, httpsend.Origin(u))
	if err == nil && !httpsend.OK(resp.Status) {
		err = fmt.Errorf("HTTP %d: %s", resp.Status, httpsend.Excerpt(resp.Body, u.Path))
	}
	if err != nil {
		a.Log.Error("cannot update the Slack message; the acknowledgement is queued", zap.String("check", checkID),
			zap.Error(httpsend.ScrubError(err, responseURL, u.Path)))
	}
}

func (a *Actions) refuse(w http.ResponseWriter, status int, what string, err error) {
	a.Log.Warn(what, zap.Int("status", status), zap.Error(err))
	http.Error(w, http.StatusText(status), status)
}

func firstOf(s ...string) string {
	for _, v := range s {
		if strings.TrimSpace(v) != "" {
			return v
		}
	}
	return "someone"
}
