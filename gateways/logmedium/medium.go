package logmedium

import (
	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/lifecycle"
)

// Spec describes the log medium: on by default, so `make run` shows alerts with no account anywhere.
var Spec = gateways.Medium{
	Name:             "log",
	EnabledByDefault: true,
	Templates:        []string{gateways.TemplateAlertText},
	Stages: func(env gateways.Env) ([]lifecycle.Stage, error) {
		tpl, err := gateways.LoadTemplates(env.Values, "log", gateways.TemplateAlertText)
		if err != nil {
			return nil, err
		}
		g := gateways.New(env.Delivery("log"), &Sender{W: env.Stdout, Templates: tpl, Log: env.Log})
		return []lifecycle.Stage{{Name: "log gateway", Run: g.Run}}, nil
	},
}
