package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/events"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/model/inventory"
	"github.com/flapjackgo/flapjack/schema"
)

// Maintenance, acknowledgements and test notifications (docs/flapjack-1x.md A.8), each on
// /<resource>/checks/:check_ids and /<resource>/entities/:entity_ids (every check of those
// entities). Maintenance windows are written by model; acknowledgements and test
// notifications are events for the executive, queued through the events publisher.

func (a *jsonAPI) maintenanceRoutes(route func(method, path, what string, h apiHandler)) {
	for _, kind := range []string{"checks", "entities"} {
		on := "/" + kind + "/{ids}"
		if kind == "checks" {
			// a check name may hold "/", which flapjack-diner sends unescaped
			on = "/checks/{ids...}"
		}
		route("POST", "/scheduled_maintenances"+on, "JSON API: schedule maintenance of "+kind, a.withTargets(kind, a.postScheduled))
		route("DELETE", "/scheduled_maintenances"+on, "JSON API: end the scheduled maintenance of "+kind+" starting at ?start_time", a.withTargets(kind, a.deleteScheduled))
		route("POST", "/unscheduled_maintenances"+on, "JSON API: acknowledge "+kind+" (queues acknowledgement events)", a.withTargets(kind, a.postUnscheduled))
		route("PATCH", "/unscheduled_maintenances"+on, "JSON API: end the unscheduled maintenance of "+kind+" (JSON-Patch end_time)", a.withTargets(kind, a.patchUnscheduled))
		route("POST", "/test_notifications"+on, "JSON API: queue test notifications for "+kind, a.withTargets(kind, a.postTestNotifications))
	}
}

// targetHandler is a handler for the checks a path names.
type targetHandler func(w http.ResponseWriter, r *http.Request, checks []model.CheckRef) error

