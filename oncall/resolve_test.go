package oncall

import (
	"slices"
	"testing"
	"time"
)

// mustParse reads a file of one schedule that must be valid.
func mustParse(t testing.TB, file string) *Schedule { return mustParseAll(t, file, 1)[0] }

// mustParseAll reads a file of n schedules that must all be valid.
func mustParseAll(t testing.TB, file string, n int) []*Schedule {
	t.Helper()
	got, problems, err := Parse([]byte(file), nil)
	if err != nil || len(problems) > 0 || len(got) != n {
		t.Fatalf("Parse: %v %v (%d schedules, want %d)", err, problems, len(got), n)
	}
	return got
}

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// The example, without its override and restriction: a weekly rotation in London
// handing off on Mondays at 09:00 local.
const weeklyLondon = `[{"id": "web-primary", "name": "Web primary", "timezone": "Europe/London",
  "layers": [{"name": "weekly", "start": "2026-03-23T09:00:00", "turn": "1 week", "members": ["ada", "bob"]}]}]`

// A 24-hour base layer of nights people under a day layer restricted to office hours: the
// restriction leaves the day layer's nights and weekends to the layer below it.
const officeHours = `[{"id": "web", "timezone": "Europe/London",
  "layers": [
    {"name": "round-the-clock", "start": "2026-03-23T09:00:00", "turn": "1 day", "members": ["carol", "dave"]},
    {"name": "office", "start": "2026-03-23T09:00:00", "turn": "1 week", "members": ["ada", "bob"],
     "restrictions": [{"days": "mon-fri", "from": "10:00", "to": "18:00"}]}]}]`

// Office hours only, with a fallback, and the two-hour override.
const officeFallback = `[{"id": "web", "timezone": "Europe/London",
  "layers": [{"name": "office", "start": "2026-03-23T09:00:00", "turn": "1 week", "members": ["ada", "bob"],
              "restrictions": [{"days": "mon-fri", "from": "09:00", "to": "18:00"}]}],
  "overrides": [{"contact": "erin", "start": "2026-04-01T12:00:00Z", "end": "2026-04-01T14:00:00Z"}],
  "fallback": ["ops-lead", "boss"]}]`

// Nights only (a restriction wrapping past midnight), no fallback: the days are gaps.
const nightsOnly = `[{"id": "nights", "timezone": "America/New_York",
  "layers": [{"name": "night", "start": "2026-03-02T00:00:00", "turn": "1 week", "members": ["nora", "ned"],
              "restrictions": [{"from": "20:00", "to": "08:00"}]}],
  "overrides": [{"contact": "erin", "start": "2026-03-10T01:00:00Z", "end": "2026-03-10T03:00:00Z"},
                {"contact": "fred", "start": "2026-03-10T02:00:00Z", "end": "2026-03-10T04:00:00Z"}]}]`

// Twelve-hour turns from 09:00 across both of London's 2026 changes, and a daily hand-off at
// 01:30, a time London skips on 2026-03-29 and has twice on 2026-10-25.
const subDay = `[{"id": "halves", "timezone": "Europe/London",
  "layers": [{"name": "halves", "start": "2026-03-27T09:00:00", "turn": "12 hours", "members": ["ada", "bob"]}]},
  {"id": "small-hours", "timezone": "Europe/London",
  "layers": [{"name": "daily", "start": "2026-03-27T01:30:00", "turn": "1 day", "members": ["ada", "bob"]}]}]`

