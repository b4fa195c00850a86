package gateways

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/flapjackgo/flapjack/internal/humantime"
	"github.com/flapjackgo/flapjack/schema"
)

// TypeWords is how an alert's type reads (docs/flapjack-1x.md 3.8): "Problem", "Recovery",
// "Acknowledgement", "Test", or for rollups "Problem summary" / "Problem summaries finishing".
func TypeWords(a schema.Alert) string {
	switch a.AlertType() {
	case "rollup_problem":
		return "Problem summary"
	case "rollup_recovery":
		return "Problem summaries finishing"
	}
	if a.Escalation != nil {
		return EscalationWords(*a.Escalation) + ": " + capitalise(a.NotificationType)
	}
	return capitalise(a.NotificationType)
}

// EscalationWords names an escalation step: "Escalation (step 2 of 3, nobody acknowledged for
// 15 minutes)". Every medium's text starts with it (it is part of TypeWords).
func EscalationWords(e schema.AlertEscalation) string {
	s := fmt.Sprintf("Escalation (step %d of %d", e.Step, e.Steps)
	if e.Repeat > 0 {
		s += fmt.Sprintf(", repeat %d", e.Repeat)
	}
	if e.UnacknowledgedFor > 0 {
		s += ", nobody acknowledged for " + humantime.Words(time.Duration(e.UnacknowledgedFor)*time.Second)
	}
	return s + ")"
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

// AlertText is the one-line text of an alert shared by the text media (docs/flapjack-1x.md 4.1, 4.4):
//
//	Problem: <hint>ACKID 8f4a2b1c, "HTTP" on app-01 is Critical, HTTP 500
//	Recovery: "HTTP" on app-01 is OK, HTTP 200
//	Acknowledgement: "HTTP" on app-01 has been acknowledged, unscheduled maintenance created for 2 hours, ada: fixing it
//	Test: "test" on app-01, Testing notifications ...
//	Problem summary: Critical: 2, Warning: 1 (Critical: a:x, b:y; Warning: c:z)
//
// ackHint, when not empty, is how a reader addresses the acknowledging bot ("flapjack: "): the
// ACKID hint is then added to failing alerts that carry a hash.
func AlertText(a schema.Alert, ackHint string) string {
	if a.Rollup != nil && *a.Rollup != "" {
		return fmt.Sprintf("%s: %s (%s)", TypeWords(a), RollupSummary(a), RollupDetail(a, rollupIDsPerState))
	}
	entity, check := a.EntityCheck()
	if entity == "" {
		check = a.EventID // not ENTITY:CHECK: show the id whole rather than nothing
	}
	var b strings.Builder
	b.WriteString(TypeWords(a) + ": ")
	ackOrTest := a.NotificationType == schema.NotificationAcknowledgement || a.NotificationType == schema.NotificationTest
	if hash := schema.Deref(a.EventHash); ackHint != "" && !ackOrTest && a.State != schema.StateOK && hash != "" {
		b.WriteString(ackHint + "ACKID " + hash + ", ")
	}
	b.WriteString(`"` + check + `"`)
	if entity != "" {
		b.WriteString(" on " + entity)
	}
	switch a.NotificationType {
	case schema.NotificationAcknowledgement:
		d := 4 * time.Hour
		if a.Duration != nil && *a.Duration > 0 {
			d = time.Duration(*a.Duration) * time.Second
		}
		b.WriteString(" has been acknowledged, unscheduled maintenance created for " + humantime.Words(d))
	case schema.NotificationTest:
	default:
		b.WriteString(" is " + StateWords(a.State))
	}
	if s := strings.TrimSpace(schema.Deref(a.Summary)); s != "" {
		b.WriteString(", " + s)
	}
	return b.String()
}

// rollupIDsPerState is how many check ids per state a rollup text lists (docs/flapjack-1x.md 3.8: 10 for
// Jabber and the other chat-like media).
const rollupIDsPerState = 10

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
