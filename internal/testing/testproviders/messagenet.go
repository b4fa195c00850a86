package testproviders

import (
	"fmt"
	"net/http"
	"regexp"
	"unicode/utf8"
)

// MessageNet's lodge-an-SMS call, as Flapjack 1.x used it:
//
//	GET /dotnet/Lodge.asmx/LodgeSMSMessage?Username=...&Pwd=...&PhoneNumber=...&PhoneMessage=...
//
// answered 200 (Flapjack counted 200 to 206 as sent) with the ASMX service's XML string.

const (
	// MessageNetPath is the lodge call's path on www.messagenet.com.au.
	MessageNetPath = "/dotnet/Lodge.asmx/LodgeSMSMessage"
	// MessageNetMaxMessage is the longest PhoneMessage accepted here (one SMS).
	MessageNetMaxMessage = 160
)

var messageNetNumber = regexp.MustCompile(`^\+?[0-9]{8,15}$`)

// MessageNet is the lodge call's contract for the account.
func MessageNet(username, password string) Contract {
	return Contract{
		Name: "MessageNet LodgeSMSMessage",
		Check: func(r *http.Request, body []byte) ([]string, int) {
			if r.URL.Path != MessageNetPath {
				return []string{"unknown path " + r.URL.Path}, http.StatusNotFound
			}
			if r.Method != http.MethodGet {
				return []string{"method must be GET, got " + r.Method}, http.StatusMethodNotAllowed
			}
			q := r.URL.Query()
			problems := unknownFields(q, "Username", "Pwd", "PhoneNumber", "PhoneMessage")
			if len(body) > 0 {
				problems = append(problems, "a GET has no body")
			}
			if q.Get("Username") != username || q.Get("Pwd") != password {
				return append(problems, "Username and Pwd must be the account's"), http.StatusForbidden
			}
			if n := q.Get("PhoneNumber"); !messageNetNumber.MatchString(n) {
				problems = append(problems, fmt.Sprintf("PhoneNumber %q is not a phone number", n))
			}
			switch m := q.Get("PhoneMessage"); {
			case m == "":
				problems = append(problems, "PhoneMessage is required")
			case utf8.RuneCountInString(m) > MessageNetMaxMessage:
				problems = append(problems, fmt.Sprintf("PhoneMessage has %d characters, more than %d", utf8.RuneCountInString(m), MessageNetMaxMessage))
			}
			return problems, http.StatusBadRequest
		},
		Success: func(w http.ResponseWriter, req Request) {
			w.Header().Set("Content-Type", "text/xml; charset=utf-8")
			_, _ = fmt.Fprint(w, `<?xml version="1.0" encoding="utf-8"?>`+"\n"+`<string xmlns="http://tempuri.org/">Message lodged</string>`)
		},
		Failure: func(w http.ResponseWriter, status int, message string) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(status)
			_, _ = fmt.Fprint(w, message)
		},
	}
}
