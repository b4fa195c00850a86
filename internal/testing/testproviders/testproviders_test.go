package testproviders

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// contractCase is one request and what the contract makes of it.
type contractCase struct {
	name    string
	req     func() *http.Request
	body    string
	problem string // "": accepted; otherwise a part of the expected problem
	status  int    // the status the provider answers a broken request with (0: not checked)
}

func runContract(t *testing.T, c Contract, cases []contractCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			problems, status := c.Check(tc.req(), []byte(tc.body))
			switch {
			case tc.problem == "" && len(problems) > 0:
				t.Fatalf("rejected: %q", problems)
			case tc.problem != "" && !strings.Contains(strings.Join(problems, "\n"), tc.problem):
				t.Fatalf("problems %q, want one containing %q", problems, tc.problem)
			case tc.problem != "" && tc.status != 0 && status != tc.status:
				t.Fatalf("answered %d, want %d", status, tc.status)
			}
		})
	}
}

func formRequest(method, path, contentType string, auth func(r *http.Request)) func() *http.Request {
	return func() *http.Request {
		r := httptest.NewRequest(method, path, nil)
		if contentType != "" {
			r.Header.Set("Content-Type", contentType)
		}
		if auth != nil {
			auth(r)
		}
		return r
	}
}

func TestTwilioContract(t *testing.T) {
	t.Parallel()
	const sid, token = "AC0123456789abcdef0123456789abcdef", "t0ken-t0ken-t0ken"
	path := "/2010-04-01/Accounts/" + sid + "/Messages.json"
	auth := func(r *http.Request) { r.SetBasicAuth(sid, token) }
	form := "application/x-www-form-urlencoded"
	ok := formRequest("POST", path, form, auth)
	runContract(t, Twilio(sid, token), []contractCase{
		{"valid", ok, "To=%2B61414123456&From=%2B15017122661&Body=hi", "", 0},
		{"alphanumeric sender", ok, "To=%2B61414123456&From=Flapjack&Body=hi", "", 0},
		{"messaging service", ok, "To=%2B61414123456&MessagingServiceSid=MG0123456789abcdef0123456789abcdef&Body=hi", "", 0},
		{"no auth", formRequest("POST", path, form, nil), "To=%2B61414123456&From=%2B15017122661&Body=hi", "20003", 401},
		{"wrong token", formRequest("POST", path, form, func(r *http.Request) { r.SetBasicAuth(sid, "x") }), "To=%2B1&Body=hi", "20003", 401},
		{"other account in the path", formRequest("POST", "/2010-04-01/Accounts/ACx/Messages.json", form, auth), "Body=hi", "20003", 401},
		{"wrong path", formRequest("POST", "/2010-04-01/Messages.json", form, auth), "", "20404", 404},
		{"GET", formRequest("GET", path, form, auth), "", "method must be POST", 400},
		{"JSON", formRequest("POST", path, "application/json", auth), `{"To":"+1"}`, "Content-Type", 400},
		{"local number", ok, "To=0414123456&From=%2B15017122661&Body=hi", "21211", 400},
		{"no sender", ok, "To=%2B61414123456&Body=hi", "21603", 400},
		{"no body", ok, "To=%2B61414123456&From=%2B15017122661", "21602", 400},
		{"body too long", ok, "To=%2B61414123456&From=%2B15017122661&Body=" + strings.Repeat("x", 1601), "21617", 400},
		{"typo'd field", ok, "To=%2B61414123456&From=%2B15017122661&Body=hi&body=hi", "unknown parameter", 400},
	})
}

