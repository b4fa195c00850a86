package main

import (
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/api"
	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/gateways/nexmo"
	"github.com/flapjackgo/flapjack/gateways/slack"
	"github.com/flapjackgo/flapjack/gateways/smsreply"
	"github.com/flapjackgo/flapjack/gateways/twilio"
)

// integrationIntakes are the signed POST endpoints providers call back on http.addr: Slack's
// button clicks (with gateways.slack.signing_secret set) and Twilio's inbound SMS (with
// gateways.sms_twilio.replies on).
func (p *process) integrationIntakes() ([]api.Intake, error) {
	var out []api.Intake
	log := p.log.With(zap.String("stage", httpStage))
	if secret := p.values.String("gateways.slack.signing_secret"); secret != "" {
		a := &slack.Actions{SigningSecret: secret, Pool: p.pool, Keys: p.keys, Clock: p.clock, Events: p.publisher(),
			AckDuration: p.values.Duration("executive.acknowledgement_duration"), Log: log}
		out = append(out, api.Intake{Path: slack.ActionsPath, Signed: true, Handler: a.Handle,
			What: "Slack interactivity: a click on an alert's Acknowledge button acknowledges its check (X-Slack-Signature with gateways.slack.signing_secret)"})
	}
	if p.values.Bool(twilio.RepliesSetting) {
		base, err := twilio.RepliesBaseURL(p.values)
		if err != nil {
			return nil, err
		}
		in := &twilio.Inbound{AuthToken: p.values.String("gateways.sms_twilio.auth_token"), BaseURL: base,
			Replies: p.smsReplies(log), Log: log}
		out = append(out, api.Intake{Path: twilio.InboundPath, Signed: true, Handler: in.Handle,
			What: "Twilio inbound SMS: \"ACK 1234\" from the number an alert went to acknowledges its check (X-Twilio-Signature with gateways.sms_twilio.auth_token over http.base_url + path); answered with TwiML"})
	}
	if p.values.Bool(nexmo.RepliesSetting) {
		in := &nexmo.Inbound{SignatureSecret: p.values.String(nexmo.SignatureSecretSetting), Clock: p.clock,
			Replies: p.smsReplies(log), Log: log}
		out = append(out, api.Intake{Path: nexmo.InboundPath, Signed: true, Handler: in.Handle,
			What: "Vonage inbound SMS: \"ACK 1234\" from the number an alert went to acknowledges its check (sig checked when gateways.sms_nexmo.signature_secret is set)"})
	}
	return out, nil
}

// smsReplies acknowledges checks from the SMS replies the providers' webhooks hand it.
func (p *process) smsReplies(log *zap.Logger) *smsreply.Acknowledger {
	return &smsreply.Acknowledger{Pool: p.pool, Keys: p.keys, Clock: p.clock, Events: p.publisher(),
		Codes: *gateways.ReplyCodesFrom(p.values), AckDuration: p.values.Duration("executive.acknowledgement_duration"), Log: log}
}
