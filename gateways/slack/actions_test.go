package slack_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/api"
	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/events"
	"github.com/flapjackgo/flapjack/gateways/slack"
	"github.com/flapjackgo/flapjack/internal/testing/testproviders"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/schema"
)

const signingSecret = "8f742231b10e8888abcd99yyyzzz85a5"

// actionsWorld is http.addr's listener with the Slack actions intake (behind an http.token, which
// Slack cannot send), an executive on the same Redis and a Slack server taking response_url posts.
type actionsWorld struct {
	db    *testredis.DB
	keys  schema.Keys
	clk   *clock.Fake
	x     *testproviders.Executive
	url   string
	slack *testproviders.Server
}

func newActionsWorld(t *testing.T) *actionsWorld {
	t.Helper()
	w := &actionsWorld{db: testredis.New(t), keys: schema.NewKeys(""), clk: clock.NewFake(time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC))}
	w.slack = testproviders.NewServer(t, testproviders.Slack())
	pub := events.NewPublisher(w.db.Pool, w.keys, "")
	actions := &slack.Actions{SigningSecret: signingSecret, Pool: w.db.Pool, Keys: w.keys, Clock: w.clk, Events: pub,
		AckDuration: 4 * time.Hour, Client: http.DefaultClient, Log: zap.NewNop()}
	srv := httptest.NewServer(api.Handler(api.Options{Pool: w.db.Pool, Keys: w.keys, Events: pub, EventsEnabled: true, Token: "http-t0ken",
		Intakes: []api.Intake{{Path: slack.ActionsPath, What: "Slack", Handler: actions.Handle, Signed: true}}}))
	t.Cleanup(srv.Close)
	w.url = srv.URL + slack.ActionsPath
	w.x = testproviders.NewExecutive(t, w.db.Pool, w.keys, w.clk)
	return w
}

