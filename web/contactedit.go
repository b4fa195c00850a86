package web

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/model/roster"
)

// The contacts editor (Flapjack 1.6's /edit_contacts, as forms): create, change and delete
// contacts, their media and their notification rules through model/roster's writes — the ones
// the JSON API and the importer use, so the same validation refuses the same values with the
// same messages.

// rosterWrite runs write on a connection and answers the roster's errors as the JSON API does:
// invalid values 422 with each field's message, a missing contact, medium or rule 404, an id in
// use 409.
func (s *server) rosterWrite(r *http.Request, write func(redis.Conn) error) error {
	err := s.withConn(r, write)
	var invalid *roster.ValidationError
	var notFound *roster.NotFoundError
	var exists *roster.ExistsError
	switch {
	case errors.As(err, &invalid):
		msgs := make([]string, len(invalid.Errors))
		for i, f := range invalid.Errors {
			msgs[i] = f.Error()
		}
		return errStatus(http.StatusUnprocessableEntity, "Not saved: %s.", strings.Join(msgs, "; "))
	case errors.As(err, &notFound):
		return errStatus(http.StatusNotFound, "Not saved: %v.", notFound)
	case errors.As(err, &exists):
		return errStatus(http.StatusConflict, "Not saved: %v.", exists)
	case errors.Is(err, roster.ErrContended):
		return errStatus(http.StatusConflict, "Not saved: other writers kept changing the contacts; try again.")
	}
	return err
}

// backTo leaves msg and redirects to path under the base.
func (s *server) backTo(w http.ResponseWriter, r *http.Request, path, msg string) error {
	s.setFlash(w, msg)
	http.Redirect(w, r, s.base+path, http.StatusSeeOther)
	return nil
}

func contactInfo(r *http.Request) roster.ContactInfo {
	f := func(k string) string { return strings.TrimSpace(r.PostForm.Get(k)) }
	return roster.ContactInfo{FirstName: f("first_name"), LastName: f("last_name"), Email: f("email"), Timezone: f("timezone")}
}

// createContact is POST /contacts: a new contact (a random id unless one is given).
func (s *server) createContact(w http.ResponseWriter, r *http.Request, user string) error {
	c := roster.ContactData{ID: strings.TrimSpace(r.PostForm.Get("id")), ContactInfo: contactInfo(r)}
	if c.ID == "" {
		c.ID = roster.NewID()
	}
	err := s.rosterWrite(r, func(conn redis.Conn) error {
		return roster.CreateContacts(r.Context(), conn, s.o.Keys, []roster.ContactData{c})
	})
	if err != nil {
		return err
	}
	s.log.Info("web: contact created", zap.String("contact", c.ID), zap.String("user", user))
	return s.backTo(w, r, "contacts/"+url.PathEscape(c.ID), "Contact "+c.ID+" created.")
}

// editContact is POST /contacts/{id}: its own fields, or with _method=delete the contact and
// everything that is theirs.
func (s *server) editContact(w http.ResponseWriter, r *http.Request, user string) error {
	id := r.PathValue("id")
	if strings.EqualFold(r.PostForm.Get("_method"), "delete") {
		err := s.rosterWrite(r, func(conn redis.Conn) error {
			return roster.DeleteContacts(r.Context(), conn, s.o.Keys, []string{id})
		})
		if err != nil {
			return err
		}
		s.log.Info("web: contact deleted", zap.String("contact", id), zap.String("user", user))
		return s.backTo(w, r, "contacts", "Contact "+id+" deleted.")
	}
	info := contactInfo(r)
	err := s.rosterWrite(r, func(conn redis.Conn) error {
		return roster.UpdateContacts(r.Context(), conn, s.o.Keys, []string{id}, func(c *roster.ContactInfo) error {
			*c = info
			return nil
		})
	})
	if err != nil {
		return err
	}
	return s.backTo(w, r, "contacts/"+url.PathEscape(id), "Contact "+id+" saved.")
}

// optionalInt reads a form's whole number; "" is nil.
func optionalInt(r *http.Request, field string) (*int64, error) {
	v := strings.TrimSpace(r.PostForm.Get(field))
	if v == "" {
		return nil, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return nil, errStatus(http.StatusUnprocessableEntity, "Not saved: %s: %q is not a whole number.", field, v)
	}
	return &n, nil
}

