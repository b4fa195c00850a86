package testproviders

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
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
