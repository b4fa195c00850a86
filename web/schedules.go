package web

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/oncall"
)

// On-call schedules: a list page, a page per schedule (who is on call now, the next 14 days as
// shifts with gaps marked, and a form adding an override), and calendar feeds of a schedule's
// shifts and of a contact's, for people to subscribe to.

// schedulePageDays is how far ahead a schedule's page lists shifts.
const schedulePageDays = 14

// Calendar feeds cover from FeedDaysBack days before today (midnight UTC) to FeedDaysAhead days
// after it: a fixed boundary, so a feed fetched again keeps the UIDs of the shifts it lists again.
const (
	FeedDaysBack  = 7
	FeedDaysAhead = 60
)

// FeedRange is the range the calendar feeds cover at now.
func FeedRange(now time.Time) (from, until time.Time) {
	today := now.UTC().Truncate(24 * time.Hour)
	return today.AddDate(0, 0, -FeedDaysBack), today.AddDate(0, 0, FeedDaysAhead)
}

// scheduleLine is a schedule on the list page.
type scheduleLine struct {
	ID, Title, Timezone string
	Now                 shiftLine
}

// shiftLine is who is on call over a stretch (or at an instant), for a page.
type shiftLine struct {
	Start, End string // on the schedule's clock
	Who, Why   string
	Gap        bool
}

func describeOnCall(o oncall.OnCall) shiftLine {
	l := shiftLine{Who: strings.Join(o.Contacts, ", "), Why: oncall.Provenance(o), Gap: o.Source == oncall.Nobody}
	if l.Gap {
		l.Who = "Nobody"
	}
	return l
}

// schedulePage is one schedule's page.
type schedulePage struct {
	ID, Title, Timezone string
	Now                 shiftLine
	Shifts              []shiftLine
	Contacts            []string // who an override may name
	Path                string   // the schedule's path segment
}

func (s *server) readSchedules(r *http.Request) ([]*oncall.Schedule, error) {
	var out []*oncall.Schedule
	err := s.withConn(r, func(conn redis.Conn) error {
		var problems []error
		var err error
		out, problems, err = roster.Schedules(conn, s.o.Keys)
		for _, p := range problems {
			s.log.Warn("web: schedule cannot be read", zap.Error(p))
		}
		return err
	})
	return out, err
}

func (s *server) schedules(w http.ResponseWriter, r *http.Request) error {
	lines, err := s.onCallNow(r, s.clk.Now())
	if err != nil {
		return err
	}
	return s.page(w, r, "schedules", "schedules", "On-call schedules", true, lines)
}

// onCallNow is each schedule with who it puts on call at now (the schedules page, the summary).
func (s *server) onCallNow(r *http.Request, now time.Time) ([]scheduleLine, error) {
	all, err := s.readSchedules(r)
	if err != nil {
		return nil, err
	}
	lines := make([]scheduleLine, len(all))
	for i, sc := range all {
		lines[i] = scheduleLine{ID: sc.ID, Title: sc.Title(), Timezone: sc.Location().String(), Now: describeOnCall(sc.At(now))}
	}
	return lines, nil
}

// contactShift is one of a contact's shifts, on the schedule's clock, for the contact's page.
type contactShift struct {
	ScheduleID, Title, Start, End, Why string
}

// nextShifts are a contact's shifts over the next schedulePageDays across every schedule, the
// one under way first.
func (s *server) nextShifts(r *http.Request, contact string, now time.Time) ([]contactShift, error) {
	all, err := s.readSchedules(r)
	if err != nil || len(all) == 0 {
		return nil, err
	}
	shifts, err := oncall.ContactShifts(contact, all, now, now.AddDate(0, 0, schedulePageDays))
	if err != nil {
		return nil, err
	}
	zones := make(map[string]*time.Location, len(all))
	for _, sc := range all {
		zones[sc.ID] = sc.Location()
	}
	out := make([]contactShift, len(shifts))
	for i, sh := range shifts {
		loc := zones[sh.ScheduleID]
		out[i] = contactShift{ScheduleID: sh.ScheduleID, Title: sh.Title, Start: localStamp(sh.Start, loc),
			End: localStamp(sh.End, loc), Why: oncall.Provenance(sh.OnCall)}
	}
	return out, nil
}

// findSchedule reads one schedule (404 when there is none).
func (s *server) findSchedule(r *http.Request, id string) (*oncall.Schedule, error) {
	all, err := s.readSchedules(r)
	if err != nil {
		return nil, err
	}
	for _, sc := range all {
		if sc.ID == id {
			return sc, nil
		}
	}
	return nil, errStatus(http.StatusNotFound, "Could not find schedule '%s'", id)
}