func TestNexmoContract(t *testing.T) {
	t.Parallel()
	form := formRequest("POST", NexmoPath, "application/x-www-form-urlencoded", nil)
	creds := "api_key=k&api_secret=s&"
	runContract(t, Nexmo("k", "s"), []contractCase{
		{"valid", form, creds + "from=Flapjack&to=447700900000&text=hi", "", 0},
		{"JSON", formRequest("POST", NexmoPath, "application/json", nil),
			`{"api_key":"k","api_secret":"s","from":"Flapjack","to":"447700900000","text":"hi"}`, "", 0},
		{"unicode", form, creds + "from=Flapjack&to=447700900000&type=unicode&text=%E2%9C%93", "", 0},
		{"GSM accents as text", form, creds + "from=Flapjack&to=447700900000&text=caf%C3%A9", "", 0},
		{"non-GSM as text", form, creds + "from=Flapjack&to=447700900000&text=%E2%9C%93", "GSM alphabet", 200},
		{"bad secret", form, "api_key=k&api_secret=x&from=Flapjack&to=447700900000&text=hi", "4 Bad Credentials", 200},
		{"missing to", form, creds + "from=Flapjack&text=hi", "2 Missing Parameters: to", 200},
		{"plus sign", form, creds + "from=Flapjack&to=%2B447700900000&text=hi", "without + or 00", 200},
		{"long sender id", form, creds + "from=FlapjackAlerts&to=447700900000&text=hi", "15 Illegal Sender Address", 200},
		{"too long", form, creds + "from=F&to=447700900000&text=" + strings.Repeat("x", 3201), "12 Message Too Long", 200},
		{"wrong path", formRequest("POST", "/sms/xml", "application/x-www-form-urlencoded", nil), "", "unknown path", 404},
		{"GET", formRequest("GET", NexmoPath, "", nil), "", "method must be POST", 405},
	})
}

func TestMessageNetContract(t *testing.T) {
	t.Parallel()
	get := func(query string) func() *http.Request {
		return formRequest("GET", MessageNetPath+"?"+query, "", nil)
	}
	creds := "Username=u&Pwd=p&"
	runContract(t, MessageNet("u", "p"), []contractCase{
		{"valid", get(creds + "PhoneNumber=0414123456&PhoneMessage=hi"), "", "", 0},
		{"international", get(creds + "PhoneNumber=%2B61414123456&PhoneMessage=hi"), "", "", 0},
		{"wrong password", get("Username=u&Pwd=x&PhoneNumber=0414123456&PhoneMessage=hi"), "", "Username and Pwd", 403},
		{"POST", formRequest("POST", MessageNetPath+"?"+creds+"PhoneNumber=0414123456&PhoneMessage=hi", "", nil), "", "must be GET", 405},
		{"no message", get(creds + "PhoneNumber=0414123456"), "", "PhoneMessage is required", 400},
		{"long message", get(creds + "PhoneNumber=0414123456&PhoneMessage=" + strings.Repeat("x", 161)), "", "more than 160", 400},
		{"not a number", get(creds + "PhoneNumber=ops&PhoneMessage=hi"), "", "not a phone number", 400},
		{"typo", get(creds + "Phone=0414123456&PhoneMessage=hi"), "", "unknown parameter", 400},
	})
}

func TestSNSContractVerifiesSigV4(t *testing.T) {
	t.Parallel()
	const ak, sk = "AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
	body := "Action=Publish&Version=2010-03-31&TopicArn=arn%3Aaws%3Asns%3Aeu-west-1%3A123456789012%3Aops&Message=hi&Subject=Problem%3A+x"
	signed := func(region, secret, payload string, at time.Time) func() *http.Request {
		return func() *http.Request {
			r := httptest.NewRequest("POST", "http://sns.test/", strings.NewReader(payload))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			h := sha256.Sum256([]byte(payload))
			err := v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: ak, SecretAccessKey: secret},
				r, hex.EncodeToString(h[:]), "sns", region, at)
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
	}
	now := time.Now()
	tampered := func() *http.Request {
		r := signed("eu-west-1", sk, body, now)()
		r.Header.Set("Content-Type", "text/plain")
		return r
	}
	runContract(t, SNS(ak, sk, "eu-west-1"), []contractCase{
		{"signed", signed("eu-west-1", sk, body, now), body, "", 0},
		{"body changed after signing", signed("eu-west-1", sk, body, now), strings.Replace(body, "hi", "ho", 1), "SignatureDoesNotMatch", 403},
		{"signed header changed", tampered, body, "SignatureDoesNotMatch", 403},
		{"other secret", signed("eu-west-1", "x", body, now), body, "SignatureDoesNotMatch", 403},
		{"other region", signed("us-east-1", sk, body, now), body, "credential scope", 403},
		{"an hour old", signed("eu-west-1", sk, body, now.Add(-time.Hour)), body, "RequestTimeTooSkewed", 403},
		{"unsigned", formRequest("POST", "/", "application/x-www-form-urlencoded", nil), body, "IncompleteSignature", 403},
		{"long subject", signed("eu-west-1", sk, body+strings.Repeat("x", 100), now), body + strings.Repeat("x", 100), "Subject must be 1 to 99", 400},
		{"subject with a line break", signed("eu-west-1", sk, body+"%0Ax", now), body + "%0Ax", "line break", 400},
		{"FIFO without group", signed("eu-west-1", sk, strings.Replace(body, "ops", "ops.fifo", 1), now),
			strings.Replace(body, "ops", "ops.fifo", 1), "FIFO topic needs", 400},
		{"topic in another region", signed("eu-west-1", sk, strings.Replace(body, "eu-west-1", "us-east-1", 1), now),
			strings.Replace(body, "eu-west-1", "us-east-1", 1), "TopicArn is in us-east-1", 400},
	})
}

