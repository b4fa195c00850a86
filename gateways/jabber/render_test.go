package jabber

import (
	"fmt"
	"testing"

	"github.com/flapjackgo/flapjack/schema"
)

func strp(s string) *string { return &s }
func i64p(n int64) *int64   { return &n }

func TestText(t *testing.T) {
	t.Parallel()
	base := func(typ, state string, mod ...func(*schema.Alert)) schema.Alert {
		a := schema.Alert{
			Media: "jabber", Address: "ada@example.com", EventID: "app-01.example.com:HTTP Port 80",
			EventHash: strp("8f4a2b1c"), State: state, NotificationType: typ, Summary: strp("HTTP 500"),
		}
		for _, m := range mod {
			m(&a)
		}
		return a
	}
	rollup := func(kind string, n map[string]int) func(*schema.Alert) {
		return func(a *schema.Alert) {
			a.Rollup = strp(kind)
			a.RollupAlerts = map[string]schema.RollupEntry{}
			for state, count := range n {
				for i := 0; i < count; i++ {
					a.RollupAlerts[fmt.Sprintf("host-%02d.example.com:%s", i, state)] = schema.RollupEntry{State: state, Duration: 60}
				}
			}
		}
	}
	tests := []struct {
		name  string
		alias string
		alert schema.Alert
		want  string
	}{
		{"problem", "flapjack", base("problem", "critical"),
			`Problem: flapjack: ACKID 8f4a2b1c, "HTTP Port 80" on app-01.example.com is Critical, HTTP 500`},
		{"problem uses the configured alias", "opsbot", base("problem", "warning"),
			`Problem: opsbot: ACKID 8f4a2b1c, "HTTP Port 80" on app-01.example.com is Warning, HTTP 500`},
		{"blank alias falls back to flapjack", "", base("problem", "critical"),
			`Problem: flapjack: ACKID 8f4a2b1c, "HTTP Port 80" on app-01.example.com is Critical, HTTP 500`},
		{"unknown", "flapjack", base("problem", "unknown", func(a *schema.Alert) { a.Summary = strp("timed out") }),
			`Problem: flapjack: ACKID 8f4a2b1c, "HTTP Port 80" on app-01.example.com is Unknown, timed out`},
		{"problem without summary", "flapjack", base("problem", "critical", func(a *schema.Alert) { a.Summary = nil }),
			`Problem: flapjack: ACKID 8f4a2b1c, "HTTP Port 80" on app-01.example.com is Critical`},
		{"problem without hash has no ACKID hint", "flapjack", base("problem", "critical", func(a *schema.Alert) { a.EventHash = nil }),
			`Problem: "HTTP Port 80" on app-01.example.com is Critical, HTTP 500`},
		{"recovery", "flapjack", base("recovery", "ok", func(a *schema.Alert) { a.Summary = strp("HTTP 200") }),
			`Recovery: "HTTP Port 80" on app-01.example.com is OK, HTTP 200`},
		{"acknowledgement with duration", "flapjack",
			base("acknowledgement", "acknowledgement", func(a *schema.Alert) {
				a.Duration = i64p(2*3600 + 30*60)
				a.Summary = strp("ada: fixing it")
			}),
			`Acknowledgement: "HTTP Port 80" on app-01.example.com has been acknowledged, unscheduled maintenance created for 2 hours, 30 minutes, ada: fixing it`},
		{"acknowledgement without duration is 4 hours", "flapjack",
			base("acknowledgement", "acknowledgement", func(a *schema.Alert) { a.Summary = nil }),
			`Acknowledgement: "HTTP Port 80" on app-01.example.com has been acknowledged, unscheduled maintenance created for 4 hours`},
		{"test", "flapjack",
			base("test", "test_notifications", func(a *schema.Alert) {
				a.EventID = "app-01.example.com:test"
				a.Summary = strp("Testing notifications to all contacts interested in entity: app-01.example.com, check: test")
			}),
			`Test: "test" on app-01.example.com, Testing notifications to all contacts interested in entity: app-01.example.com, check: test`},
		{"check with colon and quotes", "flapjack", base("problem", "critical", func(a *schema.Alert) { a.EventID = `db:Disk "/var": usage` }),
			`Problem: flapjack: ACKID 8f4a2b1c, "Disk "/var": usage" on db is Critical, HTTP 500`},
		{"rollup problem with more than 10 ids", "flapjack",
			base("problem", "critical", rollup("problem", map[string]int{"critical": 12, "warning": 1})),
			"Problem summary: Critical: 12, Warning: 1 (Critical: " +
				"host-00.example.com:critical, host-01.example.com:critical, host-02.example.com:critical, " +
				"host-03.example.com:critical, host-04.example.com:critical, host-05.example.com:critical, " +
				"host-06.example.com:critical, host-07.example.com:critical, host-08.example.com:critical, " +
				"host-09.example.com:critical, ...; Warning: host-00.example.com:warning)"},
		{"rollup recovery", "flapjack",
			base("recovery", "ok", rollup("recovery", map[string]int{"unknown": 1, "warning": 2})),
			"Problem summaries finishing: Warning: 2, Unknown: 1 (Warning: host-00.example.com:warning, host-01.example.com:warning; Unknown: host-00.example.com:unknown)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := Text(tc.alert, tc.alias); got != tc.want {
				t.Errorf("Text =\n  %s\nwant\n  %s", got, tc.want)
			}
		})
	}
}
