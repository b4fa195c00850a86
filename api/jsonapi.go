package api

// The Flapjack 1.x JSON API conventions (docs/flapjack-1x.md A.1), shared by every resource: media types,
// errors, multi-id paths, creation answers, JSON-Patch, CORS, access tokens and the mapping of
// model errors to statuses. The resources (contacts.go, media.go, rules.go) only translate
// HTTP: every read and write is a function of the model packages.

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/redisconn"
)

// jsonAPIType is the media type of every JSON API answer.
const jsonAPIType = "application/vnd.api+json; charset=utf-8"

// jsonAPI serves the JSON API resources of o.
type jsonAPI struct{ o Options }

// apiHandler is a JSON API handler: it writes its answer or returns an error for fail.
type apiHandler func(w http.ResponseWriter, r *http.Request) error

// statusError is an answer with a status and messages.
type statusError struct {
	status int
	msgs   []string
}

func (e *statusError) Error() string { return strings.Join(e.msgs, "; ") }

func failWith(status int, format string, args ...any) error {
	return &statusError{status: status, msgs: []string{fmt.Sprintf(format, args...)}}
}

// mount adds the JSON API routes through handle. read routes need a read token, the others
// the write token.
func (a *jsonAPI) mount(handle func(method, path, what string, h http.Handler)) {
	route := func(method, path, what string, h apiHandler) {
		var guard func(http.Handler) http.Handler = a.o.authorisedRead
		if method != http.MethodGet {
			guard = a.o.authorisedAPIWrite
			if a.o.Token != "" {
				what += " (needs Authorization: Bearer TOKEN)"
			}
		}
		handle(method, path, what, guard(a.serve(h)))
	}
	a.contactRoutes(route)
	a.mediaRoutes(route)
	a.pagerdutyRoutes(route)
	a.ruleRoutes(route)
	a.escalationRoutes(route)
	a.scheduleRoutes(route)
	a.entityRoutes(route)
	a.checkRoutes(route)
	a.maintenanceRoutes(route)
	a.reportRoutes(route)
	a.metricsRoutes(route)
	a.deliveryRoutes(route)
}

// serve runs h and answers its error.
func (a *jsonAPI) serve(h apiHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			a.fail(w, r, err)
		}
	})
}

// fail answers err: a *statusError as it says, model errors by kind, anything else 500.
func (a *jsonAPI) fail(w http.ResponseWriter, r *http.Request, err error) {
	var se *statusError
	var invalid *roster.ValidationError
	var notFound *roster.NotFoundError
	var exists *roster.ExistsError
	switch {
	case errors.As(err, &se):
		writeErrors(w, se.status, se.msgs...)
	case errors.As(err, &invalid):
		msgs := make([]string, len(invalid.Errors))
		for i, f := range invalid.Errors {
			msgs[i] = f.Error()
		}
		writeErrors(w, http.StatusUnprocessableEntity, msgs...)
	case errors.As(err, &notFound):
		writeErrors(w, http.StatusNotFound, notFoundMessage(notFound.What, notFound.IDs))
	case errors.As(err, &exists):
		writeErrors(w, http.StatusConflict, existsMessage(exists.What, exists.IDs))
	case errors.Is(err, roster.ErrContended):
		writeErrors(w, http.StatusLocked, "unable to obtain lock for resource 'contact_mass_update': other writers kept changing it; try again")
	case errors.Is(err, context.Canceled):
		// the client went away: nobody reads the answer
	case redisconn.Unavailable(err):
		a.o.Log.Error("JSON API request failed: Redis unavailable", zap.String("method", r.Method), zap.String("path", r.URL.Path), zap.Error(err))
		writeErrors(w, http.StatusServiceUnavailable, "Redis unavailable: "+err.Error())
	default:
		a.o.Log.Error("JSON API request failed", zap.String("method", r.Method), zap.String("path", r.URL.Path), zap.Error(err))
		writeErrors(w, http.StatusInternalServerError, "internal error; see the server log")
	}
}

