package notifier

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/schema"
)

// TestDecideAlerts decides on contacts and candidates as routing leaves them, without Redis:
// the changes to contacts' notification state and the deliveries are plain values.
func TestDecideAlerts(t *testing.T) {
	now := time.Unix(1767607200, 0)
	at := now.Unix()
	const check = "web-01:HTTP"
	problemField := schema.DropField("email", check, schema.StateCritical)
	type want struct {
		changes roster.AlertChanges // Deliveries compared by queue and alert media only
		queues  []string
		skipped []string // reasons
		until   map[string]int64
	}
	cases := []struct {
		name       string
		ntype      string
		suppressed map[string]int64 // the contact's SuppressedUntil as read
		rollup     int64            // email's rollup threshold (0: none)
		members    []string         // email's alerting set as read
		throttled  bool
		held       bool // the candidate is suppressed by its interval
		noQueue    bool
		want       want
	}{
		{
			name: "problem: alerted, interval started, check added to the alerting set", ntype: schema.NotificationProblem,
			want: want{
				changes: roster.AlertChanges{
					Read:     []roster.StateRead{{ContactID: "c1", Revision: 7}},
					Alerting: []roster.AlertingChange{{ContactID: "c1", Medium: "email", Add: check, At: at}},
					Started:  []roster.Suppression{{ContactID: "c1", Field: problemField, Until: at + 300, TTL: 300}},
				},
				queues: []string{"email_notifications"},
				until:  map[string]int64{problemField: at + 300},
			},
		},
		{
			name: "problem held back by its interval: nothing queued, nothing started", ntype: schema.NotificationProblem,
			suppressed: map[string]int64{problemField: at + 60}, held: true,
			want: want{
				changes: roster.AlertChanges{Read: []roster.StateRead{{ContactID: "c1", Revision: 7}}},
				skipped: []string{"interval: a drop_alerts_for_contact key suppresses this medium"},
				until:   map[string]int64{problemField: at + 60},
			},
		},
		{
			name: "recovery: intervals reset, check leaves the alerting set, expired suppressions forgotten", ntype: schema.NotificationRecovery,
			suppressed: map[string]int64{problemField: at + 60, "drop:email:db-01:PING:warning": at - 1, "drop:email:db-02:PING:warning": at + 1},
			want: want{
				changes: roster.AlertChanges{
					Read:     []roster.StateRead{{ContactID: "c1", Revision: 7}},
					Alerting: []roster.AlertingChange{{ContactID: "c1", Medium: "email", Remove: []string{check}}},
					Ended: []roster.Suppression{{ContactID: "c1", Field: problemField},
						{ContactID: "c1", Field: "drop:email:db-01:PING:warning"}},
				},
				queues: []string{"email_notifications"},
				until:  map[string]int64{"drop:email:db-02:PING:warning": at + 1},
			},
		},
		{
			name: "medium without a queue: skipped, nothing queued", ntype: schema.NotificationProblem, noQueue: true,
			want: want{
				changes: roster.AlertChanges{
					Read:     []roster.StateRead{{ContactID: "c1", Revision: 7}},
					Alerting: []roster.AlertingChange{{ContactID: "c1", Medium: "email", Add: check, At: at}},
				},
				skipped: []string{"no queue configured for this medium (notifier.email_queue)"},
				until:   map[string]int64{},
			},
		},
		{
			name: "rollup reached: a summary, the throttle started", ntype: schema.NotificationProblem,
			rollup: 2, members: []string{"db-01:PING"},
			want: want{
				changes: roster.AlertChanges{
					Read:     []roster.StateRead{{ContactID: "c1", Revision: 7}},
					Alerting: []roster.AlertingChange{{ContactID: "c1", Medium: "email", Add: check, At: at}},
					Started:  []roster.Suppression{{ContactID: "c1", Field: schema.RollupDropField("email"), Until: at + 300, TTL: 300}, {ContactID: "c1", Field: problemField, Until: at + 300, TTL: 300}},
				},
				queues: []string{"email_notifications"},
				until:  map[string]int64{schema.RollupDropField("email"): at + 300, problemField: at + 300},
			},
		},
		{
			name: "rollup throttled: dropped, the check still joins the set", ntype: schema.NotificationProblem,
			rollup: 2, members: []string{"db-01:PING"}, throttled: true,
			want: want{
				changes: roster.AlertChanges{
					Read:     []roster.StateRead{{ContactID: "c1", Revision: 7}},
					Alerting: []roster.AlertingChange{{ContactID: "c1", Medium: "email", Add: check, At: at}},
				},
				skipped: []string{"rollup: 2 checks alerting (threshold 2) and a summary was sent within the interval"},
				until:   map[string]int64{},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			if !tc.noQueue {
				cfg.MediaQueues = map[string]string{"email": "email_notifications"}
			}
			nt := New(Options{Keys: schema.NewKeys(""), Config: cfg})
			suppressed := map[string]int64{}
			for k, v := range tc.suppressed {
				suppressed[k] = v
			}
			contacts := []roster.Contact{{ID: "c1", Media: map[string]string{"email": "ada@example.com"},
				Intervals: map[string]int64{"email": 300}, Revision: 7, SuppressedUntil: suppressed}}
			c := &candidate{contact: &contacts[0], medium: "email", address: "ada@example.com", interval: 300,
				suppressed: tc.held, throttled: tc.throttled}
			if tc.rollup > 0 {
				contacts[0].RollupThresholds = map[string]int64{"email": tc.rollup}
				c.alerting = &alertingState{threshold: tc.rollup, members: tc.members}
			}
			p := &plan{notification: &schema.Notification{EventID: check, Type: tc.ntype, State: schema.StateCritical, Severity: "critical"}}
			got := nt.decideAlerts(p, contacts, []*candidate{c}, now)

			var queues []string
			for _, d := range got.Deliveries {
				queues = append(queues, d.Queue)
				var a schema.Alert
				if err := json.Unmarshal(d.Payload, &a); err != nil || a.Media != "email" || a.Address != "ada@example.com" || a.EventID != check {
					t.Errorf("delivery payload %s (%v) is not the alert to ada on email", d.Payload, err)
				}
			}
			got.Deliveries = nil
			if !reflect.DeepEqual(withoutEmpty(got), tc.want.changes) {
				t.Errorf("changes\n got %+v\nwant %+v", got, tc.want.changes)
			}
			if !reflect.DeepEqual(queues, tc.want.queues) || len(p.alerts) != len(tc.want.queues) {
				t.Errorf("queued on %v (%d alerts), want %v", queues, len(p.alerts), tc.want.queues)
			}
			var skipped []string
			for _, s := range p.skipped {
				skipped = append(skipped, s.reason)
			}
			if !reflect.DeepEqual(skipped, tc.want.skipped) {
				t.Errorf("skipped %q, want %q", skipped, tc.want.skipped)
			}
			if !reflect.DeepEqual(contacts[0].SuppressedUntil, tc.want.until) {
				t.Errorf("the contact's view of its suppressions is %v, want %v", contacts[0].SuppressedUntil, tc.want.until)
			}
		})
	}
}

// withoutEmpty is c with its empty lists nil, as the cases write them.
func withoutEmpty(c roster.AlertChanges) roster.AlertChanges {
	if len(c.Read) == 0 {
		c.Read = nil
	}
	if len(c.Alerting) == 0 {
		c.Alerting = nil
	}
	if len(c.Started) == 0 {
		c.Started = nil
	}
	if len(c.Ended) == 0 {
		c.Ended = nil
	}
	if len(c.Deliveries) == 0 {
		c.Deliveries = nil
	}
	return c
}
