package api

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/inventory"
	"github.com/flapjackgo/flapjack/model/roster"
)

// entityJSON is an entity as Flapjack 1.x's JSON API shows it (docs/flapjack-1x.md A.6).
type entityJSON struct {
	ID    string      `json:"id"`
	Name  string      `json:"name"`
	Links entityLinks `json:"links"`
}

type entityLinks struct {
	Contacts []string `json:"contacts"`
	Checks   []string `json:"checks"`
}

func toEntityJSON(e inventory.Entity) entityJSON {
	out := entityJSON{ID: e.ID, Name: e.Name, Links: entityLinks{Contacts: list(e.Contacts), Checks: []string{}}}
	for _, c := range e.Checks {
		out.Links.Checks = append(out.Links.Checks, model.CheckRef{Entity: e.Name, Check: c}.ID())
	}
	return out
}

func (a *jsonAPI) entityRoutes(route func(method, path, what string, h apiHandler)) {
	route("GET", "/entities", "JSON API: every entity (?enabled=true|false)", a.getEntities)
	route("GET", "/entities/{ids}", "JSON API: entities by id (comma-separated)", a.getEntities)
	route("POST", "/entities", `JSON API: create or rename entities {"entities":[{"id","name"}]}`, a.postEntities)
	route("PATCH", "/entities/{ids}", "JSON API: rename entities, link contacts and tags (JSON-Patch)", a.patchEntities)
}

// parseBool is the JSON API's boolean query value.
func parseBool(s string) (bool, bool) {
	switch strings.ToLower(s) {
	case "1", "t", "true", "y", "yes":
		return true, true
	case "0", "f", "false", "n", "no":
		return false, true
	}
	return false, false
}

// readEntities reads the entities of path segment n (all when the route has no ids); a list
// none of which exists is a 404 with 1.6's message.
func (a *jsonAPI) readEntities(r *http.Request, n int) ([]inventory.Entity, error) {
	var out []inventory.Entity
	err := a.conn(r, func(c redis.Conn) error {
		var ids []string
		var err error
		if r.PathValue("ids") != "" {
			if ids, err = pathIDs(r, n); err != nil {
				return err
			}
		} else if ids, err = inventory.EntityIDs(c, a.o.Keys); err != nil {
			return err
		}
		if out, err = inventory.ReadEntities(r.Context(), c, a.o.Keys, ids); err != nil {
			return err
		}
		if len(out) == 0 && r.PathValue("ids") != "" {
			return failWith(http.StatusNotFound, "could not find entities: '%s'", strings.Join(ids, "', '"))
		}
		return nil
	})
	return out, err
}

func (a *jsonAPI) getEntities(w http.ResponseWriter, r *http.Request) error {
	var enabled, filter bool
	if v := r.URL.Query().Get("enabled"); v != "" {
		var ok bool
		if enabled, ok = parseBool(v); !ok {
			return failWith(http.StatusBadRequest, "enabled must be true or false, not %q", v)
		}
		filter = true
	}
	entities, err := a.readEntities(r, 1)
	if err != nil {
		return err
	}
	if r.PathValue("ids") == "" {
		// Flapjack 1.6 lists every entity by name.
		sort.SliceStable(entities, func(i, j int) bool { return entities[i].Name < entities[j].Name })
	}
	out := []entityJSON{}
	for _, e := range entities {
		if !filter || e.Enabled == enabled {
			out = append(out, toEntityJSON(e))
		}
	}
	writeAPI(w, http.StatusOK, map[string]any{"entities": out})
	return nil
}

// entityErr turns inventory's entity errors into 1.6's answers: a missing entity is 404 "could not
// find entity 'x'".
func entityErr(err error) error {
	var nf *roster.NotFoundError
	if errors.As(err, &nf) && nf.What == "entity" {
		return failWith(http.StatusNotFound, "could not find entity '%s'", strings.Join(nf.IDs, "', '"))
	}
	return err
}

