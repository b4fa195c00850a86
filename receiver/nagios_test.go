package receiver

import (
	"bytes"
	"context"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/flapjackgo/flapjack/internal/text"
	"github.com/flapjackgo/flapjack/schema"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

const fixture = "testdata/nagios-perfdata.txt"

// tabs joins Nagios fields.
func tabs(fields ...string) string { return strings.Join(fields, "\t") }

func TestParseNagiosLine(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", MaxLineBytes)
	tests := []struct {
		name    string
		line    string
		want    schema.Event
		reasons []string // nil: the line must be accepted
	}{
		{
			name: "service line with trailing empty long output",
			line: tabs("[SERVICEPERFDATA]", "1700000000", "web-01", "HTTP", "OK", "0.01", "0.1", "HTTP OK", "time=0.01s;;;0", ""),
			want: svc("web-01", "HTTP", "ok", 1700000000, "HTTP OK", "", "time=0.01s;;;0"),
		},
		{
			name: "nine fields, no long output",
			line: tabs("[SERVICEPERFDATA]", "1700000000", "web-01", "HTTP", "WARNING", "0.01", "0.1", "slow", "time=3s"),
			want: svc("web-01", "HTTP", "warning", 1700000000, "slow", "", "time=3s"),
		},
		{
			name: "host line: check is HOST whatever the template wrote",
			line: tabs("[HOSTPERFDATA]", "1700000000", "Router-1", "ping", "DOWN", "0.01", "0.1", "CRITICAL - down", "pl=100%", ""),
			want: svc("router-1", "HOST", "critical", 1700000000, "CRITICAL - down", "", "pl=100%"),
		},
		{
			name: "UP is ok, any case",
			line: tabs("[HOSTPERFDATA]", "1700000000", "router-1", "HOST", "uP", "0.01", "0.1", "PING OK", "", ""),
			want: svc("router-1", "HOST", "ok", 1700000000, "PING OK", "", ""),
		},
		{
			name: "down is critical, any case",
			line: tabs("[HOSTPERFDATA]", "1700000000", "router-1", "HOST", "Down", "0.01", "0.1", "PING CRITICAL", "", ""),
			want: svc("router-1", "HOST", "critical", 1700000000, "PING CRITICAL", "", ""),
		},
		{
			name: "long output: literal \\n becomes a newline, tabs inside are kept",
			line: tabs("[SERVICEPERFDATA]", "1700000000", "db-01", "MySQL: lag", "CRITICAL", "0.1", "0.1", "lag 412s", "lag=412s;60;300", `line one\nline`, `two`),
			want: svc("db-01", "MySQL: lag", "critical", 1700000000, "lag 412s", "line one\nline\ttwo", "lag=412s;60;300"),
		},
		{
			name: "CRLF line ending is ignored",
			line: tabs("[SERVICEPERFDATA]", "1700000000", "web-01", "HTTP", "OK", "0.01", "0.1", "HTTP OK", "time=1s") + "\r\n",
			want: svc("web-01", "HTTP", "ok", 1700000000, "HTTP OK", "", "time=1s"),
		},
		{
			name: "summary and perfdata are trimmed as by the executive",
			line: tabs("[SERVICEPERFDATA]", "0", "web-01", "HTTP", "unknown", "", "", "  spaced  ", " ", ""),
			want: svc("web-01", "HTTP", "unknown", 0, "spaced", "", ""),
		},
		{name: "blank", line: "", reasons: []string{"blank line"}},
		{name: "only whitespace", line: " \t \r\n", reasons: []string{"blank line"}},
		{
			name:    "too few fields",
			line:    tabs("[SERVICEPERFDATA]", "1700000000", "web-01", "HTTP", "OK", "0.01", "0.1", "HTTP OK"),
			reasons: []string{"line has 8 tab-separated fields, need at least 9"},
		},
		{
			name:    "non-numeric timestamp",
			line:    tabs("[SERVICEPERFDATA]", "17e8", "web-01", "HTTP", "OK", "0.01", "0.1", "HTTP OK", ""),
			reasons: []string{`timestamp "17e8" is not a string of digits`},
		},
		{
			name:    "negative timestamp",
			line:    tabs("[SERVICEPERFDATA]", "-1", "web-01", "HTTP", "OK", "0.01", "0.1", "HTTP OK", ""),
			reasons: []string{`timestamp "-1" is not a string of digits`},
		},
		{
			name:    "timestamp out of range",
			line:    tabs("[SERVICEPERFDATA]", "99999999999999999999", "web-01", "HTTP", "OK", "0.01", "0.1", "HTTP OK", ""),
			reasons: []string{`timestamp "99999999999999999999" is out of range`},
		},
		{
			name: "bad marker and bad timestamp are both reported",
			line: tabs("PROCESS_SERVICE_CHECK_RESULT", "", "web-01", "HTTP", "OK", "0.01", "0.1", "HTTP OK", ""),
			reasons: []string{
				`first field "PROCESS_SERVICE_CHECK_RESULT" is neither [SERVICEPERFDATA] nor [HOSTPERFDATA]`,
				`timestamp "" is not a string of digits`,
			},
		},
		{
			name:    "UNREACHABLE is refused by event validation",
			line:    tabs("[HOSTPERFDATA]", "1700000000", "router-1", "HOST", "UNREACHABLE", "0.01", "0.1", "unreachable", "", ""),
			reasons: []string{`state "unreachable" is not one of ok, warning, critical, unknown`},
		},
		{
			name:    "schema reasons are all reported",
			line:    tabs("[SERVICEPERFDATA]", "1700000000", "", "", "OK", "0.01", "0.1", "x", ""),
			reasons: []string{"entity must not be empty", "check must not be empty"},
		},
		{
			name:    "entity with a colon",
			line:    tabs("[SERVICEPERFDATA]", "1700000000", "web:01", "HTTP", "OK", "0.01", "0.1", "x", ""),
			reasons: []string{"entity must not contain ':' (it separates entity and check in check ids)"},
		},
		{
			name:    "invalid UTF-8",
			line:    tabs("[SERVICEPERFDATA]", "1700000000", "web-01", "HTTP", "OK", "0.01", "0.1", "bad \xff byte", ""),
			reasons: []string{"line is not valid UTF-8"},
		},
		{
			name:    "over 64 KiB",
			line:    tabs("[SERVICEPERFDATA]", "1700000000", "web-01", "HTTP", "OK", "0.01", "0.1", long, ""),
			reasons: []string{"line is 65590 bytes, over the 65536-byte limit"},
		},
		{
			name:    "under 64 KiB but over it once encoded as an event",
			line:    tabs("[SERVICEPERFDATA]", "1700000000", "web-01", "HTTP", "OK", "0.01", "0.1", strings.Repeat("<", 30000), ""),
			reasons: []string{"event is 180095 bytes, over the 65536-byte limit"}, // the event as queued
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseNagiosLine(tc.line)
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
				t.Fatalf("got error %v (event %+v), want a *schema.RejectError", err, got)
			}
			if !reflect.DeepEqual(rej.Reasons, tc.reasons) {
				t.Fatalf("reasons\n got %q\nwant %q", rej.Reasons, tc.reasons)
			}
		})
	}
}

