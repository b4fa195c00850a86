package testproviders

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"sort"
)

// e164 is a phone number in E.164 form: "+" and 2 to 15 digits, the first not 0.
var e164 = regexp.MustCompile(`^\+[1-9][0-9]{1,14}$`)

func mediaType(v string) string {
	mt, _, err := mime.ParseMediaType(v)
	if err != nil {
		return ""
	}
	return mt
}

// requireMethodAndType checks the method and the content type of the body.
func requireMethodAndType(r *http.Request, method, contentType string) []string {
	var problems []string
	if r.Method != method {
		problems = append(problems, fmt.Sprintf("method must be %s, got %s", method, r.Method))
	}
	if contentType != "" && mediaType(r.Header.Get("Content-Type")) != contentType {
		problems = append(problems, fmt.Sprintf("Content-Type must be %s, got %q", contentType, r.Header.Get("Content-Type")))
	}
	return problems
}

// parseForm decodes a form body and reports fields outside known (a typo'd field is a bug
// even where the provider would ignore it) and fields given more than once.
func parseForm(body []byte, known ...string) (url.Values, []string) {
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, []string{"body is not form-encoded: " + err.Error()}
	}
	return form, unknownFields(form, known...)
}

func unknownFields(form url.Values, known ...string) []string {
	ok := map[string]bool{}
	for _, k := range known {
		ok[k] = true
	}
	var problems []string
	var names []string
	for k := range form {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if !ok[k] {
			problems = append(problems, fmt.Sprintf("unknown parameter %q", k))
		} else if len(form[k]) > 1 {
			problems = append(problems, fmt.Sprintf("parameter %q given %d times", k, len(form[k])))
		}
	}
	return problems
}

// WriteJSON writes v as a JSON answer with status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
