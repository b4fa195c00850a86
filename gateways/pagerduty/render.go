package pagerduty

import (
	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/internal/text"
	"github.com/flapjackgo/flapjack/schema"
)

// MaxSummaryLength is PagerDuty's limit on an event summary (characters).
const MaxSummaryLength = 1024

// Summary is the one-line text of an alert on PagerDuty, shared by the v2 payload summary and
// the v1 description: `<Type>: "<check>" on <entity>[ is <State>][ has been acknowledged, …][,
// <summary>]` (the text media's gateways.AlertText), at most MaxSummaryLength characters. Rollup
// fields are ignored: PagerDuty alerts are never rolled up.
func Summary(a schema.Alert) string {
	a.Rollup, a.RollupAlerts, a.RollupThreshold = nil, nil, nil
	return text.TruncateRunes(gateways.AlertText(a, ""), MaxSummaryLength)
}

// Severities of the Events API v2.
const (
	SeverityCritical = "critical"
	SeverityError    = "error"
	SeverityWarning  = "warning"
	SeverityInfo     = "info"
)

// Severity maps an alert to the Events API v2 severity: critical → critical, warning →
// warning, unknown → error, a test notification → info. Anything else (never sent with a
// trigger) reads as error, so a surprise still pages.
func Severity(a schema.Alert) string {
	if a.NotificationType == schema.NotificationTest || a.State == schema.StateTestNotifications {
		return SeverityInfo
	}
	switch a.State {
	case schema.StateCritical:
		return SeverityCritical
	case schema.StateWarning:
		return SeverityWarning
	}
	return SeverityError
}
