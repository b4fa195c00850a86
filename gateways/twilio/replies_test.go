package twilio_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/flapjackgo/flapjack/api"
	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/events"
	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/gateways/smsreply"
	"github.com/flapjackgo/flapjack/gateways/twilio"
	"github.com/flapjackgo/flapjack/internal/testing/testproviders"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/schema"
)

const (
	accountSID = "AC0123456789abcdef0123456789abcdef"
	authToken  = "tw-s3cret-auth-t0ken-9876"
	ourNumber  = "+15017122661"
	baseURL    = "https://flapjack.example.com/"
)

var replyHint = regexp.MustCompile(`\. Reply ACK ([0-9]{4})$`)

// replyWorld: the sms_twilio gateway with replies on, sending to a local Twilio, and http.addr's
// listener (behind an http.token Twilio cannot send) taking Twilio's inbound webhook.
type replyWorld struct {
	logs    *observer.ObservedLogs
	g       *testproviders.Gateway
	srv     *testproviders.Server
	clk     *clock.Fake
	inbound string
	n       int
}

func newReplyWorld(t *testing.T, codes gateways.ReplyCodes) *replyWorld {
	t.Helper()
	w := &replyWorld{g: testproviders.NewGateway(t, twilio.Medium), srv: testproviders.NewServer(t, testproviders.Twilio(accountSID, authToken)),
		clk: clock.NewFake(time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC))}
	sender, err := twilio.NewSender(twilio.Options{Config: twilio.Config{AccountSID: accountSID, AuthToken: authToken, From: ourNumber,
		Endpoint: w.srv.URL, Timeout: 2 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	w.g.Start(sender, nil, testproviders.RunOptions{Clock: w.clk, ReplyCodes: &codes})
	pub := events.NewPublisher(w.g.DB.Pool, w.g.Keys, "")
	var log *zap.Logger
	log, w.logs = testproviders.NewLogger()
	acks := &smsreply.Acknowledger{Pool: w.g.DB.Pool, Keys: w.g.Keys, Clock: w.clk, Events: pub, Codes: codes,
		AckDuration: 4 * time.Hour, Log: log}
	in := &twilio.Inbound{AuthToken: authToken, BaseURL: baseURL, Replies: acks, Log: log}
	http := httptest.NewServer(api.Handler(api.Options{Pool: w.g.DB.Pool, Keys: w.g.Keys, Events: pub, EventsEnabled: true, Token: "http-t0ken",
		Intakes: []api.Intake{{Path: twilio.InboundPath, What: "Twilio", Handler: in.Handle, Signed: true}}}))
	t.Cleanup(http.Close)
	w.inbound = http.URL + twilio.InboundPath
	return w
}

// alert sends a problem of check to number through the gateway and returns the reply code its
// SMS asked for.
func (w *replyWorld) alert(t *testing.T, number, check string) string {
	t.Helper()
	w.n++
	a := testproviders.Alert(twilio.Medium, number, "problem", "critical", "HTTP 500")
	a.ID, a.EventID = "alert-"+strings.Repeat("x", w.n), check
	w.g.QueueLogged(a, w.clk.Now().Unix())
	w.g.Settle("the alert", func() bool {
		_, accepted, _ := w.srv.Snapshot()
		return len(accepted) == w.n
	})
	_, accepted, _ := w.srv.Snapshot()
	body := accepted[len(accepted)-1].Form.Get("Body")
	m := replyHint.FindStringSubmatch(body)
	if m == nil || len([]rune(body)) > gateways.SMSMaxLength {
		t.Fatalf("SMS %q does not end with a reply code within %d characters", body, gateways.SMSMaxLength)
	}
	return m[1]
}

// reply posts Twilio's webhook for an SMS from `from`, signed with token over signedURL.
func (w *replyWorld) reply(t *testing.T, from, text, token, signedURL string) (int, string) {
	t.Helper()
	form := testproviders.TwilioInboundForm(accountSID, from, ourNumber, text)
	req, _ := http.NewRequest(http.MethodPost, w.inbound, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Twilio-Signature", testproviders.TwilioRequestSignature(token, signedURL, form))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// acks are the acknowledgement events queued, as "ENTITY:CHECK summary".
func (w *replyWorld) acks(t *testing.T) []string {
	t.Helper()
	raws, err := redis.ByteSlices(w.g.DB.Do(t, "LRANGE", w.g.Keys.Events(), 0, -1), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, raw := range raws {
		ev, err := schema.ParseEvent(raw)
		if err != nil || !ev.IsAcknowledgement() {
			t.Fatalf("queued %s (%v)", raw, err)
		}
		out = append(out, ev.ID()+" "+ev.Summary)
	}
	return out
}

var public = strings.TrimSuffix(baseURL, "/") + twilio.InboundPath

// "ACK CODE" from the number the alert went to acknowledges its check, once; a bad signature, a
// signature over another URL, another number, a wrong code or a replay acknowledge nothing.
func TestTwilioReplyAcknowledges(t *testing.T) {
	t.Parallel()
	w := newReplyWorld(t, gateways.ReplyCodes{Lifetime: 24 * time.Hour, MaxFailures: 5})
	code := w.alert(t, "+61 414 123 456", "web-01:HTTP")
	x := testproviders.NewExecutive(t, w.g.DB.Pool, w.g.Keys, w.clk)
	w.g.DB.Do(t, "LPUSH", w.g.Keys.Events(), `{"entity":"web-01","check":"HTTP","type":"service","state":"critical","summary":"HTTP 500"}`)
	x.Process()
	wrong := "0000"
	if code == wrong {
		wrong = "0001"
	}
	for _, tc := range []struct {
		name, from, text, token, url string
		status                       int
	}{
		{"signed with another token", "+61414123456", "ACK " + code, "not-the-token", public, http.StatusUnauthorized},
		{"signed over the local URL, not http.base_url", "+61414123456", "ACK " + code, authToken, w.inbound, http.StatusUnauthorized},
		{"another number", "+61400000000", "ACK " + code, authToken, public, http.StatusOK},
		{"wrong code", "+61414123456", "ACK " + wrong, authToken, public, http.StatusOK},
		{"not an ACK", "+61414123456", "who is this?", authToken, public, http.StatusOK},
	} {
		status, _ := w.reply(t, tc.from, tc.text, tc.token, tc.url)
		if status != tc.status {
			t.Errorf("%s: HTTP %d, want %d", tc.name, status, tc.status)
		}
	}
	if acks := w.acks(t); len(acks) != 0 {
		t.Fatalf("acknowledged %q before the right reply", acks)
	}
	logged := testproviders.LogText(w.logs)
	for what, n := range map[string]int{"refused a Twilio request": 2, "SMS reply acknowledges nothing": 3} {
		if got := strings.Count(logged, what); got != n {
			t.Errorf("%d log entries %q, want %d:\n%s", got, what, n, logged)
		}
	}
	status, twiml := w.reply(t, "+61414123456", "ack "+code, authToken, public)
	if status != http.StatusOK || !strings.Contains(twiml, "<Response><Message>Acknowledged web-01:HTTP for 4 hours.</Message></Response>") {
		t.Fatalf("right reply: HTTP %d %s", status, twiml)
	}
	if acks := w.acks(t); len(acks) != 1 || acks[0] != "web-01:HTTP acknowledged by ops by SMS reply" {
		t.Fatalf("acknowledgements %q", acks)
	}
	// the executive makes it the check's acknowledgement: unscheduled maintenance from now
	x.Process()
	conn := w.g.DB.Pool.Get()
	windows, err := checkstate.ListMaintenance(conn, w.g.Keys, schema.Unscheduled, "web-01:HTTP")
	conn.Close()
	if err != nil || len(windows) != 1 || windows[0].Start != w.clk.Now().Unix() || windows[0].Duration != 4*3600 {
		t.Fatalf("unscheduled maintenance %+v (%v)", windows, err)
	}
	// the executive took the acknowledgement off the events list: a replay must queue none
	if status, _ := w.reply(t, "+61414123456", "ack "+code, authToken, public); status != http.StatusOK || len(w.acks(t)) != 0 {
		t.Errorf("the replayed reply acknowledged again (HTTP %d)", status)
	}
	w.srv.AssertNoViolations(t)
}

// A code expires after its lifetime, by the injected clock; a number that named too many unknown
// codes is refused even the right one until a lifetime has passed.
func TestTwilioReplyCodesExpireAndGuessesAreLimited(t *testing.T) {
	t.Parallel()
	w := newReplyWorld(t, gateways.ReplyCodes{Lifetime: time.Hour, MaxFailures: 3})
	late := w.alert(t, "+61 400 111 111", "web-01:HTTP")
	guessed := w.alert(t, "+61 400 222 222", "db-01:MySQL")
	for i := 0; i < 3; i++ {
		w.reply(t, "+61400222222", "ACK "+otherCode(guessed, i), authToken, public)
	}
	if _, twiml := w.reply(t, "+61400222222", "ACK "+guessed, authToken, public); !strings.Contains(twiml, "No alert to acknowledge") {
		t.Errorf("after 3 wrong codes the right one was taken: %s", twiml)
	}
	w.clk.Set(w.clk.Now().Add(time.Hour))
	if _, twiml := w.reply(t, "+61400111111", "ACK "+late, authToken, public); !strings.Contains(twiml, "No alert to acknowledge") {
		t.Errorf("an expired code was taken: %s", twiml)
	}
	if acks := w.acks(t); len(acks) != 0 {
		t.Fatalf("acknowledged %q", acks)
	}
	// the lifetime has passed since the first failure: the number may try again (the code, whose
	// lifetime has passed too, is gone); a fresh alert's code works
	fresh := w.alert(t, "+61 400 222 222", "db-01:MySQL")
	if _, twiml := w.reply(t, "+61400222222", "ACK "+fresh, authToken, public); !strings.Contains(twiml, "Acknowledged db-01:MySQL") {
		t.Errorf("a fresh code after the block: %s", twiml)
	}
	if acks := w.acks(t); len(acks) != 1 {
		t.Errorf("acknowledgements %q", acks)
	}
}

// otherCode is the i-th code that is not code.
func otherCode(code string, i int) string {
	n, _ := strconv.Atoi(code)
	return fmt.Sprintf("%04d", (n+1+i)%10000)
}
