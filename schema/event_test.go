package schema

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseEventNormalises(t *testing.T) {
	t.Parallel()
	e, err := ParseEvent([]byte(`{"entity":" Web-01.Example.COM ","check":"HTTP Port 80","type":"SERVICE","state":"Critical",
		"time":"1767607200","summary":"  down  ","details":"","tags":["a"],"duration":60,"initial_failure_delay":"5","acknowledgement_id":7}`))
	if err != nil {
		t.Fatal(err)
	}
	if e.Entity != "web-01.example.com" || e.Check != "HTTP Port 80" || e.Type != "service" || e.State != "critical" ||
		!e.HasTime || e.Time != 1767607200 || e.Summary != "down" || e.Details != "" || e.Duration != 60 ||
		e.InitialFailureDelay != 5 || e.HasRepeatDelay || e.AcknowledgementID != "7" || e.ID() != "web-01.example.com:HTTP Port 80" {
		t.Fatalf("%+v", e)
	}
}

func TestTagSet(t *testing.T) {
	t.Parallel()
	e := Event{Entity: "foo-app-01.example.com", Check: "Disk / Util", Tags: []string{"prod", "disk"}}
	if got := strings.Join(TagSet(&e, []string{"team-a", "prod"}), ","); got != "prod,disk,team-a,foo-app-01,example.com,/,util" {
		t.Fatalf("tags %s", got)
	}
}

func TestSplitCheckID(t *testing.T) {
	t.Parallel()
	e, c, ok := SplitCheckID("web-01:HTTP: port 80")
	if !ok || e != "web-01" || c != "HTTP: port 80" {
		t.Fatalf("%q %q %v", e, c, ok)
	}
	for _, bad := range []string{"", ":x", "x:", "nocolon"} {
		if _, _, ok := SplitCheckID(bad); ok {
			t.Errorf("%q split", bad)
		}
	}
}

// FuzzParseEvent: no input crashes the parser, and whatever it accepts re-encodes to an event
// it accepts again, unchanged.
func FuzzParseEvent(f *testing.F) {
	for _, seed := range []string{
		`{"entity":"a","check":"b","type":"service","state":"ok"}`,
		`{"entity":"a","check":"b","type":"action","state":"acknowledgement","duration":"60","summary":"x"}`,
		`{"entity":"a","check":"b c:d","type":"service","state":"critical","time":1,"tags":["x","y"],"perfdata":"t=1s;;;0"}`,
		`[1,2]`, `42`, `null`, `{"entity":5}`, "{\"entity\":\"\xff\"}", `{"entity":"a","check":"b","type":"service","state":"ok","x":1}`,
		`{"entity":"a","check":"b","type":"service","state":"ok","time":0012}`, `{"entity":"a","check":"b\"\n\t","type":"service","state":"ok","tags":[]}`,
		`{"entity":"a","check":"b","type":"service","state":"ok","entity":"c"}`, `{"entity":"a","check":"b","type":"service","state":"ok","summary":"\u00e9"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if fast, ok := parseFast(raw); ok && utf8.Valid(raw) && len(raw) <= MaxEventBytes {
			full, err := parseFull(raw)
			if err != nil {
				t.Fatalf("fast path accepted %q, full parser refuses: %v", raw, err)
			}
			if !reflect.DeepEqual(fast, full) {
				t.Fatalf("fast and full parsers disagree on %q:\n%+v\n%+v", raw, fast, full)
			}
		}
		e, err := ParseEvent(raw)
		if err != nil {
			if _, ok := err.(*RejectError); !ok {
				t.Fatalf("error of type %T", err)
			}
			return
		}
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParseEvent(b)
		if err != nil {
			t.Fatalf("accepted %q but not its re-encoding %s: %v", raw, b, err)
		}
		if again.ID() != e.ID() || again.State != e.State || again.Summary != e.Summary || again.Time != e.Time {
			t.Fatalf("re-encoding changed the event: %+v vs %+v", e, again)
		}
	})
}

func BenchmarkParseEvent(b *testing.B) {
	raw := []byte(`{"entity":"app-01.example.com","check":"HTTP Port 80","type":"service","state":"critical","time":1767607200,"summary":"HTTP CRITICAL: 500 Internal Server Error","perfdata":"time=0.48s;;;0 size=1024B;;;0","tags":["prod","web"]}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if _, err := ParseEvent(raw); err != nil {
			b.Fatal(err)
		}
	}
}

func TestParseEventTTL(t *testing.T) {
	t.Parallel()
	e, err := ParseEvent([]byte(`{"entity":"a","check":"b","type":"service","state":"ok","ttl":300}`))
	if err != nil || !e.HasTTL || e.TTL != 300 || e.Stale {
		t.Fatalf("%+v %v", e, err)
	}
	e, err = ParseEvent([]byte(`{"entity":"a","check":"b","type":"service","state":"unknown","ttl":"0","stale":true}`))
	if err != nil || !e.HasTTL || e.TTL != 0 || !e.Stale {
		t.Fatalf("%+v %v", e, err)
	}
	raw, _ := e.MarshalJSON()
	if back, err := ParseEvent(raw); err != nil || !back.Stale || !back.HasTTL || back.TTL != 0 {
		t.Fatalf("round trip %s: %+v %v", raw, back, err)
	}
	if e, err := ParseEvent([]byte(`{"entity":"a","check":"b","type":"service","state":"ok"}`)); err != nil || e.HasTTL || e.Stale {
		t.Fatalf("no ttl: %+v %v", e, err)
	}
	for raw, want := range map[string]string{
		`{"entity":"a","check":"b","type":"service","state":"ok","ttl":-5}`:             "ttl must not be negative, got -5",
		`{"entity":"a","check":"b","type":"service","state":"ok","ttl":"5m"}`:           `ttl must be an integer or a string of digits, got "5m"`,
		`{"entity":"a","check":"b","type":"service","state":"ok","ttl":1.5}`:            "ttl must be an integer, got 1.5",
		`{"entity":"a","check":"b","type":"service","state":"ok","ttl":31536001}`:       "ttl must be at most 31536000 seconds (a year), got 31536001",
		`{"entity":"a","check":"b","type":"service","state":"ok","stale":"yes"}`:        "stale must be true or false",
		`{"entity":"a","check":"b","type":"action","state":"acknowledgement","ttl":60}`: "ttl and stale apply to service events only, not to acknowledgement actions",
	} {
		_, err := ParseEvent([]byte(raw))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", raw, err, want)
		}
	}
}
