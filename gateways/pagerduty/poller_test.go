package pagerduty

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/executive"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/schema"
)

// pollEnv is a Redis database whose checks are written by the real executive (on a fake
// clock), a REST server enforcing PagerDuty's incidents API, and pollers built on both.
type pollEnv struct {
	t    *testing.T
	db   *testredis.DB
	keys schema.Keys
	clk  *clock.Fake
	rest *restServer
	x    *executive.Executive
	logs *observer.ObservedLogs
	log  *zap.Logger
}

func newPollEnv(t *testing.T) *pollEnv {
	t.Helper()
	e := &pollEnv{t: t, db: testredis.New(t), keys: schema.NewKeys(""), clk: clock.NewFake(t0)}
	e.rest = newRESTServer(t, e.clk.Now)
	e.rest.token = apiToken
	core, logs := observer.New(zapcore.DebugLevel)
	e.logs, e.log = logs, zap.New(core)
	e.x = executive.New(executive.Options{Pool: e.db.Pool, Keys: e.keys, Config: executive.DefaultConfig(),
		Clock: e.clk, Identity: queue.Identity{Host: "poller-test-executive", PID: 1}, Version: "test"})
	t.Cleanup(func() {
		if _, v := e.rest.snapshot(); len(v) > 0 {
			t.Errorf("REST contract violations: %q", v)
		}
	})
	return e
}

// config points a Config at the REST server.
func (e *pollEnv) config() Config {
	cfg := DefaultConfig()
	cfg.APIBaseURL = e.rest.srv.URL
	cfg.V1APIURLTemplate = e.rest.v1Template()
	cfg.Timeout = 2 * time.Second
	return cfg
}