func TestAt(t *testing.T) {
	both := mustParseAll(t, subDay, 2)
	halves, smallHours := both[0], both[1]
	cases := []struct {
		name     string
		schedule *Schedule
		at       string
		want     OnCall
	}{
		{"before the first turn nobody", mustParse(t, weeklyLondon), "2026-03-23T08:59:59Z", OnCall{Source: Nobody, Index: -1}},
		{"first turn at 09:00 GMT", mustParse(t, weeklyLondon), "2026-03-23T09:00:00Z", layerOf("weekly", 0, "ada")},
		{"08:59 BST the Monday after the change is still the old turn", mustParse(t, weeklyLondon), "2026-03-30T07:59:59Z", layerOf("weekly", 0, "ada")},
		{"09:00 BST is 08:00 UTC: the new person", mustParse(t, weeklyLondon), "2026-03-30T08:00:00Z", layerOf("weekly", 0, "bob")},
		{"a problem at 08:30 UTC goes to the new person", mustParse(t, weeklyLondon), "2026-03-30T08:30:00Z", layerOf("weekly", 0, "bob")},
		{"third week", mustParse(t, weeklyLondon), "2026-04-06T08:00:00Z", layerOf("weekly", 0, "ada")},
		{"08:30 GMT the Monday after autumn's change is the old turn", mustParse(t, weeklyLondon), "2026-10-26T08:30:00Z", layerOf("weekly", 0, "ada")},
		{"09:00 GMT after autumn's change", mustParse(t, weeklyLondon), "2026-10-26T09:00:00Z", layerOf("weekly", 0, "bob")},

		{"office hours: the restricted later layer wins", mustParse(t, officeHours), "2026-04-01T11:00:00Z", layerOf("office", 1, "bob")},
		{"its nights go to the layer below", mustParse(t, officeHours), "2026-04-01T19:00:00Z", layerOf("round-the-clock", 0, "dave")},
		{"and its weekends", mustParse(t, officeHours), "2026-04-04T11:00:00Z", layerOf("round-the-clock", 0, "carol")},
		{"its turns do not move: masked at 09:30 on hand-off day", mustParse(t, officeHours), "2026-03-30T08:30:00Z", layerOf("round-the-clock", 0, "dave")},
		{"and the new turn's person at 10:00 local", mustParse(t, officeHours), "2026-03-30T09:00:00Z", layerOf("office", 1, "bob")},

		{"before the override the layer", mustParse(t, officeFallback), "2026-04-01T11:59:59Z", layerOf("office", 0, "bob")},
		{"the override takes 12:00 UTC", mustParse(t, officeFallback), "2026-04-01T12:00:00Z", OnCall{Contacts: []string{"erin"}, Source: FromOverride, Index: 0}},
		{"the override's last second", mustParse(t, officeFallback), "2026-04-01T13:59:59Z", OnCall{Contacts: []string{"erin"}, Source: FromOverride, Index: 0}},
		{"and gives it back at 14:00", mustParse(t, officeFallback), "2026-04-01T14:00:00Z", layerOf("office", 0, "bob")},
		{"nobody in the layer: the fallback", mustParse(t, officeFallback), "2026-04-01T17:00:00Z", OnCall{Contacts: []string{"ops-lead", "boss"}, Source: FromFallback, Index: -1}},

		{"a night window opening on the evening before", mustParse(t, nightsOnly), "2026-03-04T12:00:00Z", layerOf("night", 0, "nora")},
		{"closing at 08:00", mustParse(t, nightsOnly), "2026-03-04T13:00:00Z", OnCall{Source: Nobody, Index: -1}},
		{"the day is a gap without fallback", mustParse(t, nightsOnly), "2026-03-04T18:00:00Z", OnCall{Source: Nobody, Index: -1}},
		{"overlapping overrides: the first alone", mustParse(t, nightsOnly), "2026-03-10T01:30:00Z", OnCall{Contacts: []string{"erin"}, Source: FromOverride, Index: 0}},
		{"the latest-defined wins the overlap", mustParse(t, nightsOnly), "2026-03-10T02:30:00Z", OnCall{Contacts: []string{"fred"}, Source: FromOverride, Index: 1}},

		{"12-hour turns: 21:00 GMT", halves, "2026-03-28T21:00:00Z", layerOf("halves", 0, "bob")},
		{"the night turn ends at 09:00 BST, 11 hours on", halves, "2026-03-29T07:59:59Z", layerOf("halves", 0, "bob")},
		{"09:00 BST", halves, "2026-03-29T08:00:00Z", layerOf("halves", 0, "ada")},
		{"21:00 BST", halves, "2026-03-29T20:00:00Z", layerOf("halves", 0, "bob")},
		{"a skipped 01:30 hand-off happens when the clock jumps", smallHours, "2026-03-29T01:00:00Z", layerOf("daily", 0, "ada")},
		{"just before the jump", smallHours, "2026-03-29T00:59:59Z", layerOf("daily", 0, "bob")},
		{"a doubled 01:30 hand-off happens the first time", smallHours, "2026-10-25T00:30:00Z", layerOf("daily", 0, "ada")},
		{"the second 01:30 is the same turn", smallHours, "2026-10-25T01:30:00Z", layerOf("daily", 0, "ada")},
		{"just before the first 01:30", smallHours, "2026-10-25T00:29:59Z", layerOf("daily", 0, "bob")},
		// 20-minute turns from 00:10: turn 648 (a) starts 2026-03-29 00:10 GMT; those of 01:10 (a)
		// and 01:30 (b) are skipped with the hour, 01:50's (c) starts at the jump
		{"20-minute turns before the jump", mustParse(t, smallTurns), "2026-03-29T00:59:59Z", layerOf("base", 0, "c")},
		{"turns in the skipped hour are lost", mustParse(t, smallTurns), "2026-03-29T01:00:00Z", layerOf("base", 0, "c")},
		{"and the order carries on", mustParse(t, smallTurns), "2026-03-29T01:10:00Z", layerOf("base", 0, "a")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := c.schedule.At(utc(c.at))
			if !got.Same(c.want) || got.Layer != c.want.Layer {
				t.Errorf("At(%s) = %+v, want %+v", c.at, got, c.want)
			}
		})
	}
}

