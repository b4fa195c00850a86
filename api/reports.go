package api

// The Flapjack 1.x reports (docs/flapjack-1x.md A.9): status, outage, scheduled and unscheduled
// maintenance and downtime, per check, for checks named by id or for every check of entities
// named by id. Data comes through package views' readers, a fixed number of pipelined round
// trips per batch of checks; the arithmetic (outages, downtime) is pure and lives here.

import (
	"encoding/json"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/model/views"
	"github.com/flapjackgo/flapjack/schema"
)

// reportKinds are the kinds of report, in route order.
var reportKinds = []string{"status", "outage", "scheduled_maintenance", "unscheduled_maintenance", "downtime"}

func (a *jsonAPI) reportRoutes(route func(method, path, what string, h apiHandler)) {
	for _, kind := range reportKinds {
		h := a.getReport(kind)
		window := "?start_time=&end_time= (ISO 8601)"
		if kind == "status" {
			window = ""
		}
		route("GET", "/"+kind+"_report/entities", "JSON API: "+kind+" report of every check of every entity"+window, h)
		route("GET", "/"+kind+"_report/entities/{ids}", "JSON API: "+kind+" report of the checks of entities by id"+window, h)
		route("GET", "/"+kind+"_report/checks", "JSON API: "+kind+" report of every current check"+window, h)
		route("GET", "/"+kind+"_report/checks/{ids...}", "JSON API: "+kind+" report of checks by id (ENTITY:CHECK)"+window, h)
	}
}

// reportTarget is one check of a report with its entity's id.
type reportTarget struct {
	model.CheckRef
	EntityID string
}

// reportWindow is a report's time range; 0 = unbounded.
type reportWindow struct{ start, end int64 }

func parseReportWindow(r *http.Request) (reportWindow, error) {
	var w reportWindow
	for _, p := range []struct {
		name string
		dst  *int64
	}{{"start_time", &w.start}, {"end_time", &w.end}} {
		v := r.URL.Query().Get(p.name)
		if v == "" {
			continue
		}
		t, err := parseISO8601(v)
		if err != nil {
			return w, failWith(http.StatusBadRequest, "%s %q is not an ISO 8601 time (2015-04-08T15:50:36-07:00)", p.name, v)
		}
		*p.dst = t.Unix()
	}
	if w.start > 0 && w.end > 0 && w.end < w.start {
		return w, failWith(http.StatusBadRequest, "end_time is before start_time")
	}
	return w, nil
}

// parseISO8601 accepts RFC 3339 and the offset forms Ruby's Time#iso8601 and date tools write.
func parseISO8601(v string) (time.Time, error) {
	var err error
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04:05-0700", "2006-01-02T15:04:05Z0700", "2006-01-02T15:04:05"} {
		var t time.Time
		if t, err = time.Parse(layout, v); err == nil {
			return t, nil
		}
	}
	return time.Time{}, err
}