func (e *pollEnv) poller(cfg Config, m *Metrics) *AckPoller {
	e.t.Helper()
	p, err := NewAckPoller(AckPollerOptions{Config: cfg, Pool: e.db.Pool, Keys: e.keys, Clock: e.clk, Log: e.log, Metrics: m})
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

// send LPUSHes a raw event, as monitoring systems do, and lets the executive process `events`.
func (e *pollEnv) send(raw string) {
	e.t.Helper()
	e.db.Do(e.t, "LPUSH", e.keys.Events(), raw)
	e.process()
}

func (e *pollEnv) process() {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.x.Run(ctx, true); err != nil {
		e.t.Fatalf("executive: %v", err)
	}
}

func (e *pollEnv) check(id, state string) {
	e.t.Helper()
	entity, check, _ := schema.SplitCheckID(id)
	e.send(fmt.Sprintf(`{"entity":%q,"check":%q,"type":"service","state":%q,"summary":"from test"}`, entity, check, state))
}

func (e *pollEnv) ackInFlapjack(id string) {
	e.t.Helper()
	entity, check, _ := schema.SplitCheckID(id)
	e.send(fmt.Sprintf(`{"entity":%q,"check":%q,"type":"action","state":"acknowledgement","summary":"ada: mine","duration":3600}`, entity, check))
}

// contact seeds a contact of entity: media (medium -> address) and contact_pagerduty fields.
func (e *pollEnv) contact(id, entity string, media, pd map[string]string) {
	e.t.Helper()
	conn := e.db.Conn(e.t)
	defer conn.Close()
	entityID, err := roster.EntityID(conn, e.keys, entity)
	if err != nil || entityID == "" {
		e.t.Fatalf("entity %s has no id (send an event first): %v", entity, err)
	}
	e.db.Do(e.t, "HSET", e.keys.Contact(id), "first_name", "Ops "+id, "last_name", "Person", "email", id+"@example.com")
	for k, v := range media {
		e.db.Do(e.t, "HSET", e.keys.ContactMedia(id), k, v)
	}
	for k, v := range pd {
		e.db.Do(e.t, "HSET", e.keys.ContactPagerduty(id), k, v)
	}
	e.db.Do(e.t, "SADD", e.keys.ContactsFor(entityID), id)
	e.db.Do(e.t, "SADD", e.keys.AllContacts(), id)
}

var (
	pdMedia    = map[string]string{"pagerduty": routingKey, "email": "ops@example.com"}
	tokenCreds = map[string]string{"subdomain": "acme", "token": apiToken}
	basicCreds = map[string]string{"subdomain": "acme", "username": "ops", "password": password}
)

// queued returns the events on `events`, oldest first, checking each is a valid event.
func (e *pollEnv) queued() []schema.Event {
	e.t.Helper()
	raw, err := redis.Strings(e.db.Do(e.t, "LRANGE", e.keys.Events(), 0, -1), nil)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []schema.Event
	for i := len(raw) - 1; i >= 0; i-- {
		ev, err := schema.ParseEvent([]byte(raw[i]))
		if err != nil {
			e.t.Fatalf("queued event %s is invalid: %v", raw[i], err)
		}
		out = append(out, ev)
	}
	return out
}

func (e *pollEnv) requests() []restRequest {
	r, _ := e.rest.snapshot()
	return r
}

func runOnce(t *testing.T, p *AckPoller) RunResult {
	t.Helper()
	res, err := p.RunOnce(context.Background())
	if err != nil {
		t.Fatalf("RunOnce: %v", err)
	}
	return res
}

func wantAck(t *testing.T, evs []schema.Event, id, summary string) {
	t.Helper()
	if len(evs) != 1 {
		t.Fatalf("%d events queued, want exactly one acknowledgement: %+v", len(evs), evs)
	}
	ev := evs[0]
	entity, check, _ := schema.SplitCheckID(id)
	if ev.Type != "action" || ev.State != "acknowledgement" || ev.Entity != entity || ev.Check != check ||
		ev.Summary != summary || !ev.HasDuration || ev.Duration != 4*3600 {
		t.Fatalf("queued event = %+v\nwant an acknowledgement of %s, %q, 4h", ev, id, summary)
	}
}

// TestAckPollerAcknowledgesOnce follows one check through its life: acknowledged in
// PagerDuty, the poller queues exactly one acknowledgement; the executive applies it; the
// poller leaves the check alone while flapjack's acknowledgement (by the clock) lasts, and
// looks again once it has ended.
func TestAckPollerAcknowledgesOnce(t *testing.T) {
	t.Parallel()
	e := newPollEnv(t)
	e.check("web-01:HTTP", "critical")
	e.contact("c1", "web-01", pdMedia, tokenCreds)
	e.rest.add(incident{key: "web-01:HTTP", status: "acknowledged", created: t0.Add(-time.Hour),
		acknowledgers: []string{"Bob Builder", "Jane Doe"}})
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	p := e.poller(e.config(), m)

	res := runOnce(t, p)
	if res.Checked != 1 || len(res.Enqueued) != 1 || res.Enqueued[0] != "web-01:HTTP" || res.Errors != 0 {
		t.Fatalf("first run = %+v", res)
	}
	wantAck(t, e.queued(), "web-01:HTTP", "Acknowledged on PagerDuty by Jane Doe")
	reqs := e.requests()
	if len(reqs) != 1 || reqs[0].API != 2 || reqs[0].Auth != "Token token="+apiToken ||
		first(reqs[0].Query, "incident_key") != "web-01:HTTP" || first(reqs[0].Query, "since") != "2026-02-22T12:00:00Z" {
		t.Fatalf("REST requests = %+v", reqs)
	}

	// Within the poll interval no poller runs again.
	if res := runOnce(t, p); res.Skipped != RunRecent {
		t.Fatalf("second run at the same instant = %+v, want skipped (recent)", res)
	}
	// The next interval: the acknowledgement is still on its way (the executive has not run):
	// not queued twice, PagerDuty not even asked.
	e.clk.Advance(10 * time.Second)
	if res := runOnce(t, p); len(res.Enqueued) != 0 || res.Checked != 0 {
		t.Fatalf("run with an acknowledgement pending = %+v", res)
	}
	if n := len(e.queued()); n != 1 {
		t.Fatalf("%d events queued, want still 1", n)
	}

	// The executive applies it: the check is acknowledged (unscheduled maintenance, 4h).
	e.process()
	e.clk.Advance(10 * time.Minute)
	if res := runOnce(t, p); res.Checked != 0 || len(res.Enqueued) != 0 {
		t.Fatalf("run on an acknowledged check = %+v", res)
	}
	if n := len(e.requests()); n != 1 {
		t.Fatalf("%d REST requests, want PagerDuty not asked about an acknowledged check", n)
	}

	// Four hours later flapjack's acknowledgement is over by the clock (whatever Redis TTLs
	// say); the incident is still acknowledged in PagerDuty, so it is acknowledged again.
	e.clk.Advance(4 * time.Hour)
	if res := runOnce(t, p); len(res.Enqueued) != 1 {
		t.Fatalf("run after the acknowledgement ended = %+v", res)
	}
	wantAck(t, e.queued(), "web-01:HTTP", "Acknowledged on PagerDuty by Jane Doe")

	if got := testutil.ToFloat64(m.acks); got != 2 {
		t.Errorf("acks enqueued metric = %v, want 2", got)
	}
	if got := testutil.ToFloat64(m.runs.WithLabelValues(RunCompleted)); got != 4 {
		t.Errorf("completed runs = %v, want 4", got)
	}
	if got := testutil.ToFloat64(m.runs.WithLabelValues(RunRecent)); got != 1 {
		t.Errorf("recent runs = %v, want 1", got)
	}
	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
		t.Errorf("metrics lint: %v %+v", err, problems)
	}
}