func layerOf(name string, index int, contact string) OnCall {
	return OnCall{Contacts: []string{contact}, Source: FromLayer, Layer: name, Index: index}
}

func TestAtDoesNotShareTheFallbackList(t *testing.T) {
	s := mustParse(t, officeFallback)
	got := s.At(utc("2026-04-01T17:00:00Z"))
	got.Contacts[0] = "mallory"
	if again := s.At(utc("2026-04-01T17:00:00Z")); !slices.Equal(again.Contacts, []string{"ops-lead", "boss"}) {
		t.Errorf("fallback changed through an answer: %v", again.Contacts)
	}
}

func TestWindowCovers(t *testing.T) {
	fri := [7]bool{time.Friday: true}
	cases := []struct {
		name string
		win  window
		at   string // a wall-clock reading
		want bool
	}{
		{"wraps: Friday evening", window{days: fri, from: 18 * 3600, length: 15 * 3600}, "2026-04-03T18:00:00Z", true},
		{"wraps: Saturday morning", window{days: fri, from: 18 * 3600, length: 15 * 3600}, "2026-04-04T08:59:59Z", true},
		{"wraps: Saturday 09:00 is out", window{days: fri, from: 18 * 3600, length: 15 * 3600}, "2026-04-04T09:00:00Z", false},
		{"wraps: Friday before 18:00 is out", window{days: fri, from: 18 * 3600, length: 15 * 3600}, "2026-04-03T17:59:59Z", false},
		{"wraps: Thursday night is out", window{days: fri, from: 18 * 3600, length: 15 * 3600}, "2026-04-02T23:00:00Z", false},
		{"whole day", window{days: fri, from: 0, length: daySeconds}, "2026-04-03T23:59:59Z", true},
		{"whole day ends at midnight", window{days: fri, from: 0, length: daySeconds}, "2026-04-04T00:00:00Z", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.win.covers(utc(c.at).Unix()); got != c.want {
				t.Errorf("covers(%s) = %v, want %v", c.at, got, c.want)
			}
		})
	}
}

func TestInstant(t *testing.T) {
	london, _ := time.LoadLocation("Europe/London")
	newYork, _ := time.LoadLocation("America/New_York")
	cases := []struct {
		name string
		loc  *time.Location
		wall string
		want string
	}{
		{"an ordinary time", london, "2026-03-30T09:00:00Z", "2026-03-30T08:00:00Z"},
		{"skipped in London: the jump", london, "2026-03-29T01:30:00Z", "2026-03-29T01:00:00Z"},
		{"skipped in New York: the jump", newYork, "2026-03-08T02:30:00Z", "2026-03-08T07:00:00Z"},
		{"twice in London: the first", london, "2026-10-25T01:30:00Z", "2026-10-25T00:30:00Z"},
		{"twice in New York: the first", newYork, "2026-11-01T01:30:00Z", "2026-11-01T05:30:00Z"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := instant(utc(c.wall).Unix(), c.loc); !got.Equal(utc(c.want)) {
				t.Errorf("instant(%s) = %s, want %s", c.wall, got.Format(time.RFC3339), c.want)
			}
		})
	}
}

func TestAtOnAScheduleNotPrepared(t *testing.T) {
	s := &Schedule{ID: "raw", Fallback: []string{"ada"}, Layers: []Layer{{Name: "l", Start: "2026-01-01T00:00:00", Turn: "1 day", Members: []string{"bob"}}}}
	if got := s.At(utc("2026-04-01T00:00:00Z")); got.Source != FromFallback {
		t.Errorf("At = %+v, want the fallback", got)
	}
	if _, err := s.Shifts(utc("2026-04-01T00:00:00Z"), utc("2026-04-02T00:00:00Z")); err != nil {
		t.Error(err)
	}
}
