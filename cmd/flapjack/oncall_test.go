package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/internal/testing/testbinary"
	"github.com/flapjackgo/flapjack/internal/testing/testical"
	"github.com/flapjackgo/flapjack/oncall"
	"github.com/flapjackgo/flapjack/web"
)

// dbPrimary has Ada and Bob in daily turns, 09:00-17:00 UTC only, and no fallback: its nights
// are gaps.
const dbPrimary = `[{"id": "db-primary", "timezone": "UTC", "layers": [{"name": "days", "start": "2026-03-23T09:00:00",
  "turn": "1 day", "members": ["ada", "bob"], "restrictions": [{"from": "09:00", "to": "17:00"}]}]}]`

func TestOncallCommand(t *testing.T) {
	t.Parallel()
	env := oncallEnv(t)
	if _, errOut, code := flapjack(t, env, dbPrimary, "import", "schedules", "-f", "-"); code != 0 {
		t.Fatalf("import: %d %s", code, errOut)
	}
	tests := []struct {
		name string
		args []string
		code int
		want []string // lines printed, in order
	}{
		{name: "every schedule at a time", args: []string{"--at", "2026-03-24T10:00:00Z"}, want: []string{
			"db-primary (db-primary, UTC)", "  Tue 2026-03-24 10:00 UTC: bob (layer \"days\")",
			"web-primary (Web primary, Europe/London)", "  Tue 2026-03-24 10:00 GMT: ada (layer \"weekly\")"}},
		{name: "a gap", args: []string{"--schedule", "db-primary", "--at", "2026-03-24T16:00:00Z", "--until", "2026-03-25T10:00:00Z"}, want: []string{
			"db-primary (db-primary, UTC)",
			"  Tue 2026-03-24 16:00 UTC – Tue 2026-03-24 17:00 UTC  bob        layer \"days\"",
			"  Tue 2026-03-24 17:00 UTC – Wed 2026-03-25 09:00 UTC  nobody     GAP: nobody on call and no fallback",
			"  Wed 2026-03-25 09:00 UTC – Wed 2026-03-25 10:00 UTC  ada        layer \"days\""}},
		{name: "unknown schedule", args: []string{"--schedule", "nope"}, code: 1},
		{name: "until before at", args: []string{"--at", "2026-03-25T00:00:00Z", "--until", "2026-03-24T00:00:00Z"}, code: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := flapjack(t, env, "", append([]string{"oncall"}, tt.args...)...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d: %s%s", code, tt.code, out, errOut)
			}
			if tt.want != nil && strings.TrimRight(out, "\n") != strings.Join(tt.want, "\n") {
				t.Fatalf("printed:\n%s\nwant:\n%s", out, strings.Join(tt.want, "\n"))
			}
		})
	}
	out, _, code := flapjack(t, env, "", "oncall", "--schedule", "db-primary", "--at", "2026-03-24T16:00:00Z", "--until", "2026-03-25T10:00:00Z", "--json")
	var answers []struct {
		Schedule string
		Shifts   []oncall.Shift
	}
	if code != 0 || json.Unmarshal([]byte(out), &answers) != nil || len(answers) != 1 || len(answers[0].Shifts) != 3 {
		t.Fatalf("--json: exit %d: %s", code, out)
	}
	gap := answers[0].Shifts[1]
	if !gap.Gap() || !gap.Start.Equal(time.Date(2026, 3, 24, 17, 0, 0, 0, time.UTC)) || len(gap.Contacts) != 0 {
		t.Fatalf("the gap in JSON: %+v", gap)
	}
}

// TestStatusWarnsOfSchedulesWithNobodyOnCall: `flapjack status` warns of a schedule an entity
// uses that has nobody on call within 24 hours (db-primary's nights, whatever the time), not of
// web-primary (Carl covers every hour the weekly layer leaves),
// and stays healthy.
func TestStatusWarnsOfSchedulesWithNobodyOnCall(t *testing.T) {
	t.Parallel()
	env := oncallEnv(t)
	if _, errOut, code := flapjack(t, env, dbPrimary, "import", "schedules", "-f", "-"); code != 0 {
		t.Fatalf("import: %d %s", code, errOut)
	}
	if _, errOut, code := flapjack(t, env, `[{"id": "db-01", "name": "db-01", "schedules": ["db-primary"]}]`, "import", "entities", "-f", "-"); code != 0 {
		t.Fatalf("import: %d %s", code, errOut)
	}
	out, errOut, code := flapjack(t, env, "", "status", "--json")
	var got struct {
		Healthy  bool
		Warnings []string
	}
	if code != 0 || json.Unmarshal([]byte(out), &got) != nil || !got.Healthy {
		t.Fatalf("status: exit %d %s %s", code, out, errOut)
	}
	if len(got.Warnings) == 0 {
		t.Fatalf("no warnings: %s", out)
	}
	for _, w := range got.Warnings {
		if !strings.HasPrefix(w, "schedule db-primary, used by entity db-01: nobody is on call ") {
			t.Errorf("unexpected warning %q", w)
		}
	}
	text, _, _ := flapjack(t, env, "", "status")
	if !strings.Contains(text, "WARNINGS\n  schedule db-primary, used by entity db-01: nobody is on call") {
		t.Fatalf("status text:\n%s", text)
	}
}

