package receiver

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/flapjackgo/flapjack/schema"
	"go.uber.org/zap"
)

// sensu1 is a Sensu 1.x event as a pipe handler receives it (trimmed from a real one).
const sensu1 = `{
  "id": "ef6b87d2-1f89-439f-8bea-33881436ab90",
  "action": "create",
  "timestamp": 1700000100,
  "occurrences": 2,
  "check": {
    "type": "standard",
    "command": "check-http.rb -u http://localhost/health",
    "subscribers": ["web"],
    "interval": 60,
    "handlers": ["flapjack"],
    "total_state_change": 11,
    "history": ["0", "0", "2", "2"],
    "status": 2,
    "output": "CheckHttp CRITICAL: 500\nbody: Internal Server Error\nretry: no\n",
    "executed": 1700000095,
    "issued": 1700000090,
    "duration": 0.532,
    "name": "http_health",
    "tags": ["frontend"]
  },
  "client": {
    "timestamp": 1700000080,
    "version": "1.9.0",
    "socket": {"port": 3030, "bind": "127.0.0.1"},
    "subscriptions": ["web", "client:Web-01.example.com"],
    "environment": "production",
    "address": "10.0.0.11",
    "name": "Web-01.example.com"
  }
}`

// sensuGo is a Sensu Go event as a pipe handler receives it (trimmed from a real one).
const sensuGo = `{
  "timestamp": 1700000200,
  "entity": {
    "entity_class": "agent",
    "system": {"hostname": "db-01", "os": "linux", "platform": "debian"},
    "subscriptions": ["linux", "entity:db-01"],
    "last_seen": 1700000190,
    "metadata": {"name": "db-01", "namespace": "default"}
  },
  "check": {
    "command": "check-disk-usage -w 85 -c 95",
    "handlers": ["flapjack"],
    "interval": 60,
    "subscriptions": ["linux"],
    "duration": 0.012,
    "executed": 1700000199,
    "history": [{"status": 0, "executed": 1700000139}, {"status": 1, "executed": 1700000199}],
    "issued": 1700000199,
    "output": "disk-usage WARNING: / is 88% full\n",
    "state": "failing",
    "status": 1,
    "total_state_change": 7,
    "occurrences": 1,
    "metadata": {"name": "disk-usage", "namespace": "default"}
  },
  "metadata": {"namespace": "default"},
  "id": "3a5948f3-6ffd-4ea2-a41e-334f4a72ca2f",
  "sequence": 12
}`