// notFoundMessage is Flapjack 1.6's 404 message for ids of a kind, as the routes that look
// them up together word it: contacts are plural (the /contacts routes list every missing one),
// rules singular (PATCH and DELETE stop at the first missing one). Routes that look one contact
// up at a time answer through oneContact, GET of rules with rulesNotFound.
func notFoundMessage(what string, ids []string) string {
	list := strings.Join(ids, ", ")
	switch what {
	case "contact":
		return fmt.Sprintf("could not find contacts '%s'", list)
	case "notification rule":
		return fmt.Sprintf("could not find notification rule '%s'", ids[0])
	case "medium":
		return fmt.Sprintf("could not find media '%s'", list)
	case "pagerduty credentials":
		return fmt.Sprintf("could not find pagerduty credentials '%s'", list)
	case "entity":
		return fmt.Sprintf("could not find entities '%s'", list)
	}
	return fmt.Sprintf("could not find %s '%s'", what, list)
}

// oneContact answers a missing contact as Flapjack 1.6's routes that look contacts up one at a
// time do (media, PagerDuty credentials, creating rules): 404 naming the first one missing.
func oneContact(err error) error {
	var nf *roster.NotFoundError
	if errors.As(err, &nf) && nf.What == "contact" && len(nf.IDs) > 0 {
		return failWith(http.StatusNotFound, "could not find contact '%s'", nf.IDs[0])
	}
	return err
}

func existsMessage(what string, ids []string) string {
	list := strings.Join(ids, ", ")
	switch what {
	case "contact":
		return "Contacts already exist with the following IDs: " + list
	case "notification rule":
		return "Notification rules already exist with the following IDs: " + list
	}
	return fmt.Sprintf("%s already exists: %s", what, list)
}

// writeAPI answers status with v as JSON.
func writeAPI(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", jsonAPIType)
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// writeErrors answers {"errors": msgs}.
func writeErrors(w http.ResponseWriter, status int, msgs ...string) {
	writeAPI(w, status, map[string][]string{"errors": msgs})
}

// noContent answers 204 with no body.
func noContent(w http.ResponseWriter) { w.WriteHeader(http.StatusNoContent) }

// notRoutable answers a path no route serves.
func notRoutable(w http.ResponseWriter, _ *http.Request) {
	writeErrors(w, http.StatusNotFound, "not routable")
}

// created answers a creation: 201, the ids, Location: BASE/resource/ids.
func (a *jsonAPI) created(w http.ResponseWriter, r *http.Request, resource string, ids []string) {
	escaped := make([]string, len(ids))
	for i, id := range ids {
		escaped[i] = url.PathEscape(id)
	}
	w.Header().Set("Location", a.baseURL(r)+"/"+resource+"/"+strings.Join(escaped, ","))
	writeAPI(w, http.StatusCreated, ids)
}

// baseURL is http.base_url without its trailing slash, or the URL the request came to.
func (a *jsonAPI) baseURL(r *http.Request) string {
	if a.o.BaseURL != "" {
		return strings.TrimSuffix(a.o.BaseURL, "/")
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// pathIDs returns the comma-separated ids of path segment n (0 = the first after "/"), each
// URL-unescaped after splitting (so an escaped "," belongs to an id), duplicates collapsed.
func pathIDs(r *http.Request, n int) ([]string, error) {
	segs := strings.Split(strings.TrimPrefix(r.URL.EscapedPath(), "/"), "/")
	if n >= len(segs) {
		return nil, failWith(http.StatusNotFound, "not routable")
	}
	var ids []string
	seen := map[string]bool{}
	// Check ids are the routes' last segment and may hold "/" (routes {ids...}); other ids
	// have no "/" and their routes no more segments.
	for _, part := range strings.Split(strings.Join(segs[n:], "/"), ",") {
		id, err := url.PathUnescape(part)
		if err != nil || id == "" {
			return nil, failWith(http.StatusBadRequest, "invalid id %q in the path", part)
		}
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// readBody reads a body of at most MaxBody bytes.
func (a *jsonAPI) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, a.o.MaxBody))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, failWith(http.StatusRequestEntityTooLarge, "body over %d bytes", a.o.MaxBody)
	}
	if err != nil {
		return nil, failWith(http.StatusBadRequest, "read body: %v", err)
	}
	return body, nil
}

// mediaType is the request's content type without parameters ("" when none).
func mediaType(r *http.Request) string {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return ""
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return ct
	}
	return mt
}

