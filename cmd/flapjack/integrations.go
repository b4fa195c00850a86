package main

import (
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/api"
	"github.com/flapjackgo/flapjack/gateways/slack"
)

// integrationIntakes are the signed POST endpoints providers call back on http.addr: Slack's
// button clicks (with gateways.slack.signing_secret set).
func (p *process) integrationIntakes() []api.Intake {
	var out []api.Intake
	log := p.log.With(zap.String("stage", httpStage))
	if secret := p.values.String("gateways.slack.signing_secret"); secret != "" {
		a := &slack.Actions{SigningSecret: secret, Pool: p.pool, Keys: p.keys, Clock: p.clock, Events: p.publisher(),
			AckDuration: p.values.Duration("executive.acknowledgement_duration"), Log: log}
		out = append(out, api.Intake{Path: slack.ActionsPath, Signed: true, Handler: a.Handle,
			What: "Slack interactivity: a click on an alert's Acknowledge button acknowledges its check (X-Slack-Signature with gateways.slack.signing_secret)"})
	}
	return out
}
