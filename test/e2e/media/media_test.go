// Package media tests every medium together as an operator runs them: `flapjack server` with
// all seven gateways Flapjack 1.x had (plus flapjack's webhook) switched on, each pointed at a
// local server that enforces its provider's contract (a real SMTP server for email), and one
// failing check of a contact who has all of them.
package media

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/internal/testing/testbinary"
	"github.com/flapjackgo/flapjack/internal/testing/testproviders"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/internal/testing/testsmtp"
	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/schema"
)

func TestMain(m *testing.M) { testbinary.Main(m, testsmtp.Prepare()) }

func TestOneFailureReachesEveryMediumExactlyOnce(t *testing.T) {
	db := testredis.New(t)
	smtp := testsmtp.Start(t, testsmtp.Options{})
	const (
		twilioSID, twilioToken = "AC0123456789abcdef0123456789abcdef", "twilio-token"
		nexmoKey, nexmoSecret  = "nexmo-key", "nexmo-secret"
		netUser, netPassword   = "messagenet-user", "messagenet-password"
		awsKey, awsSecret      = "AKIAEXAMPLE", "aws-secret"
		hookSecret             = "webhook-secret"
	)
	servers := map[string]*testproviders.Server{
		"sms_twilio": testproviders.NewServer(t, testproviders.Twilio(twilioSID, twilioToken)),
		"sms_nexmo":  testproviders.NewServer(t, testproviders.Nexmo(nexmoKey, nexmoSecret)),
		"sms":        testproviders.NewServer(t, testproviders.MessageNet(netUser, netPassword)),
		"sns":        testproviders.NewServer(t, testproviders.SNS(awsKey, awsSecret, "eu-west-1")),
		"slack":      testproviders.NewServer(t, testproviders.Slack()),
		"webhook":    testproviders.NewServer(t, testproviders.Webhook(hookSecret)),
	}
	cfg := fmt.Sprintf(`executive:
  initial_failure_delay: 0
gateways:
  log:
    enabled: false
  email:
    enabled: true
    smtp_config:
      host: %s
      port: %d
      from: flapjack@example.com
      ca_file: %s
      auth:
        type: plain
        username: %s
        password: %q
  sms_twilio: {enabled: true, account_sid: %s, auth_token: %s, from: "+15005550006", endpoint: %s}
  sms_nexmo: {enabled: true, api_key: %s, secret: %s, from: flapjack, endpoint: %s}
  sms: {enabled: true, username: %s, password: %s, endpoint: %s}
  sns: {enabled: true, region_name: eu-west-1, access_key: %s, secret_key: %s, endpoint: %s}
  slack: {enabled: true}
  webhook: {enabled: true, secret: %s}
`, smtp.Host, smtp.Port, smtp.CAFile, testsmtp.User, testsmtp.Password,
		twilioSID, twilioToken, servers["sms_twilio"].URL, nexmoKey, nexmoSecret, servers["sms_nexmo"].URL,
		netUser, netPassword, servers["sms"].URL+testproviders.MessageNetPath, awsKey, awsSecret, servers["sns"].URL, hookSecret)
	cfgFile := filepath.Join(t.TempDir(), "flapjack.yaml")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}

	conn := db.Conn(t)
	contact := roster.ContactData{ID: "ada", ContactInfo: roster.ContactInfo{FirstName: "Ada", LastName: "Lovelace"},
		Media: []roster.Medium{
			{Name: "email", Address: "ada@example.com"},
			{Name: "sms_twilio", Address: "+15005550001"},
			{Name: "sms_nexmo", Address: "+447700900001"},
			{Name: "sms", Address: "+447700900002"},
			{Name: "sns", Address: "arn:aws:sns:eu-west-1:123456789012:oncall"},
			{Name: "slack", Address: servers["slack"].URL + "/services/T000/B000/XXXX"},
			{Name: "webhook", Address: servers["webhook"].URL + "/flapjack"},
		}}
	if _, err := roster.SeedContact(context.Background(), conn, schema.NewKeys(""), contact, true); err != nil {
		t.Fatal(err)
	}

	addr := testbinary.FreeAddr(t)
	server := testbinary.Start(t, []string{"FLAPJACK_REDIS_URL=" + db.URL(), "FLAPJACK_HTTP_ADDR=" + addr}, "--config", cfgFile, "server")
	server.WaitLine(t, 15*time.Second, `"stages"`, "email gateway", "webhook gateway")
	body := `{"entity":"web-01","check":"HTTP","type":"service","state":"critical","summary":"HTTP 500"}`
	var resp *http.Response
	var err error
	for i := 0; i < 100; i++ {
		if resp, err = http.Post("http://"+addr+"/events", "application/json", strings.NewReader(body)); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	smtp.WaitMessages(t, 1, 20*time.Second)
	deadline := time.Now().Add(20 * time.Second)
	for name, s := range servers {
		for {
			_, accepted, _ := s.Snapshot()
			if len(accepted) >= 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s received nothing; server log:\n%s", name, server.Tail(30))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	time.Sleep(2 * time.Second) // a second delivery would show up by now
	if mails := smtp.Messages(t); len(mails) != 1 {
		t.Errorf("%d mails, want 1", len(mails))
	} else if msg, err := mails[0].Parse(); err != nil {
		t.Errorf("mail: %v", err)
	} else if subject := msg.Header.Get("Subject"); subject != "Problem: 'HTTP' on web-01 is Critical" {
		t.Errorf("mail subject %q", subject)
	}
	for name, s := range servers {
		requests, accepted, violations := s.Snapshot()
		if requests != 1 || len(accepted) != 1 || len(violations) > 0 {
			t.Errorf("%s: %d requests, %d accepted, violations %v; want exactly one delivery", name, requests, len(accepted), violations)
		}
		if len(accepted) == 1 {
			// The message is in the body (POSTs) or the query (MessageNet's GET).
			sent := string(accepted[0].Body) + " " + fmt.Sprint(accepted[0].Query)
			if !strings.Contains(sent, "HTTP") || !strings.Contains(sent, "web-01") {
				t.Errorf("%s: delivery does not name the check: %s", name, sent)
			}
		}
	}
	if code := server.Terminate(30 * time.Second); code != 0 {
		t.Errorf("server exited %d", code)
	}
}
