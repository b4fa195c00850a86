package schema

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// referenceJSON is the event format as encoding/json writes it from a map: what MarshalJSON
// returned before AppendJSON, and the oracle AppendJSON is held to.
func referenceJSON(t *testing.T, e Event) string {
	t.Helper()
	m := map[string]any{"entity": e.Entity, "check": e.Check, "type": e.Type, "state": e.State}
	for name, v := range map[string]string{"summary": e.Summary, "details": e.Details, "perfdata": e.Perfdata, "acknowledgement_id": e.AcknowledgementID} {
		if v != "" {
			m[name] = v
		}
	}
	if len(e.Tags) > 0 {
		m["tags"] = e.Tags
	}
	for name, n := range map[string]struct {
		v   int64
		has bool
	}{"time": {e.Time, e.HasTime}, "duration": {e.Duration, e.HasDuration},
		"initial_failure_delay": {e.InitialFailureDelay, e.HasInitialDelay}, "repeat_failure_delay": {e.RepeatFailureDelay, e.HasRepeatDelay},
		"ttl": {e.TTL, e.HasTTL}} {
		if n.has {
			m[name] = n.v
		}
	}
	if e.Stale {
		m["stale"] = true
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// AppendJSON writes exactly what encoding/json writes, for every character class its string
// escaping treats apart (control characters, quotes, HTML characters, U+2028/9, invalid UTF-8).
func TestAppendJSONMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	pieces := []string{"a", "Z", " ", "\"", "\\", "/", "<", ">", "&", "\b", "\f", "\n", "\r", "\t", "\x00", "\x1f", "\x7f",
		"é", "日本", "\u2028", "\u2029", "\xff", "\xe2\x80", "😀", "%", ";", "|", "=", ":"}
	rng := rand.New(rand.NewPCG(1, 2))
	str := func() string {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return b.String()
	}
	maybe := func() bool { return rng.IntN(2) == 0 }
	for i := range 20000 {
		e := Event{Entity: str(), Check: str(), Type: str(), State: str()}
		if maybe() {
			e.Summary = str()
		}
		if maybe() {
			e.Details = str()
		}
		if maybe() {
			e.Perfdata = str()
		}
		if maybe() {
			e.AcknowledgementID = str()
		}
		for range rng.IntN(3) {
			e.Tags = append(e.Tags, str())
		}
		if maybe() {
			e.Time, e.HasTime = rng.Int64N(1<<40)-1<<39, true // negative ones too
		}
		if maybe() {
			e.Duration, e.HasDuration = rng.Int64N(100000), true
		}
		if maybe() {
			e.InitialFailureDelay, e.HasInitialDelay = rng.Int64N(100000), true
		}
		if maybe() {
			e.RepeatFailureDelay, e.HasRepeatDelay = rng.Int64N(100000), true
		}
		if maybe() {
			e.TTL, e.HasTTL = rng.Int64N(100000), true
		}
		e.Stale = maybe()
		got, want := string(e.AppendJSON(nil)), referenceJSON(t, e)
		if got != want {
			t.Fatalf("event %d %+v:\n got %s\nwant %s", i, e, got, want)
		}
	}
}

// An event built field by field is accepted and refused as its JSON would be by ParseEvent.
func TestValidateEventAgreesWithParseEvent(t *testing.T) {
	t.Parallel()
	for _, e := range []Event{
		{Entity: " Web-01 ", Check: "HTTP", Type: "Service", State: "OK", Summary: " fine ", Time: 1700000000, HasTime: true},
		{Entity: "web-01", Check: "HTTP", Type: "service", State: "unreachable", Time: -1, HasTime: true},
		{Entity: "a:b", Check: " ", Type: "service", State: "ok"},
		{Entity: "", Check: "x", Type: "action", State: "acknowledgement", Duration: 0, HasDuration: true, Tags: []string{"t"}},
		{Entity: "web-01", Check: "x", Type: "action", State: "acknowledgement", Duration: 60, HasDuration: true, AcknowledgementID: "7"},
		{Entity: "web-01", Check: "DISK", Type: "service", State: "ok", TTL: 300, HasTTL: true},
		{Entity: "web-01", Check: "DISK", Type: "service", State: "unknown", TTL: -5, HasTTL: true, Stale: true},
		{Entity: "web-01", Check: "x", Type: "action", State: "acknowledgement", TTL: 60, HasTTL: true},
	} {
		want, wantErr := ParseEvent(e.AppendJSON(nil))
		got, err := ValidateEvent(e)
		if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
			t.Fatalf("%+v: ValidateEvent says %v, ParseEvent %v", e, err, wantErr)
		}
		if err == nil && string(got.AppendJSON(nil)) != string(want.AppendJSON(nil)) {
			t.Fatalf("%+v: ValidateEvent gives %+v, ParseEvent %+v", e, got, want)
		}
	}
}

func BenchmarkAppendJSON(b *testing.B) {
	e := Event{Entity: "host-1.example.com", Check: "check-1", Type: TypeService, State: StateOK, Summary: "generated 1",
		Perfdata: "time=0.012s;1;2;0", Details: "long\noutput", Time: 1700000000, HasTime: true}
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		buf = e.AppendJSON(buf[:0])
	}
}

// A field added to Event must be added to AppendJSON, ValidateEvent and referenceJSON (and the
// count here): this fails until someone has looked at all three.
func TestEventFieldsKnownToTheEncoder(t *testing.T) {
	t.Parallel()
	if n := reflect.TypeFor[Event]().NumField(); n != 20 {
		t.Fatalf("Event has %d fields, AppendJSON and ValidateEvent know 20: encode and validate the new ones there", n)
	}
}
