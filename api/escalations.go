package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/importer"
	"github.com/flapjackgo/flapjack/model/roster"
)

// escalationPolicyJSON is an escalation policy as the JSON API shows it: the fields of the
// import file (durations in seconds), with links to the contacts its steps alert and the
// entities it names.
type escalationPolicyJSON struct {
	ID            string                `json:"id"`
	Name          string                `json:"name"`
	Entities      []string              `json:"entities"`
	RegexEntities []string              `json:"regex_entities"`
	Tags          []string              `json:"tags"`
	RegexTags     []string              `json:"regex_tags"`
	Checks        []string              `json:"checks"`
	Severities    []string              `json:"severities"`
	Steps         []escalationStepJSON  `json:"steps"`
	Repeat        int64                 `json:"repeat"`
	RestartAfter  int64                 `json:"restart_after"`
	Links         escalationPolicyLinks `json:"links"`
}

type escalationStepJSON struct {
	Delay     int64    `json:"delay"`
	Contacts  []string `json:"contacts"`
	Schedules []string `json:"schedules"`
	Media     []string `json:"media"`
}

type escalationPolicyLinks struct {
	Contacts []string `json:"contacts"`
	Entities []string `json:"entities"`
}

func (a *jsonAPI) escalationRoutes(route func(method, path, what string, h apiHandler)) {
	route("GET", "/escalation_policies", "JSON API: every escalation policy", a.getEscalationPolicies)
	route("GET", "/escalation_policies/{ids}", "JSON API: escalation policies by id (comma-separated)", a.getEscalationPolicies)
	route("POST", "/escalation_policies", `JSON API: add or replace escalation policies {"escalation_policies":[...]} (the import file's records), all or none`, a.postEscalationPolicies)
	route("DELETE", "/escalation_policies/{ids}", "JSON API: delete escalation policies", a.deleteEscalationPolicies)
}

func (a *jsonAPI) getEscalationPolicies(w http.ResponseWriter, r *http.Request) error {
	var ids []string
	if r.PathValue("ids") != "" {
		var err error
		if ids, err = pathIDs(r, 1); err != nil {
			return err
		}
	}
	var out []escalationPolicyJSON
	err := a.conn(r, func(c redis.Conn) error {
		policies, _, err := roster.EscalationPolicies(c, a.o.Keys)
		if err != nil {
			return err
		}
		var missing []string
		for _, id := range ids {
			if !slices.ContainsFunc(policies, func(p roster.EscalationPolicy) bool { return p.ID == id }) {
				missing = append(missing, id)
			}
		}
		if len(missing) > 0 {
			return &roster.NotFoundError{What: "escalation policy", IDs: missing}
		}
		for _, p := range policies {
			if ids != nil && !slices.Contains(ids, p.ID) {
				continue
			}
			j, err := toEscalationPolicyJSON(c, a, p)
			if err != nil {
				return err
			}
			out = append(out, j)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if out == nil {
		out = []escalationPolicyJSON{}
	}
	writeAPI(w, http.StatusOK, map[string]any{"escalation_policies": out})
	return nil
}

func toEscalationPolicyJSON(c redis.Conn, a *jsonAPI, p roster.EscalationPolicy) (escalationPolicyJSON, error) {
	j := escalationPolicyJSON{ID: p.ID, Name: p.Name, Entities: list(p.Entities), RegexEntities: list(p.RegexEntities),
		Tags: list(p.Tags), RegexTags: list(p.RegexTags), Checks: list(p.Checks), Severities: list(p.Severities),
		Repeat: p.Repeat, RestartAfter: p.RestartWindow(),
		Links: escalationPolicyLinks{Contacts: list(p.ContactIDs()), Entities: []string{}}}
	for _, s := range p.Steps {
		j.Steps = append(j.Steps, escalationStepJSON{Delay: s.Delay, Contacts: list(s.Contacts), Schedules: list(s.Schedules),
			Media: list(s.Media)})
	}
	for _, name := range p.Entities {
		id, err := roster.EntityID(c, a.o.Keys, name)
		if err != nil {
			return j, err
		}
		if id != "" {
			j.Links.Entities = append(j.Links.Entities, id)
		}
	}
	return j, nil
}

func (a *jsonAPI) postEscalationPolicies(w http.ResponseWriter, r *http.Request) error {
	items, err := a.createItems(w, r, "escalation_policies", "No valid escalation policies were submitted")
	if err != nil {
		return err
	}
	policies := make([]roster.EscalationPolicy, len(items))
	var msgs []string
	for i, item := range items {
		raw, _ := json.Marshal(item)
		p, problems := importer.ParsePolicy(i, raw)
		for _, pr := range problems {
			msgs = append(msgs, fmt.Sprintf("escalation_policies[%d].%s: %s", i, pr.Field, pr.Reason))
		}
		policies[i] = p
	}
	if len(msgs) > 0 {
		return failWith(http.StatusUnprocessableEntity, "%s", strings.Join(msgs, "; "))
	}
	var res roster.BulkResult
	err = a.conn(r, func(c redis.Conn) error {
		var err error
		res, err = roster.PutEscalationPolicies(r.Context(), c, a.o.Keys, policies, roster.ReplaceOptions{})
		return err
	})
	if err != nil {
		return err
	}
	if len(res.Problems) > 0 {
		for _, p := range res.Problems {
			msgs = append(msgs, fmt.Sprintf("escalation_policies[%d].%s", p.Index, p.FieldError.Error()))
		}
		return failWith(http.StatusUnprocessableEntity, "%s", strings.Join(msgs, "; "))
	}
	ids := make([]string, len(policies))
	for i, p := range policies {
		ids[i] = p.ID
	}
	a.created(w, r, "escalation_policies", ids)
	return nil
}

func (a *jsonAPI) deleteEscalationPolicies(w http.ResponseWriter, r *http.Request) error {
	ids, err := pathIDs(r, 1)
	if err != nil {
		return err
	}
	if err := a.conn(r, func(c redis.Conn) error { return roster.DeleteEscalationPolicies(r.Context(), c, a.o.Keys, ids) }); err != nil {
		return err
	}
	noContent(w)
	return nil
}
