package sns

import (
	"github.com/flapjackgo/flapjack/config"
	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/gateways/internal/httpsend"
	"github.com/flapjackgo/flapjack/lifecycle"
)

var templates = []string{gateways.TemplateAlertSubject, gateways.TemplateAlertText,
	gateways.TemplateRollupSubject, gateways.TemplateRollupText}

// Spec describes the sns medium.
var Spec = gateways.Medium{
	Name: Medium,
	Settings: []config.Setting{
		{Key: "gateways.sns.region_name", Default: DefaultRegion, Usage: "AWS region of the client; each message goes to the region its topic ARN names"},
		{Key: "gateways.sns.access_key", Usage: "AWS access key id"},
		{Key: "gateways.sns.secret_key", Secret: true, Usage: "AWS secret access key"},
		{Key: "gateways.sns.endpoint", Usage: "SNS base URL (empty: AWS's endpoint of the topic's region; set for tests or VPC endpoints)"},
		httpsend.TimeoutSetting(Medium),
	},
	Templates: templates,
	Stages:    stages,
}

func stages(env gateways.Env) ([]lifecycle.Stage, error) {
	return httpsend.Stages(env, Medium, templates, configFrom, NewSender)
}

// configFrom reads gateways.sns.*.
func configFrom(v *config.Values) Config {
	return Config{
		Region: v.String("gateways.sns.region_name"), AccessKey: v.String("gateways.sns.access_key"),
		SecretKey: v.String("gateways.sns.secret_key"), Endpoint: v.String("gateways.sns.endpoint"),
		Timeout: v.Duration("gateways.sns.timeout"),
	}
}
