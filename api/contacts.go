package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"sort"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/importer"
	"github.com/flapjackgo/flapjack/model/roster"
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

func toContactJSON(c roster.StoredContact) contactJSON {
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
		// The PagerDuty service key is shown as pagerduty_credentials, not as a medium (1.6).
		if m.Name != roster.PagerdutyMedium {
			out.Links.Media = append(out.Links.Media, roster.MediumRef{ContactID: c.ID, Name: m.Name}.String())
		}
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
func (a *jsonAPI) readContacts(r *http.Request, withEntities bool) ([]roster.StoredContact, error) {
	var out []roster.StoredContact
	err := a.conn(r, func(c redis.Conn) error {
		var ids []string
		var err error
		if r.PathValue("ids") != "" {
			if ids, err = pathIDs(r, 1); err != nil {
				return err
			}
		} else if ids, err = roster.ContactIDs(r.Context(), c, a.o.Keys); err != nil {
			return err
		}
		if out, err = roster.ReadContacts(r.Context(), c, a.o.Keys, ids, withEntities); err != nil {
			return err
		}
		if len(out) == 0 && r.PathValue("ids") != "" {
			return &roster.NotFoundError{What: "contact", IDs: ids}
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
	if r.PathValue("ids") == "" {
		// Flapjack 1.6 lists every contact by last name, then first name.
		sort.SliceStable(contacts, func(i, j int) bool {
			ci, cj := contacts[i], contacts[j]
			if ci.LastName != cj.LastName {
				return ci.LastName < cj.LastName
			}
			return ci.FirstName < cj.FirstName
		})
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
	contacts := make([]roster.ContactData, len(items))
	all := make([]*fields, len(items))
	for i, item := range items {
		// tags: flapjack-diner sends them and Flapjack 1.6 accepted them (it dropped them); we
		// keep them in contact_tag:TAG, as the importer does.
		f := newFields(index("contacts", i), item, append([]string{"id", "tags", "media"}, contactFieldNames...)...)
		all[i] = f
		contacts[i] = roster.ContactData{ID: f.str("id"), Tags: f.strs("tags"), ContactInfo: roster.ContactInfo{
			FirstName: f.str("first_name"), LastName: f.str("last_name"), Email: f.str("email"), Timezone: f.str("timezone")}}
		if f.has("media") {
			// 1.6 took a contact's media here, in the form of the import file.
			var problems []importer.Problem
			contacts[i].Media, contacts[i].Pagerduty, problems = importer.ParseMedia(i, item["media"])
			for _, p := range problems {
				f.fail(p.Field, p.Reason)
			}
		}
		if contacts[i].ID == "" {
			contacts[i].ID = roster.NewID()
		}
	}
	if err := itemsErr(all); err != nil {
		return err
	}
	err = a.conn(r, func(c redis.Conn) error { return roster.CreateContacts(r.Context(), c, a.o.Keys, contacts) })
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
	ops, err := a.readPatch(w, r, "contacts", contactFieldNames, []string{"entities", "notification_rules"})
	if err != nil {
		return err
	}
	// Check every value before writing anything.
	var changes []func(*roster.ContactInfo)
	var add, remove, grabRules, dropRules []string
	for _, op := range ops {
		switch {
		case op.Op == "add" && op.Linked == "notification_rules":
			grabRules = append(grabRules, op.ID)
		case op.Op == "remove" && op.Linked == "notification_rules":
			dropRules = append(dropRules, op.ID)
		case op.Op == "add":
			add = append(add, op.ID)
		case op.Op == "remove":
			remove = append(remove, op.ID)
		default:
			f := replaced(op)
			v := f.str(op.Field)
			if op.Field == "timezone" {
				if p := roster.TimezoneProblem(v); p != "" {
					f.fail("timezone", p)
				}
			}
			if err := itemsErr([]*fields{f}); err != nil {
				return err
			}
			field := op.Field
			changes = append(changes, func(info *roster.ContactInfo) {
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
		// A missing rule stops the request before any of its writes.
		if err := a.rulesExist(r, c, append(append([]string(nil), grabRules...), dropRules...)); err != nil {
			return err
		}
		if len(add)+len(remove) > 0 {
			if err := roster.LinkEntities(r.Context(), c, a.o.Keys, ids, add, remove); err != nil {
				return err
			}
		}
		if err := roster.UpdateContacts(r.Context(), c, a.o.Keys, ids, func(info *roster.ContactInfo) error {
			for _, change := range changes {
				change(info)
			}
			return nil
		}); err != nil {
			return err
		}
		return a.linkRules(r, c, ids, grabRules, dropRules)
	})
	if err != nil {
		return err
	}
	noContent(w)
	return nil
}

// rulesExist is a *NotFoundError naming the first of ids that is no rule.
func (a *jsonAPI) rulesExist(r *http.Request, c redis.Conn, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	found, err := roster.ReadRules(r.Context(), c, a.o.Keys, ids)
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for _, rule := range found {
		have[rule.ID] = true
	}
	for _, id := range ids {
		if !have[id] {
			return &roster.NotFoundError{What: "notification rule", IDs: []string{id}}
		}
	}
	return nil
}

// linkRules does what Flapjack 1.6 does for a contact's notification_rules links: an added
// rule moves to the contact (to the last of ids, when several are patched), a removed one is
// deleted.
func (a *jsonAPI) linkRules(r *http.Request, c redis.Conn, ids, grab, drop []string) error {
	if len(grab) > 0 {
		if err := roster.MoveRules(r.Context(), c, a.o.Keys, ids[len(ids)-1], grab); err != nil {
			return err
		}
	}
	if len(drop) > 0 {
		return roster.DeleteRules(r.Context(), c, a.o.Keys, drop)
	}
	return nil
}

func (a *jsonAPI) deleteContacts(w http.ResponseWriter, r *http.Request) error {
	ids, err := pathIDs(r, 1)
	if err != nil {
		return err
	}
	if err := a.conn(r, func(c redis.Conn) error { return roster.DeleteContacts(r.Context(), c, a.o.Keys, ids) }); err != nil {
		return err
	}
	noContent(w)
	return nil
}

// contactMustLoad turns a missing contact of a creation under /contacts/ID/... into Flapjack
// 1.6's 422.
func contactMustLoad(err error, contactID string) error {
	var nf *roster.NotFoundError
	if errors.As(err, &nf) && nf.What == "contact" {
		return failWith(http.StatusUnprocessableEntity, "Contact id: '%s' could not be loaded", contactID)
	}
	return err
}

func index(field string, i int) string {
	b, _ := json.Marshal(i)
	return field + "[" + string(b) + "]"
}
