package views

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/schema"
)

// Nights are the hours counted apart in the on-call report: from NightStart to NightEnd (the
// next morning) on the contact's wall clock.
const (
	NightStart = 22
	NightEnd   = 7
)

// OncallWeek is one contact's week in the on-call report (`flapjack report oncall`): the alerts
// queued for the contact from the delivery log, and how fast their problems were acknowledged.
type OncallWeek struct {
	Contact  string `json:"contact"`
	Name     string `json:"name,omitempty"`
	Timezone string `json:"timezone"`
	// Week is the Monday the week starts on, on the contact's wall clock (2026-01-05).
	Week      string         `json:"week"`
	Alerts    int            `json:"alerts"`
	Delivered int            `json:"delivered"`
	ByMedium  map[string]int `json:"by_medium"`
	// ByHour counts the alerts by the hour of day they were queued at, on the contact's clock;
	// Nights are those from NightStart to NightEnd.
	ByHour [24]int `json:"by_hour"`
	Nights int     `json:"nights"`
	// Pages are the problem notifications the contact was alerted of (one per check and
	// time, whatever the media); Acknowledged those whose check was acknowledged before its next
	// page to the contact or the end of the report.
	Pages        int `json:"pages"`
	Acknowledged int `json:"acknowledged"`
	// AckMedian and AckP90 are the nearest-rank median and 90th percentile of the seconds from
	// page to acknowledgement (absent when nothing was acknowledged).
	AckMedian *int64 `json:"ack_median_seconds,omitempty"`
	AckP90    *int64 `json:"ack_p90_seconds,omitempty"`
	// Escalations are the alerts that were an escalation step reaching the contact.
	Escalations int `json:"escalations"`
}

// page is a problem notification to a contact: a check at a time.
type page struct {
	check string
	at    int64
}

// OncallReport reads the on-call report of [from, until) (unix seconds) for one contact, or
// every contact alerted ("" ), sorted by contact then week; timezone is where contacts without
// their own are shown.
func OncallReport(conn redis.Conn, keys schema.Keys, from, until int64, contact string, timezone *time.Location) ([]OncallWeek, error) {
	recs, err := ReadDeliveries(conn, keys, DeliveryFilter{Contact: contact, Since: from, Until: until, Limit: 1 << 30})
	if err != nil {
		return nil, err
	}
	byContact := map[string][]schema.DeliveryRecord{}
	for _, r := range recs {
		byContact[r.Contact] = append(byContact[r.Contact], r)
	}
	ids := slices.Sorted(maps.Keys(byContact))
	contacts, err := roster.LoadContacts(conn, keys, ids)
	if err != nil {
		return nil, err
	}
	people := map[string]roster.Contact{}
	for _, c := range contacts {
		people[c.ID] = c
	}
	acks := ackStarts{conn: conn, keys: keys, starts: map[string][]int64{}}
	var out []OncallWeek
	for _, id := range ids {
		weeks, err := contactWeeks(people[id], id, byContact[id], until, timezone, &acks)
		if err != nil {
			return nil, err
		}
		out = append(out, weeks...)
	}
	return out, nil
}

func contactWeeks(c roster.Contact, id string, recs []schema.DeliveryRecord, until int64, fallback *time.Location, acks *ackStarts) ([]OncallWeek, error) {
	loc := fallback
	if l, err := time.LoadLocation(c.Timezone); err == nil && c.Timezone != "" {
		loc = l
	}
	weeks := map[string]*OncallWeek{}
	pages := map[string][]page{} // week -> pages
	seen := map[page]bool{}
	var all []page // every page of the contact, for "before its next page"
	for _, r := range recs {
		at := time.Unix(r.QueuedAt, 0).In(loc)
		key := weekStart(at).Format("2006-01-02")
		w := weeks[key]
		if w == nil {
			w = &OncallWeek{Contact: id, Name: strings.TrimSpace(c.FirstName + " " + c.LastName), Timezone: loc.String(), Week: key, ByMedium: map[string]int{}}
			weeks[key] = w
		}
		w.Alerts++
		w.ByMedium[r.Medium]++
		w.ByHour[at.Hour()]++
		if at.Hour() >= NightStart || at.Hour() < NightEnd {
			w.Nights++
		}
		if r.Status == schema.DeliveryDelivered {
			w.Delivered++
		}
		if r.Escalation != "" {
			w.Escalations++
		}
		if p := (page{r.Check, r.QueuedAt}); r.Type == schema.NotificationProblem && !seen[p] {
			seen[p] = true
			pages[key] = append(pages[key], p)
			all = append(all, p)
		}
	}
	var out []OncallWeek
	for _, key := range slices.Sorted(maps.Keys(weeks)) {
		w := weeks[key]
		var delays []int64
		for _, p := range pages[key] {
			w.Pages++
			d, ok, err := acks.delay(p, nextPage(all, p, until))
			if err != nil {
				return nil, err
			}
			if ok {
				w.Acknowledged++
				delays = append(delays, d)
			}
		}
		w.AckMedian, w.AckP90 = nearestRank(delays, 50), nearestRank(delays, 90)
		out = append(out, *w)
	}
	return out, nil
}

// weekStart is 00:00 of the Monday of t's week, on t's clock.
func weekStart(t time.Time) time.Time {
	back := (int(t.Weekday()) + 6) % 7
	y, m, d := t.AddDate(0, 0, -back).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, t.Location())
}

// nextPage is when the contact was next paged about p's check, else until.
func nextPage(all []page, p page, until int64) int64 {
	next := until
	for _, q := range all {
		if q.check == p.check && q.at > p.at && q.at < next {
			next = q.at
		}
	}
	return next
}

// nearestRank is the pct percentile of values by the nearest-rank method; nil for none.
func nearestRank(values []int64, pct int) *int64 {
	if len(values) == 0 {
		return nil
	}
	sorted := slices.Clone(values)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	rank := (pct*len(sorted) + 99) / 100
	v := sorted[max(rank, 1)-1]
	return &v
}

// ackStarts reads each check's acknowledgements (unscheduled maintenance starts) once.
type ackStarts struct {
	conn   redis.Conn
	keys   schema.Keys
	starts map[string][]int64
}

// delay is the time from p to the first acknowledgement of its check at or after p and before
// end.
func (a *ackStarts) delay(p page, end int64) (int64, bool, error) {
	starts, ok := a.starts[p.check]
	if !ok {
		windows, err := checkstate.ListMaintenance(a.conn, a.keys, schema.Unscheduled, p.check)
		if err != nil {
			return 0, false, fmt.Errorf("read acknowledgements of %s: %w", p.check, err)
		}
		for _, w := range windows {
			starts = append(starts, w.Start)
		}
		slices.Sort(starts)
		a.starts[p.check] = starts
	}
	for _, s := range starts {
		if s >= p.at && s < end {
			return s - p.at, true, nil
		}
	}
	return 0, false, nil
}
