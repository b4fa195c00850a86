package receiver

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/flapjackgo/flapjack/schema"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

const (
	evA = `{"entity":"web-01","check":"HTTP","type":"service","state":"critical","summary":"HTTP 500","time":1700000000}`
	evB = `{"entity":"db-01","check":"Disk /","type":"service","state":"ok","time":"1700000010","tags":["disk"]}`
	evC = `{"entity":"WEB-01","check":"HTTP","type":"action","state":"acknowledgement","duration":3600,"summary":"looking"}`
)

var (
	wantA = svc("web-01", "HTTP", "critical", 1700000000, "HTTP 500", "", "")
	wantB = schema.Event{Entity: "db-01", Check: "Disk /", Type: "service", State: "ok", Time: 1700000010, HasTime: true, Tags: []string{"disk"}}
	wantC = schema.Event{Entity: "web-01", Check: "HTTP", Type: "action", State: "acknowledgement", Summary: "looking", Duration: 3600, HasDuration: true}
)

func TestRunJSON(t *testing.T) {
	t.Parallel()
	big := `{"entity":"web-01","check":"HTTP","type":"service","state":"ok","summary":"` + strings.Repeat("z", schema.MaxEventBytes) + `"}`
	tests := []struct {
		name    string
		input   string
		want    []schema.Event
		rejects []Rejection
		errLine int    // >0: the run must stop with a *SyntaxError on this line
		errMsg  string // and this message
	}{
		{name: "empty input", input: ""},
		{name: "only whitespace", input: " \n\t\r\n"},
		{name: "one object per line", input: evA + "\n" + evB + "\n" + evC + "\n", want: []schema.Event{wantA, wantB, wantC}},
		{name: "concatenated without separators", input: evA + evB + evC, want: []schema.Event{wantA, wantB, wantC}},
		{name: "CRLF lines, no final newline", input: evA + "\r\n" + evB + "\r\n" + evC, want: []schema.Event{wantA, wantB, wantC}},
		{
			name:  "pretty-printed objects separated by blank lines",
			input: "{\n  \"entity\": \"web-01\",\n  \"check\": \"HTTP\",\n  \"type\": \"service\",\n  \"state\": \"critical\",\n  \"summary\": \"HTTP 500\",\n  \"time\": 1700000000\n}\n\n" + evB,
			want:  []schema.Event{wantA, wantB},
		},
		{name: "top-level array", input: "[\n  " + evA + ",\n  " + evB + ",\n  " + evC + "\n]\n", want: []schema.Event{wantA, wantB, wantC}},
		{name: "array then objects then array", input: "[" + evA + "]\n" + evB + "\n[" + evC + "]", want: []schema.Event{wantA, wantB, wantC}},
		{name: "empty array", input: "[]\n[ ]"},
		{name: "byte order mark", input: "\xEF\xBB\xBF" + evA, want: []schema.Event{wantA}},
		{
			name:  "braces and quotes inside strings do not confuse record boundaries",
			input: `{"entity":"web-01","check":"HTTP } { [","type":"service","state":"ok","summary":"say \"}\" \\"}` + "\n" + evA,
			want:  []schema.Event{{Entity: "web-01", Check: "HTTP } { [", Type: "service", State: "ok", Summary: `say "}" \`}, wantA},
		},
		{
			name:  "invalid record in the middle keeps its record number and line",
			input: evA + "\n" + evB + "\n" + `{"entity":"web-01","check":"HTTP","type":"service","state":"down","colour":"red"}` + "\n" + evC + "\n",
			want:  []schema.Event{wantA, wantB, wantC},
			rejects: []Rejection{{Record: 3, Line: 3, Input: `{"entity":"web-01","check":"HTTP","type":"service","state":"down","colour":"red"}`,
				Reasons: []string{"unknown fields: colour"}}},
		},
		{
			name:  "bad record in an array: line of its first byte",
			input: "[\n" + evA + ",\n  {\"entity\": \"x\",\n   \"state\": \"ok\"},\n" + evB + "\n]",
			want:  []schema.Event{wantA, wantB},
			rejects: []Rejection{{Record: 2, Line: 3, Input: "{\"entity\": \"x\",\n   \"state\": \"ok\"}",
				Reasons: []string{"type is required", "check is required"}}},
		},
		{
			name:  "malformed but balanced object is one rejected record",
			input: evA + "\n" + `{"entity": web-01}` + "\n" + evB,
			want:  []schema.Event{wantA, wantB},
			rejects: []Rejection{{Record: 2, Line: 2, Input: `{"entity": web-01}`,
				Reasons: []string{"event is not valid JSON: invalid character 'w' looking for beginning of value"}}},
		},
		{
			name:  "values that are not objects are rejected records",
			input: "42 \"text\" null [[1], true]\n" + evA,
			want:  []schema.Event{wantA},
			rejects: []Rejection{
				{Record: 1, Line: 1, Input: "42", Reasons: []string{"event must be a JSON object"}},
				{Record: 2, Line: 1, Input: `"text"`, Reasons: []string{"event must be a JSON object"}},
				{Record: 3, Line: 1, Input: "null", Reasons: []string{"event must be a JSON object"}},
				{Record: 4, Line: 1, Input: "[1]", Reasons: []string{"event must be a JSON object"}},
				{Record: 5, Line: 1, Input: "true", Reasons: []string{"event must be a JSON object"}},
			},
		},
		{
			name:  "record over the size limit",
			input: evA + "\n" + big + "\n" + evB,
			want:  []schema.Event{wantA, wantB},
			rejects: []Rejection{{Record: 2, Line: 2, Input: big[:schema.MaxEventBytes],
				Reasons: []string{"record is 65613 bytes, over the 65536-byte limit"}}},
		},
		{
			name:    "stray closing brace stops the run",
			input:   evA + "\n" + evB + "\n}\n" + evC,
			want:    []schema.Event{wantA, wantB},
			errLine: 3, errMsg: `unexpected '}' where a JSON value should start`,
		},
		{
			name:    "unclosed object stops the run at its first line",
			input:   evA + "\n" + `{"entity":"db-01",` + "\n" + `"check":"x"` + "\n" + evB + "\n",
			want:    []schema.Event{wantA},
			errLine: 2, errMsg: "the value starting here is not closed at the end of input (line 5)",
		},
		{
			name:    "unclosed string",
			input:   evA + "\n\n" + `"abc`,
			want:    []schema.Event{wantA},
			errLine: 3, errMsg: "the string starting here is not closed at the end of input (line 3)",
		},
		{
			name:    "bare word",
			input:   evA + "\nERROR: connection reset\n" + evB,
			want:    []schema.Event{wantA},
			errLine: 2, errMsg: `invalid JSON value "ERROR"`,
		},
		{
			name:    "missing comma in array",
			input:   "[\n" + evA + "\n" + evB + "\n]",
			want:    []schema.Event{wantA},
			errLine: 3, errMsg: `expected ',' or ']' after an array element, found '{'`,
		},
		{
			name:    "trailing comma in array",
			input:   "[" + evA + ",\n]",
			want:    []schema.Event{wantA},
			errLine: 2, errMsg: `expected an array element after ',', found ']'`,
		},
		{
			name:    "leading comma in array",
			input:   "[," + evA + "]",
			errLine: 1, errMsg: `unexpected ',' in array`,
		},
		{
			name:    "unclosed array",
			input:   "\n[" + evA + ",\n" + evB + "\n",
			want:    []schema.Event{wantA, wantB},
			errLine: 2, errMsg: "the array starting here is not closed at the end of input (line 4)",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			enq := &memEnqueuer{}
			var rej rejections
			core, logs := observer.New(zapcore.InfoLevel)
			rep, err := RunJSON(context.Background(), strings.NewReader(tc.input), JSONOptions{OnReject: rej.add}, enq, zap.New(core))
			if tc.errLine == 0 && err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if tc.errLine > 0 {
				var se *SyntaxError
				if !errors.As(err, &se) || se.Line != tc.errLine || se.Msg != tc.errMsg {
					t.Fatalf("got error %v, want a SyntaxError on line %d: %s", err, tc.errLine, tc.errMsg)
				}
			}
			assertEvents(t, enq.parsed(t), tc.want)
			assertRejections(t, rej.get(), tc.rejects)
			want := Report{Records: len(tc.want) + len(tc.rejects), Enqueued: len(tc.want), Rejected: len(tc.rejects)}
			if rep != want {
				t.Errorf("report %+v, want %+v", rep, want)
			}
			logged := logs.FilterMessage("record rejected").All()
			if len(logged) != len(tc.rejects) {
				t.Fatalf("%d rejection log lines, want %d", len(logged), len(tc.rejects))
			}
			for i, entry := range logged {
				if got := entry.ContextMap()["line"]; got != int64(tc.rejects[i].Line) {
					t.Errorf("log %d: line %v, want %d", i, got, tc.rejects[i].Line)
				}
			}
		})
	}
}

func TestRunJSONErrorMessage(t *testing.T) {
	t.Parallel()
	_, err := RunJSON(context.Background(), strings.NewReader(evA+"\n}"), JSONOptions{}, &memEnqueuer{}, nil)
	if want := "json receiver: after 1 records: line 2: unexpected '}' where a JSON value should start"; err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
}

func TestRunJSONEnqueueFailure(t *testing.T) {
	t.Parallel()
	enq := &memEnqueuer{}
	fails := EnqueuerFunc(func(ctx context.Context, b []byte) error {
		if enq.count() == 1 {
			return errEnqueue
		}
		return enq.Enqueue(ctx, b)
	})
	rep, err := RunJSON(context.Background(), strings.NewReader(evA+"\n\n"+evB+"\n"+evC), JSONOptions{}, fails, nil)
	if !errors.Is(err, errEnqueue) || err.Error() != "json receiver: enqueueing record 2 (line 3): redis: connection refused" {
		t.Fatalf("got %v", err)
	}
	if want := (Report{Records: 2, Enqueued: 1}); rep != want {
		t.Errorf("report %+v, want %+v", rep, want)
	}
}

func TestRunJSONCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	enq := &memEnqueuer{}
	stopAfterOne := EnqueuerFunc(func(ctx context.Context, b []byte) error {
		if ctx.Err() != nil {
			t.Error("the in-flight record's enqueue saw the cancellation")
		}
		defer cancel()
		return enq.Enqueue(ctx, b)
	})
	rep, err := RunJSON(ctx, strings.NewReader(evA+evB+evC), JSONOptions{}, stopAfterOne, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Report{Records: 1, Enqueued: 1}); rep != want {
		t.Errorf("report %+v, want %+v", rep, want)
	}
}

// FuzzRunJSON: no input panics or hangs the stream splitter, every record is either enqueued
// (and re-validates) or rejected with reasons, and a stop is a *SyntaxError with a line.
func FuzzRunJSON(f *testing.F) {
	for _, seed := range []string{evA + evB, "[" + evA + ",\n" + evC + "]", "42 \"x\" [1]", "{\"a\": }", "}", "[,]", "\"abc", "\xEF\xBB\xBF{}", sensu1} {
		f.Add(seed, false)
	}
	f.Add(sensu1+sensuGo, true)
	f.Fuzz(func(t *testing.T, input string, sensu bool) {
		enq := &memEnqueuer{}
		n := 0
		onReject := func(r Rejection) {
			n++
			if len(r.Reasons) == 0 || r.Line < 1 || r.Record < 1 {
				t.Fatalf("bad rejection %+v", r)
			}
		}
		rep, err := RunJSON(context.Background(), strings.NewReader(input), JSONOptions{Sensu: sensu, OnReject: onReject}, enq, nil)
		var se *SyntaxError
		if err != nil && (!errors.As(err, &se) || se.Line < 1) {
			t.Fatalf("unexpected error %v", err)
		}
		if rep.Records != rep.Enqueued+rep.Rejected || rep.Rejected != n || rep.Enqueued != enq.count() {
			t.Fatalf("report %+v, %d rejections, %d enqueued", rep, n, enq.count())
		}
		enq.parsed(t)
	})
}
