package testproviders

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"

	"github.com/flapjackgo/flapjack/schema"
)

// flapjack's own webhook, the contract a receiver can rely on:
//
//	POST <the contact's URL>
//	Content-Type: application/json
//	User-Agent: flapjack/<version>
//	X-Flapjack-Signature: sha256=<hex HMAC-SHA256 of the body with the shared secret>   (when a secret is set)
//
//	<the alert JSON exactly as queued on webhook_notifications (docs/decisions.md I2)>
//
// Any 2xx is delivered.

// SignatureHeader carries the body's HMAC.
const SignatureHeader = "X-Flapjack-Signature"

// Sign is the X-Flapjack-Signature value of body under secret.
func Sign(secret string, body []byte) string {
	h := hmac.New(sha256.New, []byte(secret))
	h.Write(body)
	return "sha256=" + hex.EncodeToString(h.Sum(nil))
}

// Webhook is the webhook contract for receivers sharing secret ("": unsigned).
func Webhook(secret string) Contract {
	return Contract{
		Name: "flapjack webhook receiver",
		Check: func(r *http.Request, body []byte) ([]string, int) {
			problems := requireMethodAndType(r, http.MethodPost, "application/json")
			if ua := r.Header.Get("User-Agent"); !strings.HasPrefix(ua, "flapjack/") {
				problems = append(problems, "User-Agent must be flapjack/<version>, got "+ua)
			}
			got := r.Header.Get(SignatureHeader)
			switch {
			case secret == "" && got != "":
				problems = append(problems, "a signature without a shared secret")
			case secret != "" && !hmac.Equal([]byte(got), []byte(Sign(secret, body))):
				return append(problems, "X-Flapjack-Signature does not verify: "+got), http.StatusUnauthorized
			}
			if _, err := schema.ParseAlert(body); err != nil {
				problems = append(problems, "body is not an alert: "+err.Error())
			}
			return problems, http.StatusBadRequest
		},
		Success: func(w http.ResponseWriter, req Request) {
			WriteJSON(w, http.StatusOK, map[string]any{"ok": true})
		},
		Failure: func(w http.ResponseWriter, status int, message string) {
			WriteJSON(w, status, map[string]any{"ok": false, "error": message})
		},
	}
}
