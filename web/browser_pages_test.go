package web

import (
	"context"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/flapjackgo/flapjack/importer"
)

// longEntity and longSummary stress wrapping: a host name and an output with no place to break.
const (
	longEntity  = "ingest-worker-0042.eu-west-1.compute.internal.very-long-subdomain-name.example.com"
	longSummary = "CRITICAL - Socket timeout after 10 seconds talking to " +
		"https://ingest-worker-0042.eu-west-1.compute.internal.example.com:8443/api/v2/healthcheck?verbose=true&token=0123456789abcdef0123456789abcdef " +
		"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
)

// withStressData adds to the fixture what makes every page show real, hard-to-fit content: a
// contact with two media and a notification rule on an entity with a long name, whose check fails
// with a long summary, and the ops schedule with its shifts.
func (f *fixture) withStressData(t *testing.T) {
	t.Helper()
	f.withRota(t)
	conn := f.db.Conn(t)
	defer conn.Close()
	ctx := context.Background()
	contacts := `[{"id": "grace", "first_name": "Grace", "last_name": "Brewster Murray Hopper-Longname", "email": "grace.brewster.murray.hopper@really-long-domain-name.example.com",
	  "media": {"email": "grace.brewster.murray.hopper@really-long-domain-name.example.com", "sms": "+447700900123"},
	  "notification_rules": [{"entities": ["` + longEntity + `"], "tags": ["prod"], "critical_media": ["sms", "email"], "warning_media": ["email"], "warning_blackhole": false}]}]`
	if rep, err := importer.Contacts(ctx, conn, f.keys, []byte(contacts), importer.Options{}); err != nil {
		t.Fatalf("import contacts: %v %v", err, rep.Problems)
	}
	entities := `{"entities": [{"id": "E-long", "name": "` + longEntity + `", "tags": ["prod"], "contacts": ["grace"]}]}`
	if rep, err := importer.Entities(ctx, conn, f.keys, []byte(entities), importer.Options{}); err != nil {
		t.Fatalf("import entities: %v %v", err, rep.Problems)
	}
	now := f.clk.Now()
	f.event(t, -30*time.Minute, longEntity, "HTTPS health endpoint with a rather descriptive check name", "critical", longSummary,
		`"details":"`+longSummary+`"`)
	f.clk.Set(now)
}

// TestBrowserPages opens every page of the UI, logged in, at a phone's 360×800 and checks
// that none scrolls sideways and that Tab reaches every control on it (every folded <details>
// opened first, so the edit forms behind them are checked too).
func TestBrowserPages(t *testing.T) {
	f := newFixture(t)
	f.withStressData(t)
	check := url.Values{"entity": {longEntity}, "check": {"HTTPS health endpoint with a rather descriptive check name"}}
	// ready is on the page once it loaded; shows is content the seeding put there.
	pages := []struct{ name, path, ready, shows string }{
		{"summary", "/", "main", "On call now"},
		{"all checks", "/checks_all", "main table", longEntity},
		{"failing checks", "/checks_failing", "ol.triage", longSummary[:150]}, // the list cuts summaries at 160 characters
		{"check", "/check?" + check.Encode(), "#ack-summary", longSummary},
		{"entities", "/entities", "main table", longEntity},
		{"failing entities", "/entities_failing", "main table", longEntity},
		{"entity", "/entity/" + longEntity, "main table", "HTTPS health endpoint"},
		{"contacts", "/contacts", "main table", "Hopper-Longname"},
		{"contact", "/contacts/grace", "details.edit", "+447700900123"},
		{"schedules", "/schedules", "main table", "Ops primary"},
		{"schedule", "/schedules/ops", "select[name=contact]", "Gap: nobody on call"},
		{"on-call report", "/reports/oncall", "main table", "ada"},
		{"self stats", "/self_stats", "main", "executive"},
	}
	b := newBrowser(t, 120*time.Second)
	b.run("phone viewport", chromedp.EmulateViewport(360, 800))
	for _, p := range pages {
		t.Run(p.name, func(t *testing.T) {
			b := &browser{t: t, ctx: b.ctx}
			var scrollW, clientW float64
			var wide []string
			var shows bool
			b.run("open "+p.path, chromedp.Navigate(f.srv.URL+p.path), chromedp.WaitVisible(p.ready, chromedp.ByQuery),
				chromedp.Evaluate(`document.body.textContent.includes(`+strconv.Quote(p.shows)+`)`, &shows),
				chromedp.Evaluate(openAllDetails, nil),
				chromedp.Evaluate(`document.documentElement.scrollWidth`, &scrollW),
				chromedp.Evaluate(`document.documentElement.clientWidth`, &clientW),
				chromedp.Evaluate(widerThanViewport, &wide))
			if !shows {
				t.Errorf("%s lacks %q: the page shows no seeded content", p.path, p.shows)
			}
			if scrollW > clientW {
				t.Errorf("%s scrolls sideways at 360 px: scrollWidth %v > clientWidth %v; too wide: %q", p.path, scrollW, clientW, wide)
			}
			if missed := unreachable(b); len(missed) > 0 {
				t.Errorf("%s: Tab never reaches %q", p.path, missed)
			}
		})
	}
}