func TestSlackContract(t *testing.T) {
	t.Parallel()
	post := formRequest("POST", "/services/T0/B0/X", "application/json", nil)
	runContract(t, Slack(), []contractCase{
		{"text", post, `{"text": "Problem &amp; &lt;b&gt;"}`, "", 0},
		{"attachment", post, `{"text": "x", "channel": "#ops", "username": "flapjack", "icon_emoji": ":ghost:",
			"attachments": [{"color": "danger", "fallback": "x", "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "x"}},
			{"type": "context", "elements": [{"type": "mrkdwn", "text": "5 Jan"}]}]}]}`, "", 0},
		{"form payload", formRequest("POST", "/x", "application/x-www-form-urlencoded", nil), `payload={"text":"x"}`, "Content-Type", 400},
		{"not JSON", post, `text=x`, "invalid_payload", 400},
		{"nothing to say", post, `{"text": " "}`, "no_text", 400},
		{"unknown field", post, `{"text": "x", "colour": "red"}`, "unknown field", 400},
		{"unescaped", post, `{"text": "a < b"}`, "unescaped", 400},
		{"bad colour", post, `{"attachments": [{"color": "red", "fallback": "x"}]}`, "color", 400},
		{"empty section", post, `{"blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": ""}}]}`, "1 to 3000", 400},
		{"section too long", post, `{"blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "` + strings.Repeat("x", 3001) + `"}}]}`, "1 to 3000", 400},
		{"bad channel", post, `{"text": "x", "channel": "ops room"}`, "channel_not_found", 400},
	})
}

func TestWebhookContract(t *testing.T) {
	t.Parallel()
	body := `{"address": "http://x/in", "state": "critical", "event_id": "web-01:HTTP", "notification_type": "problem"}`
	req := func(sig, ua string) func() *http.Request {
		return func() *http.Request {
			r := formRequest("POST", "/in", "application/json", nil)()
			r.Header.Set("User-Agent", ua)
			if sig != "" {
				r.Header.Set(SignatureHeader, sig)
			}
			return r
		}
	}
	signed := Sign("s3cret", []byte(body))
	runContract(t, Webhook("s3cret"), []contractCase{
		{"signed", req(signed, "flapjack/1.0"), body, "", 0},
		{"unsigned", req("", "flapjack/1.0"), body, "does not verify", 401},
		{"signed with another secret", req(Sign("x", []byte(body)), "flapjack/1.0"), body, "does not verify", 401},
		{"body changed", req(signed, "flapjack/1.0"), strings.Replace(body, "critical", "warning", 1), "does not verify", 401},
		{"hex without prefix", req(strings.TrimPrefix(signed, "sha256="), "flapjack/1.0"), body, "does not verify", 401},
		{"not an alert", req(Sign("s3cret", []byte(`{"x":1}`)), "flapjack/1.0"), `{"x":1}`, "not an alert", 400},
		{"other agent", req(signed, "curl/8"), body, "User-Agent", 400},
	})
	runContract(t, Webhook(""), []contractCase{
		{"unsigned", req("", "flapjack/1.0"), body, "", 0},
		{"signed without a secret", req(signed, "flapjack/1.0"), body, "without a shared secret", 400},
	})
}
