package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/flapjackgo/flapjack/internal/humantime"
	"github.com/flapjackgo/flapjack/model/views"
	"github.com/flapjackgo/flapjack/status"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

func staticHandler() http.Handler {
	sub, _ := fs.Sub(staticFS, "static")
	return http.FileServer(http.FS(sub))
}

// alertedText says who a check's last alert went to, on which media: "Ada Lovelace (email, sms)".
func alertedText(a views.LastAlert) string {
	parts := make([]string, len(a.Recipients))
	for i, r := range a.Recipients {
		who := r.Name
		if who == "" {
			who = r.ContactID
		}
		parts[i] = who + " (" + strings.Join(r.Media, ", ") + ")"
	}
	return strings.Join(parts, "; ")
}

// pages holds one template set per page, each the layout plus the page's "content".
type pages map[string]*template.Template

var funcs = template.FuncMap{
	"ago": func(now time.Time, unix int64) string {
		if unix <= 0 {
			return "never"
		}
		return status.Compact(now.Sub(time.Unix(unix, 0))) + " ago"
	},
	"until": func(now time.Time, unix int64) string {
		return "in " + status.Compact(time.Unix(unix, 0).Sub(now))
	},
	"abs": func(unix int64) string {
		if unix <= 0 {
			return ""
		}
		return time.Unix(unix, 0).UTC().Format("2006-01-02 15:04:05 UTC")
	},
	"iso": func(unix int64) string { return time.Unix(unix, 0).UTC().Format(time.RFC3339) },
	"words": func(seconds int64) string {
		return humantime.Words(time.Duration(seconds) * time.Second)
	},
	"cut": func(s string, n int) string {
		s = strings.Join(strings.Fields(s), " ")
		if utf8.RuneCountInString(s) <= n {
			return s
		}
		r := []rune(s)
		return string(r[:n]) + "…"
	},
	"stateClass": func(state string) string {
		switch state {
		case "ok", "up":
			return "ok"
		case "warning":
			return "warning"
		case "critical", "down":
			return "critical"
		case "unknown":
			return "unknown"
		}
		return "none"
	},
	"stateText": func(state string) string {
		if state == "" {
			return "no state"
		}
		return state
	},
	"seg": url.PathEscape,
	"dict": func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	},
	"deref":   func(p *int64) int64 { return *p },
	"alerted": alertedText,
	"add":     func(a, b int64) int64 { return a + b },
	"join": func(v []string) string {
		return strings.Join(v, ", ")
	},
}

func parsePages() (pages, error) {
	layout, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html")
	if err != nil {
		return nil, err
	}
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	out := pages{}
	for _, n := range names {
		if path.Base(n) == "layout.html" {
			continue
		}
		t, err := template.Must(layout.Clone()).ParseFS(templateFS, n)
		if err != nil {
			return nil, err
		}
		out[strings.TrimSuffix(path.Base(n), ".html")] = t
	}
	return out, nil
}

func (p pages) render(w http.ResponseWriter, name string, data frame) error {
	t, ok := p[name]
	if !ok {
		return fmt.Errorf("no template %q", name)
	}
	var b bytes.Buffer
	if err := t.ExecuteTemplate(&b, "layout.html", data); err != nil {
		return err
	}
	_, err := b.WriteTo(w)
	return err
}

// frame is what the layout needs around a page's data.
type frame struct {
	Title   string
	Nav     string
	Base    string
	Refresh int
	User    string
	CSRF    string
	Flash   string
	Logo    string
	Live    bool // live.js updates the page: the meta refresh is only for browsers without JavaScript
	// LiveETag is the ETag of the page's live fragment as rendered with the page, so live.js's
	// first poll answers 304 when nothing changed and does not replace what the page shows.
	LiveETag string
	Now      time.Time
	Data     any
}

// frame builds the layout's data; the CSRF token and flash are filled by page.
func (s *server) frame(r *http.Request, nav, title string, data any) frame {
	f := frame{Title: title, Nav: nav, Base: s.base, Now: s.clk.Now(), Data: data, User: s.user(r)}
	if s.o.LogoPath != "" {
		f.Logo = s.base + "img/branding" + path.Ext(s.o.LogoPath)
	}
	return f
}

// page renders a read page with the token for its forms, the pending flash and, when refresh
// is set, the meta refresh.
func (s *server) page(w http.ResponseWriter, r *http.Request, name, nav, title string, refresh bool, data any) error {
	f := s.frame(r, nav, title, data)
	f.CSRF = s.csrfToken(w, r)
	f.Flash = s.takeFlash(w, r)
	if refresh && s.o.AutoRefresh > 0 {
		f.Refresh = int(s.o.AutoRefresh / time.Second)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	return s.pages.render(w, name, f)
}

// livePage renders a page that live.js keeps current through its fragment part: the meta
// refresh, if any, only applies with JavaScript off.
func (s *server) livePage(w http.ResponseWriter, r *http.Request, code int, name, part, nav, title string, refresh bool, data any) error {
	f := s.frame(r, nav, title, data)
	f.CSRF = s.csrfToken(w, r)
	f.Flash = s.takeFlash(w, r)
	f.Live = true
	_, etag, err := s.fragment(r, f.CSRF, name, part, data)
	if err != nil {
		return err
	}
	f.LiveETag = etag
	if refresh && s.o.AutoRefresh > 0 {
		f.Refresh = int(s.o.AutoRefresh / time.Second)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	return s.pages.render(w, name, f)
}

// fragment renders one named template of a page (a fragment live.js swaps in) with the page's
// frame, and its ETag.
func (s *server) fragment(r *http.Request, csrf, name, part string, data any) (*bytes.Buffer, string, error) {
	t, ok := s.pages[name]
	if !ok {
		return nil, "", fmt.Errorf("no template %q", name)
	}
	f := s.frame(r, "", "", data)
	f.CSRF = csrf
	var b bytes.Buffer
	if err := t.ExecuteTemplate(&b, part, f); err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256(b.Bytes())
	return &b, `"` + hex.EncodeToString(sum[:12]) + `"`, nil
}

// part serves one fragment of a page. A phone polls it every few seconds: an unchanged
// fragment costs a 304, not its body.
func (s *server) part(w http.ResponseWriter, r *http.Request, code int, name, part string, data any) error {
	b, etag, err := s.fragment(r, s.csrfToken(w, r), name, part, data)
	if err != nil {
		return err
	}
	w.Header().Set("ETag", etag)
	w.Header().Set("Cache-Control", "no-store")
	if code == http.StatusOK && r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_, err = b.WriteTo(w)
	return err
}
