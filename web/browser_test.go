package web

import (
	"context"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/schema"
)

// screenshotsEnv names a directory: when set, TestBrowser saves its screenshots there (make
// screenshots writes docs/screenshots).
const screenshotsEnv = "FLAPJACK_SCREENSHOTS"

// chromiumPath finds the headless browser scripts/test-deps.sh installs (Debian's chromium).
func chromiumPath(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("the browser tests need chromium: run scripts/test-deps.sh (as root) or apt-get install chromium")
	return ""
}

// browser is a headless Chromium tab logged in as testUser, with helpers that fail the test.
type browser struct {
	t   *testing.T
	ctx context.Context
}

// newBrowser starts Chromium for t (closed when t ends) with a deadline of timeout.
func newBrowser(t *testing.T, timeout time.Duration) *browser {
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromiumPath(t)),
		chromedp.NoSandbox, chromedp.WindowSize(1280, 900), chromedp.Flag("disable-dev-shm-usage", true))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(cancel)
	ctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	t.Cleanup(cancelTimeout)
	b := &browser{t: t, ctx: ctx}
	auth := "Basic " + base64.StdEncoding.EncodeToString([]byte(testUser+":"+testPassword))
	b.run("log in", network.Enable(), network.SetExtraHTTPHeaders(network.Headers{"Authorization": auth}))
	return b
}

func (b *browser) run(what string, actions ...chromedp.Action) {
	b.t.Helper()
	if err := chromedp.Run(b.ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// shoot saves a full-page screenshot as name when FLAPJACK_SCREENSHOTS names a directory.
func (b *browser) shoot(name string) {
	b.t.Helper()
	shots := os.Getenv(screenshotsEnv)
	if shots == "" {
		return
	}
	var png []byte
	b.run("screenshot "+name, chromedp.FullScreenshot(&png, 100))
	if err := os.MkdirAll(shots, 0o755); err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(shots, name), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// TestBrowser drives a real headless Chromium through the UI: the failing check is listed,
// its page acknowledges it (an event in Redis, then shown as acknowledged once the executive
// processed it), and a maintenance window is scheduled and deleted.
func TestBrowser(t *testing.T) {
	f := newFixture(t)
	b := newBrowser(t, 60*time.Second)
	run, shoot := b.run, b.shoot
	var text string
	run("open /checks_failing", chromedp.Navigate(f.srv.URL+"/checks_failing"), chromedp.Text("ol.triage", &text, chromedp.ByQuery))
	for _, want := range []string{"web-01.example.com", "HTTP 500 Internal Server Error", "CRITICAL", "acknowledged", "in maintenance"} {
		if !strings.Contains(text, want) { // the state shows as text (upper-cased by the style sheet), not only as colour
			t.Errorf("/checks_failing list lacks %q:\n%s", want, text)
		}
	}
	shoot("checks_failing.png")

	run("open the check", chromedp.Click(`ol.triage a[href$="entity=web-01.example.com&check=HTTP"]`, chromedp.ByQuery),
		chromedp.WaitVisible("#ack-summary", chromedp.ByID), chromedp.Text("h1", &text, chromedp.ByQuery))
	if text != "web-01.example.com:HTTP" {
		t.Errorf("check page title %q", text)
	}
	run("acknowledge", chromedp.SendKeys("#ack-summary", "looking into it", chromedp.ByID),
		chromedp.Click(`section[aria-labelledby="h-ack"] button[type="submit"]`, chromedp.ByQuery),
		chromedp.Text(".flash", &text, chromedp.ByQuery))
	if !strings.Contains(text, "Acknowledgement queued for web-01.example.com:HTTP for 2 hours") {
		t.Errorf("flash after acknowledging: %q", text)
	}
	raw, err := redis.String(f.db.Do(t, "LINDEX", f.keys.Events(), 0), nil)
	if err != nil || !strings.Contains(raw, `"state":"acknowledgement"`) || !strings.Contains(raw, `"summary":"looking into it — by ada"`) {
		t.Fatalf("queued acknowledgement event: %s (%v)", raw, err)
	}
	f.drain(t)
	run("reload", chromedp.Reload(), chromedp.Text("#check-live", &text, chromedp.ByQuery))
	if !strings.Contains(text, "acknowledged") {
		t.Errorf("check page after the executive processed the acknowledgement:\n%s", text)
	}

	run("schedule maintenance", chromedp.SetValue("#sm-start", "in 1 hour", chromedp.ByID),
		chromedp.SetValue("#sm-duration", "2 hours", chromedp.ByID), chromedp.SendKeys("#sm-summary", "kernel upgrade", chromedp.ByID),
		chromedp.Click(`section[aria-labelledby="h-sched"] button[type="submit"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`button[aria-label^="Delete the window"]`, chromedp.ByQuery),
		chromedp.Text(".flash", &text, chromedp.ByQuery))
	if !strings.Contains(text, "Scheduled maintenance from 2026-01-05 11:00 UTC for 2 hours") {
		t.Errorf("flash after scheduling: %q", text)
	}
	conn := f.db.Conn(t)
	defer conn.Close()
	windows, err := checkstate.ListMaintenance(conn, f.keys, schema.Scheduled, "web-01.example.com:HTTP")
	if err != nil || len(windows) != 1 || windows[0].Summary != "kernel upgrade — by ada" || windows[0].Duration != 7200 {
		t.Fatalf("stored windows %+v (%v)", windows, err)
	}
	shoot("check.png")
	run("delete the window", chromedp.Click(`button[aria-label^="Delete the window"]`, chromedp.ByQuery),
		chromedp.WaitNotPresent(`button[aria-label^="Delete the window"]`, chromedp.ByQuery),
		chromedp.Text(".flash", &text, chromedp.ByQuery))
	if !strings.Contains(text, "ended by ada") {
		t.Errorf("flash after deleting: %q", text)
	}
	if windows, _ := checkstate.ListMaintenance(conn, f.keys, schema.Scheduled, "web-01.example.com:HTTP"); len(windows) != 0 {
		t.Errorf("window still stored: %+v", windows)
	}

}