// reportTargets resolves the path to checks: entities by id (each one's current checks),
// checks by id, or every entity / every current check.
func (a *jsonAPI) reportTargets(r *http.Request, c redis.Conn) ([]reportTarget, error) {
	byEntity := strings.HasPrefix(strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 3)[1], "entities")
	var refs []model.CheckRef
	if byEntity {
		var names []string
		var ids []string
		var err error
		if r.PathValue("ids") != "" {
			if ids, err = pathIDs(r, 2); err != nil {
				return nil, err
			}
			byID, err := views.EntityNamesOf(c, a.o.Keys, ids)
			if err != nil {
				return nil, err
			}
			var missing []string
			for _, id := range ids {
				if n, ok := byID[id]; ok {
					names = append(names, n)
				} else {
					missing = append(missing, id)
				}
			}
			if len(names) == 0 {
				return nil, failWith(http.StatusNotFound, "could not find entities: '%s'", strings.Join(missing, "', '"))
			}
		} else if names, err = views.EntityNames(c, a.o.Keys); err != nil {
			return nil, err
		}
		checks, err := checkstate.CurrentChecksOf(c, a.o.Keys, names)
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			for _, ch := range checks[n] {
				refs = append(refs, model.CheckRef{Entity: n, Check: ch})
			}
		}
	} else if r.PathValue("ids") != "" {
		ids, err := pathIDs(r, 2)
		if err != nil {
			return nil, err
		}
		var asked []model.CheckRef
		var malformed []string
		for _, id := range ids {
			e, ch, ok := schema.SplitCheckID(id)
			if !ok {
				malformed = append(malformed, id)
				continue
			}
			asked = append(asked, model.CheckRef{Entity: e, Check: ch})
		}
		exist, err := views.ChecksExist(c, a.o.Keys, asked)
		if err != nil {
			return nil, err
		}
		for i, ref := range asked {
			if exist[i] {
				refs = append(refs, ref)
			}
		}
		if len(refs) == 0 {
			return nil, failWith(http.StatusNotFound, "could not find entity checks: '%s'", strings.Join(append(malformed, checkIDs(asked)...), "', '"))
		}
	} else {
		var err error
		if refs, err = checkstate.AllCurrentChecks(c, a.o.Keys); err != nil {
			return nil, err
		}
	}
	var names []string
	seen := map[string]bool{}
	for _, ref := range refs {
		if !seen[ref.Entity] {
			seen[ref.Entity] = true
			names = append(names, ref.Entity)
		}
	}
	entityIDs, err := views.EntityIDsOf(c, a.o.Keys, names)
	if err != nil {
		return nil, err
	}
	out := make([]reportTarget, len(refs))
	for i, ref := range refs {
		id := entityIDs[ref.Entity]
		if id == "" {
			id = ref.Entity // an entity recorded without an id is named by its name
		}
		out[i] = reportTarget{CheckRef: ref, EntityID: id}
	}
	return out, nil
}

func checkIDs(refs []model.CheckRef) []string {
	out := make([]string, len(refs))
	for i, r := range refs {
		out[i] = r.ID()
	}
	return out
}

// getReport answers GET /<kind>_report/...
func (a *jsonAPI) getReport(kind string) apiHandler {
	return func(w http.ResponseWriter, r *http.Request) error {
		window, err := parseReportWindow(r)
		if err != nil {
			return err
		}
		var reports []map[string]any
		var targets []reportTarget
		err = a.conn(r, func(c redis.Conn) error {
			if targets, err = a.reportTargets(r, c); err != nil {
				return err
			}
			refs := make([]model.CheckRef, len(targets))
			for i, t := range targets {
				refs[i] = t.CheckRef
			}
			reports, err = a.buildReports(c, kind, refs, window)
			return err
		})
		if err != nil {
			return err
		}
		writeAPI(w, http.StatusOK, reportBody(kind, targets, reports))
		return nil
	}
}

// buildReports computes the per-check reports of kind.
func (a *jsonAPI) buildReports(c redis.Conn, kind string, refs []model.CheckRef, w reportWindow) ([]map[string]any, error) {
	out := make([]map[string]any, len(refs))
	switch kind {
	case "status":
		statuses, err := views.ReportStatuses(c, a.o.Keys, a.now(), refs)
		if err != nil {
			return nil, err
		}
		for i, s := range statuses {
			out[i] = statusReport(s)
		}
	case "outage":
		hist, err := views.StateHistories(c, a.o.Keys, refs, w.start, w.end)
		if err != nil {
			return nil, err
		}
		for i := range refs {
			out[i] = map[string]any{"outages": outages(hist[i], w)}
		}
	case "scheduled_maintenance", "unscheduled_maintenance":
		mkind := strings.TrimSuffix(kind, "_maintenance")
		ws, err := views.MaintenancesIn(c, a.o.Keys, mkind, refs, w.start, w.end)
		if err != nil {
			return nil, err
		}
		for i := range refs {
			out[i] = map[string]any{mkind + "_maintenances": maintenanceJSON(ws[i])}
		}
	case "downtime":
		hist, err := views.StateHistories(c, a.o.Keys, refs, w.start, w.end)
		if err != nil {
			return nil, err
		}
		ws, err := views.MaintenancesIn(c, a.o.Keys, schema.Scheduled, refs, w.start, w.end)
		if err != nil {
			return nil, err
		}
		for i := range refs {
			out[i] = downtime(outages(hist[i], w), ws[i], w)
		}
	}
	return out, nil
}

