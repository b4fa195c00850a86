package messagenet

import (
	"github.com/flapjackgo/flapjack/config"
	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/lifecycle"
)

// Spec describes the sms medium (MessageNet).
var Spec = gateways.Medium{
	Name: Medium,
	Settings: []config.Setting{
		{Key: "gateways.sms.username", Usage: "MessageNet username"},
		{Key: "gateways.sms.password", Secret: true, Usage: "MessageNet password (sent as Pwd in the query string, as MessageNet's API wants)"},
		{Key: "gateways.sms.endpoint", Default: DefaultEndpoint, Usage: "MessageNet's LodgeSMSMessage URL"},
		{Key: "gateways.sms.timeout", Kind: config.Duration, Default: "10s", Usage: "HTTP request timeout"},
	},
	Templates: []string{gateways.TemplateAlertText, gateways.TemplateRollupText},
	Stages:    stages,
}

func stages(env gateways.Env) ([]lifecycle.Stage, error) {
	v := env.Values
	loc, err := gateways.Timezone(v)
	if err != nil {
		return nil, err
	}
	tpl, err := gateways.LoadTemplates(v, Medium, gateways.TemplateAlertText, gateways.TemplateRollupText)
	if err != nil {
		return nil, err
	}
	sender, err := NewSender(Options{Config: configFrom(v), Templates: tpl, Location: loc, Log: env.Log})
	if err != nil {
		return nil, err
	}
	g := gateways.New(env.Delivery(Medium), sender)
	return []lifecycle.Stage{{Name: "sms gateway", Run: g.Run}}, nil
}

// configFrom reads gateways.sms.*.
func configFrom(v *config.Values) Config {
	return Config{
		Username: v.String("gateways.sms.username"), Password: v.String("gateways.sms.password"),
		Endpoint: v.String("gateways.sms.endpoint"), Timeout: v.Duration("gateways.sms.timeout"),
	}
}