// createItems reads a creation body {"<resource>": [{...}, ...]}: its content type must be
// vnd.api+json or JSON (or absent with an empty body), else 405; no array under resource is
// 422 noneMsg; another top-level member is 422.
func (a *jsonAPI) createItems(w http.ResponseWriter, r *http.Request, resource, noneMsg string) ([]map[string]json.RawMessage, error) {
	body, err := a.readBody(w, r)
	if err != nil {
		return nil, err
	}
	switch mt := mediaType(r); {
	case mt == "application/vnd.api+json" || mt == "application/json":
	case mt == "" && len(strings.TrimSpace(string(body))) == 0:
	default:
		return nil, failWith(http.StatusMethodNotAllowed, "POST needs Content-Type application/vnd.api+json or application/json, not %q", r.Header.Get("Content-Type"))
	}
	if len(strings.TrimSpace(string(body))) == 0 {
		return nil, failWith(http.StatusUnprocessableEntity, "%s", noneMsg)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return nil, failWith(http.StatusBadRequest, "body is not a JSON object: %v", err)
	}
	for k := range top {
		if k != resource {
			unknown := fmt.Sprintf("unknown member %q: the body is {%q: [...]}", k, resource)
			if _, ok := top[resource]; !ok {
				// 1.6's message first: it is what its clients show.
				return nil, &statusError{status: http.StatusUnprocessableEntity, msgs: []string{noneMsg, unknown}}
			}
			return nil, failWith(http.StatusUnprocessableEntity, "%s", unknown)
		}
	}
	var items []map[string]json.RawMessage
	if raw, ok := top[resource]; !ok || json.Unmarshal(raw, &items) != nil || len(items) == 0 {
		return nil, failWith(http.StatusUnprocessableEntity, "%s", noneMsg)
	}
	return items, nil
}

// fields decodes the members of one JSON object, collecting every problem.
type fields struct {
	prefix string // "contacts[0]"
	m      map[string]json.RawMessage
	errs   []string
}

