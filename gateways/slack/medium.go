package slack

import (
	"github.com/flapjackgo/flapjack/config"
	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/gateways/internal/httpsend"
	"github.com/flapjackgo/flapjack/lifecycle"
)

var templates = []string{gateways.TemplateAlertText, gateways.TemplateRollupText}

// Spec describes the slack medium.
var Spec = gateways.Medium{
	Name: Medium,
	Settings: []config.Setting{
		{Key: "gateways.slack.endpoint", Secret: true, Usage: "incoming webhook URL for contacts whose slack address is a channel name (a contact may instead give a webhook URL as address)"},
		{Key: "gateways.slack.from", Usage: "username the messages show (legacy webhooks only; app webhooks post as their app)"},
		{Key: "gateways.slack.icon_emoji", Default: DefaultIcon, Usage: "icon of the messages (legacy webhooks only; none: leave it out)"},
		{Key: "gateways.slack.signing_secret", Secret: true, Usage: "the Slack app's signing secret: problem alerts then carry an Acknowledge button, and POST " + ActionsPath + " on http.addr (the app's Interactivity Request URL) acknowledges the check of a click it signed"},
		httpsend.TimeoutSetting(Medium),
	},
	Templates: templates,
	Stages:    stages,
}

func stages(env gateways.Env) ([]lifecycle.Stage, error) {
	return httpsend.Stages(env, Medium, templates, configFrom, NewSender)
}

// configFrom reads gateways.slack.*.
func configFrom(v *config.Values) Config {
	return Config{
		Endpoint: v.String("gateways.slack.endpoint"), From: v.String("gateways.slack.from"),
		IconEmoji: v.String("gateways.slack.icon_emoji"), Timeout: v.Duration("gateways.slack.timeout"),
		SigningSecret: v.String("gateways.slack.signing_secret"),
	}
}
