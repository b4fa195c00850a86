package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/importer"
	"github.com/flapjackgo/flapjack/internal/testing/testical"
	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/oncall"
	"github.com/flapjackgo/flapjack/schema"
)

// opsRota has Ada and Bob in weekly turns from Monday 5 January 09:00 London time, on weekdays
// 09:00-17:00 only, and no fallback: nights and weekends are gaps. At t0 (Monday 10:00 UTC) Ada
// is on call.
const opsRota = `[{"id": "ops", "name": "Ops primary", "timezone": "Europe/London", "layers": [{"name": "weekly",
  "start": "2026-01-05T09:00:00", "turn": "1 week", "members": ["ada", "bob"],
  "restrictions": [{"days": "mon-fri", "from": "09:00", "to": "17:00"}]}]}]`

func (f *fixture) withRota(t *testing.T) {
	t.Helper()
	conn := f.db.Conn(t)
	defer conn.Close()
	ctx := context.Background()
	for _, imp := range []struct {
		f    func(context.Context, redis.Conn, schema.Keys, []byte, importer.Options) (importer.Report, error)
		data string
	}{
		{importer.Contacts, `[{"id": "bob", "first_name": "Bob", "media": {"email": "bob@example.com"}}]`},
		{importer.Schedules, opsRota},
	} {
		if rep, err := imp.f(ctx, conn, f.keys, []byte(imp.data), importer.Options{}); err != nil {
			t.Fatalf("import: %v %v", err, rep.Problems)
		}
	}
}

func TestSchedulePages(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.withRota(t)
	c := f.client(t, false)
	contains(t, c.get("/schedules"), "schedules list", `href="/schedules/ops">Ops primary</a>`, "Europe/London",
		`<td data-label="On call now">ada</td>`, `layer &#34;weekly&#34;`, `href="/schedules/ops.ics"`)
	page := c.get("/schedules/ops")
	contains(t, page, "schedule page", `<p id="on-call-now"><strong>ada</strong> (layer &#34;weekly&#34;)</p>`,
		`<td data-label="From">Mon 5 Jan 10:00 GMT</td><td data-label="To">Mon 5 Jan 17:00 GMT</td>`,
		`<tr class="gap"><td data-label="From">Mon 5 Jan 17:00 GMT</td><td data-label="To">Tue 6 Jan 09:00 GMT</td>`,
		"Gap: nobody on call", "Log in to add an override.")
	// ten weekdays' shifts, the gaps after each, and Monday 19 January's first hour
	if n := strings.Count(page, `<td data-label="From">`); n != 21 {
		t.Errorf("%d shifts over 14 days, want 21", n)
	}
	lacks(t, page, "anonymous schedule page", `action="/schedules/ops/overrides"`)
	if code, _, _ := c.do("GET", "/schedules/nope", nil); code != http.StatusNotFound {
		t.Errorf("unknown schedule: %d", code)
	}
}

func TestScheduleOverrideForm(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.withRota(t)
	path := "/schedules/ops/overrides"
	form := func(tok string) url.Values {
		return url.Values{"csrf_token": {tok}, "contact": {"bob"}, "start": {"2026-01-05T12:00"}, "end": {"2026-01-05T14:00"}}
	}
	anon := f.client(t, false)
	if code, _, _ := anon.do("POST", path, form(anon.token(checkPath))); code != http.StatusUnauthorized {
		t.Errorf("anonymous: %d, want 401", code)
	}
	c := f.client(t, true)
	tok := c.token("/schedules/ops")
	if code, _, _ := c.do("POST", path, form(strings.Repeat("0", 64))); code != http.StatusForbidden {
		t.Errorf("wrong token: %d, want 403", code)
	}
	bad := form(tok)
	bad.Set("end", "2026-01-05T11:00")
	if code, _, _ := c.do("POST", path, bad); code != http.StatusBadRequest {
		t.Errorf("end before start: %d, want 400", code)
	}
	ghost := form(tok)
	ghost.Set("contact", "ghost")
	if code, _, _ := c.do("POST", path, ghost); code != http.StatusNotFound {
		t.Errorf("unknown contact: %d, want 404", code)
	}
	code, _, h := c.do("POST", path, form(tok))
	if code != http.StatusSeeOther || h.Get("Location") != "/schedules/ops" {
		t.Fatalf("add override: %d %v", code, h)
	}
	contains(t, c.get("/schedules/ops"), "after the override", "bob is on call in Ops primary from Mon 5 Jan 12:00 GMT to Mon 5 Jan 14:00 GMT.",
		`<td data-label="From">Mon 5 Jan 12:00 GMT</td><td data-label="To">Mon 5 Jan 14:00 GMT</td>`+"\n"+`<td data-label="On call">bob</td><td data-label="Why">override</td>`)
	conn := f.db.Conn(t)
	defer conn.Close()
	stored, _, err := roster.Schedules(conn, f.keys)
	if err != nil || len(stored) != 1 || len(stored[0].Overrides) != 1 ||
		!stored[0].Overrides[0].Start.Equal(time.Date(2026, 1, 5, 12, 0, 0, 0, time.UTC)) {
		t.Fatalf("stored: %+v %v", stored, err)
	}
}