// newFields checks that obj has only known members (1.6 ignored others; we name them, so a
// misspelt field is not silently lost).
func newFields(prefix string, obj map[string]json.RawMessage, known ...string) *fields {
	f := &fields{prefix: prefix, m: obj}
	ok := map[string]bool{}
	for _, k := range known {
		ok[k] = true
	}
	var unknown []string
	for k := range obj {
		if !ok[k] {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		f.fail(k, "unknown field")
	}
	return f
}

func (f *fields) fail(name, reason string) {
	at := name
	if f.prefix != "" {
		at = f.prefix + "." + name
	}
	f.errs = append(f.errs, at+": "+reason)
}

func (f *fields) has(name string) bool { _, ok := f.m[name]; return ok }

func isJSONNull(raw json.RawMessage) bool { return strings.TrimSpace(string(raw)) == "null" }

// str is a string member ("" when absent or null).
func (f *fields) str(name string) string {
	raw, ok := f.m[name]
	if !ok || isJSONNull(raw) {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		f.fail(name, "must be a string")
	}
	return s
}

// strs is an array of strings (nil when absent or null).
func (f *fields) strs(name string) []string {
	raw, ok := f.m[name]
	if !ok || isJSONNull(raw) {
		return nil
	}
	var s []string
	if json.Unmarshal(raw, &s) != nil {
		f.fail(name, "must be an array of strings")
	}
	return s
}

// integer is an integer member (nil when absent or null).
func (f *fields) integer(name string) *int64 {
	raw, ok := f.m[name]
	if !ok || isJSONNull(raw) {
		return nil
	}
	var n int64
	if json.Unmarshal(raw, &n) != nil {
		f.fail(name, "must be an integer")
		return nil
	}
	return &n
}

// boolean is a boolean member (false when absent or null).
func (f *fields) boolean(name string) bool {
	raw, ok := f.m[name]
	if !ok || isJSONNull(raw) {
		return false
	}
	var b bool
	if json.Unmarshal(raw, &b) != nil {
		f.fail(name, "must be true or false")
	}
	return b
}

// raw is a member as JSON text ("" when absent or null).
func (f *fields) raw(name string) string {
	raw, ok := f.m[name]
	if !ok || isJSONNull(raw) {
		return ""
	}
	return string(raw)
}

// itemsErr is a 422 with the problems of all items, nil when there are none.
func itemsErr(all []*fields) error {
	var msgs []string
	for _, f := range all {
		msgs = append(msgs, f.errs...)
	}
	if len(msgs) == 0 {
		return nil
	}
	return &statusError{status: http.StatusUnprocessableEntity, msgs: msgs}
}

// patchOp is one JSON-Patch operation on a resource: replace Field with Value, or add / remove
// the link Linked to ID.
type patchOp struct {
	Op     string // "replace", "add", "remove"
	Field  string // replace
	Value  json.RawMessage
	Linked string // add, remove
	ID     string
}

// readPatch reads a JSON-Patch body (RFC 6902) on resource typ: content type
// application/json-patch+json, else 405; not an array, 400; an operation other than replace
// of one of fields or add/remove of one of links, 422 naming it.
func (a *jsonAPI) readPatch(w http.ResponseWriter, r *http.Request, typ string, fieldNames, links []string) ([]patchOp, error) {
	if mt := mediaType(r); mt != "application/json-patch+json" {
		return nil, failWith(http.StatusMethodNotAllowed, "PATCH needs Content-Type application/json-patch+json, not %q", r.Header.Get("Content-Type"))
	}
	body, err := a.readBody(w, r)
	if err != nil {
		return nil, err
	}
	var raw []struct {
		Op    string          `json:"op"`
		Path  string          `json:"path"`
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, failWith(http.StatusBadRequest, "Invalid JSON-Patch request")
	}
	isField := map[string]bool{}
	for _, f := range fieldNames {
		isField[f] = true
	}
	isLink := map[string]bool{}
	for _, l := range links {
		isLink[l] = true
	}
	var ops []patchOp
	var msgs []string
	for i, p := range raw {
		parts := strings.Split(p.Path, "/")
		// "", typ, "0", field... (RFC 6901 escapes ~1 and ~0)
		for k := range parts {
			parts[k] = strings.NewReplacer("~1", "/", "~0", "~").Replace(parts[k])
		}
		bad := func(format string, args ...any) {
			msgs = append(msgs, fmt.Sprintf("operation %d (%s %s): ", i, p.Op, p.Path)+fmt.Sprintf(format, args...))
		}
		if len(parts) < 4 || parts[0] != "" || parts[1] != typ || parts[2] != "0" {
			bad("path must be /%s/0/...", typ)
			continue
		}
		switch p.Op {
		case "replace":
			if len(parts) != 4 || !isField[parts[3]] {
				bad("can replace only %s", strings.Join(fieldNames, ", "))
				continue
			}
			if p.Value == nil {
				bad("no value")
				continue
			}
			ops = append(ops, patchOp{Op: p.Op, Field: parts[3], Value: p.Value})
		case "add", "remove":
			if len(parts) < 5 || parts[3] != "links" || !isLink[parts[4]] {
				if len(links) == 0 {
					bad("%s has no links to %s", typ, p.Op)
				} else {
					bad("can %s only links %s", p.Op, strings.Join(links, ", "))
				}
				continue
			}
			op := patchOp{Op: p.Op, Linked: parts[4]}
			if p.Op == "add" {
				// RFC 6902's "/-" (append to the array) is what flapjack-diner sends; the value
				// names the id either way.
				appends := len(parts) == 6 && parts[5] == "-"
				if (len(parts) != 5 && !appends) || json.Unmarshal(p.Value, &op.ID) != nil || op.ID == "" {
					bad("value must be the id to link, a string")
					continue
				}
			} else {
				if len(parts) != 6 || parts[5] == "" {
					bad("path must end with the id to unlink")
					continue
				}
				op.ID = parts[5]
			}
			ops = append(ops, op)
		default:
			bad("unsupported JSON-Patch operation %q: only replace, add and remove are", p.Op)
		}
	}
	if len(msgs) > 0 {
		return nil, &statusError{status: http.StatusUnprocessableEntity, msgs: msgs}
	}
	return ops, nil
}

// replaced decodes the value of a replace operation as a one-member object, so the same
// fields decoder checks it.
func replaced(op patchOp) *fields {
	return &fields{m: map[string]json.RawMessage{op.Field: op.Value}}
}

// conn runs f on a pooled connection.
func (a *jsonAPI) conn(r *http.Request, f func(c redis.Conn) error) error {
	ctx := r.Context()
	if a.o.RedisTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, a.o.RedisTimeout)
		defer cancel()
	}
	c, err := a.o.Pool.GetContext(ctx)
	if err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	defer c.Close()
	return f(c)
}

