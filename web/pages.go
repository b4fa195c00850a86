package web

import (
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/model/inventory"
	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/model/views"
	"github.com/flapjackgo/flapjack/schema"
	"github.com/flapjackgo/flapjack/status"
)

// defaultRows is how many checks a table shows unless ?limit= says otherwise.
const defaultRows = 1000

// summaryData is the front page.
type summaryData struct {
	EntitiesAll, EntitiesFailing int64
	ChecksAll, ChecksFailing     int64
	Acknowledged, InMaintenance  int
	// OnCall is who each schedule puts on call now.
	OnCall []scheduleLine
}

func (s *server) summary(w http.ResponseWriter, r *http.Request) error {
	now := s.clk.Now()
	var d summaryData
	err := s.withConn(r, func(conn redis.Conn) error {
		m, err := views.ReadStoreMetrics(conn, s.o.Keys, s.o.Events.Key(), now)
		if err != nil {
			return err
		}
		d.EntitiesAll, d.EntitiesFailing, d.ChecksAll, d.ChecksFailing = m.EntitiesAll, m.EntitiesFailing, m.ChecksAll, m.ChecksFailing
		failing, err := status.ReadChecks(conn, s.o.Keys, status.CheckQuery{FailingOnly: true, Limit: -1}, now)
		if err != nil {
			return err
		}
		for _, c := range failing.Checks {
			if c.Acknowledged {
				d.Acknowledged++
			}
			if c.InMaintenance {
				d.InMaintenance++
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if d.OnCall, err = s.onCallNow(r, now); err != nil {
		return err
	}
	return s.page(w, r, "summary", "summary", "Summary", true, d)
}

// checkRow is a table line: status's row plus the last update.
type checkRow struct {
	status.CheckRow
	LastUpdate int64
}

// checksData is a checks table with its filter.
type checksData struct {
	Failing             bool
	Entity, Check, Tag  string
	FilterError         string
	Rows                []checkRow
	Total, More         int64
	Action              string // the filter form's target
	ShowFilter, Grouped bool
}

// readRows runs q and adds each row's last update.
func (s *server) readRows(conn redis.Conn, q status.CheckQuery, now time.Time) ([]checkRow, int64, error) {
	list, err := status.ReadChecks(conn, s.o.Keys, q, now)
	if err != nil {
		return nil, 0, err
	}
	refs := make([]model.CheckRef, len(list.Checks))
	for i, c := range list.Checks {
		refs[i] = model.CheckRef{Entity: c.Entity, Check: c.Check}
	}
	updates, err := views.LastUpdates(conn, s.o.Keys, refs)
	if err != nil {
		return nil, 0, err
	}
	rows := make([]checkRow, len(list.Checks))
	for i, c := range list.Checks {
		rows[i] = checkRow{CheckRow: c, LastUpdate: updates[i]}
	}
	// Flapjack 1.6 orders its tables by entity, then check.
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].Entity != rows[j].Entity {
			return rows[i].Entity < rows[j].Entity
		}
		return rows[i].Check < rows[j].Check
	})
	return rows, list.Total, nil
}

func limitOf(r *http.Request) int {
	if n, err := strconv.Atoi(r.URL.Query().Get("limit")); err == nil && n > 0 {
		return n
	}
	return defaultRows
}

// checks is /checks_all (/checks_failing is the triage list, failing).
func (s *server) checks() func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		qs := r.URL.Query()
		d := checksData{Entity: strings.TrimSpace(qs.Get("entity")), Check: strings.TrimSpace(qs.Get("check")),
			Tag: strings.ToLower(strings.TrimSpace(qs.Get("tag"))), ShowFilter: true, Action: "checks_all"}
		title, nav := "All checks", "checks_all"
		q := status.CheckQuery{Entity: d.Entity, Check: d.Check, Tag: d.Tag, Limit: limitOf(r)}
		if err := q.Validate(); err != nil {
			d.FilterError = err.Error()
			w.WriteHeader(http.StatusBadRequest)
			return s.page(w, r, "checks", nav, title, false, d)
		}
		now := s.clk.Now()
		err := s.withConn(r, func(conn redis.Conn) error {
			var err error
			d.Rows, d.Total, err = s.readRows(conn, q, now)
			return err
		})
		if err != nil {
			return err
		}
		d.More = d.Total - int64(len(d.Rows))
		return s.page(w, r, "checks", nav, title, true, d)
	}
}

