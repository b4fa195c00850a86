package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/model/views"
	"github.com/flapjackgo/flapjack/schema"
)

// TestReportOncall replays two weeks of one check paging Kim (Berlin, email and SMS) through the
// real executive and notifier, then compares `flapjack report oncall --json` with a count by hand:
// alerts by medium and by hour on Kim's clock (nights apart) counted from the alerts replay
// printed, and the pages and acknowledgement delays the timeline was written with.
func TestReportOncall(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	env := []string{"FLAPJACK_REDIS_URL=" + db.URL(), "TZ=UTC"}
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	contacts := write("contacts.json", `[{"id": "kim", "first_name": "Kim", "last_name": "Ng", "email": "kim@example.com",
		"timezone": "Europe/Berlin", "media": {"email": "kim@example.com", "sms": "+4915112345678"}}]`)
	entities := write("entities.json", `[{"id": "1", "name": "web-01", "contacts": ["kim"]}]`)
	// Each incident: two critical results 30 s apart (the second passes the 30 s delay and
	// pages), perhaps an acknowledgement, then ok. Times UTC; Berlin is UTC+1 in January.
	type incident struct {
		start string // first critical result
		ack   int64  // seconds after the page; 0: none
	}
	incidents := []incident{
		{"2026-01-05T09:00:00Z", 300},  // Mon 10:00 Berlin
		{"2026-01-06T22:00:00Z", 1200}, // Tue 23:00 Berlin: night
		{"2026-01-07T03:00:00Z", 0},    // Wed 04:00 Berlin: night, never acknowledged
		{"2026-01-08T12:00:00Z", 60},   // Thu 13:00 Berlin
		{"2026-01-12T06:30:00Z", 120},  // next Monday 07:30 Berlin
	}
	var lines []string
	line := func(at int64, state, typ string) {
		lines = append(lines, fmt.Sprintf(`{"entity":"web-01","check":"HTTP","type":%q,"state":%q,"time":%d,"summary":"s"}`, typ, state, at))
	}
	for _, in := range incidents {
		start, _ := time.Parse(time.RFC3339, in.start)
		page := start.Unix() + 30
		line(start.Unix(), "critical", "service")
		line(page, "critical", "service")
		if in.ack > 0 {
			line(page+in.ack, "acknowledgement", "action")
		}
		line(page+1800, "ok", "service")
	}
	timeline := write("timeline.jsonl", strings.Join(lines, "\n")+"\n")
	for _, args := range [][]string{{"import", "contacts", "--file", contacts}, {"import", "entities", "--file", entities}} {
		if out, errOut, code := flapjack(t, env, "", args...); code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, errOut)
		}
	}
	printed, errOut, code := flapjack(t, env, "", "replay", "--input", timeline)
	if code != 0 {
		t.Fatalf("replay: exit %d\n%s", code, errOut)
	}

	// by hand: the alerts replay printed, on Kim's clock
	berlin, _ := time.LoadLocation("Europe/Berlin")
	type tally struct {
		alerts, nights int
		media          map[string]int
		hours          [24]int
	}
	want := map[string]*tally{"2026-01-05": {media: map[string]int{}}, "2026-01-12": {media: map[string]int{}}}
	dec := json.NewDecoder(strings.NewReader(printed))
	for dec.More() {
		var a schema.Alert
		if err := dec.Decode(&a); err != nil {
			t.Fatal(err)
		}
		at := time.Unix(*a.Time, 0).In(berlin)
		week := "2026-01-05"
		if at.Day() >= 12 {
			week = "2026-01-12"
		}
		w := want[week]
		w.alerts++
		w.media[a.Media]++
		w.hours[at.Hour()]++
		if at.Hour() >= 22 || at.Hour() < 7 {
			w.nights++
		}
	}
	if want["2026-01-05"].nights == 0 || want["2026-01-05"].media["sms"] == 0 {
		t.Fatalf("the timeline did not page at night or by SMS: %+v", want["2026-01-05"])
	}

	out, errOut, code := flapjack(t, env, "", "report", "oncall", "--from", "2026-01-05T00:00:00+01:00", "--until", "2026-01-19T00:00:00+01:00", "--json")
	if code != 0 {
		t.Fatalf("report: exit %d\n%s", code, errOut)
	}
	var weeks []views.OncallWeek
	if err := json.Unmarshal([]byte(out), &weeks); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	pages := map[string][2]int64{ // pages, acknowledged
		"2026-01-05": {4, 3}, "2026-01-12": {1, 1},
	}
	delays := map[string][2]int64{ // median, 90th percentile (nearest rank)
		"2026-01-05": {300, 1200}, "2026-01-12": {120, 120}}
	if len(weeks) != 2 {
		t.Fatalf("%d weeks, want 2:\n%s", len(weeks), out)
	}
	for _, w := range weeks {
		h := want[w.Week]
		if h == nil || w.Contact != "kim" || w.Timezone != "Europe/Berlin" {
			t.Fatalf("week %+v", w)
		}
		if w.Alerts != h.alerts || w.Nights != h.nights || w.ByHour != h.hours || fmt.Sprint(w.ByMedium) != fmt.Sprint(h.media) {
			t.Errorf("week %s: alerts %d nights %d by medium %v by hour %v; by hand %d, %d, %v, %v",
				w.Week, w.Alerts, w.Nights, w.ByMedium, w.ByHour, h.alerts, h.nights, h.media, h.hours)
		}
		p, d := pages[w.Week], delays[w.Week]
		if int64(w.Pages) != p[0] || int64(w.Acknowledged) != p[1] || w.AckMedian == nil || *w.AckMedian != d[0] || *w.AckP90 != d[1] {
			t.Errorf("week %s: %d pages, %d acknowledged, median %v p90 %v; want %v, delays %v", w.Week, w.Pages, w.Acknowledged,
				w.AckMedian, w.AckP90, p, d)
		}
	}
	text, _, code := flapjack(t, env, "", "report", "oncall", "--from", "2026-01-05T00:00:00+01:00", "--until", "2026-01-12T00:00:00+01:00", "--contact", "kim")
	if code != 0 || !strings.Contains(text, "Kim Ng (kim), week of 2026-01-05 (Europe/Berlin)") ||
		!strings.Contains(text, "pages: 4, acknowledged 3: median 5 minutes, 90th percentile 20 minutes") || strings.Contains(text, "2026-01-12") {
		t.Errorf("text report (exit %d):\n%s", code, text)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	shown := string(readme)[strings.Index(string(readme), "### On-call report"):]
	shown = shown[strings.Index(shown, "```text\n")+len("```text\n"):]
	if shown = shown[:strings.Index(shown, "```")]; shown != text {
		t.Errorf("README's on-call report example:\n%s\nthe report printed:\n%s", shown, text)
	}
	if _, _, code := flapjack(t, env, "", "report", "oncall", "--from", "soon"); code != 2 {
		t.Errorf("--from soon: exit %d, want 2", code)
	}
}