// TestAckPollerLeavesAlone: checks that must produce no acknowledgement.
func TestAckPollerLeavesAlone(t *testing.T) {
	t.Parallel()
	acked := incident{key: "web-01:HTTP", status: "acknowledged", created: t0.Add(-time.Hour), acknowledgers: []string{"Jane Doe"}}
	tests := []struct {
		name      string
		setup     func(e *pollEnv)
		incident  incident
		wantAsked bool // PagerDuty is asked (the check qualifies, the incident does not)
	}{
		{name: "acknowledged in flapjack", incident: acked, setup: func(e *pollEnv) {
			e.check("web-01:HTTP", "critical")
			e.ackInFlapjack("web-01:HTTP")
			e.contact("c1", "web-01", pdMedia, tokenCreds)
		}},
		{name: "recovered check", incident: acked, setup: func(e *pollEnv) {
			e.check("web-01:HTTP", "critical")
			e.check("web-01:HTTP", "ok")
			e.contact("c1", "web-01", pdMedia, tokenCreds)
		}},
		{name: "no PagerDuty credentials", incident: acked, setup: func(e *pollEnv) {
			e.check("web-01:HTTP", "critical")
			e.contact("c1", "web-01", pdMedia, nil)
		}},
		{name: "credentials without a subdomain", incident: acked, setup: func(e *pollEnv) {
			e.check("web-01:HTTP", "critical")
			e.contact("c1", "web-01", pdMedia, map[string]string{"token": apiToken})
		}},
		{name: "credentials but no pagerduty medium", incident: acked, setup: func(e *pollEnv) {
			e.check("web-01:HTTP", "critical")
			e.contact("c1", "web-01", map[string]string{"email": "ops@example.com"}, tokenCreds)
		}},
		{name: "contacts of another entity", incident: acked, setup: func(e *pollEnv) {
			e.check("web-01:HTTP", "critical")
			e.check("db-01:HTTP", "ok")
			e.contact("c1", "db-01", pdMedia, tokenCreds)
		}},
		{name: "incident triggered, not acknowledged", wantAsked: true,
			incident: incident{key: "web-01:HTTP", status: "triggered", created: t0.Add(-time.Hour)},
			setup: func(e *pollEnv) {
				e.check("web-01:HTTP", "critical")
				e.contact("c1", "web-01", pdMedia, tokenCreds)
			}},
		{name: "incident older than the window", wantAsked: true,
			incident: incident{key: "web-01:HTTP", status: "acknowledged", created: t0.Add(-8 * 24 * time.Hour)},
			setup: func(e *pollEnv) {
				e.check("web-01:HTTP", "critical")
				e.contact("c1", "web-01", pdMedia, tokenCreds)
			}},
		{name: "incident of another check", wantAsked: true,
			incident: incident{key: "web-01:PING", status: "acknowledged", created: t0.Add(-time.Hour)},
			setup: func(e *pollEnv) {
				e.check("web-01:HTTP", "critical")
				e.contact("c1", "web-01", pdMedia, tokenCreds)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newPollEnv(t)
			tt.setup(e)
			e.rest.add(tt.incident)
			if n := len(e.queued()); n != 0 {
				t.Fatalf("setup left %d events", n)
			}
			res := runOnce(t, e.poller(e.config(), nil))
			if len(res.Enqueued) != 0 || res.Errors != 0 {
				t.Fatalf("run = %+v, want nothing enqueued", res)
			}
			if n := len(e.queued()); n != 0 {
				t.Fatalf("%d events queued: %+v", n, e.queued())
			}
			if asked := len(e.requests()) > 0; asked != tt.wantAsked {
				t.Fatalf("PagerDuty asked: %v, want %v", asked, tt.wantAsked)
			}
		})
	}
}

