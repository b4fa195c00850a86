package oncall

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// schedule builds a one-schedule file from the issue's example with one field replaced (or
// removed, for a nil value).
func schedule(t *testing.T, path []string, value any) string {
	t.Helper()
	var rec map[string]any
	if err := json.Unmarshal([]byte(issueExample), &rec); err != nil {
		t.Fatal(err)
	}
	m := rec
	for _, p := range path[:len(path)-1] {
		switch v := m[p].(type) {
		case []any:
			m = v[0].(map[string]any)
		default:
			m = v.(map[string]any)
		}
	}
	last := path[len(path)-1]
	if value == nil {
		delete(m, last)
	} else {
		m[last] = value
	}
	out, err := json.Marshal([]any{rec})
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

const issueExample = `{"id": "web-primary", "name": "Web primary", "timezone": "Europe/London",
  "layers": [{"name": "weekly", "start": "2026-03-23T09:00:00", "turn": "1 week",
              "members": ["ada", "bob"],
              "restrictions": [{"days": "mon-fri", "from": "09:00", "to": "18:00"}]}],
  "overrides": [{"contact": "erin", "start": "2026-04-01T12:00:00Z", "end": "2026-04-01T14:00:00Z"}],
  "fallback": ["ops-lead"]}`

func TestParseIssueExample(t *testing.T) {
	s := mustParse(t, "["+issueExample+"]")
	if s.ID != "web-primary" || s.Title() != "Web primary" || s.Location().String() != "Europe/London" {
		t.Errorf("read %+v", s)
	}
	if got := s.At(utc("2026-04-01T12:30:00Z")); got.Source != FromOverride || got.Contacts[0] != "erin" {
		t.Errorf("At the override: %+v", got)
	}
	// encoded again, it reads back the same
	again, err := json.Marshal([]*Schedule{s})
	if err != nil {
		t.Fatal(err)
	}
	s2 := mustParse(t, string(again))
	if s2.At(utc("2026-04-02T10:00:00Z")).Contacts[0] != "bob" || len(s2.Overrides) != 1 || !s2.Overrides[0].End.Equal(utc("2026-04-01T14:00:00Z")) {
		t.Errorf("round trip lost something: %s", again)
	}
	stored, err := Decode(again[1 : len(again)-1])
	if err != nil || stored.At(utc("2026-04-01T12:30:00Z")).Contacts[0] != "erin" {
		t.Errorf("Decode(%s): %v", again, err)
	}
	if _, err := Decode([]byte(`{"id": "x", "timezone": "UTC", "fallback": ["ada"], "extra": 1}`)); err == nil ||
		err.Error() != `schedule 0 (id "x"): extra: unknown field (known: id, name, timezone, layers, overrides, fallback)` {
		t.Errorf("Decode with an unknown field: %v", err)
	}
	wrapped := mustParse(t, `{"schedules": [`+issueExample+`]}`)
	if wrapped.ID != "web-primary" {
		t.Errorf("wrapped file read as %+v", wrapped)
	}
}

func TestParseProblems(t *testing.T) {
	cases := []struct {
		name string
		file string
		want []string // each problem's Error(), in order
	}{
		{"unknown timezone", schedule(t, []string{"timezone"}, "Europe/Lundun"),
			[]string{`schedule 0 (id "web-primary"): timezone: unknown time zone "Europe/Lundun"`}},
		{"missing timezone", schedule(t, []string{"timezone"}, nil),
			[]string{`schedule 0 (id "web-primary"): timezone: is required, e.g. "Europe/London" or "UTC"`}},
		{"Local is not a zone", schedule(t, []string{"timezone"}, "Local"),
			[]string{`schedule 0 (id "web-primary"): timezone: unknown time zone "Local"`}},
		{"start with a zone", schedule(t, []string{"layers", "start"}, "2026-03-23T09:00:00Z"),
			[]string{`schedule 0 (id "web-primary"): layers[0].start: cannot read "2026-03-23T09:00:00Z": want a wall-clock time without zone, e.g. "2026-03-23T09:00:00" (it is read in the schedule's timezone)`}},
		{"unparseable start", schedule(t, []string{"layers", "start"}, "next monday"),
			[]string{`schedule 0 (id "web-primary"): layers[0].start: cannot read "next monday": want a wall-clock time without zone, e.g. "2026-03-23T09:00:00" (it is read in the schedule's timezone)`}},
		{"zero turn", schedule(t, []string{"layers", "turn"}, "0 days"),
			[]string{`schedule 0 (id "web-primary"): layers[0].turn: must be longer than zero`}},
		{"negative turn", schedule(t, []string{"layers", "turn"}, "-1h"),
			[]string{`schedule 0 (id "web-primary"): layers[0].turn: duration "-1h" is negative`}},
		{"too short a turn", schedule(t, []string{"layers", "turn"}, "30s"),
			[]string{`schedule 0 (id "web-primary"): layers[0].turn: must be whole seconds and at least 1 minute`}},
		{"turn in no words", schedule(t, []string{"layers", "turn"}, "fortnightly"),
			[]string{`schedule 0 (id "web-primary"): layers[0].turn: cannot read duration "fortnightly": "fortnightly" is not a number (try "90", "90s", "15 minutes" or "1 day")`}},
		{"empty members", schedule(t, []string{"layers", "members"}, []string{}),
			[]string{`schedule 0 (id "web-primary"): layers[0].members: must name at least one contact`}},
		{"blank member", schedule(t, []string{"layers", "members"}, []string{"ada", " "}),
			[]string{`schedule 0 (id "web-primary"): layers[0].members[1]: must name a contact`}},
		{"members not an array", schedule(t, []string{"layers", "members"}, "ada"),
			[]string{`schedule 0 (id "web-primary"): layers[0].members: must be an array`}},
		{"bad days", schedule(t, []string{"layers", "restrictions", "days"}, "weekdays"),
			[]string{`schedule 0 (id "web-primary"): layers[0].restrictions[0].days: cannot read "weekdays": want days like "mon-fri", "sat,sun" or "mon"`}},
		{"empty days", schedule(t, []string{"layers", "restrictions", "days"}, ""),
			[]string{`schedule 0 (id "web-primary"): layers[0].restrictions[0].days: must name days, e.g. "mon-fri" (leave it out for every day)`}},
		{"bad from", schedule(t, []string{"layers", "restrictions", "from"}, "9am"),
			[]string{`schedule 0 (id "web-primary"): layers[0].restrictions[0].from: cannot read "9am": want a time of day "HH:MM" from 00:00 to 23:59 (24:00 as an end)`}},
		{"24:00 is no start", schedule(t, []string{"layers", "restrictions", "from"}, "24:00"),
			[]string{`schedule 0 (id "web-primary"): layers[0].restrictions[0].from: cannot read "24:00": want a time of day "HH:MM" from 00:00 to 23:59 (24:00 as an end)`}},
		{"missing to", schedule(t, []string{"layers", "restrictions", "to"}, nil),
			[]string{`schedule 0 (id "web-primary"): layers[0].restrictions[0].to: is required, e.g. "09:00"`}},
		{"override ending before it starts", schedule(t, []string{"overrides", "end"}, "2026-04-01T11:00:00Z"),
			[]string{`schedule 0 (id "web-primary"): overrides[0].end: must be after start (2026-04-01T12:00:00Z)`}},
		{"override ending as it starts", schedule(t, []string{"overrides", "end"}, "2026-04-01T13:00:00+01:00"),
			[]string{`schedule 0 (id "web-primary"): overrides[0].end: must be after start (2026-04-01T12:00:00Z)`}},
		{"override without a zone", schedule(t, []string{"overrides", "start"}, "2026-04-01T12:00:00"),
			[]string{`schedule 0 (id "web-primary"): overrides[0].start: cannot read time "2026-04-01T12:00:00": want RFC 3339 with a zone, e.g. "2026-04-01T12:00:00Z"`}},
		{"override without contact", schedule(t, []string{"overrides", "contact"}, nil),
			[]string{`schedule 0 (id "web-primary"): overrides[0].contact: must name a contact`}},
		{"fallback twice", schedule(t, []string{"fallback"}, []string{"ops-lead", "ops-lead"}),
			[]string{`schedule 0 (id "web-primary"): fallback[1]: lists "ops-lead" twice`}},
		{"unknown field at the top", schedule(t, []string{"owner"}, "web team"),
			[]string{`schedule 0 (id "web-primary"): owner: unknown field (known: id, name, timezone, layers, overrides, fallback)`}},
		{"unknown field in a layer", schedule(t, []string{"layers", "length"}, "1 week"),
			[]string{`schedule 0 (id "web-primary"): layers[0].length: unknown field (known: name, start, turn, members, restrictions)`}},
		{"unknown field in a restriction", schedule(t, []string{"layers", "restrictions", "until"}, "18:00"),
			[]string{`schedule 0 (id "web-primary"): layers[0].restrictions[0].until: unknown field (known: days, from, to)`}},
		{"unknown field in an override", schedule(t, []string{"overrides", "note"}, "dentist"),
			[]string{`schedule 0 (id "web-primary"): overrides[0].note: unknown field (known: contact, start, end)`}},
		{"missing id", schedule(t, []string{"id"}, nil),
			[]string{`schedule 0: id: is required`}},
		{"layer without a name", schedule(t, []string{"layers", "name"}, nil),
			[]string{`schedule 0 (id "web-primary"): layers[0].name: is required (it says which layer put someone on call)`}},
		{"nothing at all", `[{"id": "empty", "timezone": "UTC"}]`,
			[]string{`schedule 0 (id "empty"): has no layers, overrides or fallback: nobody could ever be on call`}},
		{"not an object", `["web"]`,
			[]string{`schedule 0: must be a JSON object`}},
		{"two layers of one name", `[{"id": "x", "timezone": "UTC", "layers": [
			{"name": "a", "start": "2026-01-01T00:00:00", "turn": "1 day", "members": ["ada"]},
			{"name": "a", "start": "2026-01-01T00:00:00", "turn": "1 day", "members": ["bob"]}]}]`,
			[]string{`schedule 0 (id "x"): layers[1].name: another layer is called "a"`}},
		{"duplicate ids: both kept out", `[{"id": "x", "timezone": "UTC", "fallback": ["ada"]},
			{"id": "y", "timezone": "UTC", "fallback": ["ada"]}, {"id": "x", "timezone": "UTC", "fallback": ["bob"]}]`,
			[]string{`schedule 0 (id "x"): id: schedule 2 has the same id`, `schedule 2 (id "x"): id: duplicates schedule 0's id`}},
		{"several problems, each named", `[{"id": "ok", "timezone": "UTC", "fallback": ["ada"]},
			{"id": "bad", "timezone": "Mars/Olympus", "layers": [{"name": "l", "start": "2026-01-01T00:00:00", "turn": "0", "members": []}]}]`,
			[]string{`schedule 1 (id "bad"): timezone: unknown time zone "Mars/Olympus"`,
				`schedule 1 (id "bad"): layers[0].turn: must be longer than zero`,
				`schedule 1 (id "bad"): layers[0].members: must name at least one contact`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			valid, problems, err := Parse([]byte(c.file), nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range problems {
				got = append(got, p.Error())
			}
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("problems\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
			for _, s := range valid {
				for _, p := range problems {
					if p.ID == s.ID {
						t.Errorf("schedule %q has problems but was kept", s.ID)
					}
				}
			}
		})
	}
}

func TestParseIntegerIDs(t *testing.T) {
	s := mustParse(t, `[{"id": 7, "timezone": "UTC", "layers": [{"name": "l", "start": "2026-01-01T00:00:00",
		"turn": "1 day", "members": [1, "2"]}], "overrides": [{"contact": 3, "start": "2026-01-05T00:00:00Z",
		"end": "2026-01-06T00:00:00Z"}], "fallback": [4]}]`)
	if s.ID != "7" || s.Layers[0].Members[0] != "1" || s.Overrides[0].Contact != "3" || s.Fallback[0] != "4" {
		t.Errorf("read %+v", s)
	}
	_, problems, _ := Parse([]byte(`[{"id": 1.5, "timezone": "UTC", "fallback": [true]}]`), nil)
	if len(problems) != 2 || problems[0].Field != "id" || problems[1].Field != "fallback[0]" {
		t.Errorf("problems %v", problems)
	}
}

func TestParseKeepsOnlyValidSchedules(t *testing.T) {
	valid, problems, err := Parse([]byte(`[{"id": "x", "timezone": "UTC", "fallback": ["ada"]},
		{"id": "y", "timezone": "UTC", "fallback": ["ada"]}, {"id": "x", "timezone": "UTC", "fallback": ["bob"]},
		{"id": "z", "timezone": "UTC"}]`), nil)
	if err != nil || len(problems) != 3 {
		t.Fatalf("Parse: %v %v", err, problems)
	}
	if len(valid) != 1 || valid[0].ID != "y" {
		t.Errorf("kept %d schedules, want only y", len(valid))
	}
}

func TestParseWholeFile(t *testing.T) {
	for _, file := range []string{``, `"web"`, `{"schedule": []}`, `{"schedules": {}}`, `[{]`, `{"schedules": [], "x": 1}`} {
		if _, _, err := Parse([]byte(file), nil); err == nil {
			t.Errorf("Parse(%q): no error", file)
		}
	}
}

func TestParseKnownContacts(t *testing.T) {
	known := map[string]bool{"ada": true, "erin": true}
	valid, problems, err := Parse([]byte("["+issueExample+"]"), known)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.Error())
	}
	want := []string{
		`schedule 0 (id "web-primary"): layers[0].members[1]: unknown contact "bob" (import contacts first)`,
		`schedule 0 (id "web-primary"): fallback[0]: unknown contact "ops-lead" (import contacts first)`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") || len(valid) != 0 {
		t.Errorf("problems\n%s\nwant\n%s\n(%d valid)", strings.Join(got, "\n"), strings.Join(want, "\n"), len(valid))
	}
	known["bob"], known["ops-lead"] = true, true
	if valid, problems, _ := Parse([]byte("["+issueExample+"]"), known); len(problems) != 0 || len(valid) != 1 {
		t.Errorf("with every contact known: %v", problems)
	}
}

func TestNew(t *testing.T) {
	s := mustParse(t, "["+issueExample+"]")
	def := *s
	def.Overrides = append(def.Overrides, Override{Contact: "fred", Start: utc("2026-04-02T12:00:00Z"), End: utc("2026-04-02T13:00:00Z")})
	added, err := New(def)
	if err != nil {
		t.Fatal(err)
	}
	if got := added.At(utc("2026-04-02T12:30:00Z")); got.Contacts[0] != "fred" || got.Index != 1 {
		t.Errorf("At the added override: %+v", got)
	}
	if len(s.Overrides) != 1 || s.At(utc("2026-04-02T12:30:00Z")).Contacts[0] != "bob" {
		t.Errorf("New changed the schedule it copied")
	}
	def.Overrides = []Override{{Contact: "fred", Start: utc("2026-04-02T12:00:00Z"), End: utc("2026-04-02T12:00:00Z")}}
	def.Timezone = "Nowhere/Land"
	_, err = New(def)
	want := `schedule 0 (id "web-primary"): timezone: unknown time zone "Nowhere/Land"` + "\n" +
		`schedule 0 (id "web-primary"): overrides[0].end: must be after start (2026-04-02T12:00:00Z)`
	if err == nil || err.Error() != want {
		t.Errorf("New: %v, want\n%s", err, want)
	}
}

func TestParseDays(t *testing.T) {
	cases := map[string][]time.Weekday{
		"mon-fri":       {time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday},
		"sat,sun":       {time.Saturday, time.Sunday},
		"mon":           {time.Monday},
		"Fri-Mon":       {time.Friday, time.Saturday, time.Sunday, time.Monday},
		"tuesday, thu ": {time.Tuesday, time.Thursday},
	}
	for text, want := range cases {
		got, err := parseDays(text)
		if err != nil {
			t.Errorf("parseDays(%q): %v", text, err)
		}
		var wantSet [7]bool
		for _, d := range want {
			wantSet[d] = true
		}
		if got != wantSet {
			t.Errorf("parseDays(%q) = %v, want %v", text, got, wantSet)
		}
	}
	for _, bad := range []string{"mon-", "-fri", "mon-fri-sat", "lundi", ","} {
		if _, err := parseDays(bad); err == nil {
			t.Errorf("parseDays(%q): no error", bad)
		}
	}
}
