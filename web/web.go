// Package web is flapjack's web UI on Flapjack 1.6's paths (docs/flapjack-1x.md B): server-rendered
// pages of checks, entities, contacts, on-call schedules and self stats, calendar feeds of
// schedules and of a contact's shifts, and forms that acknowledge a check (or several at once),
// end an acknowledgement, schedule or delete maintenance, decommission a check, edit contacts,
// their media and rules, and add a schedule override. The failing list and the check page keep
// themselves current by polling fragments of themselves (static/live.js), and work without it.
// Pages read Redis only through packages status and model; actions go through events.Publisher
// (an acknowledgement is an event, as from the CLI), model/checkstate's admin writes and
// model/roster's contact and schedule writes. Templates, style sheet and scripts are embedded;
// nothing is built with Node.
//
// Access: reads need no login only on direct loopback requests (no proxy headers and no
// web.auth_header); otherwise a web.users login (HTTP Basic, bcrypt hashes) or the user name a
// trusted reverse proxy puts in web.auth_header. Actions always need a user, on loopback too,
// and a CSRF token (a signed double-submit cookie).
package web

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/events"
	"github.com/flapjackgo/flapjack/redisconn"
	"github.com/flapjackgo/flapjack/schema"
	"github.com/flapjackgo/flapjack/status"
)

// Options configure the web UI.
type Options struct {
	Addr   string // web.addr
	Pool   *redis.Pool
	Keys   schema.Keys
	Events *events.Publisher // where acknowledgements are queued
	Clock  clock.Clock       // nil: the real clock
	Log    *zap.Logger
	// Status names the queues and stages /self_stats reports on.
	Status status.Options
	// AutoRefresh is the period of the pages' meta refresh; 0 = none.
	AutoRefresh time.Duration
	// BaseURL prefixes every link and form ("/" or "" = none): the path a reverse proxy serves
	// the UI under. Requests may arrive with or without the prefix.
	BaseURL string
	// LogoPath is an image file served as /img/branding.<ext> and shown in the header.
	LogoPath string
	// Users are logins as name:bcrypt-hash (HTTP Basic).
	Users []string
	// AuthHeader is a request header a trusted reverse proxy sets to the user's name.
	AuthHeader string
	// CSRFKey signs the CSRF tokens; nil: a random key per process.
	CSRFKey []byte
}