// TestAckPollerV1BasicAuth: contacts with username and password (old subdomain accounts) are
// looked up through REST v1 with basic auth; the acknowledger's name comes from
// last_status_change_by.
func TestAckPollerV1BasicAuth(t *testing.T) {
	t.Parallel()
	e := newPollEnv(t)
	e.rest.basic["acme"] = "ops:" + password
	e.check("web-01:HTTP", "warning")
	e.contact("c1", "web-01", pdMedia, basicCreds)
	e.rest.add(incident{key: "web-01:HTTP", status: "acknowledged", created: t0.Add(-time.Hour), lastChangeName: "Bob Ops"})
	res := runOnce(t, e.poller(e.config(), nil))
	if len(res.Enqueued) != 1 || res.Errors != 0 {
		t.Fatalf("run = %+v", res)
	}
	wantAck(t, e.queued(), "web-01:HTTP", "Acknowledged on PagerDuty by Bob Ops")
	reqs := e.requests()
	if len(reqs) != 1 || reqs[0].API != 1 || reqs[0].Path != "/v1/acme/api/v1/incidents" || !strings.HasPrefix(reqs[0].Auth, "Basic ") {
		t.Fatalf("REST requests = %+v", reqs)
	}
}

// TestAckPollerTriesEveryCredentialSet: unlike Flapjack (first set only), every distinct set
// of the check's contacts is tried; a set PagerDuty refuses is not used again in the run.
func TestAckPollerTriesEveryCredentialSet(t *testing.T) {
	t.Parallel()
	e := newPollEnv(t)
	wrong := map[string]string{"subdomain": "acme", "token": "WR0NG-t0ken-000000000000"}
	for _, id := range []string{"web-01:HTTP", "web-01:PING"} {
		e.check(id, "critical")
		e.rest.add(incident{key: id, status: "acknowledged", created: t0.Add(-time.Hour)})
	}
	e.contact("c1", "web-01", pdMedia, wrong)
	e.contact("c2", "web-01", pdMedia, wrong) // same set: asked once
	e.contact("c3", "web-01", pdMedia, tokenCreds)
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	res := runOnce(t, e.poller(e.config(), m))
	if len(res.Enqueued) != 2 || res.Errors != 1 || res.Checked != 2 {
		t.Fatalf("run = %+v, want both checks acknowledged after one refusal", res)
	}
	evs := e.queued()
	if len(evs) != 2 || evs[0].Summary != AckSummary || evs[1].Summary != AckSummary {
		t.Fatalf("queued = %+v", evs)
	}
	var auths []string
	for _, r := range e.requests() {
		auths = append(auths, strings.TrimPrefix(r.Auth, "Token token="))
	}
	if want := []string{"WR0NG-t0ken-000000000000", apiToken, apiToken}; strings.Join(auths, ",") != strings.Join(want, ",") {
		t.Fatalf("tokens used = %q, want %q", auths, want)
	}
	if got := testutil.ToFloat64(m.errors.WithLabelValues(ErrorAPI)); got != 1 {
		t.Errorf("api errors = %v, want 1", got)
	}
}

// TestAckPollerAPIErrorsDoNotStopTheRun: a failing PagerDuty costs each check an error, and
// the run goes on.
func TestAckPollerAPIErrorsDoNotStopTheRun(t *testing.T) {
	t.Parallel()
	e := newPollEnv(t)
	e.rest.forceCode = 500
	for _, id := range []string{"web-01:HTTP", "web-01:PING", "web-01:SSH"} {
		e.check(id, "critical")
	}
	e.contact("c1", "web-01", pdMedia, tokenCreds)
	res := runOnce(t, e.poller(e.config(), nil))
	if res.Checked != 3 || res.Errors != 3 || len(res.Enqueued) != 0 {
		t.Fatalf("run = %+v", res)
	}
}

