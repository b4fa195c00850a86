package notifier

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/events"
	"github.com/flapjackgo/flapjack/executive"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/retention"
	"github.com/flapjackgo/flapjack/schema"
)

// escalationWorld has checks failing on web-N, each escalated by policy "oncall": ada at once,
// bob after 15 minutes.
type escalationWorld struct {
	t     *testing.T
	db    *testredis.DB
	keys  schema.Keys
	clk   *clock.Fake
	start time.Time
}

const escalationChecks = 40

func newEscalationWorld(t *testing.T) *escalationWorld {
	t.Helper()
	w := &escalationWorld{t: t, db: testredis.New(t), keys: schema.NewKeys(""), start: time.Unix(1767607200, 0)}
	w.clk = clock.NewFake(w.start)
	for _, id := range []string{"ada", "bob"} {
		w.db.Do(t, "SADD", w.keys.AllContacts(), id)
		w.db.Do(t, "HSET", w.keys.Contact(id), "first_name", id)
		w.db.Do(t, "HSET", w.keys.ContactMedia(id), "sms", "+4477009000"+id)
	}
	conn := w.db.Conn(t)
	defer conn.Close()
	res, err := roster.PutEscalationPolicies(context.Background(), conn, w.keys, []roster.EscalationPolicy{{
		ID: "oncall", RegexEntities: []string{"^web-"},
		Steps: []roster.EscalationStep{{Delay: 0, Contacts: []string{"ada"}}, {Delay: 900, Contacts: []string{"bob"}}},
	}}, roster.ReplaceOptions{})
	if err != nil || len(res.Problems) > 0 {
		t.Fatalf("put policy: %v %v", err, res.Problems)
	}
	xcfg := executive.DefaultConfig()
	xcfg.InitialFailureDelay = 0
	x := executive.New(executive.Options{Pool: w.db.Pool, Keys: w.keys, Config: xcfg, Clock: w.clk,
		HeartbeatClock: clock.Real{}, Identity: queue.Identity{Host: "x", PID: 1}})
	pub := events.NewPublisher(w.db.Pool, w.keys, "events")
	ctx := context.Background()
	for i := range escalationChecks {
		for _, state := range []string{"ok", "critical"} {
			raw := fmt.Sprintf(`{"entity":"web-%d","check":"HTTP","type":"service","state":%q,"time":%d}`, i, state, w.start.Unix())
			if _, err := pub.PublishRaw(ctx, []byte(raw)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for {
		n, err := x.ProcessNext(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	return w
}

func (w *escalationWorld) notifier(pid int) *Notifier {
	cfg := DefaultConfig()
	cfg.MediaQueues = map[string]string{"sms": "sms_notifications"}
	return New(Options{Pool: w.db.Pool, Keys: w.keys, Config: cfg, Clock: w.clk, HeartbeatClock: clock.Real{},
		Identity: queue.Identity{Host: "n", PID: pid}})
}

// route lets nt route every queued notification.
func (w *escalationWorld) route(nt *Notifier) {
	w.t.Helper()
	for {
		res, err := nt.ProcessNextResult(context.Background(), 0)
		if err != nil {
			w.t.Fatal(err)
		}
		if res.Finished == 0 {
			return
		}
	}
}

// smsAlerts counts the alerts queued per contact and escalation step.
func (w *escalationWorld) smsAlerts() map[string]int {
	raws, err := redis.Strings(w.db.Do(w.t, "LRANGE", w.keys.Queue("sms_notifications"), 0, -1), nil)
	if err != nil {
		w.t.Fatal(err)
	}
	out := map[string]int{}
	for _, raw := range raws {
		a, err := schema.ParseAlert([]byte(raw))
		if err != nil {
			w.t.Fatal(err)
		}
		step := 0
		if a.Escalation != nil {
			step = a.Escalation.Step
		}
		out[fmt.Sprintf("%s %s step %d", a.EventID, a.ContactID, step)]++
	}
	return out
}

func (w *escalationWorld) wantEachOnce(steps map[int]string) {
	w.t.Helper()
	got := w.smsAlerts()
	want := 0
	for i := range escalationChecks {
		for step, contact := range steps {
			key := fmt.Sprintf("web-%d:HTTP %s step %d", i, contact, step)
			if got[key] != 1 {
				w.t.Errorf("%s: %d alerts, want 1", key, got[key])
			}
			want++
		}
	}
	if total := len(got); total != want {
		w.t.Errorf("%d distinct alerts queued, want %d: %v", total, want, got)
	}
}

// TestEscalationStepsFireOnceThroughACrashAndConcurrentNotifiers: notifier A decides every due
// step 1 (the claim) and dies before its write; B fires them all; A's late writes are refused;
// then at +15 minutes A and B tick concurrently, again and again: every step is alerted once.
func TestEscalationStepsFireOnceThroughACrashAndConcurrentNotifiers(t *testing.T) {
	t.Parallel()
	w := newEscalationWorld(t)
	ctx := context.Background()
	a, b := w.notifier(1), w.notifier(2)
	w.route(a)
	conn := w.db.Conn(t)
	defer conn.Close()
	due, err := roster.EscalationsDueAt(conn, w.keys, w.clk.Now().Unix(), 1000)
	if err != nil || len(due) != escalationChecks {
		t.Fatalf("%d ladders due (%v), want %d", len(due), err, escalationChecks)
	}
	tk, err := a.planTick(conn, due, w.clk.Now())
	if err != nil || len(tk.plans) != escalationChecks {
		t.Fatalf("A decided %v steps (%v), want %d", tk, err, escalationChecks)
	}
	abandoned := []model.Record{tk.record}
	if got := len(w.smsAlerts()); got != 0 {
		t.Fatalf("%d alerts queued by decisions that were never written", got)
	}
	res, err := b.Escalate(ctx)
	if err != nil || len(res.Alerts) != escalationChecks {
		t.Fatalf("B fired %d alerts (%v), want %d", len(res.Alerts), err, escalationChecks)
	}
	statuses, err := model.Apply(conn, model.ApplyTarget{}, abandoned)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range statuses {
		if s != model.Conflict {
			t.Fatalf("A's late write %d: status %v, want a conflict", i, s)
		}
	}
	if res, err := w.notifier(3).Escalate(ctx); err != nil || len(res.Alerts) != 0 {
		t.Fatalf("a restarted notifier fired %d alerts (%v)", len(res.Alerts), err)
	}
	w.wantEachOnce(map[int]string{1: "ada"})

	w.clk.Set(w.start.Add(15 * time.Minute))
	var wg sync.WaitGroup
	c := w.notifier(4)
	for _, n := range []*Notifier{a, b, c} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				if _, err := n.Escalate(ctx); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	w.wantEachOnce(map[int]string{1: "ada", 2: "bob"})
	if got := testutil.ToFloat64(a.m.escalationsStarted); got != escalationChecks {
		t.Errorf("escalations started %v, want %d", got, escalationChecks)
	}
	if got := testutil.ToFloat64(b.m.escalationSteps.WithLabelValues("1")); got != escalationChecks {
		t.Errorf("B fired step 1 %v times, want %d", got, escalationChecks)
	}
	step2 := 0.0
	for _, n := range []*Notifier{a, b, c} {
		step2 += testutil.ToFloat64(n.m.escalationSteps.WithLabelValues("2"))
	}
	if step2 != escalationChecks {
		t.Errorf("step 2 fired %v times in all, want %d", step2, escalationChecks)
	}
	// Ladders with no step to come stay at +inf; a finite upper bound rather than "(+inf", which
	// the embedded Redis (miniredis) does not treat as exclusive.
	n, _ := redis.Int(w.db.Do(t, "ZCOUNT", w.keys.EscalationsDue(), "-inf", 1<<53), nil)
	if n != 0 {
		t.Errorf("%d ladders still have a step due", n)
	}
}

// TestABadLadderDoesNotWedgeTheTick: a ladder whose stored notification cannot be read (written
// by another tool) leaves the due set with an error logged; the other ladders fire.
func TestABadLadderDoesNotWedgeTheTick(t *testing.T) {
	t.Parallel()
	w := newEscalationWorld(t)
	ctx := context.Background()
	a := w.notifier(1)
	w.route(a)
	w.db.Do(t, "HSET", w.keys.EscalationLadder("oncall", "web-0:HTTP"), "notification", "{not json")
	res, err := a.Escalate(ctx)
	if err != nil || len(res.Alerts) != escalationChecks-1 {
		t.Fatalf("fired %d alerts (%v), want %d", len(res.Alerts), err, escalationChecks-1)
	}
	if n, _ := redis.Int(w.db.Do(t, "ZSCORE", w.keys.EscalationsDue(), "oncall:web-0:HTTP"), nil); n != 0 {
		t.Errorf("the bad ladder is still due (%d)", n)
	}
}

// TestTheTickStopsLaddersOfDisabledAndMaintainedChecks: the tick reads each due check's state,
// enabled flag and maintenance windows: a disabled check and one in scheduled maintenance stop
// their ladders; a check whose only window has ended, and the rest, fire.
func TestTheTickStopsLaddersOfDisabledAndMaintainedChecks(t *testing.T) {
	t.Parallel()
	w := newEscalationWorld(t)
	ctx := context.Background()
	a := w.notifier(1)
	w.route(a)
	conn := w.db.Conn(t)
	defer conn.Close()
	w.db.Do(t, "ZREM", w.keys.CurrentChecks("web-1"), "HTTP")
	now := w.clk.Now()
	if err := checkstate.CreateScheduledMaintenance(conn, w.keys, "web-2", "HTTP", now.Add(-time.Minute), time.Hour, "deploy", now); err != nil {
		t.Fatal(err)
	}
	if err := checkstate.CreateScheduledMaintenance(conn, w.keys, "web-3", "HTTP", now.Add(-2*time.Hour), time.Hour, "old", now); err != nil {
		t.Fatal(err)
	}
	res, err := a.Escalate(ctx)
	if err != nil || len(res.Alerts) != escalationChecks-2 {
		t.Fatalf("fired %d alerts (%v), want %d", len(res.Alerts), err, escalationChecks-2)
	}
	for check, want := range map[string]string{"web-1:HTTP": roster.StopDisabled, "web-2:HTTP": roster.StopMaintenance, "web-3:HTTP": ""} {
		ls, err := roster.LaddersOf(conn, w.keys, check)
		if err != nil || len(ls) != 1 {
			t.Fatalf("%s: ladders %v (%v)", check, ls, err)
		}
		if ls[0].StoppedReason != want {
			t.Errorf("%s: stopped for %q, want %q", check, ls[0].StoppedReason, want)
		}
		if want == "" && ls[0].Fired != 1 {
			t.Errorf("%s: %d steps fired, want 1", check, ls[0].Fired)
		}
	}
}

// TestOnePagePerContactMediumAndCheckPerTick: at +15 minutes three policies of each check page
// bob on sms in the same tick (oncall step 2, zzz step 2, leads step 1): bob gets one alert per
// check, naming the highest step, the tie going to the policy id sorting first; every ladder
// moves on, and the others' explain says who paged.
func TestOnePagePerContactMediumAndCheckPerTick(t *testing.T) {
	t.Parallel()
	w := newEscalationWorld(t)
	ctx := context.Background()
	conn := w.db.Conn(t)
	defer conn.Close()
	w.db.Do(t, "SADD", w.keys.AllContacts(), "carol")
	w.db.Do(t, "HSET", w.keys.Contact("carol"), "first_name", "carol")
	res, err := roster.PutEscalationPolicies(ctx, conn, w.keys, []roster.EscalationPolicy{
		{ID: "leads", RegexEntities: []string{"^web-"}, Steps: []roster.EscalationStep{{Delay: 900, Contacts: []string{"bob"}}}},
		{ID: "zzz", RegexEntities: []string{"^web-"}, Steps: []roster.EscalationStep{{Delay: 0, Contacts: []string{"carol"}},
			{Delay: 900, Contacts: []string{"bob"}}}},
	}, roster.ReplaceOptions{})
	if err != nil || len(res.Problems) > 0 {
		t.Fatalf("put policies: %v %v", err, res.Problems)
	}
	a := w.notifier(1)
	w.route(a)
	if _, err := a.Escalate(ctx); err != nil {
		t.Fatal(err)
	}
	w.db.Do(t, "DEL", w.keys.Queue("sms_notifications"))
	w.clk.Set(w.start.Add(15 * time.Minute))
	r, err := a.Escalate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Alerts) != escalationChecks {
		t.Errorf("%d alerts, want one per check (%d)", len(r.Alerts), escalationChecks)
	}
	for _, al := range r.Alerts {
		if al.ContactID != "bob" || al.Escalation == nil || al.Escalation.PolicyID != "oncall" || al.Escalation.Step != 2 {
			t.Errorf("alert to %s for %s names %+v, want bob paged by oncall step 2", al.ContactID, al.EventID, al.Escalation)
		}
	}
	got := w.smsAlerts()
	for i := range escalationChecks {
		if n := got[fmt.Sprintf("web-%d:HTTP bob step 2", i)]; n != 1 {
			t.Errorf("web-%d: bob paged %d times for step 2", i, n)
		}
	}
	for id, fired := range map[string]int{"leads": 1, "zzz": 2} {
		ls, err := roster.ReadLadders(conn, w.keys, [][2]string{{id, "web-0:HTTP"}})
		if err != nil || ls[0].Fired != fired {
			t.Errorf("%s ladder of web-0 did not move on: %+v (%v)", id, ls, err)
		}
	}
	explain, _ := redis.Strings(w.db.Do(t, "LRANGE", w.keys.Explain("web-0:HTTP"), 0, -1), nil)
	found := false
	for _, e := range explain {
		found = found || strings.Contains(e, "paged once in this tick, by escalation oncall step 2")
	}
	if !found {
		t.Errorf("no explain entry says who paged bob: %v", explain)
	}
}

// TestRetentionForgetsLaddersTheNotifierStopped: a recovery stops web-0's ladder and a tick
// stops web-1's (disabled, nobody told); both are filed in escalations_stopped, and a retention
// sweep past the restart window forgets web-0's (ladder and check_escalations entry) and keeps
// web-1's while it fails; the ladders in progress are not touched.
func TestRetentionForgetsLaddersTheNotifierStopped(t *testing.T) {
	t.Parallel()
	w := newEscalationWorld(t)
	ctx := context.Background()
	a := w.notifier(1)
	w.route(a)
	if _, err := a.Escalate(ctx); err != nil {
		t.Fatal(err)
	}
	w.clk.Set(w.start.Add(5 * time.Minute))
	pub := events.NewPublisher(w.db.Pool, w.keys, "events")
	if _, err := pub.PublishRaw(ctx, []byte(fmt.Sprintf(`{"entity":"web-0","check":"HTTP","type":"service","state":"ok","time":%d}`,
		w.clk.Now().Unix()))); err != nil {
		t.Fatal(err)
	}
	x := executive.New(executive.Options{Pool: w.db.Pool, Keys: w.keys, Config: executive.DefaultConfig(), Clock: w.clk,
		HeartbeatClock: clock.Real{}, Identity: queue.Identity{Host: "x", PID: 2}})
	if n, err := x.ProcessNext(ctx, 0); err != nil || n != 1 {
		t.Fatalf("executive processed %d (%v)", n, err)
	}
	w.route(a)
	w.db.Do(t, "ZREM", w.keys.CurrentChecks("web-1"), "HTTP")
	w.clk.Set(w.start.Add(15 * time.Minute))
	if _, err := a.Escalate(ctx); err != nil {
		t.Fatal(err)
	}
	indexed, _ := redis.Strings(w.db.Do(t, "ZRANGE", w.keys.EscalationsStopped(), 0, -1), nil)
	if fmt.Sprint(indexed) != "[oncall:web-0:HTTP oncall:web-1:HTTP]" {
		t.Fatalf("escalations_stopped holds %v", indexed)
	}
	sweep := func() retention.Stats {
		s := &retention.Sweeper{Pool: w.db.Pool, Keys: w.keys, Clock: w.clk, Log: zap.NewNop()}
		st, err := s.Sweep(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	if st := sweep(); st.Ladders != 0 {
		t.Fatalf("a sweep within the restart window forgot %d ladders", st.Ladders)
	}
	w.clk.Set(w.start.Add(5*time.Minute + time.Duration(roster.DefaultRestartAfter+1)*time.Second))
	if st := sweep(); st.Ladders != 1 {
		t.Errorf("the sweep forgot %d ladders, want web-0's", st.Ladders)
	}
	for check, want := range map[string]bool{"web-0:HTTP": false, "web-1:HTTP": true, "web-2:HTTP": true} {
		ls, err := roster.LaddersOf(w.db.Conn(t), w.keys, check)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(ls) == 1 && ls[0].Exists; got != want {
			t.Errorf("%s: ladder kept %v, want %v (%+v)", check, got, want, ls)
		}
	}
}

// TestTheTickHonoursIntervalKeys: a drop_alerts_for_contact key set by someone else (a manual
// hook) suppresses that step's page to ada on sms for web-3 only; the other checks page her.
func TestTheTickHonoursIntervalKeys(t *testing.T) {
	t.Parallel()
	w := newEscalationWorld(t)
	ctx := context.Background()
	a := w.notifier(1)
	w.route(a)
	w.db.Do(t, "SET", w.keys.DropAlerts("ada", "sms", "web-3:HTTP"), "1")
	res, err := a.Escalate(ctx)
	if err != nil || len(res.Alerts) != escalationChecks-1 {
		t.Fatalf("fired %d alerts (%v), want %d", len(res.Alerts), err, escalationChecks-1)
	}
	for _, al := range res.Alerts {
		if al.EventID == "web-3:HTTP" {
			t.Errorf("web-3 paged %s despite the interval key", al.ContactID)
		}
	}
}
