package messagenet

import (
	"github.com/flapjackgo/flapjack/config"
	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/gateways/internal/httpsend"
	"github.com/flapjackgo/flapjack/lifecycle"
)

var templates = []string{gateways.TemplateAlertText, gateways.TemplateRollupText}

// Spec describes the sms medium (MessageNet).
var Spec = gateways.Medium{
	Name: Medium,
	Settings: []config.Setting{
		{Key: "gateways.sms.username", Usage: "MessageNet username"},
		{Key: "gateways.sms.password", Secret: true, Usage: "MessageNet password (sent as Pwd in the query string, as MessageNet's API wants)"},
		{Key: "gateways.sms.endpoint", Default: DefaultEndpoint, Usage: "MessageNet's LodgeSMSMessage URL"},
		httpsend.TimeoutSetting(Medium),
	},
	Templates: templates,
	Stages:    stages,
}

func stages(env gateways.Env) ([]lifecycle.Stage, error) {
	return httpsend.Stages(env, Medium, templates, configFrom, NewSender)
}

// configFrom reads gateways.sms.*.
func configFrom(v *config.Values) Config {
	return Config{
		Username: v.String("gateways.sms.username"), Password: v.String("gateways.sms.password"),
		Endpoint: v.String("gateways.sms.endpoint"), Timeout: v.Duration("gateways.sms.timeout"),
	}
}
