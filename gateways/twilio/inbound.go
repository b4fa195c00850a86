package twilio

import (
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"go.uber.org/zap"
)

// InboundPath is where Twilio posts the SMS a number receives (its messaging webhook), on
// http.addr.
const InboundPath = "/integrations/twilio/sms"

// Replier acknowledges from a reply (smsreply.Acknowledger).
type Replier interface {
	Reply(ctx context.Context, provider, from, text string) (string, error)
}

// Inbound answers Twilio's inbound SMS webhook: a request whose X-Twilio-Signature does not
// match is refused with 401; a signed reply goes to the Replier and is answered with TwiML.
type Inbound struct {
	AuthToken string
	// BaseURL is http.base_url: the public URL Twilio calls is BaseURL + the request's path.
	BaseURL string
	Replies Replier
	Log     *zap.Logger
}

// Handle is the api.BodyHandler of InboundPath.
func (in *Inbound) Handle(w http.ResponseWriter, r *http.Request, body []byte) {
	form, err := url.ParseQuery(string(body))
	if err != nil {
		in.Log.Warn("refused a Twilio request", zap.Error(errors.New("the body is not a form")))
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
		return
	}
	public := strings.TrimSuffix(in.BaseURL, "/") + r.URL.RequestURI()
	if !hmac.Equal([]byte(r.Header.Get("X-Twilio-Signature")), []byte(signature(in.AuthToken, public, form))) {
		in.Log.Warn("refused a Twilio request", zap.String("url", public), zap.Error(errors.New("X-Twilio-Signature does not match")))
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
		return
	}
	answer, err := in.Replies.Reply(r.Context(), "twilio", form.Get("From"), form.Get("Body"))
	if answer == "" && err != nil {
		in.Log.Error("cannot handle a Twilio SMS reply", zap.Error(err))
		http.Error(w, "Service Unavailable", http.StatusServiceUnavailable)
		return
	}
	writeTwiML(w, answer)
}

// signature is Twilio's request signature: base64 HMAC-SHA1, keyed with the auth token, of the
// URL Twilio requested followed by each form field's name and value, sorted by name.
func signature(authToken, fullURL string, form url.Values) string {
	var b strings.Builder
	b.WriteString(fullURL)
	for _, name := range slices.Sorted(maps.Keys(form)) {
		values := slices.Clone(form[name])
		slices.Sort(values)
		for _, v := range values {
			b.WriteString(name + v)
		}
	}
	m := hmac.New(sha1.New, []byte(authToken))
	m.Write([]byte(b.String()))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// twiml is a TwiML answer with one message back to the sender.
type twiml struct {
	XMLName xml.Name `xml:"Response"`
	Message string   `xml:"Message,omitempty"`
}

func writeTwiML(w http.ResponseWriter, message string) {
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	out, _ := xml.Marshal(twiml{Message: message})
	_, _ = w.Write([]byte(xml.Header))
	_, _ = w.Write(out)
}
