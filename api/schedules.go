package api

import (
	"net/http"
	"slices"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/oncall"
)

// scheduleJSON is an on-call schedule as the JSON API shows it: the fields of the import file,
// who is on call when the request is answered (the injected clock) and why, and links to every
// contact it names and the entities that route to it.
type scheduleJSON struct {
	*oncall.Schedule
	OnCall oncall.OnCall `json:"on_call"`
	Links  scheduleLinks `json:"links"`
}

type scheduleLinks struct {
	Contacts []string `json:"contacts"`
	Entities []string `json:"entities"`
}

func (a *jsonAPI) scheduleRoutes(route func(method, path, what string, h apiHandler)) {
	route("GET", "/schedules", "JSON API: every on-call schedule", a.getSchedules)
	route("GET", "/schedules/{ids}", "JSON API: on-call schedules by id (comma-separated)", a.getSchedules)
}

func (a *jsonAPI) getSchedules(w http.ResponseWriter, r *http.Request) error {
	var ids []string
	if r.PathValue("ids") != "" {
		var err error
		if ids, err = pathIDs(r, 1); err != nil {
			return err
		}
	}
	out := []scheduleJSON{}
	err := a.conn(r, func(c redis.Conn) error {
		schedules, _, err := roster.Schedules(c, a.o.Keys)
		if err != nil {
			return err
		}
		var missing []string
		for _, id := range ids {
			if !slices.ContainsFunc(schedules, func(s *oncall.Schedule) bool { return s.ID == id }) {
				missing = append(missing, id)
			}
		}
		if len(missing) > 0 {
			return &roster.NotFoundError{What: "schedule", IDs: missing}
		}
		entities, err := roster.ScheduleEntities(c, a.o.Keys)
		if err != nil {
			return err
		}
		now := a.now()
		for _, s := range schedules {
			if ids == nil || slices.Contains(ids, s.ID) {
				out = append(out, scheduleJSON{Schedule: s, OnCall: s.At(now),
					Links: scheduleLinks{Contacts: list(roster.ScheduleContacts(s)), Entities: list(entities[s.ID])}})
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	writeAPI(w, http.StatusOK, map[string]any{"schedules": out})
	return nil
}
