package api

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/model"
)

// contactJSON is a contact as Flapjack 1.x's JSON API shows it (docs/flapjack-1x.md A.2).
type contactJSON struct {
	ID        string       `json:"id"`
	FirstName string       `json:"first_name"`
	LastName  string       `json:"last_name"`
	Email     string       `json:"email"`
	Timezone  *string      `json:"timezone"`
	Links     contactLinks `json:"links"`
}

type contactLinks struct {
	Entities          []string `json:"entities"`
	Media             []string `json:"media"`
	NotificationRules []string `json:"notification_rules"`
}

func toContactJSON(c model.StoredContact) contactJSON {
	out := contactJSON{ID: c.ID, FirstName: c.FirstName, LastName: c.LastName, Email: c.Email,
		Links: contactLinks{Entities: c.Entities, Media: []string{}, NotificationRules: []string{}}}
	if c.Timezone != "" {
		tz := c.Timezone
		out.Timezone = &tz
	}
	if out.Links.Entities == nil {
		out.Links.Entities = []string{}
	}
	for _, m := range c.Media {
		out.Links.Media = append(out.Links.Media, model.MediumRef{ContactID: c.ID, Name: m.Name}.String())
	}
	for _, r := range c.Rules {
		out.Links.NotificationRules = append(out.Links.NotificationRules, r.ID)
	}
	return out
}

var contactFieldNames = []string{"first_name", "last_name", "email", "timezone"}

func (a *jsonAPI) contactRoutes(route func(method, path, what string, h apiHandler)) {
	route("GET", "/contacts", "JSON API: every contact", a.getContacts)
	route("GET", "/contacts/{ids}", "JSON API: contacts by id (comma-separated)", a.getContacts)
	route("POST", "/contacts", `JSON API: create contacts {"contacts":[...]}, all or none`, a.postContacts)
	route("PATCH", "/contacts/{ids}", "JSON API: change contacts (JSON-Patch)", a.patchContacts)
	route("DELETE", "/contacts/{ids}", "JSON API: delete contacts with their media and rules", a.deleteContacts)
}

// readContacts reads the contacts of the path's ids (all of them when the path has none); a
// list none of which exists is a 404.
func (a *jsonAPI) readContacts(r *http.Request, withEntities bool) ([]model.StoredContact, error) {
	var out []model.StoredContact
	err := a.conn(r, func(c redis.Conn) error {
		var ids []string
		var err error
		if r.PathValue("ids") != "" {
			if ids, err = pathIDs(r, 1); err != nil {
				return err
			}
		} else if ids, err = model.ContactIDs(c, a.o.Keys); err != nil {
			return err
		}
		if out, err = model.ReadContacts(r.Context(), c, a.o.Keys, ids, withEntities); err != nil {
			return err
		}
		if len(out) == 0 && r.PathValue("ids") != "" {
			return &model.NotFoundError{What: "contact", IDs: ids}
		}
		return nil
	})
	return out, err
}

func (a *jsonAPI) getContacts(w http.ResponseWriter, r *http.Request) error {
	contacts, err := a.readContacts(r, true)
	if err != nil {
		return err
	}
	out := make([]contactJSON, len(contacts))
	for i, c := range contacts {
		out[i] = toContactJSON(c)
	}
	writeAPI(w, http.StatusOK, map[string]any{"contacts": out})
	return nil
}

func (a *jsonAPI) postContacts(w http.ResponseWriter, r *http.Request) error {
	items, err := a.createItems(w, r, "contacts", "No valid contacts were submitted")
	if err != nil {
		return err
	}
	contacts := make([]model.ContactData, len(items))
	all := make([]*fields, len(items))
	for i, item := range items {
		f := newFields(index("contacts", i), item, append([]string{"id"}, contactFieldNames...)...)
		all[i] = f
		contacts[i] = model.ContactData{ID: f.str("id"), ContactInfo: model.ContactInfo{
			FirstName: f.str("first_name"), LastName: f.str("last_name"), Email: f.str("email"), Timezone: f.str("timezone")}}
		if contacts[i].ID == "" {
			contacts[i].ID = model.NewID()
		}
	}
	if err := itemsErr(all); err != nil {
		return err
	}
	err = a.conn(r, func(c redis.Conn) error { return model.CreateContacts(r.Context(), c, a.o.Keys, contacts) })
	if err != nil {
		return err
	}
	ids := make([]string, len(contacts))
	for i, c := range contacts {
		ids[i] = c.ID
	}
	a.created(w, r, "contacts", ids)
	return nil
}

func (a *jsonAPI) patchContacts(w http.ResponseWriter, r *http.Request) error {
	ids, err := pathIDs(r, 1)
	if err != nil {
		return err
	}
	ops, err := a.readPatch(w, r, "contacts", contactFieldNames, []string{"entities"})
	if err != nil {
		return err
	}
	// Check every value before writing anything.
	var changes []func(*model.ContactInfo)
	var add, remove []string
	for _, op := range ops {
		switch op.Op {
		case "add":
			add = append(add, op.ID)
		case "remove":
			remove = append(remove, op.ID)
		default:
			f := replaced(op)
			v := f.str(op.Field)
			if op.Field == "timezone" {
				if p := model.TimezoneProblem(v); p != "" {
					f.fail("timezone", p)
				}
			}
			if err := itemsErr([]*fields{f}); err != nil {
				return err
			}
			field := op.Field
			changes = append(changes, func(info *model.ContactInfo) {
				switch field {
				case "first_name":
					info.FirstName = v
				case "last_name":
					info.LastName = v
				case "email":
					info.Email = v
				case "timezone":
					info.Timezone = v
				}
			})
		}
	}
	err = a.conn(r, func(c redis.Conn) error {
		if len(add)+len(remove) > 0 {
			if err := model.LinkEntities(r.Context(), c, a.o.Keys, ids, add, remove); err != nil {
				return err
			}
		}
		return model.UpdateContacts(r.Context(), c, a.o.Keys, ids, func(info *model.ContactInfo) error {
			for _, change := range changes {
				change(info)
			}
			return nil
		})
	})
	if err != nil {
		return err
	}
	noContent(w)
	return nil
}

func (a *jsonAPI) deleteContacts(w http.ResponseWriter, r *http.Request) error {
	ids, err := pathIDs(r, 1)
	if err != nil {
		return err
	}
	if err := a.conn(r, func(c redis.Conn) error { return model.DeleteContacts(r.Context(), c, a.o.Keys, ids) }); err != nil {
		return err
	}
	noContent(w)
	return nil
}

// contactMustLoad turns a missing contact of a creation under /contacts/ID/... into Flapjack
// 1.6's 422.
func contactMustLoad(err error, contactID string) error {
	var nf *model.NotFoundError
	if errors.As(err, &nf) && nf.What == "contact" {
		return failWith(http.StatusUnprocessableEntity, "Contact id: '%s' could not be loaded", contactID)
	}
	return err
}

func index(field string, i int) string {
	b, _ := json.Marshal(i)
	return field + "[" + string(b) + "]"
}
