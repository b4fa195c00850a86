package email

import (
	"github.com/flapjackgo/flapjack/config"
	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/lifecycle"
)

// Spec describes the email medium: SMTP delivery of email_notifications. Off by default: it
// needs a mail server.
var Spec = gateways.Medium{
	Name: Medium,
	Settings: []config.Setting{
		{Key: "gateways.email.smtp_config.host", Default: DefaultHost, Usage: "SMTP server host"},
		{Key: "gateways.email.smtp_config.port", Kind: config.Int, Default: "25", Usage: "SMTP server port"},
		{Key: "gateways.email.smtp_config.starttls", Kind: config.Bool, Default: "true", Usage: "require STARTTLS (a server not offering it is refused); false: STARTTLS when offered, else plaintext"},
		{Key: "gateways.email.smtp_config.auth.type", Default: AuthPlain, Choices: []string{AuthPlain, AuthLogin, AuthNone}, Usage: "SMTP AUTH mechanism when auth.username is set: plain, login or none"},
		{Key: "gateways.email.smtp_config.auth.username", Default: "", Usage: "SMTP account (empty: no AUTH)"},
		{Key: "gateways.email.smtp_config.auth.password", Default: "", Usage: "password of the SMTP account", Secret: true},
		{Key: "gateways.email.smtp_config.from", Default: "", Usage: "sender, `Flapjack <flapjack@example.com>` or an address; also the envelope sender (empty: flapjack@<host name>)"},
		{Key: "gateways.email.smtp_config.reply_to", Default: "", Usage: "Reply-To address (empty: the sender)"},
		{Key: "gateways.email.smtp_config.ca_file", Default: "", Usage: "PEM file of the CAs that verify the SMTP server (empty: the system's)"},
		{Key: "gateways.email.smtp_config.insecure_skip_verify", Kind: config.Bool, Default: "false", Usage: "do not verify the SMTP server certificate (testing only)"},
		{Key: "gateways.email.timeout", Kind: config.Duration, Default: "30s", Usage: "longest SMTP conversation for one alert, connecting included"},
	},
	Templates: Templates,
	Stages:    stages,
}

func stages(env gateways.Env) ([]lifecycle.Stage, error) {
	cfg := configFrom(env.Values)
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	zone, err := env.Values.DefaultContactTimezone()
	if err != nil {
		return nil, err
	}
	tpl, err := gateways.LoadTemplates(env.Values, Medium, Templates...)
	if err != nil {
		return nil, err
	}
	sender, err := NewSender(SenderOptions{Config: cfg, Pool: env.Pool, Keys: env.Keys, DefaultZone: zone,
		Templates: tpl, Clock: env.Clock, Log: env.Log})
	if err != nil {
		return nil, err
	}
	return gateways.SenderStages(env, Medium, sender), nil
}

// configFrom reads gateways.email.*.
func configFrom(v *config.Values) Config {
	return Config{
		Host: v.String("gateways.email.smtp_config.host"), Port: v.Int("gateways.email.smtp_config.port"),
		StartTLS: v.Bool("gateways.email.smtp_config.starttls"), AuthType: v.String("gateways.email.smtp_config.auth.type"),
		Username: v.String("gateways.email.smtp_config.auth.username"),
		Password: Secret(v.String("gateways.email.smtp_config.auth.password")),
		From:     v.String("gateways.email.smtp_config.from"), ReplyTo: v.String("gateways.email.smtp_config.reply_to"),
		CAFile:             v.String("gateways.email.smtp_config.ca_file"),
		InsecureSkipVerify: v.Bool("gateways.email.smtp_config.insecure_skip_verify"),
		Timeout:            v.Duration("gateways.email.timeout"),
	}
}
