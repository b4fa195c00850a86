package web

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/schema"
)

// triageOrder is the failing list as the browser shows it, by the acknowledge buttons' labels.
const triageOrder = `Array.from(document.querySelectorAll('ol.triage button[aria-label^="Acknowledge "]')).map(b => b.getAttribute('aria-label').slice(12))`

// TestBrowserTriage drives the failing list and the check page at a phone's 360×800 and a
// desktop's 1280×800: the order, the first acknowledge button on the first screen, no sideways
// scroll, every control reachable by keyboard, a new failure appearing without navigation,
// acknowledging two checks at once, and the check page leading with its Acknowledge button.
func TestBrowserTriage(t *testing.T) {
	f := newFixture(t)
	// The notifier's record of alerting Ada about web-01:HTTP (as in TestFailingListShowsWhoWasAlerted).
	f.db.Do(t, "LPUSH", f.keys.Explain("web-01.example.com:HTTP"), `{"time":`+itoa(t0.Add(-50*time.Minute).Unix())+
		`,"stage":"notifier","type":"problem","severity":"critical","verdict":"routed",`+
		`"contacts":[{"id":"ada","name":"Ada Lovelace","media":[{"medium":"email","alerted":true,"reason":"alerted"}]}]}`)
	b := newBrowser(t, 90*time.Second)
	wantOrder := []string{"db-01.example.com:Disk /var", "web-01.example.com:HTTP", "db-01.example.com:MySQL"}
	for _, vp := range []struct{ w, h int64 }{{360, 800}, {1280, 800}} {
		size := fmt.Sprintf("%dx%d", vp.w, vp.h)
		var order []string
		var ackBottom, scrollW, clientW float64
		b.run(size+": open /checks_failing", emulation.SetTimezoneOverride("Asia/Tokyo"), emulation.SetLocaleOverride().WithLocale("en-US"),
			chromedp.EmulateViewport(vp.w, vp.h), chromedp.Navigate(f.srv.URL+"/checks_failing"),
			chromedp.WaitVisible("ol.triage", chromedp.ByQuery), chromedp.Evaluate(triageOrder, &order),
			chromedp.Evaluate(`window.scrollTo(0, 0); document.querySelector('ol.triage .t-ack button').getBoundingClientRect().bottom`, &ackBottom),
			chromedp.Evaluate(`document.documentElement.scrollWidth`, &scrollW), chromedp.Evaluate(`document.documentElement.clientWidth`, &clientW))
		var alerted, when string
		b.run(size+": who was alerted", chromedp.Text(`ol.triage li:nth-child(2) .t-alerted`, &alerted, chromedp.ByQuery),
			chromedp.Text(`ol.triage li:nth-child(2) .t-when`, &when, chromedp.ByQuery))
		// 09:00 UTC is 18:00 in Tokyo: the time is shown in the viewer's timezone, as text.
		if when != "critical for 1h, since Jan 5, 2026, 06:00:00 PM GMT+9" {
			t.Errorf("%s: second row's time %q, want it in the viewer's timezone", size, when)
		}
		if alerted != "Alerted 50m ago: Ada Lovelace (email) — queued" {
			t.Errorf("%s: second row says %q about who was alerted", size, alerted)
		}
		if !slices.Equal(order, wantOrder) {
			t.Errorf("%s: order %q, want %q", size, order, wantOrder)
		}
		if ackBottom <= 0 || ackBottom > float64(vp.h) {
			t.Errorf("%s: the first row's Acknowledge button ends at y=%v, not on the first screen", size, ackBottom)
		}
		if scrollW > clientW {
			t.Errorf("%s: page scrolls sideways: scrollWidth %v > clientWidth %v", size, scrollW, clientW)
		}
		reached := tabThrough(t, b, 80)
		for _, want := range []string{"Filter", "Select db-01.example.com:Disk /var", "Acknowledge db-01.example.com:Disk /var",
			"Select web-01.example.com:HTTP", "Acknowledge web-01.example.com:HTTP", "Duration", "Comment", "Acknowledge selected"} {
			if !slices.Contains(reached, want) {
				t.Errorf("%s: Tab never reaches %q; reached %q", size, want, reached)
			}
		}
		if vp.w == 360 { // TestBrowser shoots the desktop list
			b.shoot("checks_failing_360.png")
		}
	}

	// A check that starts failing shows up on the open page, without navigating.
	b.run("mark the page", chromedp.Evaluate(`window.notReloaded = true`, nil))
	f.event(t, 5*time.Second, "queue-01.example.com", "Backlog", "critical", "backlog 90000")
	waitCtx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	if err := chromedp.Run(waitCtx, chromedp.WaitVisible(`button[aria-label="Acknowledge queue-01.example.com:Backlog"]`, chromedp.ByQuery)); err != nil {
		t.Fatalf("the new failure did not appear within 10 s: %v", err)
	}
	cancel()
	var same bool
	b.run("still the same page", chromedp.Evaluate(`window.notReloaded === true`, &same))
	if !same {
		t.Error("the page was reloaded to show the new failure")
	}

	// Acknowledge two checks at once.
	b.run("acknowledge two", chromedp.Click(`input[aria-label="Select web-01.example.com:HTTP"]`, chromedp.ByQuery),
		chromedp.Click(`input[aria-label="Select queue-01.example.com:Backlog"]`, chromedp.ByQuery),
		chromedp.SetValue("#bulk-duration", "1 hour", chromedp.ByID), chromedp.SendKeys("#bulk-summary", "failover", chromedp.ByID),
		chromedp.Click(`#bulk-ack button[type="submit"]`, chromedp.ByQuery), chromedp.WaitVisible(".flash", chromedp.ByQuery))
	var flash string
	b.run("read the flash", chromedp.Text(".flash", &flash, chromedp.ByQuery))
	if !strings.Contains(flash, "Acknowledgements queued for 2 check(s) for 1 hour") {
		t.Errorf("flash after acknowledging two: %q", flash)
	}
	f.drain(t)
	conn := f.db.Conn(t)
	defer conn.Close()
	for _, id := range []string{"web-01.example.com:HTTP", "queue-01.example.com:Backlog"} {
		w, err := checkstate.ListMaintenance(conn, f.keys, schema.Unscheduled, id)
		if err != nil || len(w) != 1 || w[0].Duration != 3600 || w[0].Summary != "failover — by ada" {
			t.Errorf("%s: unscheduled maintenances %+v (%v), want one of an hour", id, w, err)
		}
	}
	if w, _ := checkstate.ListMaintenance(conn, f.keys, schema.Unscheduled, "db-01.example.com:Disk /var"); len(w) != 0 {
		t.Errorf("an unselected check was acknowledged: %+v", w)
	}

	// The check page on a phone: state, summary and Acknowledge on the first screen; it follows
	// a change without a reload.
	var ackBottom float64
	var head string
	b.run("check page at 360", chromedp.EmulateViewport(360, 800),
		chromedp.Navigate(f.srv.URL+"/check?entity=db-01.example.com&check=Disk+%2Fvar"),
		chromedp.WaitVisible("#ack-summary", chromedp.ByID), chromedp.Text("#check-live", &head, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector('section[aria-labelledby="h-ack"] button').getBoundingClientRect().bottom`, &ackBottom))
	if !strings.Contains(head, "CRITICAL") || !strings.Contains(head, "disk 99%") {
		t.Errorf("check page head lacks the state or summary: %q", head)
	}
	if ackBottom <= 0 || ackBottom > 800 {
		t.Errorf("the check page's Acknowledge button ends at y=%v, not on the first screen", ackBottom)
	}
	b.shoot("check_360.png")
	f.event(t, 10*time.Second, "db-01.example.com", "Disk /var", "ok", "disk 40%")
	waitCtx, cancel = context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	if err := chromedp.Run(waitCtx, chromedp.Poll(`document.querySelector('#check-live').textContent.includes('disk 40%')`, nil)); err != nil {
		t.Errorf("the check page did not show the recovery within 10 s: %v", err)
	}

	// A contact's page on a phone, with its editor folded away (TestBrowserPages checks its width).
	var contact string
	b.run("contact page at 360", chromedp.Navigate(f.srv.URL+"/contacts/ada"), chromedp.WaitVisible("ul.alerting", chromedp.ByQuery),
		chromedp.Evaluate(`Array.from(document.querySelectorAll('details.edit > summary')).map(s => s.textContent).join('|')`, &contact))
	if contact != "Edit contact|Add or change a medium|Add a rule" {
		t.Errorf("contact page's edit controls: %q", contact)
	}
}

// tabThrough presses Tab n times from the top of the page and returns the accessible names
// (aria-label, else label, else text) of the elements that took focus.
func tabThrough(t *testing.T, b *browser, n int) []string {
	t.Helper()
	b.run("focus the top", chromedp.Evaluate(`document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0)`, nil))
	var out []string
	for range n {
		var name string
		b.run("Tab", chromedp.KeyEvent(kb.Tab), chromedp.Evaluate(
			`(e => e && e !== document.body ? (e.getAttribute('aria-label') || (e.labels && e.labels.length ? e.labels[0].textContent : e.textContent).trim()) : '')(document.activeElement)`, &name))
		out = append(out, name)
	}
	return out
}

// TestBrowserWithoutJavaScript: with scripts off the list still shows its times (in UTC),
// keeps its meta refresh, and "Acknowledge selected" still works (the checkboxes belong to the
// form by its id, plain HTML).
func TestBrowserWithoutJavaScript(t *testing.T) {
	f := newFixture(t)
	b := newBrowser(t, 60*time.Second)
	var when, refresh, flash string
	b.run("open /checks_failing without scripts", emulation.SetScriptExecutionDisabled(true), chromedp.EmulateViewport(360, 800),
		chromedp.Navigate(f.srv.URL+"/checks_failing"), chromedp.WaitVisible("ol.triage", chromedp.ByQuery),
		chromedp.Text(`ol.triage li:nth-child(2) .t-when`, &when, chromedp.ByQuery),
		chromedp.Evaluate(`(m => m ? m.getAttribute('content') : '')(document.querySelector('noscript meta[http-equiv="refresh"]'))`, &refresh))
	if when != "critical for 1h, since 2026-01-05 09:00:00 UTC" {
		t.Errorf("second row's time without scripts: %q", when)
	}
	if refresh != "120" {
		t.Errorf("no meta refresh for browsers without scripts: %q", refresh)
	}
	b.run("acknowledge one without scripts", chromedp.Click(`input[aria-label="Select web-01.example.com:HTTP"]`, chromedp.ByQuery),
		chromedp.Click(`#bulk-ack button[type="submit"]`, chromedp.ByQuery), chromedp.WaitVisible(".flash", chromedp.ByQuery),
		chromedp.Text(".flash", &flash, chromedp.ByQuery))
	if !strings.Contains(flash, "Acknowledgements queued for 1 check(s) for 2 hours: web-01.example.com:HTTP") {
		t.Errorf("flash: %q", flash)
	}
}
