package oobetet

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/config"
	"github.com/flapjackgo/flapjack/events"
	"github.com/flapjackgo/flapjack/executive"
	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/gateways/jabber"
	"github.com/flapjackgo/flapjack/gateways/pagerduty"
	"github.com/flapjackgo/flapjack/internal/testing/testprosody"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/lifecycle"
	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/notifier"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/schema"
)

// TestWholePath runs everything for real, on the wall clock: oobetet (built by Spec.Stages from
// settings) injects the canary every 500ms through the events publisher; the executive, the
// notifier and the Jabber gateway (jabber.Spec.Stages) carry its alerts to the room, where
// oobetet sees them. While that runs nothing is raised; once the Jabber gateway stops, the
// alarm is paged within max_latency (2s) and said in the room; once it is back, the incident
// is resolved.
func TestWholePath(t *testing.T) {
	t.Parallel()
	rm := newRoom(t)
	pd := newPDServer(t)
	db := testredis.New(t)
	keys := schema.NewKeys("")
	// The rooms' contact: every check's alerts go to the room.
	conn := db.Pool.Get()
	if _, err := roster.SeedContact(context.Background(), conn, keys, roster.ContactData{ID: "ops",
		ContactInfo: roster.ContactInfo{FirstName: "Ops", LastName: "Room"},
		Media:       []roster.Medium{{Name: jabber.Medium, Address: rm.jid}}}, true); err != nil {
		t.Fatal(err)
	}
	conn.Close()

	port := fmt.Sprint(rm.xmpp.Port)
	var environ []string
	for _, kv := range [][2]string{
		{"JABBER_SERVER", "127.0.0.1"}, {"JABBER_PORT", port}, {"JABBER_JABBERID", testprosody.JID("flapjack") + "/test"},
		{"JABBER_PASSWORD", botPass}, {"JABBER_ROOMS", rm.jid}, {"JABBER_INSECURE_SKIP_VERIFY", "true"},
		{"OOBETET_SERVER", "127.0.0.1"}, {"OOBETET_PORT", port}, {"OOBETET_JABBERID", testprosody.JID("flapjacktest") + "/test"},
		{"OOBETET_PASSWORD", oobetetPass}, {"OOBETET_ROOMS", rm.jid}, {"OOBETET_INSECURE_SKIP_VERIFY", "true"},
		{"OOBETET_WATCHED_ENTITY", canaryEntity}, {"OOBETET_WATCHED_CHECK", canaryCheck},
		{"OOBETET_MAX_LATENCY", "2s"}, {"OOBETET_INJECT_INTERVAL", "500ms"},
		{"OOBETET_PAGERDUTY_CONTACT", routingKey}, {"PAGERDUTY_EVENTS_BASE_URL", pd.srv.URL},
	} {
		environ = append(environ, "FLAPJACK_GATEWAYS_"+kv[0]+"="+kv[1])
	}
	values, err := config.Load(gateways.SettingsTable([]gateways.Medium{jabber.Spec, pagerduty.Spec, Spec}), "", nil, environ)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	log := zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel))
	genv := gateways.Env{Values: values, Pool: db.Pool, Keys: keys, Clock: clock.Real{}, Log: log,
		Metrics: gateways.NewMetrics(reg), Registerer: reg, Identity: queue.LocalIdentity(), Version: "test",
		Events: events.NewPublisher(db.Pool, keys, values.String("executive.queue"))}

	// The core: executive and notifier.
	x := executive.New(executive.Options{Pool: db.Pool, Keys: keys, Config: executive.DefaultConfig(), Clock: clock.Real{},
		Log: log, Identity: queue.Identity{Host: "pipeline-executive", PID: 1}, Version: "test"})
	ncfg := notifier.DefaultConfig()
	ncfg.MediaQueues = map[string]string{jabber.Medium: schema.DefaultMediumQueue(jabber.Medium)}
	n := notifier.New(notifier.Options{Pool: db.Pool, Keys: keys, Config: ncfg, Clock: clock.Real{}, Log: log,
		Identity: queue.Identity{Host: "pipeline-notifier", PID: 1}, Version: "test"})
	start(t, []lifecycle.Stage{{Name: "executive", Run: func(ctx context.Context) error { return x.Run(ctx, false) }},
		{Name: "notifier", Run: func(ctx context.Context) error { return n.Run(ctx, false) }}})

	jabberStages, err := jabber.Spec.Stages(genv)
	if err != nil {
		t.Fatal(err)
	}
	stopJabber := start(t, jabberStages)
	oobetetStages, err := Spec.Stages(genv)
	if err != nil {
		t.Fatal(err)
	}
	start(t, oobetetStages)

	// The canary's alerts reach the room, through the Jabber gateway's account.
	fromBot := func(prefix string) func(testprosody.Message) bool {
		return func(m testprosody.Message) bool {
			return m.From == rm.jid+"/"+jabber.DefaultAlias && strings.HasPrefix(m.Text, prefix) &&
				strings.Contains(m.Text, `"oobetet canary" on canary`)
		}
	}
	rm.alice.Expect("a problem alert of the canary", fromBot("Problem: "))
	rm.alice.Expect("a recovery alert of the canary", fromBot("Recovery: "))

	// Twice max_latency of injected canaries: no alarm. The watcher injects at the start of its
	// looks at the clock, a failure every 500ms and a recovery between: once 17 more are
	// injected, it has decided over 4s of the path working. (That it does see a breach on this
	// path is shown below, when the Jabber gateway stops.)
	from := injected(t, reg)
	waitUntil(t, "4s of injected canaries", func() bool { return injected(t, reg) >= from+17 })
	if got := pd.actions(); len(got) != 0 {
		t.Fatalf("PagerDuty events while the path works: %v", got)
	}
	if got := gauge(t, reg, "flapjack_oobetet_breached"); got != 0 {
		t.Fatalf("flapjack_oobetet_breached = %v while the path works", got)
	}
	if rm.countFromOobetet("Self-monitoring CRITICAL") != 0 {
		t.Fatalf("breach told while the path works")
	}

	// The Jabber gateway stops: alerts pile up in jabber_notifications, none reach the room.
	stopJabber()
	stopped := time.Now()
	ev := pd.waitEvents(1)[0]
	took := time.Since(stopped)
	if ev.EventAction != "trigger" {
		t.Fatalf("first PagerDuty event %+v, want a trigger", ev)
	}
	// Last alert seen before the stop, breach max_latency after it, noticed within a tick.
	if limit := 3 * time.Second; took > limit {
		t.Errorf("alarm paged %s after the Jabber gateway stopped; want within max_latency (2s), a tick and some slack", took)
	}
	t.Logf("alarm paged %s after the Jabber gateway stopped", took.Round(time.Millisecond))
	rm.expectFromOobetet("Self-monitoring CRITICAL")
	if got := gauge(t, reg, "flapjack_oobetet_breached"); got != 1 {
		t.Errorf("flapjack_oobetet_breached = %v during the breach", got)
	}

	// The Jabber gateway comes back: the alerts flow again and the incident is resolved.
	jabberStages, err = jabber.Spec.Stages(genv)
	if err != nil {
		t.Fatal(err)
	}
	start(t, jabberStages)
	evs := pd.waitEvents(2)
	if evs[1].EventAction != "resolve" || *evs[1].DedupKey != *evs[0].DedupKey {
		t.Errorf("second PagerDuty event %+v, want the trigger's resolve", evs[1])
	}
	rm.expectFromOobetet("Self-monitoring OK")
	if got := pd.actions(); len(got) != 2 {
		t.Errorf("PagerDuty events %v, want one trigger and one resolve", got)
	}
}

// start runs stages until the test ends, or until the returned stop is called.
func start(t *testing.T, stages []lifecycle.Stage) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, s := range stages {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.Run(ctx); err != nil && ctx.Err() == nil {
				t.Errorf("stage %s: %v", s.Name, err)
			}
		}()
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			done := make(chan struct{})
			go func() { wg.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(15 * time.Second):
				t.Errorf("stages did not stop within 15s")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}