func (w *actionsWorld) post(t *testing.T, ts int64, body []byte, signature string) int {
	t.Helper()
	req, err := testproviders.SlackRequest(w.url, signingSecret, ts, body, signature)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// acks are the unscheduled maintenance windows (acknowledgements) of web-01:HTTP.
func (w *actionsWorld) acks(t *testing.T) []checkstate.MaintenanceWindow {
	t.Helper()
	conn := w.db.Pool.Get()
	defer conn.Close()
	m, err := checkstate.ListMaintenance(conn, w.keys, schema.Unscheduled, "web-01:HTTP")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A signed click on the Acknowledge button acknowledges the failing check through the executive,
// with the Slack user's name in the summary, and replaces the message; a bad signature, a
// timestamp over five minutes old and a replay of the accepted click are refused with 401 and
// write nothing.
func TestSlackAcknowledgeButton(t *testing.T) {
	t.Parallel()
	w := newActionsWorld(t)
	w.db.Do(t, "LPUSH", w.keys.Events(), `{"entity":"web-01","check":"HTTP","type":"service","state":"critical","summary":"HTTP 500"}`)
	w.x.Process()
	now := w.clk.Now().Unix()
	click := testproviders.SlackClick{UserID: "U024BE7LH", UserName: "ada", ActionID: slack.ActionAcknowledge, Value: "web-01:HTTP",
		ResponseURL: w.slack.URL + testproviders.SlackResponsePath + "T0001/1234/abcd"}
	body := click.Body()

	refused := []struct {
		name      string
		ts        int64
		body      []byte
		signature string
	}{
		{"signed with another secret", now, body, testproviders.SlackSignature("not-the-secret", now, body)},
		{"body changed after signing", now, append([]byte("x"), body...), testproviders.SlackSignature(signingSecret, now, body)},
		{"no signature", now, body, "v0="},
		{"six minutes old", now - 360, body, ""},
		{"six minutes ahead", now + 360, body, ""},
	}
	for _, tc := range refused {
		if code := w.post(t, tc.ts, tc.body, tc.signature); code != http.StatusUnauthorized {
			t.Errorf("%s: HTTP %d, want 401", tc.name, code)
		}
	}
	if n, _ := redis.Int(w.db.Do(t, "LLEN", w.keys.Events()), nil); n != 0 {
		t.Fatalf("refused requests queued %d events", n)
	}
	if n, _ := redis.Int(w.db.Do(t, "EXISTS", w.keys.SlackActionSignatures()), nil); n != 0 {
		t.Fatalf("refused requests were remembered")
	}

	// four minutes old is still within Slack's window
	if code := w.post(t, now-240, body, ""); code != http.StatusOK {
		t.Fatalf("signed click: HTTP %d", code)
	}
	w.x.Process()
	acks := w.acks(t)
	if len(acks) != 1 || !strings.Contains(acks[0].Summary, "acknowledged by ada via Slack") || acks[0].Duration != 4*3600 ||
		acks[0].Start != now {
		t.Fatalf("acknowledgements after the click: %+v", acks)
	}
	_, accepted, _ := w.slack.Snapshot()
	if len(accepted) != 1 || !strings.HasPrefix(accepted[0].Path, testproviders.SlackResponsePath) {
		t.Fatalf("message updates posted: %d", len(accepted))
	}
	update, err := testproviders.DecodeSlack(accepted[0].Body)
	if err != nil || update.ReplaceOriginal == nil || !*update.ReplaceOriginal ||
		update.Text != "web-01:HTTP: Acknowledged by ada for 4 hours" {
		t.Errorf("message update %+v (%v)", update, err)
	}
	w.slack.AssertNoViolations(t)

	if code := w.post(t, now-240, body, ""); code != http.StatusUnauthorized {
		t.Errorf("replayed click: HTTP %d, want 401", code)
	}
	if n, _ := redis.Int(w.db.Do(t, "LLEN", w.keys.Events()), nil); n != 0 {
		t.Errorf("the replay queued %d events", n)
	}
}

// With a signing secret a problem alert carries the Acknowledge button, whose value is the
// check; a recovery, a rollup and an alert without the secret carry none. Slack accepts each.
func TestAcknowledgeButtonOnProblems(t *testing.T) {
	t.Parallel()
	srv := testproviders.NewServer(t, testproviders.Slack())
	with, err := slack.NewSender(slack.Options{Config: slack.Config{SigningSecret: signingSecret}})
	if err != nil {
		t.Fatal(err)
	}
	without, _ := slack.NewSender(slack.Options{Config: slack.Config{}})
	rollup := testproviders.Alert(slack.Medium, "", "problem", "critical", "x")
	kind := schema.RollupProblem
	rollup.Rollup = &kind
	for _, tc := range []struct {
		name   string
		s      *slack.Sender
		a      schema.Alert
		button bool
	}{
		{"problem", with, testproviders.Alert(slack.Medium, "", "problem", "critical", "HTTP 500"), true},
		{"recovery", with, testproviders.Alert(slack.Medium, "", "recovery", "ok", "HTTP 200"), false},
		{"rollup", with, rollup, false},
		{"no secret", without, testproviders.Alert(slack.Medium, "", "problem", "critical", "HTTP 500"), false},
	} {
		tc.a.Address = srv.URL + "/services/T0/B0/x"
		if err := tc.s.Send(context.Background(), tc.a); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		_, accepted, _ := srv.Snapshot()
		m, _ := testproviders.DecodeSlack(accepted[len(accepted)-1].Body)
		var buttons []string
		for _, b := range m.Attachments[0].Blocks {
			if b.Type == "actions" {
				for _, e := range b.Elements {
					buttons = append(buttons, fmt.Sprintf("%s %s=%s", e.PlainText(), e.ActionID, e.Value))
				}
			}
		}
		want := 0
		if tc.button {
			want = 1
		}
		if len(buttons) != want || (tc.button && buttons[0] != "Acknowledge "+slack.ActionAcknowledge+"=web-01:HTTP") {
			t.Errorf("%s: buttons %q", tc.name, buttons)
		}
	}
	srv.AssertNoViolations(t)
}
