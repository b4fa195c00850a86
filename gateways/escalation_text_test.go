package gateways_test

import (
	"strings"
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/gateways/email"
	"github.com/flapjackgo/flapjack/gateways/jabber"
	"github.com/flapjackgo/flapjack/gateways/pagerduty"
	"github.com/flapjackgo/flapjack/gateways/sns"
	"github.com/flapjackgo/flapjack/schema"
)

// TestEscalationAlertsNameTheirStepOnEveryMedium: an escalation step's alert reads "Escalation
// (step 2 of 3, nobody acknowledged for 15 minutes): Problem: ..." on every medium, with the
// ACK hint where the medium has one; other alerts are unchanged.
func TestEscalationAlertsNameTheirStepOnEveryMedium(t *testing.T) {
	at := int64(1767608190)
	a := schema.Alert{Media: "sms", Address: "+447700900002", ContactID: "bob", EventID: "web-01:HTTP",
		EventHash: schema.StringPtr("7bb9eca3"), State: schema.StateCritical, Summary: schema.StringPtr("HTTP 503"),
		Time: &at, NotificationType: schema.NotificationProblem, Tags: []string{},
		Escalation: &schema.AlertEscalation{PolicyID: "web-oncall", Step: 2, Steps: 3, UnacknowledgedFor: 900}}
	const prefix = "Escalation (step 2 of 3, nobody acknowledged for 15 minutes): Problem: "
	m := gateways.NewMessage(a, time.UTC)
	for medium, text := range map[string]string{
		"sms":           gateways.SMSText(m),
		"jabber":        jabber.Text(a, "flapjack"),
		"pagerduty":     pagerduty.Summary(a),
		"email subject": email.Subject(m),
		"sns subject":   sns.Subject(m),
		"sns message":   sns.Message(m),
		"log":           gateways.AlertText(a, ""),
		"template data": m.TypeWords + ": ",
	} {
		if !strings.Contains(text, prefix) {
			t.Errorf("%s reads %q, without %q", medium, text, prefix)
		}
	}
	for body, text := range map[string]string{"text": email.Text(m), "HTML": email.HTML(m)} {
		if !strings.Contains(text, "Escalation (step 2 of 3, nobody acknowledged for 15 minutes)") {
			t.Errorf("email %s body does not name the step:\n%s", body, text)
		}
	}
	if !strings.Contains(gateways.SMSText(m), "(ACKID 7bb9eca3)") || m.Escalation != "Escalation (step 2 of 3, nobody acknowledged for 15 minutes)" {
		t.Errorf("SMS %q, .Escalation %q", gateways.SMSText(m), m.Escalation)
	}
	a.Escalation = nil
	if text := gateways.AlertText(a, ""); !strings.HasPrefix(text, "Problem: ") {
		t.Errorf("a plain problem reads %q", text)
	}
}
