package oobetet

import (
	"testing"

	"github.com/flapjackgo/flapjack/gateways/jabber"
	"github.com/flapjackgo/flapjack/schema"
)

func TestMatch(t *testing.T) {
	t.Parallel()
	const entity, check = "canary", "oobetet canary"
	tests := []struct {
		name string
		text string
		want Kind
	}{
		{"problem with ACKID hint", `Problem: flapjack: ACKID 8f4a2b1c, "oobetet canary" on canary is Critical, injected`, Problem},
		{"problem without summary", `Problem: "oobetet canary" on canary is Warning`, Problem},
		{"recovery", `Recovery: "oobetet canary" on canary is OK, fine`, Recovery},
		{"acknowledgement", `Acknowledgement: "oobetet canary" on canary has been acknowledged, unscheduled maintenance created for 4 hours, ada: on it`, Acknowledgement},
		{"kind in any case", `PROBLEM: "oobetet canary" on canary is Critical`, Problem},
		{"entity in any case", `Recovery: "oobetet canary" on Canary is OK`, Recovery},
		{"entity ends the text", `Recovery: "oobetet canary" on canary`, Recovery},
		{"leading spaces", `   Problem: "oobetet canary" on canary is Critical`, Problem},
		{"test notification", `Test: "oobetet canary" on canary, Testing notifications`, None},
		{"rollup summary", `Problem summary: Critical: 1 (Critical: canary:oobetet canary)`, None},
		{"other check", `Problem: "HTTP" on canary is Critical`, None},
		{"check only starts alike", `Problem: "oobetet canary 2" on canary is Critical`, None},
		{"check in other case", `Problem: "Oobetet Canary" on canary is Critical`, None},
		{"other entity", `Problem: "oobetet canary" on web-01 is Critical`, None},
		{"entity only starts alike", `Problem: "oobetet canary" on canary-2 is Critical`, None},
		{"mentioned in another alert's summary", `Problem: "HTTP" on web-01 is Critical, see "oobetet canary" on canary`, None},
		{"oobetet's own alarm", `Self-monitoring CRITICAL: the alerts of "oobetet canary" on canary are not getting through`, None},
		{"oobetet's greeting", `Self-monitoring (oobetet) started at 2026-03-01 12:00:00 UTC on host: watching the alerts of "oobetet canary" on canary`, None},
		{"kind word not first", `FYI Problem: "oobetet canary" on canary is Critical`, None},
		{"a longer first word", `Problems: "oobetet canary" on canary is Critical`, None},
		{"empty", ``, None},
		{"no quote", `Problem: oobetet canary on canary`, None},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Match(tt.text, entity, check); got != tt.want {
				t.Errorf("Match(%q) = %s, want %s", tt.text, got, tt.want)
			}
		})
	}
}

// TestMatchJabberText reads the Jabber gateway's own rendering of the canary's alerts, so that
// a change of its wording fails here rather than in production.
func TestMatchJabberText(t *testing.T) {
	t.Parallel()
	const entity, check = "canary", "oobetet canary"
	hash := schema.AckHash(schema.CheckID(entity, check))
	summary := "injected"
	tests := []struct {
		notification, state string
		want                Kind
	}{
		{schema.NotificationProblem, schema.StateCritical, Problem},
		{schema.NotificationProblem, schema.StateUnknown, Problem},
		{schema.NotificationRecovery, schema.StateOK, Recovery},
		{schema.NotificationAcknowledgement, schema.StateCritical, Acknowledgement},
		{schema.NotificationTest, schema.StateTestNotifications, None},
	}
	for _, tt := range tests {
		a := schema.Alert{Media: jabber.Medium, Address: "ops@conference.example.com", EventID: schema.CheckID(entity, check),
			EventHash: &hash, State: tt.state, Summary: &summary, NotificationType: tt.notification}
		text := jabber.Text(a, "flapjack")
		if got := Match(text, entity, check); got != tt.want {
			t.Errorf("Match(%q) = %s, want %s", text, got, tt.want)
		}
	}
}
