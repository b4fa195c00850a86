package web

import (
	"html"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/schema"
)

var ackButtonRE = regexp.MustCompile(`aria-label="Acknowledge ([^"]+)"`)

// ackOrder lists the checks a failing list page shows, in order, by their acknowledge buttons.
func ackOrder(page string) []string {
	var out []string
	for _, m := range ackButtonRE.FindAllStringSubmatch(page, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestFailingListOrder: most severe first, then most recently failed — not by name, and the
// same in the live fragment; each row says since when, for how long, and who was alerted.
func TestFailingListOrder(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	// Two more: an older critical and a newer unknown, and a warning newer than every critical.
	f.event(t, -7000*time.Second, "aaa.example.com", "Load", "critical", "load 40")
	f.event(t, -60*time.Second, "zzz.example.com", "Agent", "unknown", "no agent")
	f.event(t, -30*time.Second, "aaa.example.com", "Swap", "warning", "swap 80%")
	f.clk.Set(t0)
	c := f.client(t, false)
	want := []string{"db-01.example.com:Disk /var", "web-01.example.com:HTTP", "aaa.example.com:Load",
		"aaa.example.com:Swap", "db-01.example.com:MySQL", "zzz.example.com:Agent"}
	for _, path := range []string{"/checks_failing", "/checks_failing/live"} {
		page := c.get(path)
		if os.Getenv("FLAPJACK_DUMP") != "" {
			t.Log(page)
		}
		if got := ackOrder(page); !slices.Equal(got, want) {
			t.Errorf("%s order:\n got %q\nwant %q", path, got, want)
		}
		contains(t, page, path, "6 failing check(s)", `aria-label="Select web-01.example.com:HTTP"`,
			`critical for 1h, since <time datetime="2026-01-05T09:00:00Z" data-local>2026-01-05 09:00:00 UTC</time>`,
			`action="/acknowledgements/db-01.example.com/Disk%20%2Fvar"`, `<span class="badge ack">acknowledged</span>`,
			`<span class="badge maint">in maintenance</span>`, "No alert recorded.")
	}
	// ?limit= cuts the sorted list, so the most severe survive.
	if got := ackOrder(c.get("/checks_failing?limit=2")); !slices.Equal(got, want[:2]) {
		t.Errorf("limit 2: %q", got)
	}
	// The live fragment is the list alone, for live.js to swap in.
	live := c.get("/checks_failing/live?entity=%5Eaaa")
	lacks(t, live, "live fragment", "<html", "<header")
	if got := ackOrder(live); !slices.Equal(got, []string{"aaa.example.com:Load", "aaa.example.com:Swap"}) {
		t.Errorf("filtered live order %q", got)
	}
	page := c.get("/checks_failing")
	contains(t, page, "/checks_failing", `data-live-url="/checks_failing/live"`, `static/live.js`,
		`<noscript><meta http-equiv="refresh" content="120"></noscript>`, `<details class="filters">`)
	if !strings.Contains(c.get("/checks_failing?tag=prod"), `<details class="filters" open>`) {
		t.Error("an active filter should keep the filters open")
	}
}

// TestFailingListShowsWhoWasAlerted: the newest routing decision that alerted somebody names
// them and their media, labelled queued (delivery is not tracked).
func TestFailingListShowsWhoWasAlerted(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	entry := `{"time":` + itoa(t0.Add(-50*time.Minute).Unix()) + `,"stage":"notifier","type":"problem","severity":"critical","verdict":"routed",` +
		`"contacts":[{"id":"ada","name":"Ada Lovelace","media":[{"medium":"email","alerted":true,"reason":"alerted"}]}]}`
	f.db.Do(t, "LPUSH", f.keys.Explain("web-01.example.com:HTTP"), entry)
	for _, path := range []string{"/checks_failing", checkPath} {
		contains(t, f.client(t, false).get(path), path, "lerted 50m ago: Ada Lovelace (email) — <span class=\"badge queued\">queued</span>")
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestBulkAcknowledge: one acknowledgement event per selected check, each becoming an
// unscheduled maintenance once the executive processed it; refused without a login or a
// token, with nothing queued.
func TestBulkAcknowledge(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	selected := []string{"web-01.example.com:HTTP", "db-01.example.com:Disk /var"}
	queued := func() int64 {
		n, err := redis.Int64(f.db.Do(t, "LLEN", f.keys.Events()), nil)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	anon := f.client(t, false)
	if code, _, _ := anon.do("POST", "/bulk_acknowledgements", url.Values{"csrf_token": {anon.token("/checks_failing")}, "check": selected}); code != http.StatusUnauthorized {
		t.Errorf("logged out: %d, want 401", code)
	}
	c := f.client(t, true)
	if code, body, _ := c.do("POST", "/bulk_acknowledgements", url.Values{"check": selected}); code != http.StatusForbidden || !strings.Contains(body, "security token") {
		t.Errorf("no token: %d\n%s", code, body)
	}
	if n := queued(); n != 0 {
		t.Fatalf("%d events queued by refused requests", n)
	}
	token := c.token("/checks_failing")
	for _, tc := range []struct {
		checks []string
		code   int
		want   string
	}{
		{nil, http.StatusSeeOther, ""},
		{[]string{"web-01.example.com:Nope"}, http.StatusNotFound, "Could not find check &#39;web-01.example.com:Nope&#39;"},
		{[]string{"no-colon"}, http.StatusBadRequest, "is not a check"},
	} {
		code, body, _ := c.do("POST", "/bulk_acknowledgements", url.Values{"csrf_token": {token}, "check": tc.checks})
		if code != tc.code || !strings.Contains(body, tc.want) {
			t.Errorf("%q: %d, want %d with %q\n%s", tc.checks, code, tc.code, tc.want, body)
		}
	}
	if n := queued(); n != 0 {
		t.Fatalf("%d events queued by bad selections", n)
	}
	code, _, h := c.do("POST", "/bulk_acknowledgements", url.Values{"csrf_token": {token}, "check": selected,
		"duration": {"1 hour"}, "summary": {"on it"}})
	if code != http.StatusSeeOther || h.Get("Location") != "/checks_failing" {
		t.Fatalf("bulk acknowledge: %d to %q", code, h.Get("Location"))
	}
	if n := queued(); n != 2 {
		t.Fatalf("%d events queued, want 2", n)
	}
	contains(t, c.get("/checks_failing"), "list after", "Acknowledgements queued for 2 check(s) for 1 hour: web-01.example.com:HTTP, db-01.example.com:Disk /var")
	f.drain(t)
	conn := f.db.Conn(t)
	defer conn.Close()
	for _, id := range selected {
		w, err := checkstate.ListMaintenance(conn, f.keys, schema.Unscheduled, id)
		if err != nil || len(w) != 1 || w[0].Duration != 3600 || w[0].Summary != "on it — by ada" {
			t.Errorf("%s unscheduled maintenance %+v (%v)", id, w, err)
		}
	}
}

// TestContactPageListsAlertingChecks: the checks in the contact's contact_alerting_checks sets,
// on any medium, each once and linked.
func TestContactPageListsAlertingChecks(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.client(t, false)
	contains(t, c.get("/contacts/ada"), "/contacts/ada before", "None: no check is alerting this contact.")
	f.db.Do(t, "ZADD", f.keys.AlertingChecks("ada", "email"), t0.Unix(), "web-01.example.com:HTTP")
	f.db.Do(t, "ZADD", f.keys.AlertingChecks("bob", "email"), t0.Unix(), "db-01.example.com:MySQL")
	page := c.get("/contacts/ada")
	contains(t, page, "/contacts/ada", `<a href="/check?entity=web-01.example.com&amp;check=HTTP">web-01.example.com:HTTP</a>`)
	lacks(t, page, "/contacts/ada", "db-01.example.com:MySQL", "None: no check is alerting")
	if n := strings.Count(page, ">web-01.example.com:HTTP</a>"); n != 1 {
		t.Errorf("the check is listed %d times, want once", n)
	}
}

// TestLiveFragmentNotModified: a poll of an unchanged fragment is a 304 without a body; a
// change answers the new fragment.
func TestLiveFragmentNotModified(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.client(t, false)
	code, body, h := c.do("GET", "/checks_failing/live", nil)
	etag := h.Get("ETag")
	if code != http.StatusOK || etag == "" || !strings.Contains(body, "3 failing check(s)") {
		t.Fatalf("first poll: %d, ETag %q", code, etag)
	}
	c.header = map[string]string{"If-None-Match": etag}
	if code, body, _ := c.do("GET", "/checks_failing/live", nil); code != http.StatusNotModified || body != "" {
		t.Errorf("unchanged: %d with %d bytes, want 304 and none", code, len(body))
	}
	f.event(t, 0, "new-01.example.com", "Queue", "critical", "stuck")
	if code, body, _ := c.do("GET", "/checks_failing/live", nil); code != http.StatusOK || !strings.Contains(body, "new-01.example.com:Queue") {
		t.Errorf("after a change: %d\n%s", code, body)
	}
}

// TestLivePagesCarryTheirFragmentsETag: a page kept live names its fragment's ETag, so the
// first poll of an unchanged page is a 304 and replaces nothing (a form being filled in on it
// would otherwise be wiped by that first poll).
func TestLivePagesCarryTheirFragmentsETag(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.client(t, false)
	for _, p := range []struct{ page, fragment string }{
		{"/checks_failing", "/checks_failing/live"},
		{"/check?entity=web-01.example.com&check=HTTP", "/check/live?entity=web-01.example.com&check=HTTP"},
	} {
		m := regexp.MustCompile(`data-live-etag="([^"]*)"`).FindStringSubmatch(c.get(p.page))
		if m == nil || m[1] == "" {
			t.Fatalf("%s names no ETag for its fragment", p.page)
		}
		c.header = map[string]string{"If-None-Match": html.UnescapeString(m[1])}
		if code, body, _ := c.do("GET", p.fragment, nil); code != http.StatusNotModified {
			t.Errorf("%s: first poll of an unchanged page answered %d (%d bytes), want 304", p.page, code, len(body))
		}
		c.header = nil
	}
}
