package schema

import (
	"encoding/json"
	"fmt"
)

// Rollup kinds of an alert.
const (
	RollupProblem  = "problem"
	RollupRecovery = "recovery"
)

// Alert is one message for one contact on one medium, pushed to `<medium>_notifications`
// (docs/flapjack-1x.md 3.8). Third-party gateways read these field names: keep them.
type Alert struct {
	Media            string                 `json:"media"`
	Address          string                 `json:"address"`
	ID               string                 `json:"id"`
	Rollup           *string                `json:"rollup"`
	ContactID        string                 `json:"contact_id"`
	ContactFirstName *string                `json:"contact_first_name"`
	ContactLastName  *string                `json:"contact_last_name"`
	EventID          string                 `json:"event_id"`
	EventHash        *string                `json:"event_hash"`
	State            string                 `json:"state"`
	Summary          *string                `json:"summary"`
	Details          *string                `json:"details"`
	Perfdata         *string                `json:"perfdata,omitempty"`
	Time             *int64                 `json:"time"`
	Duration         *int64                 `json:"duration"`
	LastState        *string                `json:"last_state"`
	LastSummary      *string                `json:"last_summary"`
	StateDuration    *int64                 `json:"state_duration"`
	Tags             []string               `json:"tags"`
	NotificationType string                 `json:"notification_type"`
	EventCount       int64                  `json:"event_count"`
	RollupAlerts     map[string]RollupEntry `json:"rollup_alerts,omitempty"`
	RollupThreshold  *int                   `json:"rollup_threshold,omitempty"`
	// Escalation is set on the alerts of an escalation step (added by us).
	Escalation *AlertEscalation `json:"escalation,omitempty"`
	// Schedule names the on-call schedule that reached the contact (added by us; absent when
	// the contact was reached only directly).
	Schedule string `json:"schedule,omitempty"`
	// ReplyCode is the code an SMS alert asks to be replied with ("Reply ACK 4821"): issued by
	// the gateway runner as it takes the alert, never queued.
	ReplyCode string `json:"-"`
}

// RollupEntry describes one failing check inside a rollup alert.
type RollupEntry struct {
	Duration int64  `json:"duration"`
	State    string `json:"state"`
	Summary  string `json:"summary"`
}

// AlertType is the presentation type: rollup_problem / rollup_recovery when rolled up, else the
// notification type.
func (a *Alert) AlertType() string {
	if a.Rollup != nil && *a.Rollup != "" {
		return "rollup_" + *a.Rollup
	}
	return a.NotificationType
}

// EntityCheck splits the alert's event id.
func (a *Alert) EntityCheck() (entity, check string) {
	entity, check, _ = SplitCheckID(a.EventID)
	return entity, check
}

var alertStates = map[string]bool{
	StateOK: true, StateCritical: true, StateWarning: true, StateUnknown: true,
	StateTestNotifications: true, StateAcknowledgement: true,
}

// ParseAlert decodes and validates an alert as gateways must (docs/flapjack-1x.md 3.8).
func ParseAlert(raw []byte) (Alert, error) {
	var a Alert
	if err := json.Unmarshal(raw, &a); err != nil {
		return a, fmt.Errorf("alert is not valid JSON: %w", err)
	}
	if a.Address == "" {
		return a, fmt.Errorf("alert has no address")
	}
	if !alertStates[a.State] {
		return a, fmt.Errorf("alert state %q is not one of ok, critical, warning, unknown, test_notifications, acknowledgement", a.State)
	}
	if a.StateDuration != nil && *a.StateDuration < 0 {
		return a, fmt.Errorf("alert state_duration %d is negative", *a.StateDuration)
	}
	for id, r := range a.RollupAlerts {
		if !IsFailure(r.State) {
			return a, fmt.Errorf("rollup entry %s has state %q, not a failing state", id, r.State)
		}
	}
	return a, nil
}