// TestWhatifSchedules: `flapjack whatif --schedules FILE` replays the recorded history under a
// candidate rota: with Ada and Bob's weeks swapped, Friday 27 March's problems and recovery go
// to Bob instead of Ada, and nothing else changes.
func TestWhatifSchedules(t *testing.T) {
	t.Parallel()
	env := append(oncallEnv(t), "TZ=UTC")
	root, _ := filepath.Abs("../..")
	if out, errOut, code := flapjack(t, env, "", "replay", "--executive-archive-events=true", "--input",
		filepath.Join(root, "examples", "oncall", "timeline.jsonl")); code != 0 {
		t.Fatalf("replay: exit %d\n%s\n%s", code, out, errOut)
	}
	raw, err := os.ReadFile(filepath.Join(root, "examples", "oncall", "schedules.json"))
	if err != nil {
		t.Fatal(err)
	}
	swapped := strings.Replace(string(raw), `"members": ["ada", "bob"]`, `"members": ["bob", "ada"]`, 1)
	if swapped == string(raw) {
		t.Fatal("the example rota no longer lists ada then bob")
	}
	file := filepath.Join(t.TempDir(), "swapped.json")
	if err := os.WriteFile(file, []byte(swapped), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := flapjack(t, env, "", "whatif", "--from", "2026-03-27T00:00:00Z", "--until", "2026-03-28T00:00:00Z",
		"--schedules", file, "--format", "json")
	if code != 0 {
		t.Fatalf("whatif: exit %d\n%s\n%s", code, out, errOut)
	}
	var rep struct {
		Added   []map[string]any `json:"alerts_added"`
		Removed []map[string]any `json:"alerts_removed"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	who := func(alerts []map[string]any) string {
		var s []string
		for _, a := range alerts {
			at, _ := a["time"].(float64)
			s = append(s, fmt.Sprintf("%s %v %v %v", time.Unix(int64(at), 0).UTC().Format("15:04:05"), a["contact"], a["type"], a["check"]))
		}
		return strings.Join(s, "; ")
	}
	// the problem repeats at 12:15:30 once its 15-minute interval is over: whatif repeats a
	// failing result every minute (--repeat-interval) where the archive holds one
	if got := who(rep.Removed); got != "12:00:30 ada problem HTTP; 12:15:30 ada problem HTTP; 12:20:00 ada recovery HTTP" {
		t.Errorf("removed: %s", got)
	}
	if got := who(rep.Added); got != "12:00:30 bob problem HTTP; 12:15:30 bob problem HTTP; 12:20:00 bob recovery HTTP" {
		t.Errorf("added: %s", got)
	}
}

// TestCalendarFeedEqualsOncallUntil: `flapjack web`'s feed of the example rota, read by Debian's
// python3-icalendar, lists exactly the shifts `flapjack oncall --until` prints for the feed's
// range (midnight UTC 7 days ago to 60 days ahead), and Bob's own feed his shifts among them.
func TestCalendarFeedEqualsOncallUntil(t *testing.T) {
	t.Parallel()
	env := oncallEnv(t)
	addr := testbinary.FreeAddr(t)
	srv := testbinary.Start(t, append(env, "FLAPJACK_WEB_ADDR="+addr), "web")
	defer srv.Stop(t)
	get := func(path string) string {
		t.Helper()
		client := &http.Client{Timeout: 5 * time.Second}
		deadline := time.Now().Add(30 * time.Second)
		for {
			resp, err := client.Get("http://" + addr + path)
			if err == nil {
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return string(body)
				}
				t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
			}
			if srv.Exited() || time.Now().After(deadline) {
				t.Fatalf("GET %s: %v\n%s", path, err, srv.Tail(20))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	feed := get("/schedules/web-primary.ics")
	bobFeed := get("/contacts/bob/shifts.ics")
	from, until := web.FeedRange(time.Now())
	out, errOut, code := flapjack(t, env, "", "oncall", "--schedule", "web-primary", "--at", from.Format(time.RFC3339),
		"--until", until.Format(time.RFC3339), "--json")
	var answers []struct{ Shifts []oncall.Shift }
	if code != 0 || json.Unmarshal([]byte(out), &answers) != nil || len(answers) != 1 {
		t.Fatalf("oncall: exit %d %s %s", code, out, errOut)
	}
	shifts := answers[0].Shifts
	events := testical.Events(t, []byte(feed))
	if len(events) != len(shifts) || len(shifts) < 60 {
		t.Fatalf("%d events in the feed, %d shifts from flapjack oncall", len(events), len(shifts))
	}
	var bobs []oncall.Shift
	for i, sh := range shifts {
		if !events[i].Start.Equal(sh.Start) || !events[i].End.Equal(sh.End) ||
			!strings.HasPrefix(events[i].Summary, strings.Join(sh.Contacts, ", ")+" on call: ") {
			t.Fatalf("event %d %+v, shift %+v", i, events[i], sh)
		}
		if len(sh.Contacts) == 1 && sh.Contacts[0] == "bob" {
			bobs = append(bobs, sh)
		}
	}
	own := testical.Events(t, []byte(bobFeed))
	if len(own) != len(bobs) || len(bobs) == 0 {
		t.Fatalf("bob's feed: %d events, his shifts %d", len(own), len(bobs))
	}
	for i, sh := range bobs {
		if !own[i].Start.Equal(sh.Start) || !own[i].End.Equal(sh.End) {
			t.Fatalf("bob's event %d %+v, shift %+v", i, own[i], sh)
		}
	}
}
