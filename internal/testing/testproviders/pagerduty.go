package testproviders

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/flapjackgo/flapjack/internal/testing/testpagerduty"
)

// PagerDuty is the Events API v2 contract (POST /v2/enqueue, checked by testpagerduty): a valid
// event is answered 202 with its dedup_key; a refused one as PagerDuty refuses it (400 with its
// error JSON, 429 throttled, 5xx an HTML page).
func PagerDuty() Contract {
	return Contract{
		Name: "PagerDuty Events API v2",
		Check: func(r *http.Request, body []byte) ([]string, int) {
			if r.URL.Path != testpagerduty.V2Path {
				return []string{"unknown path " + r.URL.Path}, http.StatusNotFound
			}
			_, problems := testpagerduty.CheckV2(r, body)
			return problems, http.StatusBadRequest
		},
		Success: func(w http.ResponseWriter, req Request) {
			var ev struct {
				DedupKey string `json:"dedup_key"`
			}
			_ = json.Unmarshal(req.Body, &ev) // Check decoded it already
			testpagerduty.WriteAccepted(w, ev.DedupKey)
		},
		Failure: func(w http.ResponseWriter, status int, message string) {
			switch {
			case status == http.StatusBadRequest:
				testpagerduty.WriteInvalid(w, []string{message})
			case status == http.StatusTooManyRequests:
				testpagerduty.WriteJSON(w, status, map[string]any{"status": "throttle event",
					"message": "Requests for this service are arriving too quickly. Please retry later."})
			case status >= 500:
				w.Header().Set("Content-Type", "text/html")
				w.WriteHeader(status)
				fmt.Fprint(w, "<html><body>Internal Server Error</body></html>")
			default:
				testpagerduty.WriteJSON(w, status, map[string]any{"status": "error", "message": http.StatusText(status)})
			}
		},
	}
}