func TestParseSensuEvent(t *testing.T) {
	t.Parallel()
	// s1 builds a small Sensu 1.x event around a check body.
	s1 := func(check string) string { return `{"client":{"name":"web-01"},"check":` + check + `}` }
	sgo := func(check string) string { return `{"entity":{"metadata":{"name":"web-01"}},"check":` + check + `}` }
	ev := func(state string, time int64, summary, details string) schema.Event {
		e := schema.Event{Entity: "web-01", Check: "c", Type: "service", State: state, Summary: summary, Details: details}
		if time != 0 {
			e.Time, e.HasTime = time, true
		}
		return e
	}
	tests := []struct {
		name    string
		in      string
		want    schema.Event
		reasons []string
	}{
		{
			name: "Sensu 1.x",
			in:   sensu1,
			want: schema.Event{Entity: "web-01.example.com", Check: "http_health", Type: "service", State: "critical",
				Summary: "CheckHttp CRITICAL: 500", Details: "body: Internal Server Error\nretry: no", Time: 1700000095, HasTime: true},
		},
		{
			name: "Sensu Go",
			in:   sensuGo,
			want: schema.Event{Entity: "db-01", Check: "disk-usage", Type: "service", State: "warning",
				Summary: "disk-usage WARNING: / is 88% full", Time: 1700000199, HasTime: true},
		},
		{name: "status 0 is ok", in: s1(`{"name":"c","status":0,"output":"fine"}`), want: ev("ok", 0, "fine", "")},
		{name: "status 1 is warning", in: s1(`{"name":"c","status":1}`), want: ev("warning", 0, "", "")},
		{name: "status 2 is critical", in: sgo(`{"metadata":{"name":"c"},"status":2}`), want: ev("critical", 0, "", "")},
		{name: "status 3 is unknown", in: s1(`{"name":"c","status":3}`), want: ev("unknown", 0, "", "")},
		{name: "status 127 is unknown", in: s1(`{"name":"c","status":127}`), want: ev("unknown", 0, "", "")},
		{name: "negative status is unknown", in: s1(`{"name":"c","status":-1}`), want: ev("unknown", 0, "", "")},
		{name: "resolve action: state still from status", in: `{"action":"resolve","client":{"name":"web-01"},"check":{"name":"c","status":0}}`, want: ev("ok", 0, "", "")},
		{name: "issued when executed is missing", in: s1(`{"name":"c","status":0,"issued":1700000001}`), want: ev("ok", 1700000001, "", "")},
		{name: "issued when executed is 0", in: s1(`{"name":"c","status":0,"executed":0,"issued":1700000001}`), want: ev("ok", 1700000001, "", "")},
		{name: "no time when both are 0", in: s1(`{"name":"c","status":0,"executed":0,"issued":0}`), want: ev("ok", 0, "", "")},
		{name: "CRLF output, blank first line", in: s1(`{"name":"c","status":2,"output":"\r\nsecond\r\nthird"}`), want: ev("critical", 0, "", "second\r\nthird")},
		{
			name: "flapjack_tags become tags; check tags and subscriptions do not",
			in:   `{"client":{"name":"web-01","subscriptions":["web"]},"check":{"name":"c","status":0,"tags":["x"],"flapjack_tags":["team-web","Tier 1"]}}`,
			want: schema.Event{Entity: "web-01", Check: "c", Type: "service", State: "ok", Tags: []string{"team-web", "Tier 1"}},
		},
		{
			name: "check.duration is not an acknowledgement duration",
			in:   s1(`{"name":"c","status":0,"duration":12.5}`),
			want: ev("ok", 0, "", ""),
		},
		{
			name: "check name in both places: check.name wins",
			in:   sgo(`{"name":"c","metadata":{"name":"other"},"status":0}`),
			want: ev("ok", 0, "", ""),
		},
		{name: "not an object", in: `["x"]`, reasons: []string{"sensu event must be a JSON object"}},
		{name: "not JSON", in: `{"client":`, reasons: []string{"sensu event is not valid JSON: unexpected end of JSON input"}},
		{name: "invalid UTF-8", in: "{\"client\":{\"name\":\"\xff\"}}", reasons: []string{"sensu event is not valid UTF-8"}},
		{
			name:    "neither client nor entity, no check",
			in:      `{"action":"create"}`,
			reasons: []string{"sensu event has neither client (Sensu 1.x) nor entity (Sensu Go)", "sensu event has no check"},
		},
		{name: "client without name", in: `{"client":{"address":"10.0.0.1"},"check":{"name":"c","status":0}}`, reasons: []string{"client.name is required"}},
		{name: "client is not an object", in: `{"client":"web-01","check":{"name":"c","status":0}}`, reasons: []string{"client must be a JSON object"}},
		{name: "entity without metadata", in: `{"entity":{"name":"web-01"},"check":{"name":"c","status":0}}`, reasons: []string{"entity.metadata.name is required"}},
		{name: "empty entity name", in: `{"entity":{"metadata":{"name":" "}},"check":{"name":"c","status":0}}`, reasons: []string{"entity.metadata.name must not be empty"}},
		{name: "entity name not a string", in: `{"entity":{"metadata":{"name":7}},"check":{"name":"c","status":0}}`, reasons: []string{"entity.metadata.name must be a string"}},
		{name: "check not an object", in: `{"client":{"name":"web-01"},"check":[]}`, reasons: []string{"check must be a JSON object"}},
		{name: "check without a name", in: s1(`{"status":0}`), reasons: []string{"check.name (Sensu 1.x) or check.metadata.name (Sensu Go) is required"}},
		{name: "check metadata without a name", in: sgo(`{"metadata":{"namespace":"default"},"status":0}`), reasons: []string{"check.metadata.name is required"}},
		{name: "check name not a string", in: s1(`{"name":["c"],"status":0}`), reasons: []string{"check.name must be a string"}},
		{
			name:    "every check problem is reported",
			in:      s1(`{"name":"c","status":"2","output":5,"executed":1.7e9,"flapjack_tags":"web"}`),
			reasons: []string{`check.status must be an integer, got "2"`, "check.output must be a string", "check.executed must be an integer Unix time, got 1.7e9", "check.flapjack_tags must be an array of strings"},
		},
		{name: "status missing", in: s1(`{"name":"c"}`), reasons: []string{"check.status is required"}},
		{name: "float status", in: s1(`{"name":"c","status":1.5}`), reasons: []string{"check.status must be an integer, got 1.5"}},
		{
			name:    "the converted event is validated by schema",
			in:      `{"client":{"name":"web:01"},"check":{"name":"c","status":0,"executed":-5}}`,
			reasons: []string{"time must not be negative, got -5", "entity must not contain ':' (it separates entity and check in check ids)"},
		},
		{
			name:    "converted event over the event size limit",
			in:      s1(`{"name":"c","status":2,"output":"` + strings.Repeat("o", schema.MaxEventBytes) + `"}`),
			reasons: []string{"event is 65629 bytes, over the 65536-byte limit"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseSensuEvent([]byte(tc.in))
			if tc.reasons == nil {
				if err != nil {
					t.Fatalf("rejected: %v", err)
				}
				if !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("\n got %+v\nwant %+v", got, tc.want)
				}
				return
			}
			var rej *schema.RejectError
			if !errors.As(err, &rej) {
				t.Fatalf("got %v (event %+v), want a *schema.RejectError", err, got)
			}
			if !reflect.DeepEqual(rej.Reasons, tc.reasons) {
				t.Fatalf("reasons\n got %q\nwant %q", rej.Reasons, tc.reasons)
			}
		})
	}
}