// fixtureLines returns the fixture's lines, 1-based.
func fixtureLines(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{""}, strings.Split(string(b), "\n")...)
}

// fixtureEvents are the events of the fixture's good lines, in order.
var fixtureEvents = []schema.Event{
	svc("web-01.example.com", "HTTP", "ok", 1700000000,
		"HTTP OK: HTTP/1.1 200 OK - 5120 bytes in 0.011 second response time", "",
		"time=0.011256s;;;0.000000 size=5120B;;;0"),
	svc("db-01.example.com", "Disk /var", "warning", 1700000010,
		"DISK WARNING - free space: /var 1843 MB (9% inode=97%):", "",
		"/var=18632MB;16384;18432;0;20480"),
	svc("web-02.example.com", "HOST", "critical", 1700000020,
		"CRITICAL - Host Unreachable (10.0.0.12)", "",
		"rta=5000.000ms;3000.000;5000.000;0; pl=100%;80;100;0;"),
	svc("web-01.example.com", "HOST", "ok", 1700000030,
		"PING OK - Packet loss = 0%, RTA = 0.52 ms", "",
		"rta=0.520000ms;3000.000000;5000.000000;0.000000 pl=0%;80;100;0"),
	svc("db-01.example.com", "MySQL: replication lag", "critical", 1700000040,
		"CRITICAL - Slave is 412 seconds behind master",
		"Slave_IO_Running: Yes\nSlave_SQL_Running: Yes\nLast_Error: (none)",
		"lag=412s;60;300;0;"),
	svc("lb-01.example.com", "Load", "ok", 1700000050,
		"OK - load average: 0.15, 0.10, 0.05", "",
		"load1=0.150;5.000;10.000;0; load5=0.100;4.000;8.000;0; load15=0.050;3.000;6.000;0;"),
	svc("mail-01.example.com", "SMTP", "unknown", 1700000060,
		"UNKNOWN - connect to address 10.0.0.25 and port 25: Connection refused", "", ""),
	svc("mail-01.example.com", "HOST", "critical", 1700000070,
		"CRITICAL - Time to live exceeded (10.0.0.25)",
		"Traceroute:\n 1  10.0.0.1  0.412 ms\n 2  * * *", ""),
	svc("web-01.example.com", "HTTPS certificate", "warning", 1700000120,
		"SSL WARNING - Certificate 'web-01.example.com' expires in 12 day(s) (2023-11-26 12:00 +0000).", "",
		"days=12;14;7;0;"),
	svc("web-02.example.com", "HOST", "ok", 1700000130,
		"PING OK - Packet loss = 0%, RTA = 0.61 ms", "",
		"rta=0.610000ms;3000.000000;5000.000000;0.000000 pl=0%;80;100;0"),
}

