package nexmo

import (
	"github.com/flapjackgo/flapjack/config"
	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/gateways/internal/httpsend"
	"github.com/flapjackgo/flapjack/lifecycle"
)

var templates = []string{gateways.TemplateAlertText, gateways.TemplateRollupText}

// Spec describes the sms_nexmo medium.
var Spec = gateways.Medium{
	Name: Medium,
	Settings: []config.Setting{
		{Key: "gateways.sms_nexmo.api_key", Usage: "Vonage (Nexmo) API key"},
		{Key: "gateways.sms_nexmo.secret", Secret: true, Usage: "Vonage (Nexmo) API secret"},
		{Key: "gateways.sms_nexmo.from", Usage: "sender: a Vonage number (447700900000) or an alphanumeric sender id of up to 11 characters"},
		{Key: "gateways.sms_nexmo.endpoint", Default: DefaultEndpoint, Usage: "SMS API base URL (messages go to <endpoint>/sms/json)"},
		{Key: RepliesSetting, Kind: config.Bool, Default: "false", Usage: "end problem SMS with \"Reply ACK 4821\" and acknowledge the check of a reply Vonage posts to POST " + InboundPath + " on http.addr (the number's inbound webhook)"},
		{Key: SignatureSecretSetting, Secret: true, Usage: "Vonage signature secret (SHA-256 HMAC signing): inbound webhook requests must then carry a valid sig and a timestamp within 5 minutes"},
		httpsend.TimeoutSetting(Medium),
	},
	Templates: templates,
	Stages:    stages,
}

// Reply settings.
const (
	RepliesSetting         = "gateways.sms_nexmo.replies"
	SignatureSecretSetting = "gateways.sms_nexmo.signature_secret"
)

func stages(env gateways.Env) ([]lifecycle.Stage, error) {
	if env.Values.Bool(RepliesSetting) {
		env.ReplyCodes = gateways.ReplyCodesFrom(env.Values)
	}
	return httpsend.Stages(env, Medium, templates, configFrom, NewSender)
}

// configFrom reads gateways.sms_nexmo.*.
func configFrom(v *config.Values) Config {
	return Config{
		APIKey: v.String("gateways.sms_nexmo.api_key"), Secret: v.String("gateways.sms_nexmo.secret"),
		From: v.String("gateways.sms_nexmo.from"), Endpoint: v.String("gateways.sms_nexmo.endpoint"),
		Timeout: v.Duration("gateways.sms_nexmo.timeout"),
	}
}
