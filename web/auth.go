package web

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"golang.org/x/crypto/bcrypt"
)

const (
	csrfCookie  = "flapjack_csrf"
	csrfField   = "csrf_token"
	flashCookie = "flapjack_flash"
	// maxForm bounds an action's form body.
	maxForm = 64 << 10
)

// parseUsers reads web.users entries name:bcrypt-hash.
func parseUsers(entries []string) (map[string][]byte, error) {
	users := map[string][]byte{}
	for _, e := range entries {
		name, hash, ok := strings.Cut(strings.TrimSpace(e), ":")
		if !ok || name == "" {
			return nil, fmt.Errorf("web.users: an entry is not name:bcrypt-hash")
		}
		if _, err := bcrypt.Cost([]byte(hash)); err != nil {
			return nil, fmt.Errorf("web.users: the hash of %q is not a bcrypt hash (make one with `htpasswd -nbB name password`): %v", name, err)
		}
		users[name] = []byte(hash)
	}
	return users, nil
}

// authCache remembers logins already checked, so bcrypt (slow on purpose) runs once per
// password and process, not once per page. Keys are SHA-256 of name and password.
type authCache struct {
	mu sync.Mutex
	ok map[[32]byte]bool
}

func newAuthCache() *authCache { return &authCache{ok: map[[32]byte]bool{}} }

// maxCachedLogins bounds the cache; it is emptied when full.
const maxCachedLogins = 1024

func (c *authCache) check(users map[string][]byte, name, password string) bool {
	hash, known := users[name]
	if !known {
		return false
	}
	k := sha256.Sum256([]byte(name + "\x00" + password + "\x00" + string(hash)))
	c.mu.Lock()
	hit := c.ok[k]
	c.mu.Unlock()
	if hit {
		return true
	}
	if bcrypt.CompareHashAndPassword(hash, []byte(password)) != nil {
		return false
	}
	c.mu.Lock()
	if len(c.ok) >= maxCachedLogins {
		clear(c.ok)
	}
	c.ok[k] = true
	c.mu.Unlock()
	return true
}

// user is the authenticated user of r ("" = none): the trusted proxy's header, else a valid
// HTTP Basic login of web.users.
func (s *server) user(r *http.Request) string {
	if s.o.AuthHeader != "" {
		if name := strings.TrimSpace(r.Header.Get(s.o.AuthHeader)); name != "" {
			return name
		}
	}
	if name, password, ok := r.BasicAuth(); ok && s.auth.check(s.users, name, password) {
		return name
	}
	return ""
}

// anonymousReads reports whether r may read without a login: it came straight from loopback
// (no proxy headers) and no reverse proxy is configured to authenticate (web.auth_header), as
// a proxy on the same host would make every visitor look local.
func (s *server) anonymousReads(r *http.Request) bool {
	if s.o.AuthHeader != "" {
		return false
	}
	for _, h := range []string{"X-Forwarded-For", "Forwarded", "X-Real-Ip"} {
		if r.Header.Get(h) != "" {
			return false
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// unauthorized asks for a login.
func (s *server) unauthorized(w http.ResponseWriter, r *http.Request, what string) {
	if len(s.users) > 0 {
		w.Header().Set("WWW-Authenticate", `Basic realm="flapjack", charset="UTF-8"`)
	}
	how := "log in with a web.users account"
	if len(s.users) == 0 && s.o.AuthHeader == "" {
		how = "no logins are configured: set web.users or web.auth_header"
	} else if len(s.users) == 0 {
		how = "come through the reverse proxy that sets " + s.o.AuthHeader
	}
	s.fail(w, r, errStatus(http.StatusUnauthorized, "%s needs a login: %s.", what, how))
}

// reader wraps a page: it needs a login unless anonymousReads allows it.
func (s *server) reader(h func(http.ResponseWriter, *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user := s.user(r)
		if user == "" && !s.anonymousReads(r) {
			s.unauthorized(w, r, "Reading this page from here")
			return
		}
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'")
		w.Header().Set("Referrer-Policy", "same-origin")
		if err := h(w, r); err != nil {
			s.fail(w, r, err)
		}
	})
}

// actor wraps an action: a user always (loopback included), then a valid CSRF token.
func (s *server) actor(h func(http.ResponseWriter, *http.Request, string) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user := s.user(r)
		if user == "" {
			s.unauthorized(w, r, "This action")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxForm)
		if err := r.ParseForm(); err != nil {
			s.fail(w, r, errStatus(http.StatusBadRequest, "unreadable form: %v", err))
			return
		}
		if !s.validCSRF(r) {
			s.fail(w, r, errStatus(http.StatusForbidden, "The form's security token is missing or out of date: reload the page and try again."))
			return
		}
		if err := h(w, r, user); err != nil {
			s.fail(w, r, err)
		}
	})
}

// csrfToken returns the token for r's forms, setting the cookie it is derived from when r has
// none. The cookie is random per browser; the token is its HMAC under the process's key, so a
// site that can neither read the cookie nor know the key cannot forge a form.
func (s *server) csrfToken(w http.ResponseWriter, r *http.Request) string {
	c, err := r.Cookie(csrfCookie)
	value := ""
	if err == nil && len(c.Value) >= 32 {
		value = c.Value
	} else {
		b := make([]byte, 32)
		_, _ = rand.Read(b)
		value = base64.RawURLEncoding.EncodeToString(b)
		http.SetCookie(w, &http.Cookie{Name: csrfCookie, Value: value, Path: s.basePath, HttpOnly: true,
			SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	}
	return s.sign(value)
}

func (s *server) sign(value string) string {
	m := hmac.New(sha256.New, s.csrfKey)
	m.Write([]byte(value))
	return hex.EncodeToString(m.Sum(nil))
}

func (s *server) validCSRF(r *http.Request) bool {
	c, err := r.Cookie(csrfCookie)
	if err != nil || len(c.Value) < 32 {
		return false
	}
	got := r.PostForm.Get(csrfField)
	return got != "" && hmac.Equal([]byte(got), []byte(s.sign(c.Value)))
}

// setFlash leaves a message for the page the action redirects to.
func (s *server) setFlash(w http.ResponseWriter, msg string) {
	http.SetCookie(w, &http.Cookie{Name: flashCookie, Value: url.QueryEscape(msg), Path: s.basePath, MaxAge: 60,
		HttpOnly: true, SameSite: http.SameSiteLaxMode})
}

// takeFlash reads and clears the message an action left.
func (s *server) takeFlash(w http.ResponseWriter, r *http.Request) string {
	c, err := r.Cookie(flashCookie)
	if err != nil {
		return ""
	}
	http.SetCookie(w, &http.Cookie{Name: flashCookie, Value: "", Path: s.basePath, MaxAge: -1})
	msg, err := url.QueryUnescape(c.Value)
	if err != nil {
		return ""
	}
	return msg
}