func (a *jsonAPI) postEntities(w http.ResponseWriter, r *http.Request) error {
	items, err := a.createItems(w, r, "entities", "No 'entities' object received")
	var se *statusError
	if errors.As(err, &se) && se.status == http.StatusUnprocessableEntity && se.msgs[0] == "No 'entities' object received" {
		se.status = http.StatusForbidden // 1.6's status for this one
	}
	if err != nil {
		return err
	}
	entities := make([]inventory.EntityData, len(items))
	links := make([]inventory.EntityChange, len(items))
	all := make([]*fields, len(items))
	for i, item := range items {
		f := newFields(index("entities", i), item, "id", "name", "contacts", "tags", "links")
		all[i] = f
		entities[i] = inventory.EntityData{ID: f.str("id"), Name: f.str("name")}
		links[i] = inventory.EntityChange{AddContacts: f.strs("contacts"), AddTags: f.strs("tags")}
		if entities[i].ID == "" {
			return failWith(http.StatusForbidden, "Entity with a nil id detected")
		}
	}
	if err := itemsErr(all); err != nil {
		return err
	}
	err = a.conn(r, func(c redis.Conn) error {
		if err := a.knownContacts(r, c, links); err != nil {
			return err
		}
		if err := inventory.CreateEntities(r.Context(), c, a.o.Keys, entities); err != nil {
			return err
		}
		return a.linkCreated(r, c, entities, links)
	})
	if err != nil {
		return entityErr(err)
	}
	ids := make([]string, len(entities))
	for i, e := range entities {
		ids[i] = e.ID
	}
	a.created(w, r, "entities", ids)
	return nil
}

// knownContacts refuses (422, before anything is written) contacts of created entities that do
// not exist; Flapjack 1.6 skipped them silently.
func (a *jsonAPI) knownContacts(r *http.Request, c redis.Conn, links []inventory.EntityChange) error {
	var ids []string
	for _, l := range links {
		ids = append(ids, l.AddContacts...)
	}
	if len(ids) == 0 {
		return nil
	}
	found, err := roster.ReadContacts(r.Context(), c, a.o.Keys, ids, false)
	if err != nil {
		return err
	}
	have := contactSet(found)
	var msgs []string
	for i, l := range links {
		for k, id := range l.AddContacts {
			if !have[id] {
				msgs = append(msgs, fmt.Sprintf("entities[%d].contacts[%d]: contact '%s' does not exist", i, k, id))
			}
		}
	}
	if len(msgs) > 0 {
		return &statusError{status: http.StatusUnprocessableEntity, msgs: msgs}
	}
	return nil
}

// linkCreated gives created entities the contacts and tags their records list, as Flapjack
// 1.6's Entity.add did: the contacts replace the entity's (contacts_for:ID), the tags are added.
func (a *jsonAPI) linkCreated(r *http.Request, c redis.Conn, entities []inventory.EntityData, links []inventory.EntityChange) error {
	for i, e := range entities {
		if links[i].AddContacts == nil && links[i].AddTags == nil {
			continue
		}
		current, err := inventory.ReadEntities(r.Context(), c, a.o.Keys, []string{e.ID})
		if err != nil {
			return err
		}
		change := links[i]
		for _, old := range current {
			for _, id := range old.Contacts {
				if !slices.Contains(change.AddContacts, id) {
					change.RemoveContacts = append(change.RemoveContacts, id)
				}
			}
		}
		if err := inventory.UpdateEntities(r.Context(), c, a.o.Keys, []string{e.ID}, change); err != nil {
			return err
		}
	}
	return nil
}

func (a *jsonAPI) patchEntities(w http.ResponseWriter, r *http.Request) error {
	ids, err := pathIDs(r, 1)
	if err != nil {
		return err
	}
	ops, err := a.readPatch(w, r, "entities", []string{"name"}, []string{"contacts", "tags"})
	if err != nil {
		return err
	}
	var change inventory.EntityChange
	for _, op := range ops {
		switch {
		case op.Op == "replace":
			f := replaced(op)
			change.Name = f.str("name")
			if change.Name == "" {
				f.fail("name", "must be a non-empty string")
			}
			if err := itemsErr([]*fields{f}); err != nil {
				return err
			}
		case op.Linked == "contacts" && op.Op == "add":
			change.AddContacts = append(change.AddContacts, op.ID)
		case op.Linked == "contacts":
			change.RemoveContacts = append(change.RemoveContacts, op.ID)
		case op.Op == "add":
			change.AddTags = append(change.AddTags, op.ID)
		default:
			change.RemoveTags = append(change.RemoveTags, op.ID)
		}
	}
	if err := a.conn(r, func(c redis.Conn) error { return inventory.UpdateEntities(r.Context(), c, a.o.Keys, ids, change) }); err != nil {
		return entityErr(err)
	}
	noContent(w)
	return nil
}
