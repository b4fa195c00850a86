package whatif

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/executive"
	"github.com/flapjackgo/flapjack/importer"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/model/inventory"
	"github.com/flapjackgo/flapjack/notifier"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/replay"
	"github.com/flapjackgo/flapjack/schema"
)

// weekStart is Monday 2026-01-05 00:00 UTC.
var weekStart = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)

const liveContacts = `[
  {"id": "ada", "first_name": "Ada", "last_name": "Lovelace", "timezone": "UTC",
   "media": {"email": "ada@example.com"}},
  {"id": "grace", "first_name": "Grace", "last_name": "Hopper", "timezone": "UTC",
   "media": {"sms": "+15555550123"}}
]`

const liveEntities = `[
  {"id": "1", "name": "web-01", "contacts": ["ada", "grace"]},
  {"id": "2", "name": "db-01", "contacts": ["grace"]}
]`

// officeHoursRules limits Ada to 09:00-17:00 every day.
const officeHoursRules = `{"notification_rules": [
  {"id": "ada-office", "contact_id": "ada",
   "time_restrictions": [{"start_time": "2026-01-01 09:00:00", "end_time": "2026-01-01 17:00:00",
                          "rrule": "RRULE:FREQ=DAILY"}],
   "critical_media": ["email"], "warning_media": ["email"]}
]}`

// failures are the failing spells of the recorded week: web-01:HTTP fails every day at 03:00
// (night) and at 14:00 (office hours) for 20 minutes; db-01:DISK once on Wednesday at 23:30.
func failing(check string, at time.Time) bool {
	h, m := at.Hour(), at.Minute()
	switch check {
	case "HTTP":
		return (h == 3 || h == 14) && m < 20
	case "DISK":
		return at.Weekday() == time.Wednesday && h == 23 && m >= 30 && m < 50
	}
	return false
}

// weekTimeline is a week of both checks, one event every step.
func weekTimeline(step time.Duration) string {
	var b strings.Builder
	for t := weekStart; t.Before(weekStart.Add(7 * 24 * time.Hour)); t = t.Add(step) {
		for _, c := range []struct{ entity, check string }{{"web-01", "HTTP"}, {"db-01", "DISK"}} {
			state := "ok"
			if failing(c.check, t) {
				state = "critical"
			}
			fmt.Fprintf(&b, `{"time":%d,"entity":%q,"check":%q,"type":"service","state":%q,"summary":"%s is %s"}`+"\n",
				t.Unix(), c.entity, c.check, state, c.check, state)
		}
	}
	return b.String()
}

func notifierConfig() notifier.Config {
	cfg := notifier.DefaultConfig()
	cfg.MediaQueues = map[string]string{"email": "email_notifications", "sms": "sms_notifications"}
	return cfg
}

