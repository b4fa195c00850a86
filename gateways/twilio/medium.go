package twilio

import (
	"errors"

	"github.com/flapjackgo/flapjack/config"
	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/gateways/internal/httpsend"
	"github.com/flapjackgo/flapjack/lifecycle"
)

var templates = []string{gateways.TemplateAlertText, gateways.TemplateRollupText}

// Spec describes the sms_twilio medium.
var Spec = gateways.Medium{
	Name: Medium,
	Settings: []config.Setting{
		{Key: "gateways.sms_twilio.account_sid", Usage: "Twilio Account SID (AC…), the user of the API's basic auth"},
		{Key: "gateways.sms_twilio.auth_token", Secret: true, Usage: "Twilio Auth Token"},
		{Key: "gateways.sms_twilio.from", Usage: "sender: a Twilio number in E.164 form (+15017122661), an alphanumeric sender id, or a Messaging Service SID (MG…)"},
		{Key: "gateways.sms_twilio.endpoint", Default: DefaultEndpoint, Usage: "Twilio API base URL (messages go to <endpoint>/2010-04-01/Accounts/<account_sid>/Messages.json)"},
		{Key: RepliesSetting, Kind: config.Bool, Default: "false", Usage: "end problem SMS with \"Reply ACK 4821\" and acknowledge the check of a reply posted by Twilio to POST " + InboundPath + " on http.addr (the number's messaging webhook: http.base_url + the path, which the signature covers; http.base_url is then required)"},
		httpsend.TimeoutSetting(Medium),
	},
	Templates: templates,
	Stages:    stages,
}

// RepliesSetting switches SMS replies on.
const RepliesSetting = "gateways.sms_twilio.replies"

// RepliesBaseURL is the public base URL Twilio's inbound webhook is signed over, required when
// replies are on.
func RepliesBaseURL(v *config.Values) (string, error) {
	base := v.String("http.base_url")
	if base == "" {
		return "", errors.New(RepliesSetting + " needs http.base_url: Twilio signs the webhook's public URL")
	}
	return base, nil
}

func stages(env gateways.Env) ([]lifecycle.Stage, error) {
	if env.Values.Bool(RepliesSetting) {
		if _, err := RepliesBaseURL(env.Values); err != nil {
			return nil, err
		}
		env.ReplyCodes = gateways.ReplyCodesFrom(env.Values)
	}
	return httpsend.Stages(env, Medium, templates, configFrom, NewSender)
}

// configFrom reads gateways.sms_twilio.*.
func configFrom(v *config.Values) Config {
	return Config{
		AccountSID: v.String("gateways.sms_twilio.account_sid"), AuthToken: v.String("gateways.sms_twilio.auth_token"),
		From: v.String("gateways.sms_twilio.from"), Endpoint: v.String("gateways.sms_twilio.endpoint"),
		Timeout: v.Duration("gateways.sms_twilio.timeout"),
	}
}