// entityLine is one entity of an entities list.
type entityLine struct {
	Name            string
	Checks, Failing int
}

type entitiesData struct {
	Kind  string
	Lines []entityLine
}

func (s *server) entities(kind string) func(http.ResponseWriter, *http.Request) error {
	titles := map[string]string{"enabled": "Entities", "failing": "Failing entities", "decommissioned": "Decommissioned entities"}
	navs := map[string]string{"enabled": "entities", "failing": "entities_failing", "decommissioned": "entities_decommissioned"}
	return func(w http.ResponseWriter, r *http.Request) error {
		d := entitiesData{Kind: kind}
		err := s.withConn(r, func(conn redis.Conn) error {
			ids, err := inventory.EntityIDs(conn, s.o.Keys)
			if err != nil {
				return err
			}
			ents, err := inventory.ReadEntities(r.Context(), conn, s.o.Keys, ids)
			if err != nil {
				return err
			}
			failing, err := views.CurrentFailingChecks(conn, s.o.Keys)
			if err != nil {
				return err
			}
			names, err := views.EntityNames(conn, s.o.Keys)
			if err != nil {
				return err
			}
			byName := map[string]inventory.Entity{}
			for _, e := range ents {
				byName[e.Name] = e
			}
			current, err := checkstate.CurrentChecksOf(conn, s.o.Keys, names)
			if err != nil {
				return err
			}
			for _, n := range names {
				e, known := byName[n]
				enabled := len(current[n]) > 0 || (known && e.Enabled)
				line := entityLine{Name: n, Checks: len(current[n]), Failing: len(failing[n])}
				switch {
				case kind == "enabled" && enabled, kind == "failing" && line.Failing > 0, kind == "decommissioned" && !enabled:
					if kind == "decommissioned" {
						line.Checks = len(e.Checks)
					}
					d.Lines = append(d.Lines, line)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		return s.page(w, r, "entities", navs[kind], titles[kind], true, d)
	}
}

func (s *server) entity(w http.ResponseWriter, r *http.Request) error {
	name := roster.NormalizeEntityName(r.PathValue("entity"))
	now := s.clk.Now()
	d := checksData{Entity: name}
	err := s.withConn(r, func(conn redis.Conn) error {
		ok, err := views.EntityExists(conn, s.o.Keys, name)
		if err != nil {
			return err
		}
		if !ok {
			return errStatus(http.StatusNotFound, "Could not find entity '%s'", name)
		}
		d.Rows, d.Total, err = s.readRows(conn, status.CheckQuery{Entity: "^" + regexp.QuoteMeta(name) + "$", Limit: -1}, now)
		return err
	})
	if err != nil {
		return err
	}
	return s.page(w, r, "checks", "", name, true, d)
}

// checkData is the check page.
type checkData struct {
	views.ReportStatus
	Entity, Check       string
	Details, Perfdata   string
	LastUpdate          int64
	InitialFailureDelay string
	RepeatFailureDelay  string
	Tags                []string
	Current             []checkstate.MaintenanceWindow
	Upcoming            []checkstate.MaintenanceWindow
	Past                []checkstate.MaintenanceWindow
	Acks                []checkstate.MaintenanceWindow
	History             []views.StateRecord
	Notifications       []notificationLine
	Contacts            []roster.Contact
	// Explain is the executive's and the notifier's last decisions about the check (`flapjack
	// explain`), newest first, each in sentences.
	Explain [][]string
	// Told is who was told, how, when, and whether it was delivered: the check's latest alerts
	// in the delivery log, oldest first.
	Told                 []toldLine
	AckDuration          string
	MaintenanceStartHint string
	Escalations          []escalationLine
	Alert                views.LastAlert
	LiveURL              string
}

type toldLine struct {
	schema.DeliveryRecord
	Line string
}

type notificationLine struct {
	Kind string
	At   int64
}

// readCheck reads everything the check page shows.
func (s *server) readCheck(r *http.Request) (checkData, error) {
	entity := roster.NormalizeEntityName(r.URL.Query().Get("entity"))
	checkName := r.URL.Query().Get("check")
	ref := model.CheckRef{Entity: entity, Check: checkName}
	now := s.clk.Now()
	d := checkData{Entity: entity, Check: checkName, AckDuration: "2 hours"}
	err := s.withConn(r, func(conn redis.Conn) error {
		exists, err := views.ChecksExist(conn, s.o.Keys, []model.CheckRef{ref})
		if err != nil {
			return err
		}
		if entity == "" || checkName == "" || !exists[0] {
			return errStatus(http.StatusNotFound, "Could not find check '%s'", ref.ID())
		}
		st, err := views.ReportStatuses(conn, s.o.Keys, now, []model.CheckRef{ref})
		if err != nil {
			return err
		}
		d.ReportStatus = st[0]
		f := d.Fields
		d.Details, d.Perfdata = f["details"], perfdataText(f["perfdata"])
		d.LastUpdate, _ = strconv.ParseInt(f["last_update"], 10, 64)
		d.InitialFailureDelay, d.RepeatFailureDelay = delayText(f["initial_failure_delay"]), delayText(f["repeat_failure_delay"])
		checks, _, err := inventory.ReadChecks(r.Context(), conn, s.o.Keys, []model.CheckRef{ref})
		if err != nil {
			return err
		}
		var stored []string
		if len(checks) > 0 {
			stored = checks[0].Tags
		}
		d.Tags = schema.TagSet(&schema.Event{Entity: entity, Check: checkName}, stored)
		scheduled, err := checkstate.ListMaintenance(conn, s.o.Keys, schema.Scheduled, ref.ID())
		if err != nil {
			return err
		}
		for _, m := range scheduled {
			switch m.State(now) {
			case "active":
				d.Current = append(d.Current, m)
			case "future":
				d.Upcoming = append(d.Upcoming, m)
			default:
				d.Past = append(d.Past, m)
			}
		}
		d.Past = lastN(d.Past, 10)
		acks, err := checkstate.ListMaintenance(conn, s.o.Keys, schema.Unscheduled, ref.ID())
		if err != nil {
			return err
		}
		d.Acks = lastN(acks, 20)
		hist, err := views.StateHistories(conn, s.o.Keys, []model.CheckRef{ref}, 0, 0)
		if err != nil {
			return err
		}
		d.History = lastN(hist[0], 20)
		sent, err := views.LastNotifications(conn, s.o.Keys, ref)
		if err != nil {
			return err
		}
		for _, k := range views.NotificationKinds {
			d.Notifications = append(d.Notifications, notificationLine{Kind: k, At: sent[k]})
		}
		decisions, err := views.ReadExplain(conn, s.o.Keys, ref.ID(), 0)
		if err != nil {
			return err
		}
		deliveries, err := views.ReadDeliveries(conn, s.o.Keys, views.DeliveryFilter{Check: ref.ID(), Limit: 200})
		if err != nil {
			return err
		}
		fates := views.NewFates(deliveries)
		for _, e := range lastN(decisions, 20) {
			d.Explain = append(d.Explain, views.ExplainLines(e, time.UTC, fates))
		}
		for _, r := range lastN(deliveries, 20) {
			d.Told = append(d.Told, toldLine{DeliveryRecord: r, Line: views.DeliveryLine(r)})
		}
		ids, err := roster.ContactIDsFor(conn, s.o.Keys, entity, checkName)
		if err != nil {
			return err
		}
		if d.Contacts, err = roster.LoadContacts(conn, s.o.Keys, ids); err != nil {
			return err
		}
		if d.Escalations, err = checkEscalations(conn, s.o.Keys, ref.ID(), now); err != nil {
			return err
		}
		alerts, err := views.LastAlerts(conn, s.o.Keys, []model.CheckRef{ref})
		if err != nil {
			return err
		}
		d.Alert = alerts[0]
		return nil
	})
	return d, err
}

// lastN keeps the last n items, newest first.
func lastN[T any](v []T, n int) []T {
	if len(v) > n {
		v = v[len(v)-n:]
	}
	out := slices.Clone(v)
	slices.Reverse(out)
	return out
}

// perfdataText renders stored perfdata (a JSON array of key/value items) as "key=value ...";
// anything else is shown as stored.
func perfdataText(stored string) string {
	var items []schema.PerfdataItem
	if err := json.Unmarshal([]byte(stored), &items); err != nil {
		return stored
	}
	parts := make([]string, len(items))
	for i, it := range items {
		parts[i] = it.Key + "=" + it.Value
	}
	return strings.Join(parts, " ")
}

func delayText(v string) string {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
		return strconv.FormatInt(n, 10) + " s"
	}
	return "default"
}

func (s *server) contacts(w http.ResponseWriter, r *http.Request) error {
	var list []roster.StoredContact
	err := s.withConn(r, func(conn redis.Conn) error {
		ids, err := roster.ContactIDs(r.Context(), conn, s.o.Keys)
		if err != nil {
			return err
		}
		list, err = roster.ReadContacts(r.Context(), conn, s.o.Keys, ids, false)
		return err
	})
	if err != nil {
		return err
	}
	sort.Slice(list, func(i, j int) bool {
		a, b := list[i].LastName+list[i].FirstName+list[i].ID, list[j].LastName+list[j].FirstName+list[j].ID
		return a < b
	})
	return s.page(w, r, "contacts", "contacts", "Contacts", false, list)
}

// contactData is one contact's page.
type contactData struct {
	roster.StoredContact
	Rules    []roster.Rule
	Entities []string // names
	Policies []policyLine
	// Alerting are the checks currently alerting the contact on any medium.
	Alerting []model.CheckRef
	// Shifts are the contact's shifts over the next schedulePageDays, across every schedule.
	Shifts []contactShift
}

func (s *server) contact(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	var d contactData
	err := s.withConn(r, func(conn redis.Conn) error {
		found, err := roster.ReadContacts(r.Context(), conn, s.o.Keys, []string{id}, true)
		if err != nil {
			return err
		}
		if len(found) == 0 {
			return errStatus(http.StatusNotFound, "Could not find contact '%s'", id)
		}
		d.StoredContact = found[0]
		d.Rules = d.StoredContact.Rules
		names, err := views.EntityNamesOf(conn, s.o.Keys, d.StoredContact.Entities)
		if err != nil {
			return err
		}
		for _, eid := range d.StoredContact.Entities {
			if n := names[eid]; n != "" {
				d.Entities = append(d.Entities, n)
			} else {
				d.Entities = append(d.Entities, eid)
			}
		}
		sort.Strings(d.Entities)
		if d.Policies, err = contactPolicies(conn, s.o.Keys, id); err != nil {
			return err
		}
		media := make([]string, len(d.Media))
		for i, m := range d.Media {
			media[i] = m.Name
		}
		alerting, err := views.ChecksAlerting(conn, s.o.Keys, id, media)
		for _, cid := range alerting {
			if e, c, ok := schema.SplitCheckID(cid); ok {
				d.Alerting = append(d.Alerting, model.CheckRef{Entity: e, Check: c})
			}
		}
		return err
	})
	if err != nil {
		var nf *roster.NotFoundError
		if errors.As(err, &nf) {
			return errStatus(http.StatusNotFound, "Could not find contact '%s'", id)
		}
		return err
	}
	if d.Shifts, err = s.nextShifts(r, id, s.clk.Now()); err != nil {
		return err
	}
	return s.page(w, r, "contact", "contacts", "Contact "+d.FirstName+" "+d.LastName, false, d)
}

// selfStats is what /self_stats and /self_stats.json show (docs/flapjack-1x.md B.1).
type selfStats struct {
	EventsQueued       int64                       `json:"events_queued"`
	AllEntities        int64                       `json:"all_entities"`
	FailingEntities    int64                       `json:"failing_entities"`
	AllChecks          int64                       `json:"all_checks"`
	FailingChecks      int64                       `json:"failing_checks"`
	ProcessedEvents    map[string]map[string]int64 `json:"processed_events"`
	CheckFreshness     map[string]int64            `json:"check_freshness"`
	TotalKeys          int64                       `json:"total_keys"`
	Uptime             int64                       `json:"uptime"`
	BootTime           int64                       `json:"boottime"`
	CurrentTime        int64                       `json:"current_time"`
	ExecutiveInstances map[string]executiveStats   `json:"executive_instances"`
	Snapshot           status.Snapshot             `json:"-"`
	FreshnessOrder     []string                    `json:"-"`
}

type executiveStats struct {
	Host      string  `json:"host"`
	PID       string  `json:"pid"`
	BootTime  int64   `json:"boot_time"`
	Uptime    int64   `json:"uptime"`
	Processed int64   `json:"processed"`
	Rate      float64 `json:"rate_per_second"`
	Stale     bool    `json:"stale"`
}

func (s *server) readSelfStats(r *http.Request) (selfStats, error) {
	now := s.clk.Now()
	var st selfStats
	err := s.withConn(r, func(conn redis.Conn) error {
		m, err := views.ReadStoreMetrics(conn, s.o.Keys, s.o.Events.Key(), now)
		if err != nil {
			return err
		}
		o := s.o.Status
		o.FailingLimit = -1
		snap, err := status.Read(conn, s.o.Keys, o, now)
		if err != nil {
			return err
		}
		st = selfStats{EventsQueued: m.EventQueueLength, AllEntities: m.EntitiesAll, FailingEntities: m.EntitiesFailing,
			AllChecks: m.ChecksAll, FailingChecks: m.ChecksFailing, TotalKeys: m.TotalKeys, CurrentTime: now.Unix(),
			CheckFreshness: map[string]int64{}, ExecutiveInstances: map[string]executiveStats{}, Snapshot: snap,
			ProcessedEvents: map[string]map[string]int64{"all_time": {
				"total": m.EventCounters["all"], "ok": m.EventCounters["ok"],
				"failure": m.EventCounters["failure"], "action": m.EventCounters["action"]}}}
		for i, b := range views.FreshnessBounds {
			k := strconv.FormatInt(b, 10)
			st.FreshnessOrder = append(st.FreshnessOrder, k)
			if i < len(m.Freshness) {
				st.CheckFreshness[k] = m.Freshness[i]
			}
		}
		for _, in := range snap.Instances {
			if in.Stage != "executive" {
				continue
			}
			host, pid, _ := strings.Cut(in.ID, ":")
			e := executiveStats{Host: host, PID: pid, BootTime: in.BootTime, Processed: in.Processed, Stale: in.Stale}
			if in.BootTime > 0 {
				e.Uptime = now.Unix() - in.BootTime
				if e.Uptime > 0 {
					e.Rate = float64(in.Processed) / float64(e.Uptime)
				}
				if st.BootTime == 0 || in.BootTime < st.BootTime {
					st.BootTime = in.BootTime
				}
			}
			st.ExecutiveInstances[in.ID] = e
		}
		if st.BootTime > 0 {
			st.Uptime = now.Unix() - st.BootTime
		}
		return nil
	})
	return st, err
}

func (s *server) selfStats(w http.ResponseWriter, r *http.Request) error {
	st, err := s.readSelfStats(r)
	if err != nil {
		return err
	}
	return s.page(w, r, "self_stats", "self_stats", "Internal statistics", true, st)
}

func (s *server) selfStatsJSON(w http.ResponseWriter, r *http.Request) error {
	st, err := s.readSelfStats(r)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	return json.NewEncoder(w).Encode(st)
}
