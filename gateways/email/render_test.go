package email

import (
	"strings"
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/schema"
)

func str(s string) *string { return &s }
func num(n int64) *int64   { return &n }

// problem is a failing check's alert as the notifier queues it.
func problem() schema.Alert {
	return schema.Alert{Media: "email", Address: "ada@example.com", ID: "8f4a2b1c0d9e-1767607200.000000", ContactID: "ada",
		ContactFirstName: str("Ada"), ContactLastName: str("Lovelace"), EventID: "web-01:HTTP", EventHash: str("8f4a2b1c"),
		State: "critical", Summary: str("HTTP 500"), Details: str("upstream timed out\nafter 30s"), Time: num(1767607200),
		LastState: str("ok"), LastSummary: str("HTTP 200"), StateDuration: num(750), NotificationType: "problem", Tags: []string{}}
}

func rollup(kind string, threshold int, entries map[string]schema.RollupEntry) schema.Alert {
	a := problem()
	a.Rollup, a.RollupThreshold, a.RollupAlerts = &kind, &threshold, entries
	return a
}

var berlin = func() *time.Location {
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		panic(err)
	}
	return loc
}()

func TestBuiltInSubjects(t *testing.T) {
	two := map[string]schema.RollupEntry{"web-01:HTTP": {Duration: 600, State: "critical"}, "db-01:Disk": {Duration: 60, State: "warning"}}
	tests := []struct {
		name string
		edit func(*schema.Alert)
		want string
	}{
		{"problem", func(*schema.Alert) {}, "Problem: 'HTTP' on web-01 is Critical"},
		{"recovery", func(a *schema.Alert) { a.NotificationType, a.State = "recovery", "ok" }, "Recovery: 'HTTP' on web-01 is OK"},
		{"acknowledgement has no state", func(a *schema.Alert) { a.NotificationType = "acknowledgement" }, "Acknowledgement: 'HTTP' on web-01"},
		{"test has no state", func(a *schema.Alert) { a.NotificationType, a.State = "test", "test_notifications" }, "Test: 'HTTP' on web-01"},
		{"warning", func(a *schema.Alert) { a.State = "warning" }, "Problem: 'HTTP' on web-01 is Warning"},
		{"check name with a colon", func(a *schema.Alert) { a.EventID = "web-01:Disk /var: usage" }, "Problem: 'Disk /var: usage' on web-01 is Critical"},
		{"id without entity", func(a *schema.Alert) { a.EventID = "lonely" }, "Problem: 'lonely' is Critical"},
		{"rollup problem", func(a *schema.Alert) { *a = rollup("problem", 2, two) }, "Problem summary: Critical: 1, Warning: 1"},
		{"rollup recovery", func(a *schema.Alert) { *a = rollup("recovery", 2, two) }, "Problem summaries finishing: Critical: 1, Warning: 1"},
		{"rollup recovery with nothing left", func(a *schema.Alert) { *a = rollup("recovery", 2, nil) }, "Problem summaries finishing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := problem()
			tt.edit(&a)
			if got := (renderer{}).render(a, berlin).Subject; got != tt.want {
				t.Errorf("subject %q, want %q", got, tt.want)
			}
		})
	}
}

// TestBuiltInAlertText pins the text body of docs/flapjack-1x.md 4.3: greeting, rows (Time in the
// contact's zone, Duration past 40 s, previous state and summary), the ACK hint, sign-off.
func TestBuiltInAlertText(t *testing.T) {
	got := (renderer{}).render(problem(), berlin).Text
	want := `Hi Ada,

Monitoring has detected the following:

Entity:           web-01
Check:            HTTP
State:            Critical
Summary:          HTTP 500
Details:          upstream timed out
                  after 30s
Time:             2026-01-05 11:00:00 CET
Duration:         12 minutes, 30 seconds
Previous State:   OK
Previous Summary: HTTP 200

To acknowledge it, send the Flapjack bot in Jabber: ACKID 8f4a2b1c <your comment>

Cheers,
Flapjack
`
	if got != want {
		t.Errorf("text body:\n%s\nwant:\n%s", got, want)
	}
}

