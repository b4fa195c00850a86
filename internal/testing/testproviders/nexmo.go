package testproviders

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The Vonage (formerly Nexmo) SMS API:
//
//	POST /sms/json
//	Content-Type: application/x-www-form-urlencoded (or application/json)
//	api_key=...&api_secret=...&from=Flapjack&to=447700900000&text=...[&type=unicode]
//
// answered 200 with {"message-count": "1", "messages": [{"status": "0", "message-id": ...}]};
// a refused message has a non-zero status and an "error-text", still with HTTP 200.

const (
	// NexmoPath is the endpoint of the SMS API.
	NexmoPath = "/sms/json"
	// NexmoMaxText is the longest text the SMS API accepts (characters; longer: status 12).
	NexmoMaxText = 3200
)

var (
	nexmoTo   = regexp.MustCompile(`^[1-9][0-9]{6,14}$`)
	nexmoFrom = regexp.MustCompile(`^([0-9]{1,15}|[A-Za-z0-9 ]{1,11})$`)
	// gsm7 is the GSM 03.38 alphabet and its extension table: text of type "text" must keep to
	// it, anything else needs type=unicode or arrives garbled.
	gsm7 = "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà" +
		"\f^{}\\[~]|€"
)

// Nexmo is the SMS API contract for the account's key and secret.
func Nexmo(key, secret string) Contract {
	return Contract{
		Name: "Vonage SMS API",
		Check: func(r *http.Request, body []byte) ([]string, int) {
			if r.URL.Path != NexmoPath {
				return []string{"unknown path " + r.URL.Path}, http.StatusNotFound
			}
			if r.Method != http.MethodPost {
				return []string{"method must be POST, got " + r.Method}, http.StatusMethodNotAllowed
			}
			var form url.Values
			var problems []string
			known := []string{"api_key", "api_secret", "from", "to", "text", "type", "client-ref", "callback", "status-report-req", "ttl"}
			switch mediaType(r.Header.Get("Content-Type")) {
			case "application/x-www-form-urlencoded":
				form, problems = parseForm(body, known...)
			case "application/json":
				var m map[string]string
				if err := json.Unmarshal(body, &m); err != nil {
					return []string{"3 Invalid Parameters: body is not a JSON object of strings: " + err.Error()}, http.StatusOK
				}
				form = url.Values{}
				for k, v := range m {
					form.Set(k, v)
				}
				problems = unknownFields(form, known...)
			default:
				return []string{fmt.Sprintf("3 Invalid Parameters: Content-Type must be form or JSON, got %q", r.Header.Get("Content-Type"))}, http.StatusOK
			}
			if form == nil {
				return problems, http.StatusOK
			}
			for _, f := range []string{"api_key", "api_secret", "from", "to", "text"} {
				if form.Get(f) == "" {
					problems = append(problems, "2 Missing Parameters: "+f)
				}
			}
			if len(problems) > 0 {
				return problems, http.StatusOK
			}
			if form.Get("api_key") != key || form.Get("api_secret") != secret {
				return []string{"4 Bad Credentials"}, http.StatusOK
			}
			if to := form.Get("to"); !nexmoTo.MatchString(to) {
				problems = append(problems, fmt.Sprintf("3 Invalid Parameters: to %q is not an international number without + or 00", to))
			}
			if from := form.Get("from"); !nexmoFrom.MatchString(from) {
				problems = append(problems, fmt.Sprintf("15 Illegal Sender Address: %q", from))
			}
			text, typ := form.Get("text"), form.Get("type")
			switch {
			case typ != "" && typ != "text" && typ != "unicode":
				problems = append(problems, fmt.Sprintf("3 Invalid Parameters: type %q", typ))
			case typ != "unicode" && !onlyGSM(text):
				problems = append(problems, "3 Invalid Parameters: text has characters outside the GSM alphabet without type=unicode (they would arrive garbled)")
			}
			if n := utf8.RuneCountInString(text); n > NexmoMaxText {
				problems = append(problems, fmt.Sprintf("12 Message Too Long: %d characters", n))
			}
			return problems, http.StatusOK
		},
		Success: func(w http.ResponseWriter, req Request) {
			to := req.Form.Get("to")
			if to == "" {
				var m map[string]string
				_ = json.Unmarshal(req.Body, &m)
				to = m["to"]
			}
			WriteJSON(w, http.StatusOK, map[string]any{"message-count": "1", "messages": []map[string]string{{
				"to": to, "message-id": "0C000000217B7F02", "status": "0", "remaining-balance": "15.53590000",
				"message-price": "0.03330000", "network": "23410"}}})
		},
		Failure: func(w http.ResponseWriter, status int, message string) {
			if status == http.StatusOK {
				code, text, _ := strings.Cut(message, " ")
				if _, err := strconv.Atoi(code); err != nil {
					code, text = "3", message
				}
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(NexmoStatus(code, text).Body))
				return
			}
			WriteJSON(w, status, map[string]any{"type": "https://developer.nexmo.com/api-errors#" + strconv.Itoa(status),
				"title": http.StatusText(status), "detail": message})
		},
	}
}

// NexmoStatus is the SMS API's HTTP 200 answer refusing a message with a status code ("1"
// Throttled, "3" Invalid Parameters, "5" Internal Error, "9" Partner Quota Violation ...).
func NexmoStatus(code, errorText string) Reply {
	b, _ := json.Marshal(map[string]any{"message-count": "1", "messages": []map[string]string{{
		"status": code, "error-text": errorText}}})
	return Reply{Status: http.StatusOK, Body: string(b)}
}

func onlyGSM(s string) bool {
	for _, r := range s {
		if !strings.ContainsRune(gsm7, r) {
			return false
		}
	}
	return true
}

// Vonage's inbound SMS webhook: Vonage posts each message a number receives to the number's
// inbound webhook (msisdn: the sender, to, messageId, text, type, keyword, message-timestamp);
// with signed webhooks it adds timestamp, nonce and sig: the hex SHA-256 HMAC, keyed with the
// account's signature secret, of the other parameters sorted by name, each "&name=value" with
// & and = in values replaced by _.

// VonageInbound are the parameters Vonage posts for an SMS from msisdn saying text, signed with
// secret at timestamp when secret is not "".
func VonageInbound(msisdn, to, text, secret string, timestamp int64) map[string]string {
	p := map[string]string{"msisdn": msisdn, "to": to, "messageId": "0A0000000123ABCD1", "text": text, "type": "text",
		"keyword": strings.ToUpper(strings.Fields(text + " x")[0]), "message-timestamp": time.Unix(timestamp, 0).UTC().Format("2006-01-02 15:04:05")}
	if secret == "" {
		return p
	}
	p["timestamp"], p["nonce"] = strconv.FormatInt(timestamp, 10), "aaaaaaaa-bbbb-cccc-dddd-0123456789ab"
	names := make([]string, 0, len(p))
	for k := range p {
		names = append(names, k)
	}
	sort.Strings(names)
	var signed string
	for _, k := range names {
		signed += "&" + k + "=" + strings.NewReplacer("&", "_", "=", "_").Replace(p[k])
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(signed))
	p["sig"] = strings.ToUpper(hex.EncodeToString(m.Sum(nil)))
	return p
}
