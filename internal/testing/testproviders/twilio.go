package testproviders

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"
)

// Twilio's Programmable Messaging API (Messages resource, API version 2010-04-01):
//
//	POST /2010-04-01/Accounts/{AccountSid}/Messages.json
//	Authorization: Basic base64(AccountSid:AuthToken)
//	Content-Type: application/x-www-form-urlencoded
//	To=+15558675310&From=+15017122661&Body=...   (or MessagingServiceSid=MG... instead of From)
//
// answered 201 with the Message resource as JSON, errors as {"code", "message", "more_info",
// "status"}.

var (
	twilioPath    = regexp.MustCompile(`^/2010-04-01/Accounts/([^/]+)/Messages\.json$`)
	twilioService = regexp.MustCompile(`^MG[0-9a-f]{32}$`)
	// An alphanumeric sender id: up to 11 letters, digits and spaces, at least one letter.
	twilioAlphaSender = regexp.MustCompile(`^[A-Za-z0-9 ]{1,11}$`)
)

// TwilioSID is the sid the server gives the Message resource it creates from a request body:
// each distinct message has its own, and a test can tell which request a sid came from.
func TwilioSID(body []byte) string {
	h := sha256.Sum256(body)
	return "SM" + hex.EncodeToString(h[:16])
}

// TwilioMaxBody is the longest Body Twilio accepts (characters).
const TwilioMaxBody = 1600

// Twilio is the Messages API contract for the account sid with its auth token.
func Twilio(sid, token string) Contract {
	return Contract{
		Name: "Twilio Messages API",
		Check: func(r *http.Request, body []byte) ([]string, int) {
			m := twilioPath.FindStringSubmatch(r.URL.Path)
			if m == nil {
				return []string{"unknown path " + r.URL.Path + " (20404 The requested resource was not found)"}, http.StatusNotFound
			}
			user, pass, ok := r.BasicAuth()
			if !ok || user != sid || pass != token || m[1] != sid {
				return []string{"20003 Authenticate: basic auth must be AccountSid:AuthToken of the account in the path"}, http.StatusUnauthorized
			}
			problems := requireMethodAndType(r, http.MethodPost, "application/x-www-form-urlencoded")
			if len(problems) > 0 {
				return problems, http.StatusBadRequest
			}
			form, problems := parseForm(body, "To", "From", "MessagingServiceSid", "Body", "StatusCallback")
			if form == nil {
				return problems, http.StatusBadRequest
			}
			if to := form.Get("To"); !e164.MatchString(to) {
				problems = append(problems, fmt.Sprintf("21211 Invalid 'To' Phone Number: %q", to))
			}
			from, service := form.Get("From"), form.Get("MessagingServiceSid")
			switch {
			case from == "" && service == "":
				problems = append(problems, "21603 A 'From' or 'MessagingServiceSid' parameter is required")
			case service != "" && !twilioService.MatchString(service):
				problems = append(problems, fmt.Sprintf("21701 The Messaging Service Sid %q is invalid", service))
			case from != "" && !e164.MatchString(from) && !(twilioAlphaSender.MatchString(from) && strings.ContainsAny(strings.ToLower(from), "abcdefghijklmnopqrstuvwxyz")):
				problems = append(problems, fmt.Sprintf("21212 Invalid 'From' Number: %q", from))
			}
			switch n := utf8.RuneCountInString(form.Get("Body")); {
			case n == 0:
				problems = append(problems, "21602 Message body is required")
			case n > TwilioMaxBody:
				problems = append(problems, fmt.Sprintf("21617 The concatenated message body exceeds the %d character limit (%d)", TwilioMaxBody, n))
			}
			if !utf8.ValidString(form.Get("Body")) {
				problems = append(problems, "Body is not UTF-8")
			}
			return problems, http.StatusBadRequest
		},
		Success: func(w http.ResponseWriter, req Request) {
			WriteJSON(w, http.StatusCreated, map[string]any{
				"sid": TwilioSID(req.Body), "status": "queued", "to": req.Form.Get("To"),
				"from": req.Form.Get("From"), "body": req.Form.Get("Body"), "num_segments": "1",
				"api_version": "2010-04-01", "error_code": nil, "error_message": nil,
			})
		},
		Failure: func(w http.ResponseWriter, status int, message string) {
			code := map[int]int{400: 21211, 401: 20003, 404: 20404, 429: 20429, 500: 20500, 503: 20503}[status]
			if code == 0 {
				code = 20000 + status
			}
			WriteJSON(w, status, map[string]any{"code": code, "message": message,
				"more_info": fmt.Sprintf("https://www.twilio.com/docs/errors/%d", code), "status": status})
		},
	}
}

// Twilio's inbound SMS webhook: Twilio posts each message a number receives to the number's
// messaging webhook URL as a form (From, To, Body, MessageSid, AccountSid, NumMedia, ...), with
// X-Twilio-Signature: base64 HMAC-SHA1, keyed with the auth token, of the URL followed by every
// form field's name and value in name order.

// TwilioInboundForm is the form Twilio posts for an SMS from `from` to `to` saying body.
func TwilioInboundForm(accountSID, from, to, body string) url.Values {
	h := sha256.Sum256([]byte(from + to + body))
	return url.Values{"ToCountry": {"AU"}, "SmsMessageSid": {"SM" + hex.EncodeToString(h[:16])}, "NumMedia": {"0"},
		"SmsSid": {"SM" + hex.EncodeToString(h[:16])}, "SmsStatus": {"received"}, "Body": {body}, "To": {to},
		"NumSegments": {"1"}, "MessageSid": {"SM" + hex.EncodeToString(h[:16])}, "AccountSid": {accountSID},
		"From": {from}, "ApiVersion": {"2010-04-01"}}
}

// TwilioRequestSignature is the X-Twilio-Signature Twilio sends with form to fullURL.
func TwilioRequestSignature(authToken, fullURL string, form url.Values) string {
	names := make([]string, 0, len(form))
	for k := range form {
		names = append(names, k)
	}
	sort.Strings(names)
	s := fullURL
	for _, k := range names {
		for _, v := range form[k] {
			s += k + v
		}
	}
	m := hmac.New(sha1.New, []byte(authToken))
	m.Write([]byte(s))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}
