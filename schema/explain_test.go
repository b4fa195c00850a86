package schema

import (
	"encoding/json"
	"testing"
)

func TestExplainAppendJSONIsEncodingJSON(t *testing.T) {
	for _, e := range []ExplainEntry{
		{Time: 1, Stage: ExplainExecutive, Type: "service", State: "critical", Verdict: "blocked", Filter: "delays", Reason: "failing for 3 s"},
		{Time: 2, Stage: ExplainExecutive, Type: "action", State: "acknowledgement", Verdict: "notified", Notification: "acknowledgement", Severity: "critical"},
		{Time: 3, Stage: ExplainExecutive, Type: "service", Verdict: "blocked", Reason: "quote \" <tag> & é \n", Until: 99},
		{Time: 4, Stage: ExplainNotifier, Type: "problem", Verdict: "routed", Contacts: []ExplainContact{{ID: "a", Media: []ExplainMedium{{Medium: "sms", Alerted: true}}}}},
	} {
		want, _ := json.Marshal(e)
		if got := e.AppendJSON(nil); string(got) != string(want) {
			t.Errorf("\n got %s\nwant %s", got, want)
		}
	}
}
