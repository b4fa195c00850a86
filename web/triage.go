package web

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/model/views"
	"github.com/flapjackgo/flapjack/schema"
	"github.com/flapjackgo/flapjack/status"
)

// The failing list for triage (/checks_failing): most urgent first (views.SortForTriage), each
// row with its own acknowledge form and a checkbox for "Acknowledge selected", and a fragment
// (/checks_failing/live) that static/live.js polls so the list follows changes without a reload.

// triageRow is one failing check.
type triageRow struct {
	status.CheckRow
	ID  string
	For string // how long it has been in its state: "1h 5m"
	// LastUpdate is the last real result (a stale check's marker says how old it is).
	LastUpdate int64
	Alert      views.LastAlert
}

// triageData is the failing list with its filter.
type triageData struct {
	Entity, Check, Tag string
	Filtered           bool
	FilterError        string
	Rows               []triageRow
	Total, More        int64
	LiveURL            string
	AckDuration        string
}

// readFailing reads the list r's filter selects; a bad filter is a 400 with the page still
// shown.
func (s *server) readFailing(r *http.Request) (triageData, int, error) {
	qs := r.URL.Query()
	d := triageData{Entity: strings.TrimSpace(qs.Get("entity")), Check: strings.TrimSpace(qs.Get("check")),
		Tag: strings.ToLower(strings.TrimSpace(qs.Get("tag"))), AckDuration: "2 hours"}
	d.Filtered = d.Entity != "" || d.Check != "" || d.Tag != ""
	live := url.Values{}
	for k, v := range map[string]string{"entity": d.Entity, "check": d.Check, "tag": d.Tag, "limit": qs.Get("limit")} {
		if v != "" {
			live.Set(k, v)
		}
	}
	d.LiveURL = s.base + "checks_failing/live"
	if len(live) > 0 {
		d.LiveURL += "?" + live.Encode()
	}
	// Every failing check is read so the most severe come first whatever the limit; the rows
	// shown are then cut to it.
	q := status.CheckQuery{FailingOnly: true, Entity: d.Entity, Check: d.Check, Tag: d.Tag, Limit: -1}
	if err := q.Validate(); err != nil {
		d.FilterError = err.Error()
		return d, http.StatusBadRequest, nil
	}
	now := s.clk.Now()
	err := s.withConn(r, func(conn redis.Conn) error {
		list, err := status.ReadChecks(conn, s.o.Keys, q, now)
		if err != nil {
			return err
		}
		views.SortForTriage(list.Checks, func(c status.CheckRow) views.TriageKey {
			return views.TriageKey{State: c.State, Since: c.Since, ID: model.CheckRef{Entity: c.Entity, Check: c.Check}.ID()}
		})
		rows := list.Checks[:min(len(list.Checks), limitOf(r))]
		refs := make([]model.CheckRef, len(rows))
		for i, c := range rows {
			refs[i] = model.CheckRef{Entity: c.Entity, Check: c.Check}
		}
		alerts, err := views.LastAlerts(conn, s.o.Keys, refs)
		if err != nil {
			return err
		}
		updates, err := views.LastUpdates(conn, s.o.Keys, refs)
		if err != nil {
			return err
		}
		d.Rows = make([]triageRow, len(rows))
		for i, c := range rows {
			d.Rows[i] = triageRow{CheckRow: c, ID: refs[i].ID(), Alert: alerts[i], LastUpdate: updates[i]}
			if c.Since > 0 {
				d.Rows[i].For = status.Compact(now.Sub(time.Unix(c.Since, 0)))
			}
		}
		d.Total, d.More = list.Total, list.Total-int64(len(rows))
		return nil
	})
	return d, http.StatusOK, err
}

func (s *server) failing(w http.ResponseWriter, r *http.Request) error {
	d, code, err := s.readFailing(r)
	if err != nil {
		return err
	}
	return s.livePage(w, r, code, "failing", "failinglist", "checks_failing", "Failing checks", true, d)
}

// failingLive is the list alone, for live.js to swap in.
func (s *server) failingLive(w http.ResponseWriter, r *http.Request) error {
	d, code, err := s.readFailing(r)
	if err != nil {
		return err
	}
	return s.part(w, r, code, "failing", "failinglist", d)
}

// bulkAcknowledge queues one acknowledgement per selected check (the form's "check" values,
// ENTITY:CHECK), all with the form's duration and summary, then returns to the list.
func (s *server) bulkAcknowledge(w http.ResponseWriter, r *http.Request, user string) error {
	ids := r.PostForm["check"]
	back := func(msg string) error {
		s.setFlash(w, msg)
		http.Redirect(w, r, s.base+"checks_failing", http.StatusSeeOther)
		return nil
	}
	if len(ids) == 0 {
		return back("Nothing acknowledged: select at least one check.")
	}
	refs := make([]model.CheckRef, 0, len(ids))
	for _, id := range ids {
		entity, check, ok := schema.SplitCheckID(id)
		if !ok {
			return errStatus(http.StatusBadRequest, "%q is not a check (ENTITY:CHECK)", id)
		}
		refs = append(refs, model.CheckRef{Entity: roster.NormalizeEntityName(entity), Check: check})
	}
	err := s.withConn(r, func(conn redis.Conn) error {
		ok, err := views.ChecksExist(conn, s.o.Keys, refs)
		if err != nil {
			return err
		}
		for i, found := range ok {
			if !found {
				return errStatus(http.StatusNotFound, "Could not find check '%s'", refs[i].ID())
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	d, how := ackDuration(r)
	names := make([]string, len(refs))
	for i, ref := range refs {
		if err := s.queueAck(r, user, ref, d); err != nil {
			return fmt.Errorf("acknowledge %s (after %d of %d queued): %w", ref.ID(), i, len(refs), err)
		}
		names[i] = ref.ID()
	}
	return back(fmt.Sprintf("Acknowledgements queued for %d check(s) for %s: %s; they show once the executive has processed them.",
		len(refs), how, strings.Join(names, ", ")))
}