// TestAckPollerFollowsPages: the client does not trust the server-side status filter and
// follows `more` until it finds an acknowledged incident.
func TestAckPollerFollowsPages(t *testing.T) {
	t.Parallel()
	e := newPollEnv(t)
	e.rest.trustless, e.rest.pageSize = true, 1
	e.check("web-01:HTTP", "critical")
	e.contact("c1", "web-01", pdMedia, tokenCreds)
	e.rest.add(incident{key: "web-01:HTTP", status: "resolved", created: t0.Add(-3 * time.Hour)})
	e.rest.add(incident{key: "web-01:HTTP", status: "triggered", created: t0.Add(-2 * time.Hour)})
	e.rest.add(incident{key: "web-01:HTTP", status: "acknowledged", created: t0.Add(-time.Hour), acknowledgers: []string{"Jane Doe"}})
	res := runOnce(t, e.poller(e.config(), nil))
	if len(res.Enqueued) != 1 {
		t.Fatalf("run = %+v", res)
	}
	wantAck(t, e.queued(), "web-01:HTTP", "Acknowledged on PagerDuty by Jane Doe")
	var offsets []string
	for _, r := range e.requests() {
		offsets = append(offsets, first(r.Query, "offset"))
	}
	if strings.Join(offsets, ",") != "0,1,2" {
		t.Fatalf("offsets asked = %v", offsets)
	}
}

// TestAckPollersShareOneLock: two pollers (as on two instances) on one Redis: while one runs
// the other skips, and one acknowledgement is queued in all.
func TestAckPollersShareOneLock(t *testing.T) {
	t.Parallel()
	e := newPollEnv(t)
	e.check("web-01:HTTP", "critical")
	e.contact("c1", "web-01", pdMedia, tokenCreds)
	e.rest.add(incident{key: "web-01:HTTP", status: "acknowledged", created: t0.Add(-time.Hour)})
	e.rest.entered, e.rest.gate = make(chan struct{}, 4), make(chan struct{})
	p1, p2 := e.poller(e.config(), nil), e.poller(e.config(), nil)

	done := make(chan RunResult)
	go func() { res, _ := p1.RunOnce(context.Background()); done <- res }()
	<-e.rest.entered // p1 holds the lock and is asking PagerDuty
	if res := runOnce(t, p2); res.Skipped != RunLocked {
		t.Fatalf("second poller = %+v, want skipped (locked)", res)
	}
	token, err := redis.String(e.db.Do(t, "GET", e.keys.PagerdutyAcksLock()), nil)
	ttl, _ := redis.Int(e.db.Do(t, "TTL", e.keys.PagerdutyAcksLock()), nil)
	if err != nil || len(token) != 32 || ttl < 3500 || ttl > 3600 {
		t.Fatalf("lock = %q (ttl %d, %v), want a random token expiring in 1h", token, ttl, err)
	}
	close(e.rest.gate)
	if res := <-done; len(res.Enqueued) != 1 {
		t.Fatalf("first poller = %+v", res)
	}
	if res := runOnce(t, p2); res.Skipped != RunRecent {
		t.Fatalf("second poller right after = %+v, want skipped (recent)", res)
	}
	// The executive applies the acknowledgement; at the next interval, the other poller finds
	// nothing to do.
	e.process()
	e.clk.Advance(10 * time.Second)
	if res := runOnce(t, p2); res.Skipped != "" || len(res.Enqueued) != 0 {
		t.Fatalf("second poller next interval = %+v", res)
	}
	if n := len(e.requests()); n != 1 {
		t.Fatalf("PagerDuty asked %d times, want once", n)
	}
}

