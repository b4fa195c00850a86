package gateways

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/flapjackgo/flapjack/internal/humantime"
	"github.com/flapjackgo/flapjack/schema"
)

// TypeWords is how an alert's type reads (reference §3.8): "Problem", "Recovery",
// "Acknowledgement", "Test", or for rollups "Problem summary" / "Problem summaries finishing".
func TypeWords(a schema.Alert) string {
	switch a.AlertType() {
	case "rollup_problem":
		return "Problem summary"
	case "rollup_recovery":
		return "Problem summaries finishing"
	}
	return capitalise(a.NotificationType)
}

// StateWords is how a state reads: "OK", "Critical", "Test Notifications".
func StateWords(state string) string {
	if state == schema.StateOK {
		return "OK"
	}
	words := strings.Split(state, "_")
	for i, w := range words {
		words[i] = capitalise(w)
	}
	return strings.Join(words, " ")
}

func capitalise(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// AlertText is the one-line text of an alert shared by the text media: for a check alert
// `<Type>: "<check>" on <entity>[ is <State>][ has been acknowledged, ...][, <summary>]`, for a
// rollup `<Type in words>: <rollup summary> (<detail>)`. Jabber adds its ACKID hint itself.
func AlertText(a schema.Alert) string {
	if a.Rollup != nil && *a.Rollup != "" {
		return fmt.Sprintf("%s: %s (%s)", TypeWords(a), RollupSummary(a), RollupDetail(a, 10))
	}
	entity, check := a.EntityCheck()
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %q on %s", TypeWords(a), check, entity)
	switch a.NotificationType {
	case schema.NotificationAcknowledgement:
		d := 4 * time.Hour
		if a.Duration != nil {
			d = time.Duration(*a.Duration) * time.Second
		}
		fmt.Fprintf(&b, " has been acknowledged, unscheduled maintenance created for %s", humantime.Words(d))
	case schema.NotificationTest:
	default:
		fmt.Fprintf(&b, " is %s", StateWords(a.State))
	}
	if s := schema.Deref(a.Summary); s != "" {
		b.WriteString(", " + s)
	}
	return b.String()
}

var rollupStates = []string{schema.StateCritical, schema.StateWarning, schema.StateUnknown}

// RollupSummary counts rolled-up checks per state: "Critical: 2, Warning: 1".
func RollupSummary(a schema.Alert) string {
	var parts []string
	for _, st := range rollupStates {
		n := 0
		for _, r := range a.RollupAlerts {
			if r.State == st {
				n++
			}
		}
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%s: %d", StateWords(st), n))
		}
	}
	return strings.Join(parts, ", ")
}

// RollupDetail lists rolled-up check ids per state, at most limit per state ("..." when cut):
// "Critical: a:x, b:y; Warning: c:z".
func RollupDetail(a schema.Alert, limit int) string {
	var parts []string
	for _, st := range rollupStates {
		var ids []string
		for id, r := range a.RollupAlerts {
			if r.State == st {
				ids = append(ids, id)
			}
		}
		if len(ids) == 0 {
			continue
		}
		sort.Strings(ids)
		cut := len(ids) > limit
		if cut {
			ids = ids[:limit]
		}
		s := StateWords(st) + ": " + strings.Join(ids, ", ")
		if cut {
			s += ", ..."
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}