// Validate checks the address, the logins and the rule that a UI reachable off loopback needs
// some way to log in.
func (o Options) Validate() error {
	host, _, err := net.SplitHostPort(o.Addr)
	if err != nil {
		return fmt.Errorf("web.addr %q: %w", o.Addr, err)
	}
	if _, err := parseUsers(o.Users); err != nil {
		return err
	}
	if o.AutoRefresh < 0 {
		return fmt.Errorf("web.auto_refresh must not be negative")
	}
	if o.BaseURL != "" {
		if _, err := url.Parse(o.BaseURL); err != nil {
			return fmt.Errorf("web.base_url %q: %w", o.BaseURL, err)
		}
	}
	if !isLoopback(host) && len(o.Users) == 0 && o.AuthHeader == "" {
		return fmt.Errorf("web.addr %q is not a loopback address: set web.users or web.auth_header, or nobody off the host could log in", o.Addr)
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Serve listens on o.Addr until ctx ends.
func Serve(ctx context.Context, o Options) error {
	if err := o.Validate(); err != nil {
		return err
	}
	h, err := Handler(o)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return fmt.Errorf("listen on web.addr %s: %w", o.Addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 60 * time.Second, MaxHeaderBytes: 64 << 10}
	if o.Log != nil {
		o.Log.Info("web UI listening", zap.String("addr", ln.Addr().String()), zap.Int("users", len(o.Users)),
			zap.Bool("auth_header", o.AuthHeader != ""))
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return srv.Shutdown(shut)
	}
}

// server is the UI's state: options, parsed logins, templates.
type server struct {
	o        Options
	clk      clock.Clock
	log      *zap.Logger
	users    map[string][]byte
	auth     *authCache
	csrfKey  []byte
	base     string // link prefix, ending in "/"
	basePath string // the prefix's path, stripped from requests that carry it
	pages    pages
}

// Handler builds the UI's routes.
func Handler(o Options) (http.Handler, error) {
	users, err := parseUsers(o.Users)
	if err != nil {
		return nil, err
	}
	s := &server{o: o, clk: o.Clock, log: o.Log, users: users, auth: newAuthCache(), csrfKey: o.CSRFKey}
	if s.clk == nil {
		s.clk = clock.Real{}
	}
	if s.log == nil {
		s.log = zap.NewNop()
	}
	if len(s.csrfKey) == 0 {
		s.csrfKey = make([]byte, 32)
		if _, err := rand.Read(s.csrfKey); err != nil {
			return nil, err
		}
	}
	s.base, s.basePath = baseOf(o.BaseURL)
	if s.pages, err = parsePages(); err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	read := func(pattern string, h func(http.ResponseWriter, *http.Request) error) {
		mux.Handle(pattern, s.reader(h))
	}
	act := func(pattern string, h func(http.ResponseWriter, *http.Request, string) error) {
		mux.Handle(pattern, s.actor(h))
	}
	read("GET /{$}", s.summary)
	read("GET /checks_failing", s.failing)
	read("GET /checks_failing/live", s.failingLive)
	read("GET /check/live", s.checkLive)
	read("GET /checks_all", s.checks())
	read("GET /entities", s.entities("enabled"))
	mux.Handle("GET /entities_all", http.RedirectHandler(s.base+"entities", http.StatusFound))
	read("GET /entities_failing", s.entities("failing"))
	read("GET /entities_decommissioned", s.entities("decommissioned"))
	read("GET /entity/{entity...}", s.entity)
	read("GET /check", s.check)
	read("GET /contacts", s.contacts)
	read("GET /contacts/{id}", s.contact)
	read("GET /contacts/{id}/shifts.ics", s.contactShifts)
	read("GET /schedules", s.schedules)
	read("GET /schedules/{id}", s.schedule)
	read("GET /reports/oncall", s.oncall)
	read("GET /self_stats", s.selfStats)
	read("GET /self_stats.json", s.selfStatsJSON)
	mux.Handle("GET /static/", http.StripPrefix("/static/", staticHandler()))
	if o.LogoPath != "" {
		logo := o.LogoPath
		mux.Handle("GET /img/branding"+path.Ext(logo), s.reader(func(w http.ResponseWriter, r *http.Request) error {
			http.ServeFile(w, r, logo)
			return nil
		}))
	}
	act("POST /acknowledgements/{entity}/{check...}", s.acknowledge)
	act("POST /bulk_acknowledgements", s.bulkAcknowledge)
	act("POST /end_unscheduled_maintenance/{entity}/{check...}", s.endUnscheduled)
	act("POST /scheduled_maintenances/{entity}/{check...}", s.scheduledMaintenance)
	act("POST /checks/{entity}/{check...}", s.decommission)
	act("POST /contacts", s.createContact)
	act("POST /contacts/{id}", s.editContact)
	act("POST /contacts/{id}/media", s.setMedium)
	act("POST /contacts/{id}/notification_rules", s.createRule)
	act("POST /notification_rules/{id}", s.editRule)
	act("POST /schedules/{id}/overrides", s.addOverride)
	return s.stripBase(mux), nil
}

// baseOf returns the link prefix (ending in "/") and its path.
func baseOf(raw string) (string, string) {
	if raw == "" {
		raw = "/"
	}
	if !strings.HasSuffix(raw, "/") {
		raw += "/"
	}
	p := raw
	if u, err := url.Parse(raw); err == nil {
		p = u.Path
	}
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return raw, p
}

// stripBase removes the base path from requests that carry it (a proxy that does not strip it).
func (s *server) stripBase(h http.Handler) http.Handler {
	prefix := strings.TrimSuffix(s.basePath, "/")
	if prefix == "" {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; p == prefix || strings.HasPrefix(p, prefix+"/") {
			r2 := r.Clone(r.Context())
			r2.URL.Path = "/" + strings.TrimPrefix(strings.TrimPrefix(p, prefix), "/")
			r2.URL.RawPath = ""
			if rp := r.URL.RawPath; rp != "" && strings.HasPrefix(rp, prefix) {
				r2.URL.RawPath = "/" + strings.TrimPrefix(strings.TrimPrefix(rp, prefix), "/")
			}
			h.ServeHTTP(w, r2)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// httpError is an error with the status a page answers it with.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

func errStatus(status int, format string, args ...any) error {
	return &httpError{status: status, msg: fmt.Sprintf(format, args...)}
}

// fail answers an error as a short page.
func (s *server) fail(w http.ResponseWriter, r *http.Request, err error) {
	status := http.StatusInternalServerError
	msg := "internal error; see the log"
	var he *httpError
	switch {
	case errors.As(err, &he):
		status, msg = he.status, he.msg
	case redisconn.Unavailable(err):
		s.log.Error("web request failed: Redis unavailable", zap.String("path", r.URL.Path), zap.Error(err))
		status, msg = http.StatusServiceUnavailable, "Redis unavailable; try again shortly"
	default:
		s.log.Error("web request failed", zap.String("path", r.URL.Path), zap.Error(err))
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = s.pages.render(w, "error", s.frame(r, "", http.StatusText(status), map[string]any{"Status": status, "Message": msg}))
}

func (s *server) withConn(r *http.Request, f func(redis.Conn) error) error {
	conn, err := s.o.Pool.GetContext(r.Context())
	if err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	defer conn.Close()
	return f(conn)
}