// TestAckPollerRunLoops: two pollers' Run loops on one Redis, polling every 20ms of wall time
// while the decision clock stands still: exactly one run, one acknowledgement, however many
// times they poll after it (the test waits for four polls skipped as recent).
func TestAckPollerRunLoops(t *testing.T) {
	t.Parallel()
	e := newPollEnv(t)
	e.check("web-01:HTTP", "critical")
	e.contact("c1", "web-01", pdMedia, tokenCreds)
	e.rest.add(incident{key: "web-01:HTTP", status: "acknowledged", created: t0.Add(-time.Hour)})
	cfg := e.config()
	cfg.AckPollInterval = 20 * time.Millisecond
	m := NewMetrics(nil)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 2 {
		p := e.poller(cfg, m)
		wg.Add(1)
		go func() { defer wg.Done(); _ = p.Run(ctx) }()
	}
	for deadline := time.Now().Add(10 * time.Second); testutil.ToFloat64(m.runs.WithLabelValues(RunCompleted)) < 1 ||
		testutil.ToFloat64(m.runs.WithLabelValues(RunRecent)) < 4; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no run and four recent skips within 10s: completed %v, recent %v",
				testutil.ToFloat64(m.runs.WithLabelValues(RunCompleted)), testutil.ToFloat64(m.runs.WithLabelValues(RunRecent)))
		}
	}
	cancel()
	wg.Wait()
	if n := len(e.queued()); n != 1 {
		t.Fatalf("%d events queued, want 1", n)
	}
	if got := testutil.ToFloat64(m.runs.WithLabelValues(RunCompleted)); got != 1 {
		t.Fatalf("completed runs = %v, want 1", got)
	}

}