// reportBody is {"<kind>_reports": [...], "linked": {"entities": [...], "checks": [...]}}.
func reportBody(kind string, targets []reportTarget, reports []map[string]any) map[string]any {
	type linkedEntity struct {
		ID    string              `json:"id"`
		Name  string              `json:"name"`
		Links map[string][]string `json:"links"`
	}
	type linkedCheck struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	entities := []*linkedEntity{}
	byID := map[string]*linkedEntity{}
	checks := make([]linkedCheck, len(targets))
	for i, t := range targets {
		reports[i]["links"] = map[string][]string{"entity": {t.EntityID}, "check": {t.ID()}}
		e := byID[t.EntityID]
		if e == nil {
			e = &linkedEntity{ID: t.EntityID, Name: t.Entity, Links: map[string][]string{"checks": {}}}
			byID[t.EntityID] = e
			entities = append(entities, e)
		}
		e.Links["checks"] = append(e.Links["checks"], t.ID())
		checks[i] = linkedCheck{ID: t.ID(), Name: t.Check}
	}
	if reports == nil {
		reports = []map[string]any{}
	}
	return map[string]any{kind + "_reports": reports, "linked": map[string]any{"entities": entities, "checks": checks}}
}

// statusReport is the status report of one check.
func statusReport(s views.ReportStatus) map[string]any {
	num := func(field string) any {
		v, ok := s.Fields[field]
		if !ok {
			return nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			if f, ferr := strconv.ParseFloat(v, 64); ferr == nil {
				return int64(f)
			}
			return nil
		}
		return n
	}
	text := func(field string) any {
		if v, ok := s.Fields[field]; ok {
			return v
		}
		return nil
	}
	var state any
	if s.State != "" {
		state = s.State
	}
	var perfdata any
	if p := s.Fields["perfdata"]; p != "" && json.Valid([]byte(p)) {
		perfdata = json.RawMessage(p)
	}
	last := func(p *int64) any {
		if p == nil {
			return nil
		}
		return *p
	}
	return map[string]any{
		"name":                              s.Check,
		"state":                             state,
		"enabled":                           s.Enabled,
		"summary":                           text("summary"),
		"details":                           text("details"),
		"perfdata":                          perfdata,
		"in_unscheduled_maintenance":        s.InUnscheduledMaintenance(),
		"in_scheduled_maintenance":          s.InScheduledMaintenance(),
		"initial_failure_delay":             num("initial_failure_delay"),
		"repeat_failure_delay":              num("repeat_failure_delay"),
		"last_update":                       num("last_update"),
		"last_change":                       num("last_change"),
		"last_problem_notification":         last(s.LastProblem),
		"last_recovery_notification":        last(s.LastRecovery),
		"last_acknowledgement_notification": last(s.LastAcknowledgement),
	}
}

// outage is one element of an outage or downtime report. EndTime and Duration are nil for an
// outage still open in a window without an end.
type outage struct {
	State     string `json:"state"`
	StartTime int64  `json:"start_time"`
	EndTime   *int64 `json:"end_time"`
	Duration  *int64 `json:"duration"`
	Summary   string `json:"summary"`
	Details   string `json:"details"`
}

func ptr(n int64) *int64 { return &n }