// fixtureRejections are the fixture's bad lines: line number -> reasons.
var fixtureRejections = []struct {
	line    int
	reasons []string
}{
	{9, []string{"blank line"}},
	{10, []string{"line has 5 tab-separated fields, need at least 9"}},
	{11, []string{`timestamp "2023-11-14T22:14:40Z" is not a string of digits`}},
	{12, []string{`first field "[SERVICECHECK]" is neither [SERVICEPERFDATA] nor [HOSTPERFDATA]`}},
	{13, []string{`state "unreachable" is not one of ok, warning, critical, unknown`}},
	{14, []string{"entity must not be empty"}},
}

func wantFixtureRejections(t *testing.T, lineOffset int) []Rejection {
	lines := fixtureLines(t)
	var want []Rejection
	for _, r := range fixtureRejections {
		want = append(want, Rejection{Record: r.line + lineOffset, Line: r.line + lineOffset, Input: lines[r.line], Reasons: r.reasons})
	}
	return want
}

func TestReadNagiosFixture(t *testing.T) {
	t.Parallel()
	f, err := os.Open(fixture)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	core, logs := observer.New(zapcore.InfoLevel)
	enq := &memEnqueuer{}
	var rej rejections
	rep, err := ReadNagios(context.Background(), f, rej.add, enq, zap.New(core))
	if err != nil {
		t.Fatal(err)
	}
	if want := (Report{Records: 16, Enqueued: 10, Rejected: 6}); rep != want {
		t.Errorf("report %+v, want %+v", rep, want)
	}
	assertEvents(t, enq.parsed(t), fixtureEvents)
	assertRejections(t, rej.get(), wantFixtureRejections(t, 0))

	// The payload is exactly what schema.Event marshals to.
	want := `{"check":"HTTP","entity":"web-01.example.com","perfdata":"time=0.011256s;;;0.000000 size=5120B;;;0","state":"ok","summary":"HTTP OK: HTTP/1.1 200 OK - 5120 bytes in 0.011 second response time","time":1700000000,"type":"service"}`
	if got := string(enq.raw()[0]); got != want {
		t.Errorf("first payload\n got %s\nwant %s", got, want)
	}

	// One log line per rejected line, with its line number and reasons.
	logged := logs.FilterMessage("record rejected").All()
	if len(logged) != len(fixtureRejections) {
		t.Fatalf("%d rejection log lines, want %d", len(logged), len(fixtureRejections))
	}
	for i, entry := range logged {
		fields := entry.ContextMap()
		if fields["line"] != int64(fixtureRejections[i].line) {
			t.Errorf("log %d: line %v, want %d", i, fields["line"], fixtureRejections[i].line)
		}
		if reasons, _ := fields["reasons"].([]any); len(reasons) != len(fixtureRejections[i].reasons) || reasons[0] != fixtureRejections[i].reasons[0] {
			t.Errorf("log %d: reasons %v, want %q", i, fields["reasons"], fixtureRejections[i].reasons)
		}
	}
}