func TestAckPollerDisabled(t *testing.T) {
	t.Parallel()
	e := newPollEnv(t)
	cfg := e.config()
	cfg.AckPollInterval = 0
	p := e.poller(cfg, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := p.Run(ctx); err != nil {
		t.Fatalf("Run = %v", err)
	}
	if n, _ := redis.Int(e.db.Do(t, "EXISTS", e.keys.PagerdutyAcksLock()), nil); n != 0 {
		t.Fatalf("a disabled poller touched the lock")
	}
}

// TestLock pins the lock protocol on sem_pagerduty_acks_running.
func TestLock(t *testing.T) {
	t.Parallel()
	db := testredis.New(t)
	key := schema.NewKeys("").PagerdutyAcksLock()
	ctx := context.Background()
	take := func(at time.Time) (*lock, int) {
		t.Helper()
		l, outcome, err := tryLock(ctx, db.Pool, key, at, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		return l, outcome
	}
	l1, got := take(t0)
	if got != lockTaken {
		t.Fatalf("first take = %d", got)
	}
	if _, got := take(t0); got != lockBusy {
		t.Fatalf("take while held = %d, want busy", got)
	}
	if ok, err := l1.release(ctx, t0.Add(10*time.Second), time.Hour); !ok || err != nil {
		t.Fatalf("release = %v %v", ok, err)
	}
	if v, _ := redis.String(db.Do(t, "GET", key), nil); v != fmt.Sprintf("idle:%d", t0.Add(10*time.Second).UnixMilli()) {
		t.Fatalf("released lock value = %q", v)
	}
	if _, got := take(t0.Add(9 * time.Second)); got != lockRecent {
		t.Fatalf("take before the next run = %d, want recent", got)
	}
	l2, got := take(t0.Add(10 * time.Second))
	if got != lockTaken {
		t.Fatalf("take at the next run = %d", got)
	}
	// A stale holder (its lock expired and was retaken) cannot release the new holder's lock.
	if ok, _ := l1.release(ctx, time.Time{}, time.Hour); ok {
		t.Fatalf("stale release succeeded")
	}
	if ok, _ := l2.release(ctx, time.Time{}, time.Hour); !ok {
		t.Fatalf("release without a next run failed")
	}
	if n, _ := redis.Int(db.Do(t, "EXISTS", key), nil); n != 0 {
		t.Fatalf("lock still exists")
	}
	// A Flapjack 1.x poller running (value "true") keeps us out.
	db.Do(t, "SET", key, "true", "EX", 300)
	if _, got := take(t0.Add(time.Hour)); got != lockBusy {
		t.Fatalf("take while Flapjack 1.x runs = %d, want busy", got)
	}
}

// TestAckPollersOfSeveralInstancesQueueOneAck: pollers of two server processes take turns
// (they share the lock) while the executive lags: the first one's acknowledgement event is still
// queued, so the check still reads failing and unacknowledged to the second. The second must not
// queue another: what was queued is remembered in Redis (pagerduty_acks_queued), not in one
// process. The memory is judged by the injected clock, not by its Redis expiry.
func TestAckPollersOfSeveralInstancesQueueOneAck(t *testing.T) {
	t.Parallel()
	e := newPollEnv(t)
	e.check("web-01:HTTP", "critical")
	e.contact("c1", "web-01", pdMedia, tokenCreds)
	e.rest.add(incident{key: "web-01:HTTP", status: "acknowledged", created: t0.Add(-time.Hour), acknowledgers: []string{"Jane Doe"}})
	p1, p2 := e.poller(e.config(), nil), e.poller(e.config(), nil)

	if res := runOnce(t, p1); len(res.Enqueued) != 1 {
		t.Fatalf("first instance = %+v", res)
	}
	for i, p := range []*AckPoller{p2, p1, p2} {
		e.clk.Advance(10 * time.Second)
		if res := runOnce(t, p); res.Skipped != "" || res.Checked != 0 || len(res.Enqueued) != 0 {
			t.Fatalf("poll %d while the executive lags = %+v, want the check left alone", i+2, res)
		}
	}
	wantAck(t, e.queued(), "web-01:HTTP", "Acknowledged on PagerDuty by Jane Doe")
	if n := len(e.requests()); n != 1 {
		t.Fatalf("PagerDuty asked %d times, want once", n)
	}
	key := e.keys.PagerdutyAcksQueued()
	at, err := redis.Int64(e.db.Do(t, "HGET", key, "web-01:HTTP"), nil)
	ttl, _ := redis.Int64(e.db.Do(t, "PTTL", key), nil)
	if err != nil || at != t0.UnixMilli() || ttl <= 0 || ttl > queuedExpiry.Milliseconds() {
		t.Fatalf("%s web-01:HTTP = %d (%v), PTTL %d ms; want the queueing time %d and an expiry", key, at, err, ttl, t0.UnixMilli())
	}

	// Still unapplied once the hold is over by the clock (the Redis expiry has not fired): one
	// more acknowledgement is queued, as documented for a stuck events queue.
	e.clk.Advance(PendingAckHold)
	if res := runOnce(t, p2); len(res.Enqueued) != 1 {
		t.Fatalf("poll after the hold = %+v, want a second acknowledgement", res)
	}
	// The executive applies them: the check is acknowledged, and the memory of it is dropped.
	e.process()
	e.clk.Advance(10 * time.Second)
	if res := runOnce(t, p1); res.Checked != 0 || len(res.Enqueued) != 0 {
		t.Fatalf("poll after the executive ran = %+v", res)
	}
	if n, _ := redis.Int(e.db.Do(t, "HLEN", key), nil); n != 0 {
		t.Fatalf("%s keeps %d entries after the acknowledgement was applied", key, n)
	}
}

// TestAckPollersOverlapping: two pollers whose runs overlap (a lock lost to its expiry) still
// queue one acknowledgement: the check is claimed in Redis before the event is pushed.
func TestAckPollersOverlapping(t *testing.T) {
	t.Parallel()
	e := newPollEnv(t)
	e.check("web-01:HTTP", "critical")
	e.contact("c1", "web-01", pdMedia, tokenCreds)
	e.rest.add(incident{key: "web-01:HTTP", status: "acknowledged", created: t0.Add(-time.Hour)})
	e.rest.entered, e.rest.gate = make(chan struct{}, 4), make(chan struct{})
	p1, p2 := e.poller(e.config(), nil), e.poller(e.config(), nil)
	done := make(chan RunResult, 2)
	go func() { res, _ := p1.RunOnce(context.Background()); done <- res }()
	<-e.rest.entered
	e.db.Do(t, "DEL", e.keys.PagerdutyAcksLock()) // p1's lock "expired"
	go func() { res, _ := p2.RunOnce(context.Background()); done <- res }()
	<-e.rest.entered // both are asking PagerDuty
	close(e.rest.gate)
	r1, r2 := <-done, <-done
	if r1.Checked != 1 || r2.Checked != 1 || len(r1.Enqueued)+len(r2.Enqueued) != 1 {
		t.Fatalf("overlapping runs = %+v and %+v, want both asking and one acknowledgement", r1, r2)
	}
	if n := len(e.queued()); n != 1 {
		t.Fatalf("%d events queued, want 1", n)
	}
}
