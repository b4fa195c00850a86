package web

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"golang.org/x/crypto/bcrypt"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/events"
	"github.com/flapjackgo/flapjack/executive"
	"github.com/flapjackgo/flapjack/importer"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/model/views"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/schema"
	"github.com/flapjackgo/flapjack/status"
)

// t0 is the instant the pages are read at: 2026-01-05 10:00:00 UTC.
var t0 = time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)

const (
	testUser     = "ada"
	testPassword = "correct horse"
)

// fixture is an installation written through the real write paths (import, executive on a
// fake clock, admin writes) and a UI over it.
type fixture struct {
	db   *testredis.DB
	keys schema.Keys
	clk  *clock.Fake
	x    *executive.Executive
	opts Options
	srv  *httptest.Server
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{db: testredis.New(t), keys: schema.NewKeys(""), clk: clock.NewFake(t0.Add(-3 * time.Hour))}
	conn := f.db.Conn(t)
	defer conn.Close()
	ctx := context.Background()
	contacts := `{"contacts": [{"id": "ada", "first_name": "Ada", "last_name": "Lovelace", "email": "ada@example.com",
		"media": {"email": {"address": "ada@example.com", "interval": 900}}}]}`
	if _, err := importer.Contacts(ctx, conn, f.keys, []byte(contacts), importer.Options{}); err != nil {
		t.Fatal(err)
	}
	entities := `{"entities": [
		{"id": "E-web-01", "name": "web-01.example.com", "tags": ["web", "prod"], "contacts": ["ada"]},
		{"id": "E-db-01", "name": "db-01.example.com", "tags": ["db"]},
		{"id": "E-old-01", "name": "old-01.example.com"}]}`
	if _, err := importer.Entities(ctx, conn, f.keys, []byte(entities), importer.Options{}); err != nil {
		t.Fatal(err)
	}
	f.x = executive.New(executive.Options{Pool: f.db.Pool, Keys: f.keys, Config: executive.DefaultConfig(), Clock: f.clk,
		Identity: queue.Identity{Host: "exec", PID: 1}, Version: "test"})
	if _, err := f.x.Loop(false).Open(ctx); err != nil {
		t.Fatal(err)
	}
	f.event(t, -7200*time.Second, "web-01.example.com", "Ping", "ok", "PING OK")
	f.event(t, -3600*time.Second, "web-01.example.com", "HTTP", "critical", "HTTP 500 Internal Server Error", `"details":"stack trace here"`, `"perfdata":"time=3.2s"`)
	f.event(t, -900*time.Second, "db-01.example.com", "MySQL", "warning", "replication lag 30s")
	f.event(t, -600*time.Second, "db-01.example.com", "Disk /var", "critical", "disk 99%")
	f.event(t, -120*time.Second, "db-01.example.com", "MySQL", "acknowledgement", "bob: looking", `"duration":3600`)
	if err := checkstate.CreateScheduledMaintenance(conn, f.keys, "db-01.example.com", "Disk /var", t0.Add(-5*time.Minute), time.Hour, "resizing", t0.Add(-5*time.Minute)); err != nil {
		t.Fatal(err)
	}
	f.clk.Set(t0)
	hash, err := bcrypt.GenerateFromPassword([]byte(testPassword), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	f.opts = Options{Addr: "127.0.0.1:0", Pool: f.db.Pool, Keys: f.keys, Events: events.NewPublisher(f.db.Pool, f.keys, ""),
		Clock: f.clk, AutoRefresh: 120 * time.Second, Users: []string{testUser + ":" + string(hash)},
		Status: status.Options{Queues: []string{"events", "notifications"}, Stages: []string{"executive", "notifier"}}}
	f.srv = f.serve(t, f.opts)
	return f
}

func (f *fixture) serve(t *testing.T, o Options) *httptest.Server {
	t.Helper()
	h, err := Handler(o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// event processes one event at t0+offset.
func (f *fixture) event(t *testing.T, offset time.Duration, entity, check, state, summary string, extra ...string) {
	t.Helper()
	f.clk.Set(t0.Add(offset))
	typ := "service"
	if state == schema.StateAcknowledgement {
		typ = "action"
	}
	ev := fmt.Sprintf(`{"entity":%q,"check":%q,"type":%q,"state":%q,"summary":%q`, entity, check, typ, state, summary)
	for _, e := range extra {
		ev += "," + e
	}
	f.db.Do(t, "LPUSH", f.keys.Events(), ev+"}")
	f.drain(t)
}

// drain lets the executive process every queued event.
func (f *fixture) drain(t *testing.T) {
	t.Helper()
	for {
		n, err := f.x.ProcessNext(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
}

// client is a browser: a cookie jar, optionally logged in, that does not follow redirects.
type client struct {
	t      *testing.T
	c      *http.Client
	base   string
	user   string
	pass   string
	header map[string]string
}

func (f *fixture) client(t *testing.T, login bool) *client {
	jar, _ := cookiejar.New(nil)
	c := &client{t: t, base: f.srv.URL, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
	if login {
		c.user, c.pass = testUser, testPassword
	}
	return c
}

func (c *client) do(method, path string, form url.Values) (int, string, http.Header) {
	c.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, c.base+path, body)
	if err != nil {
		c.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if c.user != "" {
		req.SetBasicAuth(c.user, c.pass)
	}
	for k, v := range c.header {
		req.Header.Set(k, v)
	}
	resp, err := c.c.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func (c *client) get(path string) string {
	c.t.Helper()
	code, body, _ := c.do("GET", path, nil)
	if code != http.StatusOK {
		c.t.Fatalf("GET %s: %d\n%s", path, code, body)
	}
	return body
}

var tokenRE = regexp.MustCompile(`name="csrf_token" value="([0-9a-f]+)"`)

// token reads the CSRF token of a page's forms.
func (c *client) token(path string) string {
	c.t.Helper()
	m := tokenRE.FindStringSubmatch(c.get(path))
	if m == nil {
		c.t.Fatalf("no csrf token on %s", path)
	}
	return m[1]
}

func contains(t *testing.T, page, where string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(page, w) {
			t.Errorf("%s lacks %q", where, w)
		}
	}
}

func lacks(t *testing.T, page, where string, unwanted ...string) {
	t.Helper()
	for _, w := range unwanted {
		if strings.Contains(page, w) {
			t.Errorf("%s shows %q", where, w)
		}
	}
}

const checkPath = "/check?entity=web-01.example.com&check=HTTP"

func TestPagesRenderSeededData(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.client(t, false) // loopback: reads need no login
	cases := []struct {
		path         string
		want, unwant []string
	}{
		{"/", []string{"<strong>2</strong> out of <strong>3</strong> entities have failing checks", "<strong>3</strong> out of <strong>4</strong> checks are failing",
			"<strong>1</strong> failing checks are acknowledged", "<strong>1</strong> failing checks are in scheduled maintenance", `href="/checks_failing"`, `http-equiv="refresh" content="120"`}, nil},
		{"/checks_failing", []string{"web-01.example.com", "HTTP 500 Internal Server Error", `class="state critical">critical<`, `class="state warning">warning<`,
			"replication lag 30s", `<span class="badge ack">acknowledged</span>`, `<span class="badge maint">in maintenance</span>`,
			`since <time datetime="2026-01-05T09:00:00Z" data-local>2026-01-05 09:00:00 UTC</time>`, `href="/check?entity=db-01.example.com&amp;check=Disk%20%2fvar"`, "3 failing check(s)"}, []string{"PING OK"}},
		{"/checks_failing?entity=%5Edb-&tag=", []string{"Disk /var", "MySQL", "2 failing check(s)"}, []string{"web-01.example.com</a>"}},
		{"/checks_failing?tag=prod", []string{"HTTP 500", "1 failing check(s)"}, []string{"MySQL"}},
		{"/checks_all", []string{"PING OK", `class="state ok">ok<`, "HTTP 500", "4 check(s)"}, nil},
		{"/entities", []string{"web-01.example.com", "db-01.example.com"}, []string{"old-01.example.com"}},
		{"/entities_failing", []string{"web-01.example.com", "db-01.example.com"}, []string{"old-01"}},
		{"/entities_decommissioned", []string{"old-01.example.com"}, []string{"web-01.example.com"}},
		{"/entity/db-01.example.com", []string{"Disk /var", "MySQL"}, []string{"HTTP 500"}},
		{checkPath, []string{"HTTP 500 Internal Server Error", "stack trace here", "time=3.2s", "web", "http",
			`action="/acknowledgements/web-01.example.com/HTTP"`, `action="/scheduled_maintenances/web-01.example.com/HTTP"`,
			"Ada Lovelace", "email: ada@example.com", "Last critical:", "Decommission this check",
			"executive: critical service event: no notification: blocked by the delays filter"}, nil},
		{"/check?entity=db-01.example.com&check=MySQL", []string{"bob: looking", "End acknowledgement", `class="state warning">warning<`}, nil},
		{"/check?entity=db-01.example.com&check=Disk+%2Fvar", []string{"resizing", "current", `name="start_time" value="` + fmt.Sprint(t0.Add(-5*time.Minute).Unix()) + `"`}, nil},
		{"/contacts", []string{"Ada Lovelace", "ada@example.com", `href="/contacts/ada"`}, nil},
		{"/contacts/ada", []string{"ada@example.com", "15 minutes", "web-01.example.com"}, nil},
		{"/self_stats", []string{"Events queued", "Keys in Redis", "Checks</dt><dd>4 (3 failing)"}, nil},
		{"/self_stats.json", []string{`"all_checks":4`, `"failing_checks":3`, `"processed_events":{"all_time":{`, `"check_freshness":{`, `"events_queued":0`}, nil},
	}
	for _, tc := range cases {
		page := c.get(tc.path)
		contains(t, page, tc.path, tc.want...)
		lacks(t, page, tc.path, tc.unwant...)
	}
	if code, body, h := c.do("GET", "/entities_all", nil); code != http.StatusFound || h.Get("Location") != "/entities" {
		t.Errorf("/entities_all: %d %s %s", code, h.Get("Location"), body)
	}
	for _, p := range []string{"/check?entity=web-01.example.com&check=Nope", "/entity/nowhere.example.com", "/contacts/nobody"} {
		if code, body, _ := c.do("GET", p, nil); code != http.StatusNotFound {
			t.Errorf("%s: %d, want 404\n%s", p, code, body)
		}
	}
	if code, body, _ := c.do("GET", "/checks_failing?entity=%28", nil); code != http.StatusBadRequest || !strings.Contains(body, "entity pattern") {
		t.Errorf("bad pattern: %d\n%s", code, body)
	}
}

func TestAcknowledgeQueuesEvent(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.client(t, true)
	tok := c.token(checkPath)
	code, _, h := c.do("POST", "/acknowledgements/web-01.example.com/HTTP", url.Values{"csrf_token": {tok}, "summary": {"on it"}, "duration": {"2 hours"}})
	if code != http.StatusSeeOther || h.Get("Location") != checkPath {
		t.Fatalf("ack: %d -> %s", code, h.Get("Location"))
	}
	raw, err := redis.String(f.db.Do(t, "LINDEX", f.keys.Events(), 0), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`"type":"action"`, `"state":"acknowledgement"`, `"entity":"web-01.example.com"`, `"check":"HTTP"`, `"summary":"on it — by ada"`, `"duration":7200`} {
		if !strings.Contains(raw, w) {
			t.Errorf("queued event %s lacks %s", raw, w)
		}
	}
	page := c.get(checkPath)
	contains(t, page, "after ack", "Acknowledgement queued for web-01.example.com:HTTP for 2 hours")
	f.drain(t)
	page = c.get(checkPath)
	contains(t, page, "after processing", "on it — by ada", "End acknowledgement")
	lacks(t, page, "flash shown once", "Acknowledgement queued")

	tok = c.token(checkPath)
	if code, _, _ := c.do("POST", "/end_unscheduled_maintenance/web-01.example.com/HTTP", url.Values{"csrf_token": {tok}}); code != http.StatusSeeOther {
		t.Fatalf("end ack: %d", code)
	}
	st, err := views.CheckStatusAt(f.db.Conn(t), f.keys, "web-01.example.com", "HTTP", t0.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if st.InUnscheduledMaintenance() {
		t.Error("acknowledgement still active after ending it")
	}
	contains(t, c.get(checkPath), "after end", "Acknowledgement ended by ada.", `action="/acknowledgements/`)
}

func TestScheduledMaintenanceAndDecommission(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.client(t, true)
	path := "/scheduled_maintenances/web-01.example.com/HTTP"
	tok := c.token(checkPath)
	// 14:30 for a viewer two hours ahead of UTC (getTimezoneOffset -120) is 12:30 UTC.
	code, body, _ := c.do("POST", path, url.Values{"csrf_token": {tok}, "start_time": {"2026-01-05T14:30"}, "tz_offset": {"-120"},
		"duration": {"90 minutes"}, "summary": {"upgrade"}})
	if code != http.StatusSeeOther {
		t.Fatalf("schedule: %d\n%s", code, body)
	}
	conn := f.db.Conn(t)
	defer conn.Close()
	windows, err := checkstate.ListMaintenance(conn, f.keys, schema.Scheduled, "web-01.example.com:HTTP")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 1, 5, 12, 30, 0, 0, time.UTC).Unix()
	if len(windows) != 1 || windows[0].Start != start || windows[0].Duration != 5400 || windows[0].Summary != "upgrade — by ada" {
		t.Fatalf("windows: %+v", windows)
	}
	contains(t, c.get(checkPath), "after schedule", "Scheduled maintenance from 2026-01-05 12:30 UTC for 1 hour, 30 minutes", "upcoming", "upgrade — by ada")

	if code, _, _ := c.do("POST", path, url.Values{"csrf_token": {tok}, "start_time": {"whenever"}, "duration": {"1 hour"}}); code != http.StatusBadRequest {
		t.Errorf("unparseable start: %d, want 400", code)
	}
	code, _, _ = c.do("POST", path, url.Values{"csrf_token": {tok}, "_method": {"delete"}, "start_time": {fmt.Sprint(start)}})
	if code != http.StatusSeeOther {
		t.Fatalf("delete: %d", code)
	}
	if windows, _ = checkstate.ListMaintenance(conn, f.keys, schema.Scheduled, "web-01.example.com:HTTP"); len(windows) != 0 {
		t.Fatalf("window not deleted: %+v", windows)
	}
	contains(t, c.get(checkPath), "after delete", "ended by ada")

	if code, _, _ := c.do("POST", "/checks/web-01.example.com/HTTP", url.Values{"csrf_token": {tok}, "_method": {"delete"}}); code != http.StatusSeeOther {
		t.Fatalf("decommission: %d", code)
	}
	st, err := views.CheckStatusAt(conn, f.keys, "web-01.example.com", "HTTP", t0)
	if err != nil {
		t.Fatal(err)
	}
	if st.Enabled {
		t.Error("check still enabled after decommissioning")
	}
	contains(t, c.get(checkPath), "after decommission", "no (decommissioned)", "decommissioned by ada")
	if code, _, _ := c.do("POST", "/checks/web-01.example.com/Nope", url.Values{"csrf_token": {tok}, "_method": {"delete"}}); code != http.StatusNotFound {
		t.Errorf("unknown check: %d, want 404", code)
	}
}

func TestActionsNeedLoginAndToken(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	anon := f.client(t, false)
	tok := anon.token(checkPath)
	ack := "/acknowledgements/web-01.example.com/HTTP"
	code, _, h := anon.do("POST", ack, url.Values{"csrf_token": {tok}})
	if code != http.StatusUnauthorized || !strings.Contains(h.Get("WWW-Authenticate"), "Basic") {
		t.Errorf("anonymous action on loopback: %d %q, want 401 with a Basic challenge", code, h.Get("WWW-Authenticate"))
	}
	wrong := f.client(t, true)
	wrong.pass = "wrong"
	if code, _, _ := wrong.do("POST", ack, url.Values{"csrf_token": {tok}}); code != http.StatusUnauthorized {
		t.Errorf("wrong password: %d, want 401", code)
	}
	c := f.client(t, true)
	good := c.token(checkPath)
	for name, form := range map[string]url.Values{"missing": {}, "wrong": {"csrf_token": {strings.Repeat("0", 64)}}, "another browser's": {"csrf_token": {tok}}} {
		if code, _, _ := c.do("POST", ack, form); code != http.StatusForbidden {
			t.Errorf("%s token: %d, want 403", name, code)
		}
	}
	if n, _ := redis.Int(f.db.Do(t, "LLEN", f.keys.Events()), nil); n != 0 {
		t.Errorf("%d events queued by refused actions", n)
	}
	if code, _, _ := c.do("POST", ack, url.Values{"csrf_token": {good}}); code != http.StatusSeeOther {
		t.Errorf("good token: %d", code)
	}
	raw, _ := redis.String(f.db.Do(t, "LINDEX", f.keys.Events(), 0), nil)
	if !strings.Contains(raw, `"summary":"acknowledged by ada via web"`) {
		t.Errorf("default summary: %s", raw)
	}
	if code, _, _ := c.do("POST", "/acknowledgements/web-01.example.com/Nope", url.Values{"csrf_token": {good}}); code != http.StatusNotFound {
		t.Errorf("unknown check: %d, want 404", code)
	}
}

func TestReadsOffLoopbackNeedLogin(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	h, err := Handler(f.opts)
	if err != nil {
		t.Fatal(err)
	}
	get := func(remote string, header map[string]string, user string) int {
		req := httptest.NewRequest("GET", "/checks_failing", nil)
		req.RemoteAddr = remote
		for k, v := range header {
			req.Header.Set(k, v)
		}
		if user != "" {
			req.SetBasicAuth(user, testPassword)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	cases := []struct {
		name   string
		remote string
		header map[string]string
		user   string
		want   int
	}{
		{"loopback", "127.0.0.1:5000", nil, "", 200},
		{"loopback v6", "[::1]:5000", nil, "", 200},
		{"remote", "192.0.2.7:5000", nil, "", 401},
		{"proxied through loopback", "127.0.0.1:5000", map[string]string{"X-Forwarded-For": "192.0.2.7"}, "", 401},
		{"remote with login", "192.0.2.7:5000", nil, testUser, 200},
		{"remote, unknown user", "192.0.2.7:5000", nil, "mallory", 401},
	}
	for _, tc := range cases {
		if got := get(tc.remote, tc.header, tc.user); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}

	// Behind an SSO proxy: the header names the user; nobody reads anonymously, loopback too.
	o := f.opts
	o.Users, o.AuthHeader = nil, "X-Remote-User"
	if h, err = Handler(o); err != nil {
		t.Fatal(err)
	}
	if got := get("127.0.0.1:5000", nil, ""); got != 401 {
		t.Errorf("proxy mode, no header: %d, want 401", got)
	}
	if got := get("127.0.0.1:5000", map[string]string{"X-Remote-User": "grace"}, ""); got != 200 {
		t.Errorf("proxy mode, header: %d, want 200", got)
	}
	srv := f.serve(t, o)
	c := f.client(t, false)
	c.base, c.header = srv.URL, map[string]string{"X-Remote-User": "grace"}
	tok := c.token(checkPath)
	if code, _, _ := c.do("POST", "/acknowledgements/web-01.example.com/HTTP", url.Values{"csrf_token": {tok}}); code != http.StatusSeeOther {
		t.Fatalf("ack through proxy: %d", code)
	}
	raw, _ := redis.String(f.db.Do(t, "LINDEX", f.keys.Events(), 0), nil)
	if !strings.Contains(raw, "acknowledged by grace via web") {
		t.Errorf("event: %s", raw)
	}
}

func TestBaseURL(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	o := f.opts
	o.BaseURL = "/flapjack/"
	srv := f.serve(t, o)
	c := f.client(t, true)
	c.base = srv.URL
	for _, p := range []string{"/checks_failing", "/flapjack/checks_failing"} {
		page := c.get(p)
		contains(t, page, p, `href="/flapjack/check?entity=web-01.example.com&amp;check=HTTP"`, `action="/flapjack/checks_failing"`, `href="/flapjack/static/style.css"`)
	}
	tok := c.token("/flapjack" + checkPath)
	_, _, h := c.do("POST", "/flapjack/acknowledgements/web-01.example.com/HTTP", url.Values{"csrf_token": {tok}})
	if h.Get("Location") != "/flapjack"+checkPath {
		t.Errorf("redirect to %q", h.Get("Location"))
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	hash, _ := bcrypt.GenerateFromPassword([]byte("x"), bcrypt.MinCost)
	cases := []struct {
		name string
		o    Options
		ok   bool
	}{
		{"loopback, no logins", Options{Addr: "127.0.0.1:3080"}, true},
		{"public, no logins", Options{Addr: "0.0.0.0:3080"}, false},
		{"public with users", Options{Addr: "0.0.0.0:3080", Users: []string{"a:" + string(hash)}}, true},
		{"public with proxy header", Options{Addr: ":3080", AuthHeader: "X-Remote-User"}, true},
		{"not a bcrypt hash", Options{Addr: "127.0.0.1:3080", Users: []string{"a:secret"}}, false},
		{"no colon", Options{Addr: "127.0.0.1:3080", Users: []string{"a"}}, false},
		{"bad addr", Options{Addr: "3080"}, false},
	}
	for _, tc := range cases {
		if err := tc.o.Validate(); (err == nil) != tc.ok {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

func TestParseStart(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, tz, want string }{
		{"now", "", "2026-01-05T10:00:00Z"},
		{"", "", "2026-01-05T10:00:00Z"},
		{"in 2 hours", "", "2026-01-05T12:00:00Z"},
		{"30 minutes", "", "2026-01-05T10:30:00Z"},
		{"2026-01-06T03:00", "", "2026-01-06T03:00:00Z"},
		{"2026-01-06T03:00", "300", "2026-01-06T08:00:00Z"},
		{"2026-01-06 03:00", "-60", "2026-01-06T02:00:00Z"},
		{"2026-01-06T03:00:00+01:00", "", "2026-01-06T02:00:00Z"},
		{"1767657600", "", "2026-01-06T00:00:00Z"},
	}
	for _, tc := range cases {
		got, err := parseStart(tc.in, tc.tz, t0)
		if err != nil || got.UTC().Format(time.RFC3339) != tc.want {
			t.Errorf("parseStart(%q, %q) = %v, %v; want %s", tc.in, tc.tz, got.UTC(), err, tc.want)
		}
	}
	if _, err := parseStart("someday", "", t0); err == nil {
		t.Error("someday parsed")
	}
}

// TestSharedCSRFKeyAcrossProcesses: web processes behind one load balancer accept each other's
// forms when they share web.csrf_key, and only then.
func TestSharedCSRFKeyAcrossProcesses(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ack := "/acknowledgements/web-01.example.com/HTTP"
	for _, c := range []struct {
		name   string
		keyA   []byte
		keyB   []byte
		status int
	}{
		{"shared key", []byte("one key for all"), []byte("one key for all"), http.StatusSeeOther},
		{"a random key each", nil, nil, http.StatusForbidden},
	} {
		a, b := f.opts, f.opts
		a.CSRFKey, b.CSRFKey = c.keyA, c.keyB
		srvA, srvB := f.serve(t, a), f.serve(t, b)
		cl := f.client(t, true)
		cl.base = srvA.URL
		tok := cl.token(checkPath)
		cl.base = srvB.URL
		if code, _, _ := cl.do("POST", ack, url.Values{"csrf_token": {tok}}); code != c.status {
			t.Errorf("%s: a form of one process posted to another: %d, want %d", c.name, code, c.status)
		}
	}
}

// events_queued counts the list executive.queue names, not the default "events" list.
func TestSelfStatsCountConfiguredEventsQueue(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	o := f.opts
	o.Events = events.NewPublisher(f.db.Pool, f.keys, "custom_events")
	f.srv = f.serve(t, o)
	f.db.Do(t, "LPUSH", f.keys.Queue("custom_events"), "{}", "{}", "{}")
	f.db.Do(t, "LPUSH", f.keys.Events(), "{}")
	page := f.client(t, true).get("/self_stats.json")
	contains(t, page, "/self_stats.json", `"events_queued":3`)
}
