package whatif

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/flapjackgo/flapjack/internal/humantime"
	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/schema"
)

// QuietHours is a daily window of a contact's local time, e.g. 22:00-07:00.
type QuietHours struct {
	Start, End int // minutes after midnight; Start > End wraps midnight
}

// ParseQuietHours reads "HH:MM-HH:MM".
func ParseQuietHours(s string) (*QuietHours, error) {
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		return nil, fmt.Errorf("quiet hours %q: want HH:MM-HH:MM, e.g. 22:00-07:00", s)
	}
	var q QuietHours
	for i, part := range []string{a, b} {
		t, err := time.Parse("15:04", strings.TrimSpace(part))
		if err != nil {
			return nil, fmt.Errorf("quiet hours %q: want HH:MM-HH:MM, e.g. 22:00-07:00", s)
		}
		m := t.Hour()*60 + t.Minute()
		if i == 0 {
			q.Start = m
		} else {
			q.End = m
		}
	}
	if q.Start == q.End {
		return nil, fmt.Errorf("quiet hours %q: start and end are the same", s)
	}
	return &q, nil
}

func (q *QuietHours) String() string {
	return fmt.Sprintf("%02d:%02d-%02d:%02d", q.Start/60, q.Start%60, q.End/60, q.End%60)
}

// contains reports whether t (already in the contact's zone) is inside the window.
func (q *QuietHours) contains(t time.Time) bool {
	m := t.Hour()*60 + t.Minute()
	if q.Start < q.End {
		return m >= q.Start && m < q.End
	}
	return m >= q.Start || m < q.End
}

// Report is the comparison of the two runs.
type Report struct {
	From       time.Time    `json:"from"`
	Until      time.Time    `json:"until"`
	Source     string       `json:"source"`
	Notes      []string     `json:"notes"`
	Events     int          `json:"history_lines"`
	Replayed   int          `json:"lines_replayed"`
	OKRepeats  int          `json:"ok_repeats_not_replayed"`
	Skipped    int          `json:"archived_items_skipped"`
	Untimed    int          `json:"archived_events_without_time"`
	QuietHours string       `json:"quiet_hours,omitempty"`
	Contacts   []ContactRow `json:"contacts"`
	Baseline   Outcome      `json:"baseline"`
	Candidate  Outcome      `json:"candidate"`
	Added      []AlertRef   `json:"alerts_added"`
	Removed    []AlertRef   `json:"alerts_removed"`

	// baselineAlerts are every alert of the baseline run, for tests.
	baselineAlerts []AlertRef
}

// ContactRow is one contact's alerts per medium.
type ContactRow struct {
	ID       string      `json:"id"`
	Name     string      `json:"name,omitempty"`
	Timezone string      `json:"timezone"`
	Media    []MediumRow `json:"media"`
}

// MediumRow counts one medium's alerts in both runs; the quiet-hours counts are alerts sent
// inside the quiet hours in the contact's timezone.
type MediumRow struct {
	Medium         string `json:"medium"`
	Baseline       int    `json:"baseline"`
	Candidate      int    `json:"candidate"`
	BaselineQuiet  *int   `json:"baseline_quiet_hours,omitempty"`
	CandidateQuiet *int   `json:"candidate_quiet_hours,omitempty"`
}

// Outcome sums up one run.
type Outcome struct {
	Alerts int `json:"alerts"`
	// Unnotified are the failures during which no problem alert (plain or rolled up) reached
	// anyone.
	Unnotified []Failure `json:"problems_unnotified"`
	// Longest is the failure that went unnotified longest: until its first problem alert, or
	// its end when none came.
	Longest *Failure `json:"longest_unnotified,omitempty"`
}

// Failure is one episode of a check failing.
type Failure struct {
	Entity  string `json:"entity"`
	Check   string `json:"check"`
	Start   int64  `json:"start"`
	End     int64  `json:"end"`
	Ongoing bool   `json:"ongoing,omitempty"` // still failing when the range ends
	// Unnotified is how long the failure went without a problem alert, seconds.
	Unnotified int64 `json:"unnotified_seconds"`
}