// openAllDetails unfolds every <details>, so that the forms folded behind them count as controls.
const openAllDetails = `document.querySelectorAll('details').forEach(d => d.open = true)`

// widerThanViewport names the last elements sticking out of the viewport or their own box, for the message.
const widerThanViewport = `Array.from(document.querySelectorAll('body *')).filter(e =>
	e.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5 ||
	(e.scrollWidth > e.clientWidth && getComputedStyle(e).overflowX === 'visible')).slice(-5).map(e => e.tagName.toLowerCase() + (e.className ? '.' + e.className : '') + ': ' + e.textContent.trim().slice(0, 40))`

// controls lists the page's interactive controls a keyboard user must be able to reach: shown,
// enabled, not type=hidden; one per radio group (Tab enters a group once).
const controls = `Array.from(document.querySelectorAll('a[href], button, input, select, textarea, summary')).filter(e =>
	!e.disabled && e.type !== 'hidden' && !e.closest('[hidden], [inert]') && e.getClientRects().length > 0 &&
	getComputedStyle(e).visibility !== 'hidden' &&
	!(e.type === 'radio' && e !== document.querySelector('input[type=radio][name="' + CSS.escape(e.name) + '"]')))`

// unreachable presses Tab through the whole page, until focus comes back to the first control it
// reached or every control has had focus (a date input takes several presses, one per field),
// and returns the controls that never took focus, each by its tag and accessible name.
func unreachable(b *browser) []string {
	b.t.Helper()
	var n int
	b.run("count the controls", chromedp.Evaluate(`document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0);
		window.tabbing = {first: null, wrapped: false};
		document.addEventListener('focusin', e => {
			const t = window.tabbing;
			if (!t.first) t.first = e.target; else if (e.target === t.first) t.wrapped = true;
			e.target.dataset.tabbed = '1';
		}); `+controls+`.length`, &n))
	if n == 0 {
		b.t.Error("no controls found: the page did not load")
	}
	tabs := make([]chromedp.Action, 10)
	for i := range tabs {
		tabs[i] = chromedp.KeyEvent(kb.Tab)
	}
	var missed []string
	for pressed := 0; pressed < 10*n+20; pressed += len(tabs) {
		var wrapped bool
		b.run("tab through", append(tabs, chromedp.Evaluate(missing, &missed), chromedp.Evaluate(`window.tabbing.wrapped`, &wrapped))...)
		if wrapped || len(missed) == 0 {
			break
		}
	}
	return missed
}

// missing names the controls that have not had focus yet (a radio group counts once).
const missing = controls + `.filter(e => !e.dataset.tabbed && !(e.type === 'radio' &&
	document.querySelector('input[type=radio][name="' + CSS.escape(e.name) + '"][data-tabbed]'))).map(e =>
	e.tagName.toLowerCase() + ' ' + (e.getAttribute('aria-label') || (e.labels && e.labels.length ? e.labels[0].textContent : e.textContent || e.name).trim()))`
