package api

import (
	"errors"
	"net/http"
	"sort"
	"strings"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/gateways/media"
	"github.com/flapjackgo/flapjack/model/roster"
)

// mediumJSON is a medium as Flapjack 1.x's JSON API shows it (docs/flapjack-1x.md A.3).
type mediumJSON struct {
	ID              string    `json:"id"`
	Type            string    `json:"type"`
	Address         string    `json:"address"`
	Interval        *int64    `json:"interval"`
	RollupThreshold *int64    `json:"rollup_threshold"`
	Links           linksJSON `json:"links"`
}

type linksJSON struct {
	Contacts []string `json:"contacts"`
}

// pagerdutyJSON is a contact's PagerDuty settings (docs/flapjack-1x.md A.4).
type pagerdutyJSON struct {
	ID         string    `json:"id"`
	ServiceKey string    `json:"service_key"`
	Subdomain  string    `json:"subdomain"`
	Token      string    `json:"token"`
	Username   string    `json:"username"`
	Password   string    `json:"password"`
	Links      linksJSON `json:"links"`
}

var (
	mediumFieldNames    = []string{"address", "interval", "rollup_threshold"}
	pagerdutyFieldNames = []string{"service_key", "subdomain", "token", "username", "password"}
	// knownMediumTypes are the registry's media (gateways/media), longest first: a medium id
	// CONTACT_TYPE is split before the longest of these it ends with, else at its last "_".
	knownMediumTypes = mediumTypesLongestFirst()
)

func mediumTypesLongestFirst() []string {
	var names []string
	for _, m := range media.All {
		if !m.Unqueued {
			names = append(names, m.Name)
		}
	}
	sort.SliceStable(names, func(i, j int) bool { return len(names[i]) > len(names[j]) })
	return names
}

// parseMediumID splits CONTACT_TYPE. CONTACT_pagerduty is no medium id, as in Flapjack 1.6:
// PagerDuty settings are pagerduty_credentials.
func parseMediumID(id string) (roster.MediumRef, error) {
	if strings.HasSuffix(id, "_"+roster.PagerdutyMedium) {
		return roster.MediumRef{}, failWith(http.StatusUnprocessableEntity, "Could not get contact_id from media_id '%s'", id)
	}
	for _, t := range knownMediumTypes {
		if c, ok := strings.CutSuffix(id, "_"+t); ok && c != "" {
			return roster.MediumRef{ContactID: c, Name: t}, nil
		}
	}
	i := strings.LastIndex(id, "_")
	if i <= 0 {
		return roster.MediumRef{}, failWith(http.StatusUnprocessableEntity, "Could not get contact_id from media_id '%s'", id)
	}
	if i == len(id)-1 {
		return roster.MediumRef{}, failWith(http.StatusUnprocessableEntity, "Could not get media type from media_id '%s'", id)
	}
	return roster.MediumRef{ContactID: id[:i], Name: id[i+1:]}, nil
}

func (a *jsonAPI) mediaRoutes(route func(method, path, what string, h apiHandler)) {
	route("GET", "/media", "JSON API: every medium of every contact", a.getMedia)
	route("GET", "/media/{ids}", "JSON API: media by id (CONTACT_TYPE, comma-separated)", a.getMedia)
	route("POST", "/contacts/{id}/media", `JSON API: add or replace media of a contact {"media":[...]}`, a.postMedia)
	route("PATCH", "/media/{ids}", "JSON API: change media (JSON-Patch)", a.patchMedia)
	route("DELETE", "/media/{ids}", "JSON API: delete media", a.deleteMedia)
}

// mediumRefs are the medium ids of the path.
func mediumRefs(r *http.Request) ([]roster.MediumRef, error) {
	ids, err := pathIDs(r, 1)
	if err != nil {
		return nil, err
	}
	refs := make([]roster.MediumRef, len(ids))
	for i, id := range ids {
		if refs[i], err = parseMediumID(id); err != nil {
			return nil, err
		}
	}
	return refs, nil
}

