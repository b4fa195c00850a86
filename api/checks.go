package api

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/model/inventory"
	"github.com/flapjackgo/flapjack/schema"
)

// checkJSON is a check as Flapjack 1.x's JSON API shows it (docs/flapjack-1x.md A.7).
type checkJSON struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	EntityName string     `json:"entity_name"`
	Enabled    bool       `json:"enabled"`
	Tags       []string   `json:"tags"`
	Links      checkLinks `json:"links"`
}

type checkLinks struct {
	Entities []string `json:"entities"`
}

func toCheckJSON(c inventory.Check) checkJSON {
	out := checkJSON{ID: c.ID(), Name: c.Check, EntityName: c.Entity, Enabled: c.Enabled, Tags: list(c.Tags),
		Links: checkLinks{Entities: []string{}}}
	if c.EntityID != "" {
		out.Links.Entities = []string{c.EntityID}
	}
	return out
}

func (a *jsonAPI) checkRoutes(route func(method, path, what string, h apiHandler)) {
	route("GET", "/checks", "JSON API: every check", a.getChecks)
	route("GET", "/checks/{ids...}", "JSON API: checks by ENTITY:CHECK id (comma-separated)", a.getChecks)
	route("POST", "/checks", `JSON API: create checks {"checks":[{"entity_id","name","tags"}]}`, a.postChecks)
	route("PATCH", "/checks/{ids...}", "JSON API: enable/disable checks, link tags (JSON-Patch)", a.patchChecks)
}

// checkRefs parses the ENTITY:CHECK ids of path segment n (split on the first ':').
func checkRefs(r *http.Request, n int) ([]model.CheckRef, []string, error) {
	ids, err := pathIDs(r, n)
	if err != nil {
		return nil, nil, err
	}
	refs := make([]model.CheckRef, len(ids))
	for i, id := range ids {
		e, c, ok := schema.SplitCheckID(id)
		if !ok {
			return nil, nil, failWith(http.StatusNotFound, "could not find entity check '%s'", id)
		}
		refs[i] = model.CheckRef{Entity: e, Check: c}
	}
	return refs, ids, nil
}

// mustReadChecks reads the checks of refs; any missing one is 1.6's 404 (an unknown entity
// named first).
func (a *jsonAPI) mustReadChecks(r *http.Request, c redis.Conn, refs []model.CheckRef) ([]inventory.Check, error) {
	found, noEntity, err := inventory.ReadChecks(r.Context(), c, a.o.Keys, refs)
	if err != nil {
		return nil, err
	}
	if len(noEntity) > 0 {
		for _, ref := range refs {
			if noEntity[ref.Entity] {
				return nil, failWith(http.StatusNotFound, "could not find entity '%s'", ref.Entity)
			}
		}
	}
	have := map[model.CheckRef]bool{}
	for _, f := range found {
		have[f.CheckRef] = true
	}
	for _, ref := range refs {
		if !have[ref] {
			return nil, failWith(http.StatusNotFound, "could not find entity check '%s'", ref.Check)
		}
	}
	return found, nil
}

func (a *jsonAPI) getChecks(w http.ResponseWriter, r *http.Request) error {
	var found []inventory.Check
	err := a.conn(r, func(c redis.Conn) error {
		var refs []model.CheckRef
		var ids []string
		var err error
		if r.PathValue("ids") != "" {
			if refs, ids, err = checkRefs(r, 1); err != nil {
				return err
			}
		} else if refs, err = inventory.CheckIDs(c, a.o.Keys); err != nil {
			return err
		}
		if found, _, err = inventory.ReadChecks(r.Context(), c, a.o.Keys, refs); err != nil {
			return err
		}
		if len(found) == 0 && r.PathValue("ids") != "" {
			return failWith(http.StatusNotFound, "could not find entity checks: '%s'", strings.Join(ids, "', '"))
		}
		return nil
	})
	if err != nil {
		return err
	}
	out := make([]checkJSON, len(found))
	for i, c := range found {
		out[i] = toCheckJSON(c)
	}
	writeAPI(w, http.StatusOK, map[string]any{"checks": out})
	return nil
}

func (a *jsonAPI) postChecks(w http.ResponseWriter, r *http.Request) error {
	items, err := a.createItems(w, r, "checks", "No valid checks were submitted")
	if err != nil {
		return err
	}
	checks := make([]inventory.NewCheck, len(items))
	all := make([]*fields, len(items))
	for i, item := range items {
		f := newFields(index("checks", i), item, "id", "entity_id", "name", "tags", "enabled")
		all[i] = f
		checks[i] = inventory.NewCheck{EntityID: f.str("entity_id"), Name: f.str("name"), Tags: f.strs("tags")}
	}
	if err := itemsErr(all); err != nil {
		return err
	}
	var ids []string
	err = a.conn(r, func(c redis.Conn) error {
		var err error
		ids, err = inventory.CreateChecks(r.Context(), c, a.o.Keys, checks, a.now())
		return err
	})
	if err != nil {
		return entityErr(err)
	}
	a.created(w, r, "checks", ids)
	return nil
}

func (a *jsonAPI) patchChecks(w http.ResponseWriter, r *http.Request) error {
	refs, _, err := checkRefs(r, 1)
	if err != nil {
		return err
	}
	ops, err := a.readPatch(w, r, "checks", []string{"enabled"}, []string{"tags"})
	if err != nil {
		return err
	}
	var enable *bool
	var add, remove []string
	for _, op := range ops {
		switch op.Op {
		case "replace":
			var b bool
			if json.Unmarshal(op.Value, &b) != nil {
				return failWith(http.StatusUnprocessableEntity, "enabled: must be true or false")
			}
			enable = &b
		case "add":
			add = append(add, op.ID)
		default:
			remove = append(remove, op.ID)
		}
	}
	err = a.conn(r, func(c redis.Conn) error {
		if _, err := a.mustReadChecks(r, c, refs); err != nil {
			return err
		}
		if len(add)+len(remove) > 0 {
			if err := inventory.TagChecks(r.Context(), c, a.o.Keys, refs, add, remove); err != nil {
				return err
			}
		}
		if enable == nil {
			return nil
		}
		now := a.now()
		for _, ref := range refs {
			set := checkstate.DisableCheck
			if *enable {
				set = checkstate.EnableCheck
			}
			if err := set(c, a.o.Keys, ref.Entity, ref.Check, now); err != nil {
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
