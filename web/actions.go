package web

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/events"
	"github.com/flapjackgo/flapjack/internal/humantime"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/model/views"
)

// target is the check an action's path names, checked to exist (404 otherwise).
func (s *server) target(r *http.Request) (model.CheckRef, error) {
	ref := model.CheckRef{Entity: roster.NormalizeEntityName(r.PathValue("entity")), Check: r.PathValue("check")}
	err := s.withConn(r, func(conn redis.Conn) error {
		ok, err := views.ChecksExist(conn, s.o.Keys, []model.CheckRef{ref})
		if err != nil {
			return err
		}
		if !ok[0] {
			return errStatus(http.StatusNotFound, "Could not find check '%s'", ref.ID())
		}
		return nil
	})
	return ref, err
}

// done leaves msg for the check's page and redirects there (POST → redirect → GET).
func (s *server) done(w http.ResponseWriter, r *http.Request, ref model.CheckRef, msg string) error {
	s.setFlash(w, msg)
	to := s.checkURL(ref)
	if r.PostForm.Get("return") == "checks_failing" { // acknowledged from the failing list
		to = s.base + "checks_failing"
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
	return nil
}

func (s *server) checkURL(ref model.CheckRef) string {
	return s.base + "check?entity=" + url.QueryEscape(ref.Entity) + "&check=" + url.QueryEscape(ref.Check)
}

// acknowledge queues an acknowledgement event, as `flapjack ack` does; the executive opens the
// unscheduled maintenance.
func (s *server) acknowledge(w http.ResponseWriter, r *http.Request, user string) error {
	ref, err := s.target(r)
	if err != nil {
		return err
	}
	d, how := ackDuration(r)
	if err := s.queueAck(r, user, ref, d); err != nil {
		return err
	}
	return s.done(w, r, ref, fmt.Sprintf("Acknowledgement queued for %s for %s; it shows once the executive has processed it.", ref.ID(), how))
}

// ackDuration reads an acknowledgement form's duration and says it in words. An empty or
// unreadable duration leaves the length to the executive (executive.acknowledgement_duration,
// 4 hours by default).
func ackDuration(r *http.Request) (time.Duration, string) {
	if v := strings.TrimSpace(r.PostForm.Get("duration")); v != "" {
		if p, err := humantime.Parse(v); err == nil && p >= time.Second {
			return p, humantime.Words(p)
		}
	}
	return 0, "the default length"
}

// queueAck queues one acknowledgement of ref by user, with the form's summary: the one
// acknowledgement (events.Acknowledgement) every surface sends.
func (s *server) queueAck(r *http.Request, user string, ref model.CheckRef, d time.Duration) error {
	summary := strings.TrimSpace(r.PostForm.Get("summary"))
	if summary == "" {
		summary = "acknowledged by " + user + " via web"
	} else {
		summary += " — by " + user
	}
	ev := events.Acknowledgement(ref.Entity, ref.Check, summary, d, s.clk.Now())
	if _, err := s.o.Events.Publish(r.Context(), ev); err != nil {
		var inv *events.InvalidError
		if errors.As(err, &inv) {
			return errStatus(http.StatusBadRequest, "%v", err)
		}
		return err
	}
	s.log.Info("web: acknowledgement queued", zap.String("check", ref.ID()), zap.String("user", user))
	return nil
}

// endUnscheduled ends the current acknowledgement now.
func (s *server) endUnscheduled(w http.ResponseWriter, r *http.Request, user string) error {
	ref, err := s.target(r)
	if err != nil {
		return err
	}
	err = s.withConn(r, func(conn redis.Conn) error {
		return checkstate.EndUnscheduledMaintenance(conn, s.o.Keys, ref.Entity, ref.Check, s.clk.Now())
	})
	if errors.Is(err, checkstate.ErrNoSuchWindow) {
		return s.done(w, r, ref, "There was no acknowledgement to end.")
	}
	if err != nil {
		return err
	}
	return s.done(w, r, ref, "Acknowledgement ended by "+user+".")
}

// scheduledMaintenance creates a window, or with _method=delete ends the one starting at
// start_time (epoch seconds).
func (s *server) scheduledMaintenance(w http.ResponseWriter, r *http.Request, user string) error {
	ref, err := s.target(r)
	if err != nil {
		return err
	}
	now := s.clk.Now()
	if strings.EqualFold(r.PostForm.Get("_method"), "delete") {
		start, err := strconv.ParseInt(r.PostForm.Get("start_time"), 10, 64)
		if err != nil {
			return errStatus(http.StatusBadRequest, "start_time must be the window's start in epoch seconds")
		}
		err = s.withConn(r, func(conn redis.Conn) error {
			return checkstate.EndScheduledMaintenance(conn, s.o.Keys, ref.Entity, ref.Check, time.Unix(start, 0), now)
		})
		if errors.Is(err, checkstate.ErrNoSuchWindow) {
			return s.done(w, r, ref, "That maintenance window does not exist or has already ended.")
		}
		if err != nil {
			return err
		}
		return s.done(w, r, ref, "Scheduled maintenance starting "+time.Unix(start, 0).UTC().Format("2006-01-02 15:04 UTC")+" ended by "+user+".")
	}
	start, err := parseStart(r.PostForm.Get("start_time"), r.PostForm.Get("tz_offset"), now)
	if err != nil {
		return errStatus(http.StatusBadRequest, "Start time: %v", err)
	}
	d, err := humantime.Parse(r.PostForm.Get("duration"))
	if err != nil || d < time.Second {
		return errStatus(http.StatusBadRequest, "Duration: give one in words, like \"1 hour\" or \"30 minutes\"")
	}
	summary := strings.TrimSpace(r.PostForm.Get("summary"))
	if summary == "" {
		summary = "scheduled by " + user + " via web"
	} else {
		summary += " — by " + user
	}
	err = s.withConn(r, func(conn redis.Conn) error {
		return checkstate.CreateScheduledMaintenance(conn, s.o.Keys, ref.Entity, ref.Check, start, d, summary, now)
	})
	if err != nil {
		return err
	}
	return s.done(w, r, ref, fmt.Sprintf("Scheduled maintenance from %s for %s.", start.UTC().Format("2006-01-02 15:04 UTC"), humantime.Words(d)))
}

// decommission disables the check (DELETE /checks/:entity/:check in 1.6): it leaves
// current_checks, keeps its data, and comes back with its next event.
func (s *server) decommission(w http.ResponseWriter, r *http.Request, user string) error {
	if !strings.EqualFold(r.PostForm.Get("_method"), "delete") {
		return errStatus(http.StatusMethodNotAllowed, "Decommissioning a check is a DELETE (_method=delete)")
	}
	ref, err := s.target(r)
	if err != nil {
		return err
	}
	err = s.withConn(r, func(conn redis.Conn) error {
		return checkstate.DisableCheck(conn, s.o.Keys, ref.Entity, ref.Check, s.clk.Now())
	})
	if err != nil {
		return err
	}
	return s.done(w, r, ref, ref.ID()+" decommissioned by "+user+"; its next event enables it again.")
}

// parseStart reads a maintenance start: "now" or empty, "in <duration>" or a bare duration
// ("2 hours" from now), epoch seconds, RFC 3339, or a wall-clock time "2006-01-02T15:04" (the
// browser's datetime-local) / "2006-01-02 15:04[:05]" in the viewer's timezone, given as
// tzOffset, the minutes JavaScript's getTimezoneOffset reports (UTC without it).
func parseStart(v, tzOffset string, now time.Time) (time.Time, error) {
	v = strings.TrimSpace(strings.ToLower(v))
	switch {
	case v == "" || v == "now":
		return now, nil
	case strings.HasPrefix(v, "in "):
		d, err := humantime.Parse(strings.TrimPrefix(v, "in "))
		if err != nil {
			return time.Time{}, err
		}
		return now.Add(d), nil
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 100000000 {
		return time.Unix(n, 0), nil
	}
	if t, err := time.Parse(time.RFC3339, strings.ToUpper(v)); err == nil {
		return t, nil
	}
	loc := time.UTC
	if m, err := strconv.Atoi(strings.TrimSpace(tzOffset)); err == nil && m > -24*60 && m < 24*60 {
		loc = time.FixedZone("viewer", -m*60)
	}
	for _, layout := range []string{"2006-01-02t15:04", "2006-01-02t15:04:05", "2006-01-02 15:04", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, v, loc); err == nil {
			return t, nil
		}
	}
	if d, err := humantime.Parse(v); err == nil {
		return now.Add(d), nil
	}
	return time.Time{}, fmt.Errorf("%q is not a time: use \"now\", \"in 2 hours\", or a date and time like 2026-01-05 14:30", v)
}
