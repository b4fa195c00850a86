package jabber

import (
	"strings"
	"time"

	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/internal/humantime"
	"github.com/flapjackgo/flapjack/schema"
)

// rollupLimit is how many check ids per state a Jabber rollup lists (reference §3.8).
const rollupLimit = 10

// Text is the message the bot sends for an alert (reference §4.1):
//
//	Problem: flapjack: ACKID 8f4a2b1c, "HTTP" on app-01 is Critical, HTTP 500
//	Recovery: "HTTP" on app-01 is OK, HTTP 200
//	Acknowledgement: "HTTP" on app-01 has been acknowledged, unscheduled maintenance created for 2 hours, ada: fixing it
//	Test: "test" on app-01, Testing notifications to all contacts interested in entity: app-01, check: test
//	Problem summary: Critical: 2, Warning: 1 (Critical: a:x, b:y; Warning: c:z)
//
// alias is the bot's alias, used in the ACKID hint so that pasting the line in a room addresses
// the bot; it is never blank (Config defaults it).
func Text(a schema.Alert, alias string) string {
	if alias == "" {
		alias = DefaultAlias
	}
	if a.Rollup != nil && *a.Rollup != "" {
		return gateways.TypeWords(a) + ": " + gateways.RollupSummary(a) + " (" + gateways.RollupDetail(a, rollupLimit) + ")"
	}
	entity, check := a.EntityCheck()
	if entity == "" {
		// Not ENTITY:CHECK: show the id whole rather than nothing.
		check = a.EventID
	}
	var b strings.Builder
	b.WriteString(gateways.TypeWords(a))
	b.WriteString(": ")
	ackOrTest := a.NotificationType == schema.NotificationAcknowledgement || a.NotificationType == schema.NotificationTest
	if hash := schema.Deref(a.EventHash); !ackOrTest && a.State != schema.StateOK && hash != "" {
		b.WriteString(alias + ": ACKID " + hash + ", ")
	}
	b.WriteString(`"` + check + `"`)
	if entity != "" {
		b.WriteString(" on " + entity)
	}
	switch a.NotificationType {
	case schema.NotificationAcknowledgement:
		d := DefaultAckDuration
		if a.Duration != nil && *a.Duration > 0 {
			d = time.Duration(*a.Duration) * time.Second
		}
		b.WriteString(" has been acknowledged, unscheduled maintenance created for " + humantime.Words(d))
	case schema.NotificationTest:
	default:
		b.WriteString(" is " + gateways.StateWords(a.State))
	}
	if s := strings.TrimSpace(schema.Deref(a.Summary)); s != "" {
		b.WriteString(", " + s)
	}
	return b.String()
}
