// Package media is the one list of media: every medium flapjack queues alerts for, with its
// gateway where flapjack has one. The settings table, the notifier's queues, the gateways run
// by `server` and `gateway <name>`, and the stages `status` lists are all derived from All;
// adding a medium is one line here plus its package.
package media

import (
	"slices"
	"strings"

	"github.com/flapjackgo/flapjack/config"
	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/gateways/email"
	"github.com/flapjackgo/flapjack/gateways/jabber"
	"github.com/flapjackgo/flapjack/gateways/logmedium"
	"github.com/flapjackgo/flapjack/gateways/messagenet"
	"github.com/flapjackgo/flapjack/gateways/nexmo"
	"github.com/flapjackgo/flapjack/gateways/oobetet"
	"github.com/flapjackgo/flapjack/gateways/pagerduty"
	"github.com/flapjackgo/flapjack/gateways/silences"
	"github.com/flapjackgo/flapjack/gateways/slack"
	"github.com/flapjackgo/flapjack/gateways/sns"
	"github.com/flapjackgo/flapjack/gateways/twilio"
	"github.com/flapjackgo/flapjack/gateways/webhook"
	"github.com/flapjackgo/flapjack/schema"
)

// All lists the media in the order they are documented, and the gateways that take no alerts
// from a queue (Unqueued).
var All = []gateways.Medium{
	jabber.Spec,
	pagerduty.Spec,
	email.Spec,
	messagenet.Spec, // sms
	twilio.Spec,
	nexmo.Spec,
	sns.Spec,
	slack.Spec,
	webhook.Spec,
	logmedium.Spec,
	oobetet.Spec,  // watches the Jabber rooms; takes no alerts from a queue
	silences.Spec, // mirrors acknowledgements into Alertmanager; fills its own queue
}

// Lookup finds a medium by name.
func Lookup(name string) (gateways.Medium, bool) {
	i := slices.IndexFunc(All, func(m gateways.Medium) bool { return m.Name == name })
	if i < 0 {
		return gateways.Medium{}, false
	}
	return All[i], true
}

// WithGateway lists the media flapjack delivers itself.
func WithGateway() []gateways.Medium {
	var out []gateways.Medium
	for _, m := range All {
		if m.Stages != nil {
			out = append(out, m)
		}
	}
	return out
}

// GatewayNames is "jabber|pagerduty|email|log", for usage lines.
func GatewayNames(sep string) string {
	var names []string
	for _, m := range WithGateway() {
		names = append(names, m.Name)
	}
	return strings.Join(names, sep)
}

// DefaultQueues maps every medium to its default list.
func DefaultQueues() map[string]string {
	out := make(map[string]string, len(All))
	for _, m := range All {
		if !m.Unqueued {
			out[m.Name] = schema.DefaultMediumQueue(m.Name)
		}
	}
	return out
}

// Table is every setting: config.Core with each medium's queue among the notifier's settings
// and each gateway's settings before the shared gateway retry settings.
func Table() config.Table { return gateways.SettingsTable(All) }