// outages turns a state history (the state in force at w.start first, then the changes in the
// window) into the runs of non-ok states: consecutive equal states merge, their summaries and
// details joined with " / "; a run starting before w.start is clipped to it; a run still open
// ends at w.end (nil without one).
func outages(hist []views.StateRecord, w reportWindow) []outage {
	type run struct {
		state              string
		start              int64
		summaries, details []string
	}
	var runs []run
	for _, h := range hist {
		if n := len(runs); n > 0 && runs[n-1].state == h.State {
			if h.Summary != "" {
				runs[n-1].summaries = append(runs[n-1].summaries, h.Summary)
			}
			if h.Details != "" {
				runs[n-1].details = append(runs[n-1].details, h.Details)
			}
			continue
		}
		r := run{state: h.State, start: h.Time}
		if h.Summary != "" {
			r.summaries = []string{h.Summary}
		}
		if h.Details != "" {
			r.details = []string{h.Details}
		}
		runs = append(runs, r)
	}
	out := []outage{}
	for i, r := range runs {
		if r.state == schema.StateOK || r.state == "" {
			continue
		}
		o := outage{State: r.state, StartTime: max(r.start, w.start),
			Summary: strings.Join(r.summaries, " / "), Details: strings.Join(r.details, " / ")}
		switch {
		case i+1 < len(runs):
			o.EndTime = ptr(runs[i+1].start)
		case w.end > 0:
			o.EndTime = ptr(w.end)
		}
		if o.EndTime != nil {
			o.Duration = ptr(*o.EndTime - o.StartTime)
		}
		out = append(out, o)
	}
	return out
}

type maintenanceReport struct {
	StartTime int64  `json:"start_time"`
	EndTime   int64  `json:"end_time"`
	Duration  int64  `json:"duration"`
	Summary   string `json:"summary"`
}

func maintenanceJSON(ws []checkstate.MaintenanceWindow) []maintenanceReport {
	out := make([]maintenanceReport, len(ws))
	for i, m := range ws {
		out[i] = maintenanceReport{StartTime: m.Start, EndTime: m.Start + m.Duration, Duration: m.Duration, Summary: m.Summary}
	}
	return out
}

// downtime removes scheduled maintenance from outages, as Flapjack 1.6 does: for each window,
// an outage running across the whole of it is split in two (" [split start]" before it,
// " [split finish]" after), one inside it is dropped and one overlapping an end of it is
// trimmed. Open outages (no end) are left as they are and not counted. It totals the seconds
// per state and, when the window has both ends, the percentages of it, with "ok" the rest.
func downtime(outs []outage, maint []checkstate.MaintenanceWindow, w reportWindow) map[string]any {
	for _, m := range maint {
		ms, me := m.Start, m.Start+m.Duration
		var next []outage
		for _, o := range outs {
			if o.EndTime == nil {
				next = append(next, o)
				continue
			}
			os, oe := o.StartTime, *o.EndTime
			switch {
			case os < ms && oe > me:
				before, after := o, o
				before.EndTime, before.Duration = ptr(ms), ptr(ms-os)
				before.Summary = o.Summary + " [split start]"
				after.StartTime, after.Duration = me, ptr(oe-me)
				after.Summary = o.Summary + " [split finish]"
				next = append(next, before, after)
			case ms <= os && me >= oe:
				// inside the window: not downtime
			case ms <= os && me > os:
				o.StartTime, o.Duration = me, ptr(oe-me)
				next = append(next, o)
			case ms < oe && me >= oe:
				o.EndTime, o.Duration = ptr(ms), ptr(ms-os)
				next = append(next, o)
			default:
				next = append(next, o)
			}
		}
		outs = next
	}
	sort.SliceStable(outs, func(i, j int) bool { return outs[i].StartTime < outs[j].StartTime })
	if outs == nil {
		outs = []outage{}
	}
	total := map[string]int64{}
	for _, o := range outs {
		total[o.State] += 0
		if o.Duration != nil {
			total[o.State] += *o.Duration
		}
	}
	percent := map[string]*float64{}
	for st := range total {
		percent[st] = nil
	}
	if w.start > 0 && w.end > w.start {
		span := w.end - w.start
		var down int64
		var downPct float64
		for st, secs := range total {
			p := float64(secs) * 100 / float64(span)
			percent[st] = &p
			down += secs
			downPct += p
		}
		total[schema.StateOK] = span - down
		ok := 100 - downPct
		percent[schema.StateOK] = &ok
	}
	return map[string]any{"total_seconds": total, "percentages": percent, "downtime": outs}
}

// now is the instant a request is answered at: status reports are read, maintenance starts and
// ends, checks are created, on the injected clock (Options.Clock).
func (a *jsonAPI) now() time.Time {
	if a.o.Clock == nil {
		return clock.Real{}.Now()
	}
	return a.o.Clock.Now()
}
