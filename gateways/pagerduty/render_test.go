package pagerduty

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/flapjackgo/flapjack/schema"
)

func ptr[T any](v T) *T { return &v }

// alert is a PagerDuty alert for web-01:HTTP of the given type and state.
func alert(typ, state, summary string) schema.Alert {
	id := "web-01:HTTP"
	hash := schema.AckHash(id)
	a := schema.Alert{Media: Medium, Address: routingKey, ID: "c1-1772366400.000001", ContactID: "c1",
		EventID: id, EventHash: &hash, State: state, NotificationType: typ, EventCount: 7,
		Time: ptr(t0.Unix()), StateDuration: ptr(int64(90))}
	if summary != "" {
		a.Summary = &summary
	}
	return a
}

func TestSummaryActionSeverity(t *testing.T) {
	t.Parallel()
	rollup := alert("problem", "critical", "HTTP 500")
	rollup.Rollup = ptr(schema.RollupProblem)
	rollup.RollupAlerts = map[string]schema.RollupEntry{"a:b": {Duration: 1, State: "critical"}}
	tests := []struct {
		name     string
		a        schema.Alert
		summary  string
		action   string
		severity string
	}{
		{"critical problem", alert("problem", "critical", "HTTP 500"), `Problem: "HTTP" on web-01 is Critical, HTTP 500`, "trigger", "critical"},
		{"warning problem", alert("problem", "warning", ""), `Problem: "HTTP" on web-01 is Warning`, "trigger", "warning"},
		{"unknown problem", alert("problem", "unknown", "timeout"), `Problem: "HTTP" on web-01 is Unknown, timeout`, "trigger", "error"},
		{"test", alert("test", "test_notifications", "Testing"), `Test: "HTTP" on web-01, Testing`, "trigger", "info"},
		{"recovery", alert("recovery", "ok", "HTTP 200"), `Recovery: "HTTP" on web-01 is OK, HTTP 200`, "resolve", "error"},
		{"acknowledgement", alert("acknowledgement", "critical", "ada: on it"),
			`Acknowledgement: "HTTP" on web-01 has been acknowledged, unscheduled maintenance created for 4 hours, ada: on it`, "acknowledge", "critical"},
		// PagerDuty is never rolled up: rollup fields are ignored.
		{"rollup ignored", rollup, `Problem: "HTTP" on web-01 is Critical, HTTP 500`, "trigger", "critical"},
		{"unknown type", alert("shutdown", "ok", ""), `Shutdown: "HTTP" on web-01 is OK`, "", "error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Summary(tt.a); got != tt.summary {
				t.Errorf("Summary() = %q\nwant        %q", got, tt.summary)
			}
			if got := Action(tt.a); got != tt.action {
				t.Errorf("Action() = %q, want %q", got, tt.action)
			}
			if got := Severity(tt.a); got != tt.severity {
				t.Errorf("Severity() = %q, want %q", got, tt.severity)
			}
		})
	}
}

func TestSummaryIsCapped(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 3000)
	got := Summary(alert("problem", "critical", long))
	if n := utf8.RuneCountInString(got); n != MaxSummaryLength {
		t.Fatalf("summary has %d characters, want %d", n, MaxSummaryLength)
	}
	if !utf8.ValidString(got) || !strings.HasSuffix(got, "...") || !strings.HasPrefix(got, `Problem: "HTTP" on web-01 is Critical, éé`) {
		t.Fatalf("summary cut badly: %q...", got[:60])
	}
	short := `Problem: "HTTP" on web-01 is Critical, ok`
	if got := Summary(alert("problem", "critical", "ok")); got != short {
		t.Fatalf("short summary changed: %q", got)
	}
}

func TestErrorMessage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body, want string
	}{
		{"events API", `{"status":"invalid event","message":"Event object is invalid","errors":["Length of 'routing_key' is incorrect (should be 32 characters)"]}`,
			"Event object is invalid: Length of 'routing_key' is incorrect (should be 32 characters)"},
		{"REST API", `{"error":{"message":"Invalid Input Provided","code":2001,"errors":["Offset must be a number"]}}`,
			"Invalid Input Provided (code 2001): Offset must be a number"},
		{"html", "<html>\n<body>Bad Gateway</body>\n</html>", "<html> <body>Bad Gateway</body> </html>"},
		{"empty", "", "no explanation in the response"},
		{"echoes a secret", `{"message":"unknown key ` + routingKey + `"}`, "unknown key …cdef"},
	}
	for _, tt := range tests {
		if got := errorMessage([]byte(tt.body), routingKey); got != tt.want {
			t.Errorf("%s: errorMessage() = %q, want %q", tt.name, got, tt.want)
		}
	}
}