// setMedium is POST /contacts/{id}/media: add or replace the medium named in the form, or with
// _method=delete remove it.
func (s *server) setMedium(w http.ResponseWriter, r *http.Request, user string) error {
	id := r.PathValue("id")
	m := roster.Medium{Name: strings.TrimSpace(r.PostForm.Get("name")), Address: strings.TrimSpace(r.PostForm.Get("address"))}
	if strings.EqualFold(r.PostForm.Get("_method"), "delete") {
		err := s.rosterWrite(r, func(conn redis.Conn) error {
			return roster.DeleteMedia(r.Context(), conn, s.o.Keys, []roster.MediumRef{{ContactID: id, Name: m.Name}})
		})
		if err != nil {
			return err
		}
		return s.backTo(w, r, "contacts/"+url.PathEscape(id), "Medium "+m.Name+" removed.")
	}
	var err error
	if m.Interval, err = optionalInt(r, "interval"); err != nil {
		return err
	}
	if m.RollupThreshold, err = optionalInt(r, "rollup_threshold"); err != nil {
		return err
	}
	err = s.rosterWrite(r, func(conn redis.Conn) error {
		return roster.SetMedia(r.Context(), conn, s.o.Keys, id, []roster.Medium{m})
	})
	if err != nil {
		return err
	}
	return s.backTo(w, r, "contacts/"+url.PathEscape(id), "Medium "+m.Name+" saved.")
}

// splitList reads a comma-separated form field.
func splitList(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// ruleFields copies a rule form onto rule.
func ruleFields(r *http.Request, rule *roster.Rule) {
	f := r.PostForm
	rule.Entities, rule.RegexEntities = splitList(f.Get("entities")), splitList(f.Get("regex_entities"))
	rule.Tags, rule.RegexTags = splitList(f.Get("tags")), splitList(f.Get("regex_tags"))
	rule.WarningMedia, rule.CriticalMedia, rule.UnknownMedia = splitList(f.Get("warning_media")), splitList(f.Get("critical_media")), splitList(f.Get("unknown_media"))
	rule.WarningBlackhole, rule.CriticalBlackhole, rule.UnknownBlackhole = f.Get("warning_blackhole") != "", f.Get("critical_blackhole") != "", f.Get("unknown_blackhole") != ""
	rule.TimeRestrictions = strings.TrimSpace(f.Get("time_restrictions"))
	if rule.TimeRestrictions == "" {
		rule.TimeRestrictions = "[]"
	}
}

// createRule is POST /contacts/{id}/notification_rules.
func (s *server) createRule(w http.ResponseWriter, r *http.Request, user string) error {
	id := r.PathValue("id")
	rule := roster.Rule{ContactID: id}
	ruleFields(r, &rule)
	var ids []string
	err := s.rosterWrite(r, func(conn redis.Conn) (err error) {
		ids, err = roster.CreateRules(r.Context(), conn, s.o.Keys, id, []roster.Rule{rule})
		return err
	})
	if err != nil {
		return err
	}
	return s.backTo(w, r, "contacts/"+url.PathEscape(id), fmt.Sprintf("Rule %s added.", strings.Join(ids, ", ")))
}

// editRule is POST /notification_rules/{id}: replace the rule's fields, or with _method=delete
// delete it. contact_id says whose page to return to.
func (s *server) editRule(w http.ResponseWriter, r *http.Request, user string) error {
	id, back := r.PathValue("id"), "contacts/"+url.PathEscape(r.PostForm.Get("contact_id"))
	if strings.EqualFold(r.PostForm.Get("_method"), "delete") {
		err := s.rosterWrite(r, func(conn redis.Conn) error {
			return roster.DeleteRules(r.Context(), conn, s.o.Keys, []string{id})
		})
		if err != nil {
			return err
		}
		return s.backTo(w, r, back, "Rule "+id+" deleted.")
	}
	err := s.rosterWrite(r, func(conn redis.Conn) error {
		return roster.UpdateRules(r.Context(), conn, s.o.Keys, []string{id}, func(rule *roster.Rule) error {
			ruleFields(r, rule)
			return nil
		})
	})
	if err != nil {
		return err
	}
	return s.backTo(w, r, back, "Rule "+id+" saved.")
}
