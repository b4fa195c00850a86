package web

import (
	"net/http"
	"net/url"

	"github.com/flapjackgo/flapjack/model"
)

// The check page is live like the failing list: its head (state, summary, markers, who was
// alerted) is also served alone at /check/live for live.js to swap in.

func (s *server) check(w http.ResponseWriter, r *http.Request) error {
	d, err := s.readCheck(r)
	if err != nil {
		return err
	}
	d.LiveURL = s.base + "check/live?entity=" + url.QueryEscape(d.Entity) + "&check=" + url.QueryEscape(d.Check)
	return s.livePage(w, r, http.StatusOK, "check", "checkhead", "", model.CheckRef{Entity: d.Entity, Check: d.Check}.ID(), false, d)
}

func (s *server) checkLive(w http.ResponseWriter, r *http.Request) error {
	d, err := s.readCheck(r)
	if err != nil {
		return err
	}
	return s.part(w, r, http.StatusOK, "check", "checkhead", d)
}