func (a *jsonAPI) getMedia(w http.ResponseWriter, r *http.Request) error {
	var refs []roster.MediumRef
	var want map[roster.MediumRef]bool
	if r.PathValue("ids") != "" {
		var err error
		if refs, err = mediumRefs(r); err != nil {
			return err
		}
		want = map[roster.MediumRef]bool{}
		for _, ref := range refs {
			want[ref] = true
		}
	}
	out := []mediumJSON{}
	err := a.conn(r, func(c redis.Conn) error {
		var ids []string
		var err error
		if refs == nil {
			if ids, err = roster.ContactIDs(r.Context(), c, a.o.Keys); err != nil {
				return err
			}
		}
		for _, ref := range refs {
			ids = append(ids, ref.ContactID)
		}
		contacts, err := roster.ReadContacts(r.Context(), c, a.o.Keys, ids, false)
		if err != nil {
			return err
		}
		if err := firstMissing(ids, contacts); err != nil {
			return err
		}
		for _, ct := range contacts {
			for _, m := range ct.Media {
				ref := roster.MediumRef{ContactID: ct.ID, Name: m.Name}
				// PagerDuty is served as pagerduty_credentials (1.6 lists it under neither
				// /media nor a contact's media links).
				if m.Name == roster.PagerdutyMedium || want != nil && !want[ref] {
					continue
				}
				out = append(out, mediumJSON{ID: ref.String(), Type: m.Name, Address: m.Address,
					Interval: m.Interval, RollupThreshold: m.RollupThreshold, Links: linksJSON{Contacts: []string{ct.ID}}})
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	writeAPI(w, http.StatusOK, map[string]any{"media": out})
	return nil
}

// firstMissing is Flapjack 1.6's answer to a read naming contacts one at a time (media and
// PagerDuty credentials by id): 404 for the first of ids that is not among found. Media or
// credentials a found contact lacks are only left out of the answer, as in 1.6.
func firstMissing(ids []string, found []roster.StoredContact) error {
	have := contactSet(found)
	for _, id := range ids {
		if !have[id] {
			return failWith(http.StatusNotFound, "could not find contact '%s'", id)
		}
	}
	return nil
}

// contactSet is the ids of contacts.
func contactSet(contacts []roster.StoredContact) map[string]bool {
	have := make(map[string]bool, len(contacts))
	for _, c := range contacts {
		have[c.ID] = true
	}
	return have
}

func (a *jsonAPI) postMedia(w http.ResponseWriter, r *http.Request) error {
	contactID := r.PathValue("id")
	items, err := a.createItems(w, r, "media", "No valid media were submitted")
	if err != nil {
		return err
	}
	media := make([]roster.Medium, len(items))
	all := make([]*fields, len(items))
	ids := make([]string, len(items))
	for i, item := range items {
		f := newFields(index("media", i), item, "id", "type", "address", "interval", "rollup_threshold")
		all[i] = f
		media[i] = roster.Medium{Name: f.str("type"), Address: f.str("address"),
			Interval: f.integer("interval"), RollupThreshold: f.integer("rollup_threshold")}
		ids[i] = roster.MediumRef{ContactID: contactID, Name: media[i].Name}.String()
		if f.has("id") && f.str("id") != ids[i] {
			f.fail("id", "must be "+ids[i]+" (CONTACT_TYPE) or left out")
		}
	}
	if err := itemsErr(all); err != nil {
		return err
	}
	err = a.conn(r, func(c redis.Conn) error { return roster.SetMedia(r.Context(), c, a.o.Keys, contactID, media) })
	if err != nil {
		return contactMustLoad(err, contactID)
	}
	a.created(w, r, "media", ids)
	return nil
}

func (a *jsonAPI) patchMedia(w http.ResponseWriter, r *http.Request) error {
	refs, err := mediumRefs(r)
	if err != nil {
		return err
	}
	ops, err := a.readPatch(w, r, "media", mediumFieldNames, nil)
	if err != nil {
		return err
	}
	var changes []func(*roster.Medium)
	for _, op := range ops {
		f := replaced(op)
		switch op.Field {
		case "address":
			v := f.str("address")
			changes = append(changes, func(m *roster.Medium) { m.Address = v })
		case "interval":
			v := f.integer("interval")
			changes = append(changes, func(m *roster.Medium) { m.Interval = v })
		case "rollup_threshold":
			v := f.integer("rollup_threshold")
			changes = append(changes, func(m *roster.Medium) { m.RollupThreshold = v })
		}
		if err := itemsErr([]*fields{f}); err != nil {
			return err
		}
	}
	err = a.conn(r, func(c redis.Conn) error {
		return roster.UpdateMedia(r.Context(), c, a.o.Keys, refs, func(m *roster.Medium) error {
			for _, change := range changes {
				change(m)
			}
			return nil
		})
	})
	if err != nil {
		return oneContact(err)
	}
	noContent(w)
	return nil
}

func (a *jsonAPI) deleteMedia(w http.ResponseWriter, r *http.Request) error {
	refs, err := mediumRefs(r)
	if err != nil {
		return err
	}
	if err := a.conn(r, func(c redis.Conn) error { return roster.DeleteMedia(r.Context(), c, a.o.Keys, refs) }); err != nil {
		return oneContact(err)
	}
	noContent(w)
	return nil
}

// ---- PagerDuty credentials: a view on the pagerduty medium and contact_pagerduty:ID ----

func (a *jsonAPI) pagerdutyRoutes(route func(method, path, what string, h apiHandler)) {
	route("GET", "/pagerduty_credentials", "JSON API: every contact's PagerDuty settings", a.getPagerduty)
	route("GET", "/pagerduty_credentials/{ids}", "JSON API: PagerDuty settings by contact id (comma-separated)", a.getPagerduty)
	route("POST", "/contacts/{id}/pagerduty_credentials", `JSON API: set a contact's PagerDuty settings {"pagerduty_credentials":[...]}`, a.postPagerduty)
	route("PATCH", "/pagerduty_credentials/{ids}", "JSON API: change PagerDuty settings (JSON-Patch)", a.patchPagerduty)
	route("DELETE", "/pagerduty_credentials/{ids}", "JSON API: delete PagerDuty settings (the pagerduty medium)", a.deletePagerduty)
}

func (a *jsonAPI) getPagerduty(w http.ResponseWriter, r *http.Request) error {
	contacts, err := a.readContacts(r, false)
	if err == nil && r.PathValue("ids") != "" {
		ids, _ := pathIDs(r, 1)
		err = firstMissing(ids, contacts)
	}
	if err != nil {
		return oneContact(err)
	}
	out := []pagerdutyJSON{}
	for _, c := range contacts {
		for _, m := range c.Media {
			if m.Name == roster.PagerdutyMedium {
				p := c.Pagerduty
				out = append(out, pagerdutyJSON{ID: c.ID, ServiceKey: m.Address, Subdomain: p.Subdomain, Token: p.Token,
					Username: p.Username, Password: p.Password, Links: linksJSON{Contacts: []string{c.ID}}})
			}
		}
	}
	writeAPI(w, http.StatusOK, map[string]any{"pagerduty_credentials": out})
	return nil
}

func (a *jsonAPI) postPagerduty(w http.ResponseWriter, r *http.Request) error {
	contactID := r.PathValue("id")
	items, err := a.createItems(w, r, "pagerduty_credentials", "No valid pagerduty credentials were submitted")
	if err != nil {
		return err
	}
	// Flapjack 1.6 uses the last element.
	f := newFields(index("pagerduty_credentials", len(items)-1), items[len(items)-1], pagerdutyFieldNames...)
	if len(f.errs) > 0 {
		return &statusError{status: http.StatusUnprocessableEntity, msgs: append([]string{"Pagerduty credential data has incorrect fields"}, f.errs...)}
	}
	set := roster.PagerdutySettings{ServiceKey: f.str("service_key"), PagerdutyCredentials: roster.PagerdutyCredentials{
		Subdomain: f.str("subdomain"), Token: f.str("token"), Username: f.str("username"), Password: f.str("password")}}
	if err := itemsErr([]*fields{f}); err != nil {
		return err
	}
	err = a.conn(r, func(c redis.Conn) error {
		return roster.UpdatePagerduty(r.Context(), c, a.o.Keys, []string{contactID}, func(p *roster.PagerdutySettings) error {
			*p = set
			return nil
		})
	})
	if err != nil {
		return contactMustLoad(err, contactID)
	}
	a.created(w, r, "pagerduty_credentials", []string{contactID})
	return nil
}

// errNoPagerduty stops a PATCH of a contact that has no PagerDuty settings.
var errNoPagerduty = errors.New("contact has no PagerDuty settings")

func (a *jsonAPI) patchPagerduty(w http.ResponseWriter, r *http.Request) error {
	ids, err := pathIDs(r, 1)
	if err != nil {
		return err
	}
	ops, err := a.readPatch(w, r, "pagerduty_credentials", pagerdutyFieldNames, nil)
	if err != nil {
		return err
	}
	var changes []func(*roster.PagerdutySettings)
	for _, op := range ops {
		f := replaced(op)
		v := f.str(op.Field)
		if err := itemsErr([]*fields{f}); err != nil {
			return err
		}
		field := op.Field
		changes = append(changes, func(p *roster.PagerdutySettings) {
			switch field {
			case "service_key":
				p.ServiceKey = v
			case "subdomain":
				p.Subdomain = v
			case "token":
				p.Token = v
			case "username":
				p.Username = v
			case "password":
				p.Password = v
			}
		})
	}
	err = a.conn(r, func(c redis.Conn) error {
		err := roster.UpdatePagerduty(r.Context(), c, a.o.Keys, ids, func(p *roster.PagerdutySettings) error {
			if p.ServiceKey == "" {
				return errNoPagerduty
			}
			for _, change := range changes {
				change(p)
			}
			return nil
		})
		if !errors.Is(err, errNoPagerduty) {
			return err
		}
		// Name the contacts without settings (read after the refused write: a report, not a decision).
		contacts, rerr := roster.ReadContacts(r.Context(), c, a.o.Keys, ids, false)
		if rerr != nil {
			return rerr
		}
		has := map[string]bool{}
		for _, ct := range contacts {
			for _, m := range ct.Media {
				if m.Name == roster.PagerdutyMedium {
					has[ct.ID] = true
				}
			}
		}
		var gone []string
		for _, id := range ids {
			if !has[id] {
				gone = append(gone, id)
			}
		}
		return &roster.NotFoundError{What: "pagerduty credentials", IDs: gone}
	})
	if err != nil {
		return oneContact(err)
	}
	noContent(w)
	return nil
}

func (a *jsonAPI) deletePagerduty(w http.ResponseWriter, r *http.Request) error {
	ids, err := pathIDs(r, 1)
	if err != nil {
		return err
	}
	refs := make([]roster.MediumRef, len(ids))
	for i, id := range ids {
		refs[i] = roster.MediumRef{ContactID: id, Name: roster.PagerdutyMedium}
	}
	err = a.conn(r, func(c redis.Conn) error { return roster.DeleteMedia(r.Context(), c, a.o.Keys, refs) })
	var nf *roster.NotFoundError
	if errors.As(err, &nf) && nf.What == "medium" {
		gone := make([]string, len(nf.IDs))
		for i, id := range nf.IDs {
			gone[i] = strings.TrimSuffix(id, "_"+roster.PagerdutyMedium)
		}
		return &roster.NotFoundError{What: "pagerduty credentials", IDs: gone}
	}
	if err != nil {
		return oneContact(err)
	}
	noContent(w)
	return nil
}
