// Package media is the one list of media: every medium flapjack queues alerts for, with its
// gateway where flapjack has one. The settings table, the notifier's queues, the gateways run
// by `server` and `gateway <name>`, and the stages `status` lists are all derived from All;
// adding a medium is one line here plus its package.
package media

import (
	"fmt"
	"slices"
	"strings"

	"github.com/flapjackgo/flapjack/config"
	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/gateways/jabber"
	"github.com/flapjackgo/flapjack/gateways/logmedium"
	"github.com/flapjackgo/flapjack/gateways/messagenet"
	"github.com/flapjackgo/flapjack/gateways/nexmo"
	"github.com/flapjackgo/flapjack/gateways/pagerduty"
	"github.com/flapjackgo/flapjack/gateways/slack"
	"github.com/flapjackgo/flapjack/gateways/sns"
	"github.com/flapjackgo/flapjack/gateways/twilio"
	"github.com/flapjackgo/flapjack/gateways/webhook"
)

// All lists the media in the order they are documented, and the gateways that take no alerts
// from a queue (Unqueued).
var All = []gateways.Medium{
	jabber.Spec,
	pagerduty.Spec,
	{Name: "email"}, // queued for a gateway of another process until flapjack has its own
	messagenet.Spec, // sms
	twilio.Spec,
	nexmo.Spec,
	sns.Spec,
	slack.Spec,
	webhook.Spec,
	logmedium.Spec,
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

// GatewayNames is "jabber|pagerduty|log", for usage lines.
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
			out[m.Name] = gateways.DefaultQueue(m.Name)
		}
	}
	return out
}

// Table is every setting: config.Core with each medium's queue among the notifier's settings
// and each gateway's settings before the shared gateway retry settings.
func Table() config.Table {
	var queues, gws config.Table
	for _, m := range All {
		if !m.Unqueued {
			queues = append(queues, queueSetting(m))
		}
		if m.Stages == nil {
			continue
		}
		gws = append(gws, config.Setting{Key: gateways.EnabledSetting(m.Name), Kind: config.Bool,
			Default: fmt.Sprint(m.EnabledByDefault), Usage: fmt.Sprintf("run the %s gateway in `server`", m.Name)})
		if !m.Unqueued {
			gws = append(gws, config.Setting{Key: "gateways." + m.Name + ".queue", AliasOf: gateways.QueueSetting(m.Name),
				Usage: "deprecated: use " + gateways.QueueSetting(m.Name)})
		}
		gws = append(gws, m.Settings...)
		gws = append(gws, gateways.TemplateSettings(m.Name, m.Templates...)...)
	}
	out := make(config.Table, 0, len(config.Core)+len(queues)+len(gws))
	for i, s := range config.Core {
		if strings.HasPrefix(s.Key, "gateways.") && gws != nil {
			out, gws = append(out, gws...), nil
		}
		out = append(out, s)
		lastOfNotifier := strings.HasPrefix(s.Key, "notifier.") &&
			(i+1 == len(config.Core) || !strings.HasPrefix(config.Core[i+1].Key, "notifier."))
		if lastOfNotifier && queues != nil {
			out, queues = append(out, queues...), nil
		}
	}
	return append(append(out, queues...), gws...)
}

func queueSetting(m gateways.Medium) config.Setting {
	usage := fmt.Sprintf("list of the %s medium: the notifier pushes its alerts there", m.Name)
	if m.Stages != nil {
		usage += fmt.Sprintf(" and `gateway %s` takes them from it", m.Name)
	} else {
		usage += " for a gateway outside flapjack"
	}
	usage += " (any notifier.<medium>_queue maps a medium; empty disables the medium)"
	return config.Setting{Key: gateways.QueueSetting(m.Name), Default: gateways.DefaultQueue(m.Name), Usage: usage}
}
