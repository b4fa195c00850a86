package logmedium

import (
	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/lifecycle"
)

// Spec describes the log medium: on by default, so `make run` shows alerts with no account anywhere.
var Spec = gateways.Medium{
	Name:             "log",
	EnabledByDefault: true,
	Stages: func(env gateways.Env) ([]lifecycle.Stage, error) {
		g := gateways.New(env.Delivery("log"), &Sender{W: env.Stdout})
		return []lifecycle.Stage{{Name: "log gateway", Run: g.Run}}, nil
	},
}