func TestBuiltInAlertTextVariants(t *testing.T) {
	tests := []struct {
		name       string
		edit       func(*schema.Alert)
		has, lacks []string
	}{
		{"recovery: no ACK hint", func(a *schema.Alert) { a.NotificationType, a.State = "recovery", "ok" },
			[]string{"State:            OK"}, []string{"ACKID"}},
		{"acknowledgement: no ACK hint", func(a *schema.Alert) { a.NotificationType = "acknowledgement" }, nil, []string{"ACKID"}},
		{"no hash: no ACK hint", func(a *schema.Alert) { a.EventHash = nil }, nil, []string{"ACKID"}},
		{"40 s: no Duration", func(a *schema.Alert) { a.StateDuration = num(40) }, nil, []string{"Duration:"}},
		{"41 s: Duration", func(a *schema.Alert) { a.StateDuration = num(41) }, []string{"Duration:         41 seconds"}, nil},
		{"no first name: plain greeting", func(a *schema.Alert) { a.ContactFirstName = nil }, []string{"Hi,\n"}, []string{"Hi ,"}},
		{"no time, details, previous state", func(a *schema.Alert) { a.Time, a.Details, a.LastState, a.LastSummary = nil, nil, nil, nil },
			[]string{"Summary:          HTTP 500\nDuration:"}, []string{"Time:", "Details:", "Previous"}},
		{"UTC by default", func(*schema.Alert) {}, []string{"Time:             2026-01-05 10:00:00 UTC"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := problem()
			tt.edit(&a)
			loc := berlin
			if strings.HasPrefix(tt.name, "UTC") {
				loc = nil
			}
			got := (renderer{}).render(a, loc).Text
			for _, s := range tt.has {
				if !strings.Contains(got, s) {
					t.Errorf("text lacks %q:\n%s", s, got)
				}
			}
			for _, s := range tt.lacks {
				if strings.Contains(got, s) {
					t.Errorf("text has %q:\n%s", s, got)
				}
			}
		})
	}
}

// TestBuiltInHTMLEscapes: the HTML part is the same table, and what the alert carries is text,
// never markup.
func TestBuiltInHTMLEscapes(t *testing.T) {
	a := problem()
	a.Summary = str(`<script>alert("x")</script> & more`)
	got := (renderer{}).render(a, berlin).HTML
	for _, s := range []string{
		"<p>Hi Ada,</p>", "<tr><th>Entity</th><td>web-01</td></tr>", "<tr><th>State</th><td>Critical</td></tr>",
		"&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; more", "<tr><th>Time</th><td>2026-01-05 11:00:00 CET</td></tr>",
		"<code>ACKID 8f4a2b1c &lt;your comment&gt;</code>", "Flapjack</p>",
	} {
		if !strings.Contains(got, s) {
			t.Errorf("HTML lacks %q:\n%s", s, got)
		}
	}
	if strings.Contains(got, "<script>") {
		t.Errorf("summary markup reached the HTML:\n%s", got)
	}
}

// TestBuiltInRollup: "You have N alerting checks", one line per check, shortest failing first,
// then why (summary mode on, or ending); the HTML adds each check's summary.
func TestBuiltInRollup(t *testing.T) {
	entries := map[string]schema.RollupEntry{
		"web-01:HTTP":   {Duration: 3600, State: "critical", Summary: "HTTP 500"},
		"db-01:Disk":    {Duration: 60, State: "warning", Summary: "91% <full>"},
		"app-02:Memory": {Duration: 600, State: "unknown", Summary: "no data"},
	}
	c := (renderer{}).render(rollup("problem", 3, entries), berlin)
	want := `Hi Ada,

You have 3 alerting checks as follows:

  * Disk on db-01 is Warning (1 minute)
  * Memory on app-02 is Unknown (10 minutes)
  * HTTP on web-01 is Critical (1 hour)

Your email alerts are being summarised as your email summary threshold is set to 3. You will receive summary emails like this one until your number of alerting checks falls below 3.

Cheers,
Flapjack
`
	if c.Text != want {
		t.Errorf("rollup text:\n%s\nwant:\n%s", c.Text, want)
	}
	if !strings.Contains(c.HTML, "<tr><td>Disk</td><td>db-01</td><td>Warning</td><td>1 minute</td><td>91% &lt;full&gt;</td></tr>") {
		t.Errorf("rollup HTML row:\n%s", c.HTML)
	}
	one := map[string]schema.RollupEntry{"web-01:HTTP": {Duration: 3600, State: "critical"}}
	c = (renderer{}).render(rollup("recovery", 3, one), berlin)
	for _, s := range []string{"You have 1 alerting check as follows:", "  * HTTP on web-01 is Critical (1 hour)",
		"As your email summary threshold is 3, your email alerts are leaving summary mode now"} {
		if !strings.Contains(c.Text, s) {
			t.Errorf("rollup recovery text lacks %q:\n%s", s, c.Text)
		}
	}
	if !strings.Contains(c.HTML, "leaving summary mode now") {
		t.Errorf("rollup recovery HTML:\n%s", c.HTML)
	}
}

// TestBuiltInsAreTheFallback: Subject, Text and HTML are what an operator's template failing at
// render time falls back to.
func TestBuiltInsAreTheFallback(t *testing.T) {
	m := gateways.NewMessage(problem(), berlin)
	if Subject(m) == "" || !strings.Contains(Text(m), "Monitoring has detected") || !strings.Contains(HTML(m), "<table>") {
		t.Fatal("a built-in text is empty")
	}
}