// TestCalendarFeedsParseToTheShifts: the schedule's feed and a contact's parse in a real calendar
// library, and their events are the shifts of the feed's range (what `flapjack oncall --at FROM
// --until UNTIL` lists): every shift, gaps included, for the schedule; the contact's own for hers.
func TestCalendarFeedsParseToTheShifts(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.withRota(t)
	c := f.client(t, false)
	code, feed, h := c.do("GET", "/schedules/ops.ics", nil)
	if code != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "text/calendar") {
		t.Fatalf("feed: %d %v", code, h)
	}
	from, until := FeedRange(t0)
	if !from.Equal(time.Date(2025, 12, 29, 0, 0, 0, 0, time.UTC)) || !until.Equal(time.Date(2026, 3, 6, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("feed range %v - %v", from, until)
	}
	conn := f.db.Conn(t)
	defer conn.Close()
	stored, _, err := roster.Schedules(conn, f.keys)
	if err != nil {
		t.Fatal(err)
	}
	shifts, err := stored[0].Shifts(from, until)
	if err != nil {
		t.Fatal(err)
	}
	events := testical.Events(t, []byte(feed))
	if len(events) != len(shifts) || len(shifts) < 80 {
		t.Fatalf("%d events, %d shifts", len(events), len(shifts))
	}
	for i, sh := range shifts {
		e := events[i]
		who := "Nobody"
		if !sh.Gap() {
			who = strings.Join(sh.Contacts, ", ")
		}
		if !e.Start.Equal(sh.Start) || !e.End.Equal(sh.End) || e.Summary != who+" on call: Ops primary" ||
			e.Description != oncall.Provenance(sh.OnCall) {
			t.Fatalf("event %d %+v, shift %+v", i, e, sh)
		}
	}
	own := testical.Events(t, []byte(c.get("/contacts/bob/shifts.ics")))
	var bobs []oncall.Shift
	for _, sh := range shifts {
		if len(sh.Contacts) == 1 && sh.Contacts[0] == "bob" {
			bobs = append(bobs, sh)
		}
	}
	if len(own) != len(bobs) || len(bobs) < 20 {
		t.Fatalf("bob's feed has %d events, his shifts are %d", len(own), len(bobs))
	}
	for i, sh := range bobs {
		if !own[i].Start.Equal(sh.Start) || !own[i].End.Equal(sh.End) {
			t.Fatalf("bob's event %d %+v, shift %+v", i, own[i], sh)
		}
	}
	if code, _, _ := c.do("GET", "/contacts/ghost/shifts.ics", nil); code != http.StatusNotFound {
		t.Errorf("unknown contact's feed: %d", code)
	}
}

// TestOnCallOnSummaryAndContactPages: the summary says who each schedule puts on call now, and a
// contact's page lists their shifts over the next 14 days, the one under way first.
func TestOnCallOnSummaryAndContactPages(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.client(t, false)
	lacks(t, c.get("/"), "summary without schedules", "On call now")
	contains(t, c.get("/contacts/ada"), "contact page without schedules", "<h2>Next shifts</h2>", "None in the next 14 days.")
	f.withRota(t)
	contains(t, c.get("/"), "summary", "<h2>On call now</h2>",
		`<li><a href="/schedules/ops">Ops primary</a>: <span>ada</span> (layer &#34;weekly&#34;)</li>`)
	ada := c.get("/contacts/ada")
	contains(t, ada, "ada's page", `<h2>Next shifts</h2>`,
		`<li>Mon 5 Jan 10:00 GMT to Mon 5 Jan 17:00 GMT: <a href="/schedules/ops">Ops primary</a> (layer &#34;weekly&#34;)</li>`,
		`<li>Mon 19 Jan 09:00 GMT to Mon 19 Jan 10:00 GMT:`, `href="/contacts/ada/shifts.ics"`)
	// her first week's five days and the third week's first hour
	if n := strings.Count(ada, `<a href="/schedules/ops">Ops primary</a> (layer`); n != 6 {
		t.Errorf("ada has %d shifts listed, want 6", n)
	}
	bob := c.get("/contacts/bob")
	contains(t, bob, "bob's page", `<li>Mon 12 Jan 09:00 GMT to Mon 12 Jan 17:00 GMT: <a href="/schedules/ops">Ops primary</a>`)
	lacks(t, bob, "bob's page", "Mon 5 Jan", "None in the next 14 days.")
}