// newLive is a live database with contacts and entities, whose history is timeline run through
// the real executive and notifier with the archive on.
func newLive(t *testing.T, timeline string, xcfg executive.Config) *testredis.DB {
	t.Helper()
	db := testredis.New(t)
	keys := schema.NewKeys("")
	conn := db.Conn(t)
	defer conn.Close()
	ctx := context.Background()
	if _, err := importer.Contacts(ctx, conn, keys, []byte(liveContacts), importer.Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := importer.Entities(ctx, conn, keys, []byte(liveEntities), importer.Options{}); err != nil {
		t.Fatal(err)
	}
	xcfg.ArchiveEvents = true
	xcfg.ArchiveMaxAge = 30 * 24 * time.Hour
	if _, err := replay.Run(ctx, replay.Options{Pool: db.Pool, Keys: keys, Executive: xcfg, Notifier: notifierConfig(),
		Identity: queue.Identity{Host: "whatif-test", PID: 1}}, strings.NewReader(timeline), &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	return db
}

// whatif runs a comparison in fresh scratch databases and checks the live database is left
// exactly as it was.
func whatif(t *testing.T, live *testredis.DB, o Options) *Report {
	t.Helper()
	before := live.Dump(t)
	o.Live, o.LiveKeys = live.Pool, schema.NewKeys("")
	for _, sc := range []*Scenario{&o.Baseline, &o.Candidate} {
		sc.Space = Space{Pool: testredis.New(t).Pool, Keys: schema.NewKeys("")}
		if sc.Executive.Queue == "" {
			sc.Executive = executive.DefaultConfig()
		}
		if sc.Notifier.Queue == "" {
			sc.Notifier = notifierConfig()
		}
	}
	o.Identity = queue.Identity{Host: "whatif-test", PID: 2}
	rep, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	after := live.Dump(t)
	if !reflect.DeepEqual(before, after) {
		for k, v := range after {
			if before[k] != v {
				t.Errorf("live key %s changed: %.200s -> %.200s", k, before[k], v)
			}
		}
		for k := range before {
			if _, ok := after[k]; !ok {
				t.Errorf("live key %s was deleted", k)
			}
		}
	}
	return rep
}

func week() History {
	return History{From: weekStart, Until: weekStart.Add(7*24*time.Hour - time.Second), Source: SourceAuto, RepeatInterval: time.Minute}
}

// TestStricterTimeRestrictionRemovesNightAlerts is the "done" case: a week recorded
// through the live path with archiving on; a candidate office-hours rule for Ada removes
// exactly Ada's alerts outside 09:00-17:00 and adds none; Grace's alerts are the same.
func TestStricterTimeRestrictionRemovesNightAlerts(t *testing.T) {
	t.Parallel()
	live := newLive(t, weekTimeline(5*time.Minute), executive.DefaultConfig())
	q, _ := ParseQuietHours("22:00-07:00")
	rep := whatif(t, live, Options{History: week(), RulesFile: []byte(officeHoursRules), QuietHours: q})

	if rep.Source != SourceArchive {
		t.Fatalf("source %q, want the archive", rep.Source)
	}
	// 7 days x 288 steps x 2 checks
	if rep.Events != 7*288*2 {
		t.Errorf("%d lines replayed, want %d", rep.Events, 7*288*2)
	}
	if len(rep.Added) != 0 {
		t.Errorf("alerts appeared: %+v", rep.Added)
	}
	baseline := alertsOf(t, rep, "baseline")
	var wantRemoved []AlertRef
	for _, a := range baseline {
		if h := time.Unix(a.Time, 0).UTC().Hour(); a.Contact == "ada" && (h < 9 || h >= 17) {
			wantRemoved = append(wantRemoved, a)
		}
	}
	// every night failure of HTTP alerted Ada by email (problem, recovery)
	if len(wantRemoved) != 7*2 {
		t.Fatalf("baseline has %d night alerts for Ada, want 14: %+v", len(wantRemoved), baseline)
	}
	if !reflect.DeepEqual(rep.Removed, wantRemoved) {
		t.Errorf("removed %+v\nwant %+v", rep.Removed, wantRemoved)
	}
	row := medium(t, rep, "ada", "email")
	if row.Baseline != 28 || row.Candidate != 14 {
		t.Errorf("ada email %d -> %d, want 28 -> 14", row.Baseline, row.Candidate)
	}
	// 03:00 failures are in the quiet hours; 14:00 ones are not
	if *row.BaselineQuiet != 14 || *row.CandidateQuiet != 0 {
		t.Errorf("ada email in quiet hours %d -> %d, want 14 -> 0", *row.BaselineQuiet, *row.CandidateQuiet)
	}
	sms := medium(t, rep, "grace", "sms")
	if sms.Baseline != sms.Candidate || sms.Baseline != 7*2*2+2 {
		t.Errorf("grace sms %d -> %d, want 30 -> 30", sms.Baseline, sms.Candidate)
	}
	if len(rep.Baseline.Unnotified) != 0 || len(rep.Candidate.Unnotified) != 0 {
		t.Errorf("failures unnotified: %+v / %+v", rep.Baseline.Unnotified, rep.Candidate.Unnotified)
	}
	// the first event of a failure is held by the 30 s initial delay until the next one, 5 min on
	if l := rep.Baseline.Longest; l == nil || l.Unnotified != 300 {
		t.Errorf("longest unnotified %+v, want 300 s", l)
	}
}

// alertsOf rebuilds one run's alerts from a JSON report (removed + unchanged is the baseline),
// through the JSON shape the issue asks for.
func alertsOf(t *testing.T, rep *Report, run string) []AlertRef {
	t.Helper()
	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Contacts []struct {
			ID    string `json:"id"`
			Media []struct {
				Medium    string `json:"medium"`
				Baseline  *int   `json:"baseline"`
				Candidate *int   `json:"candidate"`
			} `json:"media"`
		} `json:"contacts"`
		Added   []AlertRef `json:"alerts_added"`
		Removed []AlertRef `json:"alerts_removed"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, c := range doc.Contacts {
		for _, m := range c.Media {
			if m.Baseline == nil || m.Candidate == nil || m.Medium == "" {
				t.Fatalf("JSON contact %s medium lacks medium/baseline/candidate: %s", c.ID, buf.String())
			}
		}
	}
	if doc.Added == nil || doc.Removed == nil {
		t.Fatalf("JSON lacks alerts_added/alerts_removed: %s", buf.String())
	}
	return append([]AlertRef(nil), rep.baselineAlerts...)
}

func medium(t *testing.T, rep *Report, contact, name string) MediumRow {
	t.Helper()
	for _, c := range rep.Contacts {
		if c.ID != contact {
			continue
		}
		for _, m := range c.Media {
			if m.Medium == name {
				return m
			}
		}
	}
	t.Fatalf("no row for %s %s in %+v", contact, name, rep.Contacts)
	return MediumRow{}
}

// TestLongerInitialDelayNotifiesNothing: a candidate initial_failure_delay longer than every
// failure removes every alert; each failure then reached nobody, the longest for its 20 minutes.
func TestLongerInitialDelayNotifiesNothing(t *testing.T) {
	t.Parallel()
	live := newLive(t, weekTimeline(5*time.Minute), executive.DefaultConfig())
	cand := executive.DefaultConfig()
	cand.InitialFailureDelay = 30 * time.Minute
	rep := whatif(t, live, Options{History: week(), Candidate: Scenario{Executive: cand}})
	if rep.Baseline.Alerts != 28+30 || rep.Candidate.Alerts != 0 {
		t.Fatalf("alerts %d -> %d, want 58 -> 0", rep.Baseline.Alerts, rep.Candidate.Alerts)
	}
	if len(rep.Added) != 0 || len(rep.Removed) != 58 {
		t.Errorf("%d added, %d removed; want 0 and 58", len(rep.Added), len(rep.Removed))
	}
	if n := len(rep.Candidate.Unnotified); n != 15 {
		t.Errorf("%d failures reached nobody, want 15 (14 HTTP, 1 DISK)", n)
	}
	if l := rep.Candidate.Longest; l == nil || l.Unnotified != 20*60 {
		t.Errorf("longest unnotified %+v, want 1200 s", l)
	}
}

// TestStateHistoryAgreesWithArchive: the timeline rebuilt from state changes, with repeats
// synthesised at the interval observed in the decision record (5 minutes), gives the same
// comparison as the archive.
func TestStateHistoryAgreesWithArchive(t *testing.T) {
	t.Parallel()
	live := newLive(t, weekTimeline(5*time.Minute), executive.DefaultConfig())
	var reps [2]*Report
	for i, source := range []string{SourceArchive, SourceStates} {
		h := week()
		h.Source = source
		// a fallback interval that would be wrong: the observed one must be used
		h.RepeatInterval = 7 * time.Minute
		reps[i] = whatif(t, live, Options{History: h, RulesFile: []byte(officeHoursRules)})
	}
	assertSameComparison(t, reps[0], reps[1])
	// ok results of checks already ok are left out and change nothing: replaying all of them
	// compares the same
	h := week()
	h.Source, h.KeepOKRepeats = SourceArchive, true
	all := whatif(t, live, Options{History: h, RulesFile: []byte(officeHoursRules)})
	if all.Replayed != 7*288*2 || reps[0].Replayed >= all.Replayed/2 || reps[0].Replayed+reps[0].OKRepeats != all.Replayed {
		t.Errorf("replayed %d of %d lines (%d ok repeats left out); with --all-events %d", reps[0].Replayed, reps[0].Events, reps[0].OKRepeats, all.Replayed)
	}
	for _, c := range [][2]any{{all.Baseline, reps[0].Baseline}, {all.Candidate, reps[0].Candidate}, {all.Removed, reps[0].Removed},
		{all.Added, reps[0].Added}, {all.baselineAlerts, reps[0].baselineAlerts}, {all.Contacts, reps[0].Contacts}} {
		if !reflect.DeepEqual(c[0], c[1]) {
			t.Errorf("leaving out ok repeats changed the comparison:\nall    %+v\npruned %+v", c[0], c[1])
		}
	}
	if !strings.Contains(strings.Join(reps[1].Notes, "\n"), "synthesised at the check's observed interval (2 checks observed") {
		t.Errorf("notes do not say repeats were synthesised at the observed interval: %q", reps[1].Notes)
	}
}

// TestStateHistoryWithoutRepeatsAgreesWithArchive: on a history where every event is a state
// change, the reconstruction is the archive.
func TestStateHistoryWithoutRepeatsAgreesWithArchive(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	states := []string{"ok", "critical", "ok", "warning", "critical", "warning"}
	for i := 0; i < 6*24; i++ {
		at := weekStart.Add(time.Duration(i) * 10 * time.Minute)
		fmt.Fprintf(&b, `{"time":%d,"entity":"web-01","check":"HTTP","type":"service","state":%q,"summary":"step %d"}`+"\n",
			at.Unix(), states[i%len(states)], i)
		if i == 25 || i == 100 {
			// acknowledged a minute into a critical spell (steps 25 and 100 are critical)
			fmt.Fprintf(&b, `{"time":%d,"entity":"web-01","check":"HTTP","type":"action","state":"acknowledgement","duration":3600,"summary":"on it"}`+"\n",
				at.Unix()+60)
		}
	}
	xcfg := executive.DefaultConfig()
	xcfg.InitialFailureDelay = 0
	live := newLive(t, b.String(), xcfg)
	var reps [2]*Report
	for i, source := range []string{SourceArchive, SourceStates} {
		h := History{From: weekStart, Until: weekStart.Add(24 * time.Hour), Source: source, RepeatInterval: time.Minute}
		reps[i] = whatif(t, live, Options{History: h, RulesFile: []byte(officeHoursRules),
			Baseline: Scenario{Executive: xcfg}, Candidate: Scenario{Executive: xcfg}})
	}
	if reps[0].Baseline.Alerts == 0 || len(reps[0].Removed) == 0 {
		t.Fatalf("the history alerts nobody, or the candidate changes nothing: %+v", reps[0])
	}
	assertSameComparison(t, reps[0], reps[1])
	if reps[1].Events != 6*24+2 {
		t.Errorf("state history gave %d lines, want %d (no repeats, two acknowledgements)", reps[1].Events, 6*24+2)
	}
	acks := 0
	for _, a := range reps[0].baselineAlerts {
		if a.Type == "acknowledgement" {
			acks++
		}
	}
	if acks == 0 {
		t.Errorf("no acknowledgement alert in the baseline: %+v", reps[0].baselineAlerts)
	}
}

func assertSameComparison(t *testing.T, archive, states *Report) {
	t.Helper()
	if archive.Source != SourceArchive || states.Source != SourceStates {
		t.Fatalf("sources %s, %s", archive.Source, states.Source)
	}
	if archive.Replayed != states.Replayed {
		t.Errorf("archive %d lines (%d replayed), state history %d (%d)", archive.Events, archive.Replayed, states.Events, states.Replayed)
	}
	for _, c := range []struct {
		name     string
		from, to any
	}{
		{"contacts", archive.Contacts, states.Contacts},
		{"baseline", archive.Baseline, states.Baseline},
		{"candidate", archive.Candidate, states.Candidate},
		{"added", archive.Added, states.Added},
		{"removed", archive.Removed, states.Removed},
		{"baseline alerts", archive.baselineAlerts, states.baselineAlerts},
	} {
		if !reflect.DeepEqual(c.from, c.to) {
			t.Errorf("%s differ:\narchive %+v\nstates  %+v", c.name, c.from, c.to)
		}
	}
}

// TestAutoSkipsAnArchiveThatDoesNotReachBack: with an archive holding only the end of the range
// (a short events_archive_maxage), auto rebuilds the history from state changes and says why.
func TestAutoSkipsAnArchiveThatDoesNotReachBack(t *testing.T) {
	t.Parallel()
	live := newLive(t, weekTimeline(5*time.Minute), executive.DefaultConfig())
	conn := live.Conn(t)
	keys := schema.NewKeys("")
	for at := weekStart; at.Before(weekStart.Add(24 * time.Hour)); at = at.Add(time.Hour) {
		if _, err := conn.Do("DEL", keys.EventsArchive(at)); err != nil {
			t.Fatal(err)
		}
	}
	conn.Close()
	rep := whatif(t, live, Options{History: week()})
	if rep.Source != SourceStates || !strings.Contains(strings.Join(rep.Notes, "\n"), "the event archive starts at 2026-01-06T00:00:00Z, after --from") {
		t.Errorf("source %s, notes %q", rep.Source, rep.Notes)
	}
	h := week()
	h.Source = SourceArchive
	rep = whatif(t, live, Options{History: h})
	if !strings.Contains(strings.Join(rep.Notes, "\n"), "no events for 24 of the range's 168 hours") {
		t.Errorf("notes %q", rep.Notes)
	}
}

// TestCandidateEscalationPolicyWakesTheNextPerson: with a candidate policy whose second step
// pages Ada 10 minutes after the first problem alert, Wednesday night's DISK failure (23:30 to
// 23:50, nobody acknowledging) adds Ada's step-2 alert, named by policy and step.
func TestCandidateEscalationPolicyWakesTheNextPerson(t *testing.T) {
	t.Parallel()
	live := newLive(t, weekTimeline(5*time.Minute), executive.DefaultConfig())
	policy := []byte(`[{"id": "db-oncall", "entities": ["db-01"], "steps": [
		{"delay": "0 minutes", "contacts": ["grace"]}, {"delay": "10 minutes", "contacts": ["ada"]}]}]`)
	rep := whatif(t, live, Options{History: week(), EscalationsFile: policy})
	var step2 []AlertRef
	for _, a := range rep.Added {
		if a.Contact == "ada" && a.Entity == "db-01" && a.Type == "problem" {
			step2 = append(step2, a)
		}
	}
	if len(step2) != 1 || step2[0].Step != 2 || step2[0].Policy != "db-oncall" {
		t.Fatalf("Ada's added db-01 problem alerts: %+v, want one of step 2 of db-oncall (all added: %+v)", step2, rep.Added)
	}
	if at := time.Unix(step2[0].Time, 0).UTC(); at.Weekday() != time.Wednesday || at.Hour() != 23 || at.Minute() < 40 || at.Minute() >= 50 {
		t.Errorf("step 2 at %s, want Wednesday between 23:40 and 23:50", at)
	}
	for _, a := range rep.Removed {
		t.Errorf("an alert of the baseline disappeared: %+v", a)
	}
}

// TestCheckTagsAgreeOnBothPaths: events carry their check's tag (also set on the check through
// the API, check_tag:team-web); a candidate rule matching that tag blackholes Grace's web-01
// alerts. The archive's events carry the tag; the events rebuilt from state history carry the
// check's tags: both paths remove exactly Grace's HTTP alerts.
func TestCheckTagsAgreeOnBothPaths(t *testing.T) {
	t.Parallel()
	var day []string
	for _, l := range strings.SplitAfter(weekTimeline(5*time.Minute), "\n")[:288*2] {
		day = append(day, strings.Replace(l, `"check":"HTTP",`, `"check":"HTTP","tags":["team-web"],`, 1))
	}
	live := newLive(t, strings.Join(day, ""), executive.DefaultConfig())
	conn := live.Conn(t)
	if _, err := inventory.CreateChecks(context.Background(), conn, schema.NewKeys(""),
		[]inventory.NewCheck{{EntityID: "1", Name: "HTTP", Tags: []string{"team-web"}}}, weekStart); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	rules := []byte(`{"notification_rules": [
	  {"id": "grace-web", "contact_id": "grace", "tags": ["team-web"], "critical_blackhole": true, "warning_blackhole": true},
	  {"id": "grace-all", "contact_id": "grace", "critical_media": ["sms"], "warning_media": ["sms"]}]}`)
	var reps [2]*Report
	for i, source := range []string{SourceArchive, SourceStates} {
		h := History{From: weekStart, Until: weekStart.Add(24*time.Hour - time.Second), Source: source, RepeatInterval: time.Minute}
		reps[i] = whatif(t, live, Options{History: h, RulesFile: []byte(rules)})
	}
	// two HTTP failures a day, each a problem and a recovery by sms
	if len(reps[0].Removed) != 4 || len(reps[0].Added) != 0 {
		t.Fatalf("archive: %d removed, %d added; want Grace's 4 HTTP alerts removed: %+v", len(reps[0].Removed), len(reps[0].Added), reps[0].Removed)
	}
	for _, a := range reps[0].Removed {
		if a.Contact != "grace" || a.Check != "HTTP" {
			t.Errorf("removed %+v, want only Grace's HTTP alerts", a)
		}
	}
	assertSameComparison(t, reps[0], reps[1])
	if !strings.Contains(strings.Join(reps[1].Notes, "\n"), "check's tags (check_tag:TAG; 1 of 2 checks tagged)") {
		t.Errorf("notes do not say rebuilt events carry check tags: %q", reps[1].Notes)
	}
}

// TestArchivedEventsWithoutTimeAreCounted: an archived event without "time" cannot be placed
// in its hour; it is not replayed, and the report counts it and says why.
func TestArchivedEventsWithoutTimeAreCounted(t *testing.T) {
	t.Parallel()
	hours := strings.SplitAfter(weekTimeline(5*time.Minute), "\n")[:12*2*2]
	live := newLive(t, strings.Join(hours, ""), executive.DefaultConfig())
	keys := schema.NewKeys("")
	hour := keys.EventsArchive(weekStart.Add(30 * time.Minute))
	live.Do(t, "LINSERT", hour, "BEFORE", live.Do(t, "LINDEX", hour, 5),
		`{"entity":"web-01","check":"HTTP","type":"service","state":"critical"}`)
	live.Do(t, "LPUSH", hour, `{"entity":"other","check":"PING","type":"service","state":"ok"}`)
	h := History{From: weekStart, Until: weekStart.Add(2*time.Hour - time.Second), Source: SourceArchive,
		Filter: Filter{Entity: regexp.MustCompile(`^(web|db)-01$`)}}
	rep := whatif(t, live, Options{History: h})
	if rep.Untimed != 1 || rep.Events != 12*2*2 {
		t.Errorf("%d events without time, %d lines; want 1 and %d", rep.Untimed, rep.Events, 12*2*2)
	}
	if !strings.Contains(strings.Join(rep.Notes, "\n"), `1 archived events of the chosen checks had no "time" and were not replayed`) {
		t.Errorf("notes do not count the events without time: %q", rep.Notes)
	}
	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"archived_events_without_time": 1`) {
		t.Errorf("JSON lacks archived_events_without_time: %s", buf.String())
	}
}