func TestRunJSONSensu(t *testing.T) {
	t.Parallel()
	bad := `{"client":{"name":"web-01"},"check":{"name":"c"}}`
	// Larger than a Flapjack event may be, but a fine Sensu event once converted.
	padded := `{"client":{"name":"web-01","notes":"` + strings.Repeat("n", schema.MaxEventBytes) + `"},"check":{"name":"c","status":0,"executed":1700000300}}`
	input := sensu1 + "\n" + bad + "\n" + sensuGo + "\n" + padded + "\n"
	enq := &memEnqueuer{}
	var rej rejections
	rep, err := RunJSON(context.Background(), strings.NewReader(input), JSONOptions{Sensu: true, OnReject: rej.add}, enq, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	if want := (Report{Records: 4, Enqueued: 3, Rejected: 1}); rep != want {
		t.Errorf("report %+v, want %+v", rep, want)
	}
	events := enq.parsed(t)
	if len(events) != 3 || events[0].Check != "http_health" || events[1].Check != "disk-usage" || events[2].Time != 1700000300 {
		t.Errorf("events %+v", events)
	}
	assertRejections(t, rej.get(), []Rejection{{Record: 2, Line: 32, Input: bad, Reasons: []string{"check.status is required"}}})
}

// sensuGoFixtures are events a real Sensu Go 6.12.0 backend handed its pipe and TCP handlers
// (byte for byte the same on both); testdata/README.md says how they were recorded.
var sensuGoFixtures = []struct {
	file string
	want schema.Event
}{
	{"sensu-go-ok.json", schema.Event{Entity: "web-01", Check: "http", Type: "service", State: "ok",
		Summary: "HTTP OK: 200 in 0.01s", Perfdata: "time=0.010s;1;2;0", Time: 1795591560, HasTime: true}},
	{"sensu-go-warning.json", schema.Event{Entity: "web-01", Check: "disk", Type: "service", State: "warning",
		Summary: "DISK WARNING - / is 88% full", Details: "second line", Perfdata: "used=88%;85;95", Time: 1795591558, HasTime: true}},
	{"sensu-go-critical.json", schema.Event{Entity: "db-01", Check: "postgres", Type: "service", State: "critical",
		Summary: "CRITICAL - connection refused", Time: 1795591561, HasTime: true}},
	{"sensu-go-unknown.json", schema.Event{Entity: "db-01", Check: "backup", Type: "service", State: "unknown",
		Summary: "UNKNOWN - no state file", Time: 1795591561, HasTime: true}},
	{"sensu-go-labels.json", schema.Event{Entity: "web-02", Check: "load", Type: "service", State: "ok",
		Summary: "load average: 0.10, 0.20, 0.30", Time: 1795591560, HasTime: true, Tags: []string{"team-web", "tier-1", "load"}}},
	{"sensu-go-annotations.json", schema.Event{Entity: "web-05", Check: "ntp", Type: "service", State: "warning",
		Summary: "NTP WARNING: offset 0.8s", Time: 1795591559, HasTime: true, Tags: []string{"team-web", "Tier 1", "time"}}},
	{"sensu-go-metrics.json", schema.Event{Entity: "web-03", Check: "cpu-metrics", Type: "service", State: "ok",
		Summary: "cpu.user 12.5 1700000070", Details: "cpu.system 3 1700000070", Perfdata: "cpu.user=12.5 cpu.system=3",
		Time: 1795591558, HasTime: true}},
	{"sensu-go-keepalive.json", schema.Event{Entity: "web-04", Check: "keepalive", Type: "service", State: "warning",
		Summary: "No keepalive sent from web-04 for 6 seconds (>= 5)", Time: 1795591576, HasTime: true}},
}

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseSensuGoFixtures(t *testing.T) {
	t.Parallel()
	for _, f := range sensuGoFixtures {
		got, err := ParseSensuEvent(readFixture(t, f.file))
		if err != nil {
			t.Errorf("%s: %v", f.file, err)
			continue
		}
		if !reflect.DeepEqual(got, f.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", f.file, got, f.want)
		}
	}
}

func TestParseSensuTagsAndPerfdata(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		in       string
		tags     []string
		perfdata string
		summary  string
		reasons  []string
	}{
		{
			name:    "1.x attribute, Sensu Go labels and annotations together, without repeats",
			in:      `{"entity":{"metadata":{"name":"h","labels":{"flapjack_tags":"a, b,,"},"annotations":{"flapjack_tags":"[\"b\",\"c\"]"}}},"check":{"name":"c","status":0,"flapjack_tags":["z","a"],"metadata":{"labels":{"flapjack_tags":"d"}}}}`,
			tags:    []string{"z", "a", "b", "d", "c"},
			summary: "",
		},
		{
			name:     "output perfdata then metric points",
			in:       `{"entity":{"metadata":{"name":"h"}},"check":{"metadata":{"name":"c"},"status":0,"output":"OK - fine|used=40%;80;90\nmore|not=perfdata"},"metrics":{"points":[{"name":"my metric","value":1.5,"timestamp":1},{"name":"x","value":-2e-3}]}}`,
			perfdata: "used=40%;80;90 'my metric'=1.5 x=-0.002",
			summary:  "OK - fine",
		},
		{
			name:    "annotation that is not a JSON list",
			in:      `{"entity":{"metadata":{"name":"h"}},"check":{"metadata":{"name":"c","annotations":{"flapjack_tags":"a,b"}},"status":0}}`,
			reasons: []string{`check.metadata.annotations.flapjack_tags must be a JSON array of strings, got "a,b"`},
		},
		{
			name:    "metrics that are not points",
			in:      `{"entity":{"metadata":{"name":"h"}},"check":{"metadata":{"name":"c"},"status":0},"metrics":{"points":"x"}}`,
			reasons: []string{"metrics.points must be an array of {name, value} objects"},
		},
	}
	for _, tc := range tests {
		got, err := ParseSensuEvent([]byte(tc.in))
		if tc.reasons != nil {
			var rej *schema.RejectError
			if !errors.As(err, &rej) || !reflect.DeepEqual(rej.Reasons, tc.reasons) {
				t.Errorf("%s: got %v, want reasons %q", tc.name, err, tc.reasons)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !reflect.DeepEqual(got.Tags, tc.tags) || got.Perfdata != tc.perfdata || got.Summary != tc.summary {
			t.Errorf("%s: tags %q perfdata %q summary %q, want %q %q %q", tc.name, got.Tags, got.Perfdata, got.Summary, tc.tags, tc.perfdata, tc.summary)
		}
	}
}