// withCORS adds the CORS headers of http.cors_origins and answers OPTIONS with 204.
func (o Options) withCORS(next http.Handler) http.Handler {
	any := false
	allowed := map[string]bool{}
	for _, origin := range o.CORSOrigins {
		if origin == "*" {
			any = true
		}
		allowed[strings.TrimSuffix(origin, "/")] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		if origin := r.Header.Get("Origin"); any || (origin != "" && allowed[origin]) {
			if any {
				h.Set("Access-Control-Allow-Origin", "*")
			} else {
				h.Set("Access-Control-Allow-Origin", origin)
				h.Add("Vary", "Origin")
			}
			h.Set("Access-Control-Allow-Methods", "GET, POST, PUT, PATCH, DELETE, OPTIONS")
			h.Set("Access-Control-Allow-Headers", "*, Content-Type, Accept, AUTHORIZATION, Cache-Control")
			h.Set("Access-Control-Expose-Headers", "Cache-Control, Content-Language, Content-Type, Expires, Last-Modified, Pragma")
			h.Set("Access-Control-Max-Age", "1728000")
		}
		if r.Method == http.MethodOptions {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// authorisedRead guards JSON API reads: when a token is configured, the request must carry
// http.read_token or http.token.
func (o Options) authorisedRead(next http.Handler) http.Handler {
	var wants [][]byte
	for _, t := range []string{o.ReadToken, o.Token} {
		if t != "" {
			wants = append(wants, []byte("Bearer "+t))
		}
	}
	if len(wants) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		ok := 0
		for _, want := range wants {
			ok |= subtle.ConstantTimeCompare(got, want)
		}
		if ok != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="flapjack"`)
			writeErrors(w, http.StatusUnauthorized, "missing or wrong bearer token")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// authorisedAPIWrite guards JSON API writes with http.token, answering in the JSON API's
// error shape.
func (o Options) authorisedAPIWrite(next http.Handler) http.Handler {
	if o.Token == "" {
		return next
	}
	want := []byte("Bearer " + o.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="flapjack"`)
			writeErrors(w, http.StatusUnauthorized, "missing or wrong bearer token")
			return
		}
		next.ServeHTTP(w, r)
	})
}
