package media

import (
	"strings"
	"testing"

	"github.com/flapjackgo/flapjack/config"
	"github.com/flapjackgo/flapjack/gateways"
)

func TestTableHasEachMediumOnceInItsSection(t *testing.T) {
	table := Table()
	seen := map[string]int{}
	for _, s := range table {
		seen[s.Key]++
	}
	for key, n := range seen {
		if n != 1 {
			t.Errorf("%s listed %d times", key, n)
		}
	}
	for _, m := range All {
		_, hasQueue := table.Lookup(config.MediumQueueSetting(m.Name))
		if hasQueue == m.Unqueued {
			t.Errorf("%s: queue setting present %v, unqueued %v", m.Name, hasQueue, m.Unqueued)
		}
		_, hasSwitch := table.Lookup(gateways.EnabledSetting(m.Name))
		if hasSwitch != (m.Stages != nil) {
			t.Errorf("%s: enabled switch present %v, gateway %v", m.Name, hasSwitch, m.Stages != nil)
		}
	}
	// Sections stay together, so the example file has one YAML mapping per section.
	closed := map[string]bool{}
	prev := ""
	for _, s := range table {
		section := strings.SplitN(s.Key, ".", 2)[0]
		if section != prev {
			if closed[section] {
				t.Errorf("section %s resumes at %s", section, s.Key)
			}
			closed[prev] = true
			prev = section
		}
	}
	if len(table) <= len(config.Core) {
		t.Fatal("no medium settings added")
	}
}

func TestDefaultQueuesAndGateways(t *testing.T) {
	q := DefaultQueues()
	for _, name := range []string{"jabber", "pagerduty", "email", "sms", "sms_twilio", "sms_nexmo", "sns", "slack", "webhook", "log"} {
		if q[name] != name+"_notifications" {
			t.Errorf("%s queue %q", name, q[name])
		}
	}
	if got := GatewayNames(","); got != "jabber,pagerduty,email,sms,sms_twilio,sms_nexmo,sns,slack,webhook,log,oobetet,alertmanager" {
		t.Errorf("gateways %q", got)
	}
	if _, ok := Lookup("email"); !ok {
		t.Error("email is a medium")
	}
	if _, ok := Lookup("carrier-pigeon"); ok {
		t.Error("unknown medium found")
	}
}