// AlertRef is one alert of a run.
type AlertRef struct {
	Time    int64  `json:"time"`
	At      string `json:"at"`
	Entity  string `json:"entity"`
	Check   string `json:"check"`
	Type    string `json:"type"`
	State   string `json:"state"`
	Contact string `json:"contact"`
	Medium  string `json:"medium"`
	// Step is the escalation step the alert belongs to (0 for ordinary routing), Policy its
	// policy: who would have been woken at which step.
	Step   int    `json:"escalation_step,omitempty"`
	Policy string `json:"escalation_policy,omitempty"`
}

func alertRef(a *schema.Alert) AlertRef {
	ref := alertKey(a)
	ref.At = time.Unix(ref.Time, 0).UTC().Format(time.RFC3339)
	return ref
}

func (r *Report) build(base, cand []schema.Alert, contacts [2][]roster.StoredContact, eps *episodes, o Options) {
	if o.QuietHours != nil {
		r.QuietHours = o.QuietHours.String()
	}
	r.Baseline = outcome(base, eps)
	r.Candidate = outcome(cand, eps)
	r.Added, r.Removed = diff(base, cand)
	for i := range base {
		r.baselineAlerts = append(r.baselineAlerts, alertRef(&base[i]))
	}
	defaultZone := o.DefaultTimezone
	if defaultZone == nil {
		defaultZone = time.UTC
	}
	rows := map[string]*ContactRow{}
	zones := [2]map[string]*time.Location{{}, {}}
	media := map[string]map[string]*MediumRow{}
	row := func(id string) *ContactRow {
		if rows[id] == nil {
			rows[id] = &ContactRow{ID: id, Timezone: defaultZone.String()}
			media[id] = map[string]*MediumRow{}
		}
		return rows[id]
	}
	medium := func(id, name string) *MediumRow {
		row(id)
		if media[id][name] == nil {
			media[id][name] = &MediumRow{Medium: name}
			if o.QuietHours != nil {
				media[id][name].BaselineQuiet, media[id][name].CandidateQuiet = new(int), new(int)
			}
		}
		return media[id][name]
	}
	for i, cs := range contacts {
		for _, c := range cs {
			cr := row(c.ID)
			name := strings.TrimSpace(c.FirstName + " " + c.LastName)
			if name != "" && (i == 0 || cr.Name == "") {
				cr.Name = name
			}
			zones[i][c.ID] = defaultZone
			if loc, err := time.LoadLocation(c.Timezone); c.Timezone != "" && err == nil {
				zones[i][c.ID] = loc
				cr.Timezone = c.Timezone
			}
			for _, m := range c.Media {
				medium(c.ID, m.Name)
			}
		}
	}
	for i, alerts := range [][]schema.Alert{base, cand} {
		for _, a := range alerts {
			m := medium(a.ContactID, a.Media)
			quiet := false
			if o.QuietHours != nil && a.Time != nil {
				loc := zones[i][a.ContactID]
				if loc == nil {
					loc = defaultZone
				}
				quiet = o.QuietHours.contains(time.Unix(*a.Time, 0).In(loc))
			}
			if i == 0 {
				m.Baseline++
				if quiet {
					*m.BaselineQuiet++
				}
			} else {
				m.Candidate++
				if quiet {
					*m.CandidateQuiet++
				}
			}
		}
	}
	for _, id := range sortedKeys(rows) {
		cr := rows[id]
		for _, name := range sortedKeys(media[id]) {
			cr.Media = append(cr.Media, *media[id][name])
		}
		if cr.Media == nil {
			cr.Media = []MediumRow{}
		}
		r.Contacts = append(r.Contacts, *cr)
	}
	if r.Contacts == nil {
		r.Contacts = []ContactRow{}
	}
	if r.Notes == nil {
		r.Notes = []string{}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// outcome finds, for every failure, its first problem alert.
func outcome(alerts []schema.Alert, eps *episodes) Outcome {
	out := Outcome{Alerts: len(alerts), Unnotified: []Failure{}}
	problemTimes := map[string][]int64{}
	for _, a := range alerts {
		if a.Time == nil {
			continue
		}
		switch a.AlertType() {
		case schema.NotificationProblem:
			problemTimes[a.EventID] = append(problemTimes[a.EventID], *a.Time)
		case "rollup_" + schema.RollupProblem:
			for id := range a.RollupAlerts {
				problemTimes[id] = append(problemTimes[id], *a.Time)
			}
		}
	}
	for _, ts := range problemTimes {
		slices.Sort(ts)
	}
	for _, f := range eps.all {
		ep := *f
		ts := problemTimes[schema.CheckID(f.Entity, f.Check)]
		i, _ := slices.BinarySearch(ts, f.Start)
		if i < len(ts) && ts[i] <= f.End {
			ep.Unnotified = ts[i] - f.Start
		} else {
			ep.Unnotified = f.End - f.Start
			out.Unnotified = append(out.Unnotified, ep)
		}
		if out.Longest == nil || ep.Unnotified > out.Longest.Unnotified {
			e := ep
			out.Longest = &e
		}
	}
	return out
}

// diff lists the alerts only the candidate has (added) and only the baseline has (removed),
// matching on time, check, type, state, contact and medium.
func diff(base, cand []schema.Alert) (added, removed []AlertRef) {
	count := map[AlertRef]int{}
	for i := range base {
		count[alertRef(&base[i])]++
	}
	for i := range cand {
		ref := alertRef(&cand[i])
		if count[ref] > 0 {
			count[ref]--
			continue
		}
		added = append(added, ref)
	}
	for i := range base {
		ref := alertRef(&base[i])
		if count[ref] > 0 {
			count[ref]--
			removed = append(removed, ref)
		}
	}
	if added == nil {
		added = []AlertRef{}
	}
	if removed == nil {
		removed = []AlertRef{}
	}
	return added, removed
}

// WriteJSON writes the report as one indented JSON document.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes the report for people.
func (r *Report) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "what if, %s to %s: %d lines of history (%s), %d replayed\n", r.From.Format(time.RFC3339), r.Until.Format(time.RFC3339), r.Events, r.Source, r.Replayed)
	for _, n := range r.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "CONTACT\tMEDIUM\tALERTS BEFORE → AFTER"
	if r.QuietHours != "" {
		head += "\tIN QUIET HOURS " + r.QuietHours
	}
	fmt.Fprintln(tw, head)
	for _, c := range r.Contacts {
		who := c.ID
		if c.Name != "" {
			who = c.Name + " (" + c.ID + ")"
		}
		for _, m := range c.Media {
			line := fmt.Sprintf("%s\t%s\t%d → %d%s", who, m.Medium, m.Baseline, m.Candidate, delta(m.Candidate-m.Baseline))
			if m.BaselineQuiet != nil {
				line += fmt.Sprintf("\t%d → %d (%s)", *m.BaselineQuiet, *m.CandidateQuiet, c.Timezone)
			}
			fmt.Fprintln(tw, line)
		}
	}
	tw.Flush()
	fmt.Fprintf(w, "alerts: %d → %d\n", r.Baseline.Alerts, r.Candidate.Alerts)
	fmt.Fprintf(w, "problems that reached nobody: %d → %d\n", len(r.Baseline.Unnotified), len(r.Candidate.Unnotified))
	fmt.Fprintf(w, "longest unnotified failure: %s → %s\n", longest(r.Baseline.Longest), longest(r.Candidate.Longest))
	for _, l := range []struct {
		title string
		refs  []AlertRef
	}{{"alerts removed", r.Removed}, {"alerts added", r.Added}} {
		fmt.Fprintf(w, "%s (%d):\n", l.title, len(l.refs))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, a := range l.refs {
			fmt.Fprintf(tw, "  %s\t%s:%s\t%s\t%s\t%s\t%s\n", a.At, a.Entity, a.Check, a.Type, a.State, a.Contact, a.Medium)
		}
		tw.Flush()
	}
	return nil
}

func delta(d int) string {
	switch {
	case d > 0:
		return fmt.Sprintf(" (+%d)", d)
	case d < 0:
		return fmt.Sprintf(" (%d)", d)
	}
	return ""
}

func longest(f *Failure) string {
	switch {
	case f == nil:
		return "none"
	case f.Unnotified == 0:
		return "0s"
	}
	s := fmt.Sprintf("%s (%s:%s from %s", humantime.Words(time.Duration(f.Unnotified)*time.Second), f.Entity, f.Check,
		time.Unix(f.Start, 0).UTC().Format(time.RFC3339))
	if f.Ongoing {
		s += ", still failing at the end"
	}
	return s + ")"
}
