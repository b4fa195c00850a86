package schema

import (
	"encoding/json"
	"fmt"
)

// Notification types (docs/flapjack-1x.md 1.4).
const (
	NotificationProblem         = "problem"
	NotificationRecovery        = "recovery"
	NotificationAcknowledgement = "acknowledgement"
	NotificationTest            = "test"
)

// Severities carried by a notification.
const (
	SeverityOK       = "ok"
	SeverityUnknown  = "unknown"
	SeverityWarning  = "warning"
	SeverityCritical = "critical"
)

// Notification is what the executive pushes to `notifications` (docs/flapjack-1x.md 3.1). Absent values
// encode as JSON null, as Flapjack 1.x does. Perfdata is our addition (gateways may show it).
type Notification struct {
	EventID       string   `json:"event_id"`
	EventHash     *string  `json:"event_hash"`
	State         string   `json:"state"`
	Summary       *string  `json:"summary"`
	Details       *string  `json:"details"`
	Perfdata      *string  `json:"perfdata,omitempty"`
	Time          *int64   `json:"time"`
	Duration      *int64   `json:"duration"`
	Count         int64    `json:"count"`
	LastState     *string  `json:"last_state"`
	LastSummary   *string  `json:"last_summary"`
	StateDuration *int64   `json:"state_duration"`
	Type          string   `json:"type"`
	Severity      string   `json:"severity"`
	Tags          []string `json:"tags"`
}

// Entity and check of the notification's event id.
func (n *Notification) EntityCheck() (entity, check string) {
	entity, check, _ = SplitCheckID(n.EventID)
	return entity, check
}

// ParseNotification decodes a notification and checks the fields routing depends on.
func ParseNotification(raw []byte) (Notification, error) {
	var n Notification
	if err := json.Unmarshal(raw, &n); err != nil {
		return n, fmt.Errorf("notification is not valid JSON: %w", err)
	}
	if _, _, ok := SplitCheckID(n.EventID); !ok {
		return n, fmt.Errorf("notification event_id %q is not ENTITY:CHECK", n.EventID)
	}
	switch n.Type {
	case NotificationProblem, NotificationRecovery, NotificationAcknowledgement, NotificationTest:
	default:
		return n, fmt.Errorf("notification type %q is not one of problem, recovery, acknowledgement, test", n.Type)
	}
	switch n.Severity {
	case SeverityOK, SeverityUnknown, SeverityWarning, SeverityCritical:
	default:
		return n, fmt.Errorf("notification severity %q is not one of ok, unknown, warning, critical", n.Severity)
	}
	return n, nil
}

// StringPtr returns &s, or nil for "" (absent).
func StringPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Int64Ptr returns &v.
func Int64Ptr(v int64) *int64 { return &v }

// Deref returns *s or "".
func Deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
