package webhook

import (
	"github.com/flapjackgo/flapjack/config"
	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/gateways/internal/httpsend"
	"github.com/flapjackgo/flapjack/lifecycle"
)

// Spec describes the webhook medium.
var Spec = gateways.Medium{
	Name: Medium,
	Settings: []config.Setting{
		{Key: "gateways.webhook.secret", Secret: true, Usage: "shared secret: each POST carries X-Flapjack-Signature: sha256=<hex HMAC-SHA256 of the body> (empty: unsigned)"},
		httpsend.TimeoutSetting(Medium),
		{Key: "gateways.webhook.allowed_hosts", Kind: config.List, Usage: "when set, the only hosts alerts are posted to (host, host:port, *.domain); other addresses are dead-lettered"},
	},
	Stages: stages,
}

func stages(env gateways.Env) ([]lifecycle.Stage, error) {
	v := env.Values
	sender, err := NewSender(Options{Config: Config{Secret: v.String("gateways.webhook.secret"),
		Timeout: v.Duration("gateways.webhook.timeout"), AllowedHosts: v.List("gateways.webhook.allowed_hosts")},
		Log: env.Log, Version: env.Version})
	if err != nil {
		return nil, err
	}
	return gateways.SenderStages(env, Medium, sender), nil
}