// schedule serves a schedule's page, or its calendar feed for an id ending in ".ics".
func (s *server) schedule(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if feed, ok := strings.CutSuffix(id, ".ics"); ok {
		return s.scheduleFeed(w, r, feed)
	}
	sc, err := s.findSchedule(r, id)
	if err != nil {
		return err
	}
	now := s.clk.Now()
	shifts, err := sc.Shifts(now, now.AddDate(0, 0, schedulePageDays))
	if err != nil {
		return err
	}
	loc := sc.Location()
	d := schedulePage{ID: sc.ID, Title: sc.Title(), Timezone: loc.String(), Now: describeOnCall(sc.At(now)),
		Path: url.PathEscape(sc.ID)}
	for _, sh := range shifts {
		l := describeOnCall(sh.OnCall)
		l.Start, l.End = localStamp(sh.Start, loc), localStamp(sh.End, loc)
		d.Shifts = append(d.Shifts, l)
	}
	err = s.withConn(r, func(conn redis.Conn) error {
		d.Contacts, err = roster.ContactIDs(r.Context(), conn, s.o.Keys)
		return err
	})
	if err != nil {
		return err
	}
	return s.page(w, r, "schedule", "schedules", "Schedule "+sc.Title(), true, d)
}

func localStamp(t time.Time, loc *time.Location) string {
	return t.In(loc).Format("Mon 2 Jan 15:04 MST")
}

func (s *server) scheduleFeed(w http.ResponseWriter, r *http.Request, id string) error {
	sc, err := s.findSchedule(r, id)
	if err != nil {
		return err
	}
	now := s.clk.Now()
	shifts, err := sc.Shifts(FeedRange(now))
	if err != nil {
		return err
	}
	return writeCalendar(w, sc.ID, sc.Calendar(shifts, now))
}

// contactShifts serves a contact's shifts across every schedule as a calendar feed.
func (s *server) contactShifts(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	var known []roster.StoredContact
	err := s.withConn(r, func(conn redis.Conn) error {
		var err error
		known, err = roster.ReadContacts(r.Context(), conn, s.o.Keys, []string{id}, false)
		return err
	})
	var nf *roster.NotFoundError
	if errors.As(err, &nf) || (err == nil && len(known) == 0) {
		return errStatus(http.StatusNotFound, "Could not find contact '%s'", id)
	}
	if err != nil {
		return err
	}
	all, err := s.readSchedules(r)
	if err != nil {
		return err
	}
	now := s.clk.Now()
	from, until := FeedRange(now)
	shifts, err := oncall.ContactShifts(id, all, from, until)
	if err != nil {
		return err
	}
	return writeCalendar(w, id+"-shifts", oncall.ContactCalendar(id, shifts, now))
}

func writeCalendar(w http.ResponseWriter, name string, ics []byte) error {
	w.Header().Set("Content-Type", "text/calendar; charset=utf-8")
	w.Header().Set("Content-Disposition", fmt.Sprintf("inline; filename=%q", name+".ics"))
	w.Header().Set("Cache-Control", "no-store")
	_, err := w.Write(ics)
	return err
}

// overrideLayout is how the override form's start and end read (an HTML datetime-local field),
// on the schedule's clock.
const overrideLayout = "2006-01-02T15:04"

// addOverride puts a contact on call in a schedule over a window the form gives in the
// schedule's timezone.
func (s *server) addOverride(w http.ResponseWriter, r *http.Request, user string) error {
	id := r.PathValue("id")
	sc, err := s.findSchedule(r, id)
	if err != nil {
		return err
	}
	loc := sc.Location()
	contact := strings.TrimSpace(r.PostForm.Get("contact"))
	start, err1 := time.ParseInLocation(overrideLayout, strings.TrimSpace(r.PostForm.Get("start")), loc)
	end, err2 := time.ParseInLocation(overrideLayout, strings.TrimSpace(r.PostForm.Get("end")), loc)
	switch {
	case contact == "":
		return errStatus(http.StatusBadRequest, "Choose who takes the override.")
	case err1 != nil || err2 != nil:
		return errStatus(http.StatusBadRequest, "Give the start and end as YYYY-MM-DDTHH:MM on the schedule's clock (%s).", loc)
	case !end.After(start):
		return errStatus(http.StatusBadRequest, "The override must end after it starts.")
	}
	err = s.withConn(r, func(conn redis.Conn) error {
		return roster.AddOverride(r.Context(), conn, s.o.Keys, id, oncall.Override{Contact: contact, Start: start.UTC(), End: end.UTC()})
	})
	var nf *roster.NotFoundError
	var inv *roster.ValidationError
	switch {
	case errors.As(err, &nf):
		return errStatus(http.StatusNotFound, "%v", err)
	case errors.As(err, &inv):
		return errStatus(http.StatusBadRequest, "%v", err)
	case err != nil:
		return err
	}
	s.log.Info("web: schedule override added", zap.String("schedule", id), zap.String("contact", contact),
		zap.Time("start", start), zap.Time("end", end), zap.String("user", user))
	s.setFlash(w, fmt.Sprintf("%s is on call in %s from %s to %s.", contact, sc.Title(), localStamp(start, loc), localStamp(end, loc)))
	http.Redirect(w, r, s.base+"schedules/"+url.PathEscape(id), http.StatusSeeOther)
	return nil
}