func TestReadNagiosOverlongLine(t *testing.T) {
	t.Parallel()
	good := tabs("[SERVICEPERFDATA]", "1700000000", "web-01", "HTTP", "OK", "0.01", "0.1", "HTTP OK", "", "")
	huge := tabs("[SERVICEPERFDATA]", "1700000000", "web-01", "HTTP", "OK", "0.01", "0.1", strings.Repeat("y", 3*MaxLineBytes), "", "")
	// A line of exactly MaxLineBytes (plus CRLF) is read whole and judged as an event, which is
	// then too big once encoded: the reason comes from validation, not from the line reader.
	atLimit := tabs("[SERVICEPERFDATA]", "1700000001", "web-01", "HTTP", "OK", "0.01", "0.1", "", "", "")
	atLimit += strings.Repeat("z", MaxLineBytes-len(atLimit))
	input := good + "\n" + huge + "\n" + atLimit + "\r\n" + good // the last line is unterminated

	enq := &memEnqueuer{}
	var rej rejections
	rep, err := ReadNagios(context.Background(), strings.NewReader(input), rej.add, enq, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	if want := (Report{Records: 4, Enqueued: 2, Rejected: 2}); rep != want {
		t.Errorf("report %+v, want %+v", rep, want)
	}
	want := []Rejection{
		{Record: 2, Line: 2, Input: huge[:MaxLineBytes], Reasons: []string{"line is 196663 bytes, over the 65536-byte limit"}},
		{Record: 3, Line: 3, Input: atLimit, Reasons: []string{"event is 65576 bytes, over the 65536-byte limit"}},
	}
	if got := rej.get(); !reflect.DeepEqual(got, want) {
		t.Errorf("rejections\n got %+v\nwant %+v", summarise(got), summarise(want))
	}
	ev := enq.parsed(t)
	assertEvents(t, ev, []schema.Event{
		svc("web-01", "HTTP", "ok", 1700000000, "HTTP OK", "", ""),
		svc("web-01", "HTTP", "ok", 1700000000, "HTTP OK", "", ""),
	})
}

func summarise(rs []Rejection) []Rejection {
	out := append([]Rejection(nil), rs...)
	for i := range out {
		out[i].Input = text.Truncate(out[i].Input, 60)
	}
	return out
}

func TestReadNagiosRetriesEnqueue(t *testing.T) {
	t.Parallel()
	line := tabs("[SERVICEPERFDATA]", "1700000000", "web-01", "HTTP", "OK", "0.01", "0.1", "HTTP OK", "", "")
	enq := &memEnqueuer{failN: 2}
	core, logs := observer.New(zapcore.InfoLevel)
	rep, err := ReadNagios(context.Background(), strings.NewReader(line+"\n"), nil, enq, zap.New(core))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Enqueued != 1 || enq.count() != 1 || enq.calls != 3 {
		t.Errorf("report %+v, %d events after %d calls; want 1 event after 3 calls", rep, enq.count(), enq.calls)
	}
	if n := logs.FilterMessage("enqueue failed; retrying").Len(); n != 2 {
		t.Errorf("%d retry log lines, want 2", n)
	}
}

func TestReadNagiosCancelledWhileRetrying(t *testing.T) {
	t.Parallel()
	line := tabs("[SERVICEPERFDATA]", "1700000000", "web-01", "HTTP", "OK", "0.01", "0.1", "HTTP OK", "", "")
	enq := &memEnqueuer{failN: 1 << 30}
	core, logs := observer.New(zapcore.InfoLevel)
	ctx, cancel := context.WithCancel(context.Background())
	enq2 := EnqueuerFunc(func(ctx context.Context, b []byte) error {
		cancel() // shutdown begins while the first attempt fails
		return enq.Enqueue(ctx, b)
	})
	rep, err := ReadNagios(ctx, strings.NewReader(line+"\n"+line+"\n"), nil, enq2, zap.New(core))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Enqueued != 0 || rep.Records != 1 {
		t.Errorf("report %+v, want 1 record read, none enqueued", rep)
	}
	lost := logs.FilterMessage("shutting down with an event not enqueued").All()
	if len(lost) != 1 || !bytes.Contains([]byte(lost[0].ContextMap()["event"].(string)), []byte(`"entity":"web-01"`)) {
		t.Errorf("the lost event is not logged: %+v", lost)
	}
}

// FuzzParseNagiosLine: no input panics, and whatever is accepted re-validates exactly as the
// executive will see it (the enqueued JSON parses back to the same event).
func FuzzParseNagiosLine(f *testing.F) {
	b, err := os.ReadFile(fixture)
	if err != nil {
		f.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f.Add(line)
	}
	f.Add(tabs("[HOSTPERFDATA]", "1", "h", "HOST", "UP", "", "", "", "", `a\nb`, "c"))
	f.Fuzz(func(t *testing.T, line string) {
		ev, err := ParseNagiosLine(line)
		if err != nil {
			var rej *schema.RejectError
			if !errors.As(err, &rej) || len(rej.Reasons) == 0 {
				t.Fatalf("error without reasons: %v", err)
			}
			return
		}
		if ev.Type != schema.TypeService || !ev.HasTime || !schema.IsFailure(ev.State) && ev.State != schema.StateOK {
			t.Fatalf("accepted an unexpected event %+v", ev)
		}
		payload, err := ev.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		again, err := schema.ParseEvent(payload)
		if err != nil {
			t.Fatalf("accepted %q but its payload %s is refused: %v", line, payload, err)
		}
		if !reflect.DeepEqual(again, ev) {
			t.Fatalf("payload %s parses to %+v, not %+v", payload, again, ev)
		}
	})
}