// withTargets resolves the path's checks or entities (any missing one is 1.6's 404) before h.
func (a *jsonAPI) withTargets(kind string, h targetHandler) apiHandler {
	return func(w http.ResponseWriter, r *http.Request) error {
		var refs []model.CheckRef
		err := a.conn(r, func(c redis.Conn) error {
			if kind == "checks" {
				var err error
				if refs, _, err = checkRefs(r, 2); err != nil {
					return err
				}
				_, err = a.mustReadChecks(r, c, refs)
				return err
			}
			ids, err := pathIDs(r, 2)
			if err != nil {
				return err
			}
			entities, err := inventory.ReadEntities(r.Context(), c, a.o.Keys, ids)
			if err != nil {
				return err
			}
			found := map[string]bool{}
			for _, e := range entities {
				found[e.ID] = true
				for _, check := range e.Checks {
					refs = append(refs, model.CheckRef{Entity: e.Name, Check: check})
				}
			}
			for _, id := range ids {
				if !found[id] {
					return failWith(http.StatusNotFound, "could not find entity '%s'", id)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		return h(w, r, refs)
	}
}

// isoTime parses an ISO 8601 time with an offset.
func isoTime(s string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(s))
	return t, err == nil
}

func (a *jsonAPI) postScheduled(w http.ResponseWriter, r *http.Request, checks []model.CheckRef) error {
	items, err := a.createItems(w, r, "scheduled_maintenances", "No valid scheduled maintenances were submitted")
	if err != nil {
		return err
	}
	type window struct {
		start    time.Time
		duration time.Duration
		summary  string
	}
	windows := make([]window, len(items))
	all := make([]*fields, len(items))
	for i, item := range items {
		f := newFields(index("scheduled_maintenances", i), item, "start_time", "duration", "summary")
		all[i] = f
		start, ok := isoTime(f.str("start_time"))
		if !ok {
			return failWith(http.StatusForbidden, "start time must be provided")
		}
		windows[i] = window{start: start, summary: f.str("summary")}
		if d := f.integer("duration"); d == nil || *d < 1 {
			f.fail("duration", "must be a number of seconds, at least 1")
		} else {
			windows[i].duration = time.Duration(*d) * time.Second
		}
	}
	if err := itemsErr(all); err != nil {
		return err
	}
	err = a.conn(r, func(c redis.Conn) error {
		now := a.now()
		for _, ref := range checks {
			for _, win := range windows {
				if err := checkstate.CreateScheduledMaintenance(c, a.o.Keys, ref.Entity, ref.Check, win.start, win.duration, win.summary, now); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	noContent(w)
	return nil
}

func (a *jsonAPI) deleteScheduled(w http.ResponseWriter, r *http.Request, checks []model.CheckRef) error {
	start, ok := isoTime(r.URL.Query().Get("start_time"))
	if !ok {
		return failWith(http.StatusForbidden, "start time must be provided")
	}
	err := a.conn(r, func(c redis.Conn) error {
		now := a.now()
		for _, ref := range checks {
			// A check without that window has nothing to end (1.6 answered 204 too).
			if err := checkstate.EndScheduledMaintenance(c, a.o.Keys, ref.Entity, ref.Check, start, now); err != nil && !errors.Is(err, checkstate.ErrNoSuchWindow) {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	noContent(w)
	return nil
}

// optionalItems reads a POST body whose {"<resource>": [...]} wrapper is optional: no body is
// one empty item, an object without the wrapper is one item.
func (a *jsonAPI) optionalItems(w http.ResponseWriter, r *http.Request, resource string) ([]map[string]json.RawMessage, error) {
	body, err := a.readBody(w, r)
	if err != nil {
		return nil, err
	}
	empty := len(strings.TrimSpace(string(body))) == 0
	switch mt := mediaType(r); {
	case mt == "application/vnd.api+json" || mt == "application/json":
	case mt == "" && empty:
	default:
		return nil, failWith(http.StatusMethodNotAllowed, "POST needs Content-Type application/vnd.api+json or application/json, not %q", r.Header.Get("Content-Type"))
	}
	if empty {
		return []map[string]json.RawMessage{{}}, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return nil, failWith(http.StatusBadRequest, "body is not a JSON object: %v", err)
	}
	raw, ok := top[resource]
	if !ok {
		return []map[string]json.RawMessage{top}, nil
	}
	if len(top) > 1 {
		return nil, failWith(http.StatusUnprocessableEntity, "the body is {%q: [...]} alone", resource)
	}
	var items []map[string]json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil, failWith(http.StatusUnprocessableEntity, "%s must be an array of objects", resource)
	}
	if len(items) == 0 {
		items = []map[string]json.RawMessage{{}}
	}
	return items, nil
}

// publish queues evs through the events publisher (all validated, all or none).
func (a *jsonAPI) publish(r *http.Request, evs []schema.Event) error {
	if a.o.Events == nil {
		return fmt.Errorf("no events publisher configured")
	}
	_, err := a.o.Events.Publish(r.Context(), evs...)
	var invalid *events.InvalidError
	if errors.As(err, &invalid) {
		return failWith(http.StatusUnprocessableEntity, "%s", invalid.Error())
	}
	return err
}

func (a *jsonAPI) postUnscheduled(w http.ResponseWriter, r *http.Request, checks []model.CheckRef) error {
	items, err := a.optionalItems(w, r, "unscheduled_maintenances")
	if err != nil {
		return err
	}
	now := a.now()
	var evs []schema.Event
	all := make([]*fields, len(items))
	for i, item := range items {
		f := newFields(index("unscheduled_maintenances", i), item, "duration", "summary", "end_time")
		all[i] = f
		var duration time.Duration // <= 0: the executive's acknowledgement_duration (4 h)
		if d := f.integer("duration"); d != nil && *d > 0 {
			duration = time.Duration(*d) * time.Second
		}
		summary := f.str("summary")
		for _, ref := range checks {
			evs = append(evs, events.Acknowledgement(ref.Entity, ref.Check, summary, duration, now))
		}
	}
	if err := itemsErr(all); err != nil {
		return err
	}
	if err := a.publish(r, evs); err != nil {
		return err
	}
	noContent(w)
	return nil
}

func (a *jsonAPI) patchUnscheduled(w http.ResponseWriter, r *http.Request, checks []model.CheckRef) error {
	ops, err := a.readPatch(w, r, "unscheduled_maintenances", []string{"end_time"}, nil)
	if err != nil {
		return err
	}
	var end time.Time
	for _, op := range ops {
		f := replaced(op)
		t, ok := isoTime(f.str("end_time"))
		if !ok {
			return failWith(http.StatusUnprocessableEntity, "end_time: must be an ISO 8601 time with an offset")
		}
		end = t
	}
	if end.IsZero() {
		return noChange(w)
	}
	err = a.conn(r, func(c redis.Conn) error {
		for _, ref := range checks {
			// A check not in unscheduled maintenance at end_time has nothing to end.
			if err := checkstate.EndUnscheduledMaintenance(c, a.o.Keys, ref.Entity, ref.Check, end); err != nil && !errors.Is(err, checkstate.ErrNoSuchWindow) {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	noContent(w)
	return nil
}

func noChange(w http.ResponseWriter) error { noContent(w); return nil }

func (a *jsonAPI) postTestNotifications(w http.ResponseWriter, r *http.Request, checks []model.CheckRef) error {
	items, err := a.optionalItems(w, r, "test_notifications")
	if err != nil {
		return err
	}
	now := a.now()
	var evs []schema.Event
	all := make([]*fields, len(items))
	for i, item := range items {
		f := newFields(index("test_notifications", i), item, "summary")
		all[i] = f
		summary := f.str("summary")
		for _, ref := range checks {
			s := summary
			if s == "" {
				s = "Testing notifications to all contacts interested in entity " + ref.Entity
			}
			evs = append(evs, schema.Event{Entity: ref.Entity, Check: ref.Check, Type: schema.TypeAction,
				State: schema.StateTestNotifications, Summary: s, Time: now.Unix(), HasTime: true})
		}
	}
	if err := itemsErr(all); err != nil {
		return err
	}
	if err := a.publish(r, evs); err != nil {
		return err
	}
	noContent(w)
	return nil
}
