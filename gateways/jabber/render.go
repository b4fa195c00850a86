package jabber

import (
	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/schema"
)

// Text is the message the bot sends for an alert (docs/flapjack-1x.md 4.1):
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
	return gateways.AlertText(a, alias+": ")
}
