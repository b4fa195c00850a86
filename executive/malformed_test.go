package executive

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
)

// TestMalformedInputIsRejectedCountedAndKept feeds every kind of bad input docs/decisions.md D2 lists: each
// is rejected with a reason, counted invalid, kept in events_rejected with its reasons, and the
// executive goes on processing good events.
func TestMalformedInputIsRejectedCountedAndKept(t *testing.T) {
	t.Parallel()
	huge := `{"entity":"a","check":"b","type":"service","state":"ok","summary":"` + strings.Repeat("x", 70*1024) + `"}`
	cases := []struct {
		name, raw, reason string
	}{
		{"not JSON", `this is not json`, "must be a JSON object"},
		{"truncated JSON", `{"entity":"a",`, "not valid JSON"},
		{"array", `[{"entity":"a","check":"b","type":"service","state":"ok"}]`, "must be a JSON object"},
		{"number", `42`, "must be a JSON object"},
		{"string", `"event"`, "must be a JSON object"},
		{"null", `null`, "must be a JSON object"},
		{"missing required", `{"entity":"a","type":"service","state":"ok"}`, "check is required"},
		{"wrong type required", `{"entity":5,"check":"b","type":"service","state":"ok"}`, "entity must be a string"},
		{"empty entity", `{"entity":"","check":"b","type":"service","state":"ok"}`, "entity must not be empty"},
		{"unknown field", `{"entity":"a","check":"b","type":"service","state":"ok","colour":"red"}`, "unknown fields: colour"},
		{"service ack", `{"entity":"a","check":"b","type":"service","state":"acknowledgement"}`, `needs type "action"`},
		{"action ok", `{"entity":"a","check":"b","type":"action","state":"ok"}`, `needs type "service"`},
		{"bad state", `{"entity":"a","check":"b","type":"service","state":"down"}`, "is not one of"},
		{"bad type", `{"entity":"a","check":"b","type":"noop","state":"ok"}`, "is not one of service, action"},
		{"zero ack duration", `{"entity":"a","check":"b","type":"action","state":"acknowledgement","duration":0}`, "positive number of seconds"},
		{"negative ack duration", `{"entity":"a","check":"b","type":"action","state":"acknowledgement","duration":-5}`, "positive number of seconds"},
		{"float time", `{"entity":"a","check":"b","type":"service","state":"ok","time":1.5}`, "time must be an integer"},
		{"word time", `{"entity":"a","check":"b","type":"service","state":"ok","time":"yesterday"}`, "string of digits"},
		{"tags not array", `{"entity":"a","check":"b","type":"service","state":"ok","tags":"web"}`, "tags must be an array"},
		{"tag not string", `{"entity":"a","check":"b","type":"service","state":"ok","tags":["web",1]}`, "tags[1] must be a string"},
		{"huge", huge, "over the 65536-byte limit"},
		{"invalid UTF-8", "{\"entity\":\"a\xff\",\"check\":\"b\",\"type\":\"service\",\"state\":\"ok\"}", "not valid UTF-8"},
		{"colon in entity", `{"entity":"a:b","check":"c","type":"service","state":"ok"}`, "must not contain ':'"},
	}
	h := newHarness(t)
	good := event("ok")
	for i, c := range cases {
		h.at(int64(i)).send(c.raw, good)
	}
	dump := h.db.Dump(t)
	if got := dump[h.keys.EventCounters()]; !strings.Contains(got, "invalid=23") || !strings.Contains(got, "ok=23") || !strings.Contains(got, "all=46") {
		t.Fatalf("counters %s", got)
	}
	if _, ok := dump[h.x.consumer.ProcessingKey()]; ok {
		t.Fatal("processing list not empty")
	}
	kept, err := redis.Strings(h.db.Do(t, "LRANGE", h.keys.EventsRejected(t0), 0, -1), nil)
	if err != nil {
		t.Fatal(err)
	}
	reasons, err := redis.Strings(h.db.Do(t, "LRANGE", h.keys.EventsRejectedReasons(t0), 0, -1), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(kept) != len(cases) || len(reasons) != len(cases) {
		t.Fatalf("kept %d raw and %d reasons, want %d", len(kept), len(reasons), len(cases))
	}
	for i, c := range cases {
		j := len(cases) - 1 - i // LPUSH: newest first
		if kept[j] != c.raw {
			t.Errorf("%s: kept %.60q, want the raw payload", c.name, kept[j])
		}
		var rec struct {
			Reasons []string `json:"reasons"`
		}
		if err := json.Unmarshal([]byte(reasons[j]), &rec); err != nil {
			t.Fatalf("%s: reason record: %v", c.name, err)
		}
		if !strings.Contains(strings.Join(rec.Reasons, "; "), c.reason) {
			t.Errorf("%s: reasons %v, want one mentioning %q", c.name, rec.Reasons, c.reason)
		}
	}
	ttl, _ := redis.Int64(h.db.Do(t, "TTL", h.keys.EventsRejected(t0)), nil)
	if ttl < 6*86400 || ttl > 7*86400 {
		t.Fatalf("rejected list TTL %d, want the 7-day default", ttl)
	}
}

func TestAllReasonsAreReportedTogether(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.send(`{"entity":5,"type":"service","state":"ok","colour":"red","size":1}`)
	reasons, _ := redis.Strings(h.db.Do(t, "LRANGE", h.keys.EventsRejectedReasons(t0), 0, -1), nil)
	if len(reasons) != 1 {
		t.Fatalf("%d records", len(reasons))
	}
	for _, want := range []string{"check is required", "entity must be a string", "unknown fields: colour, size"} {
		if !strings.Contains(reasons[0], want) {
			t.Errorf("reasons %s miss %q", reasons[0], want)
		}
	}
}
