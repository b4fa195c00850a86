package reliability

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/testing/testprosody"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/schema"
)

// Sizes of the crash test: crashChecks checks each get crashEvents events, one burst of one
// event per check every crashTick; killsPerStage SIGKILLs of each stage land during the stream.
const (
	crashChecks   = 12
	crashEvents   = 40
	crashTick     = time.Second
	killsPerStage = 4

	botPassword    = "b0t-crash-Pa55"
	personPassword = "ada-crash-pw"
	routingKey     = "R0ut1ngK3yR0ut1ngK3yR0ut1ngK3y00" // 32 characters, as PagerDuty requires
)

// streamEvent is one event of a test stream.
type streamEvent struct {
	Entity, Check, State, Summary string
	Time                          int64
}

func (e streamEvent) ID() string { return schema.CheckID(e.Entity, e.Check) }

func (e streamEvent) JSON() string {
	return fmt.Sprintf(`{"entity":%q,"check":%q,"type":"service","state":%q,"summary":%q,"time":%d}`,
		e.Entity, e.Check, e.State, e.Summary, e.Time)
}

// flipStream is events k = 0..n-1 of check c: critical for even k, ok for odd k, `time`
// increasing, a unique summary. Every event changes its check's state, so every critical is a
// problem notification (no delays) and every ok a recovery.
func flipEvent(prefix string, c, k int, base int64) streamEvent {
	entity := fmt.Sprintf("%s-%02d", prefix, c)
	state := schema.StateCritical
	if k%2 == 1 {
		state = schema.StateOK
	}
	return streamEvent{Entity: entity, Check: "load", State: state,
		Summary: fmt.Sprintf("seq %s/%d", entity, k), Time: base + int64(k)}
}

// summaryRE finds the unique summary of a stream event in an alert text.
var summaryRE = regexp.MustCompile(`seq ([a-z]+-\d+)/(\d+)$`)

func TestCrashesLoseNothing(t *testing.T) {
	began := time.Now()
	seed := testSeed(t)
	rng := rand.New(rand.NewPCG(seed, 1))

	// ---- peers ----
	redisServer := testredis.StartServer(t)
	db := redisServer.NewDB(t)
	pool := db.Pool
	keys := schema.NewKeys("")
	xs := testprosody.Start(t)
	bot := xs.Register(t, "flapjack", botPassword)
	person := xs.Register(t, "ada", personPassword)
	room := testprosody.Room("ops")
	ada := testprosody.Connect(t, xs, "ada", personPassword)
	ada.Join(room, "ada")
	pd := newPagerDutyServer(t, seed, 15*time.Millisecond)
	tap := startPushTap(t, redisServer.Addr, db.Index, keys.Notifications(),
		keys.Queue("jabber_notifications"), keys.Queue("pagerduty_notifications"))

	// ---- contacts: ada (Jabber chat + PagerDuty) and the ops room (Jabber groupchat), no rules ----
	db.Do(t, "HSET", keys.Contact("ada"), "first_name", "Ada", "last_name", "Lovelace")
	db.Do(t, "HSET", keys.ContactMedia("ada"), "jabber", person, "pagerduty", routingKey)
	db.Do(t, "HSET", keys.Contact("ops-room"), "first_name", "Ops")
	db.Do(t, "HSET", keys.ContactMedia("ops-room"), "jabber", room)
	db.Do(t, "SADD", keys.ContactsFor(schema.AllContactsID), "ada", "ops-room")
	db.Do(t, "SADD", keys.AllContacts(), "ada", "ops-room")

	// ---- the four stages, each its own process ----
	env := []string{
		"FLAPJACK_REDIS_URL=" + db.URL(),
		"FLAPJACK_LOG_FORMAT=json",
		"FLAPJACK_INSTANCE_HEARTBEAT=1s",
		"FLAPJACK_EXECUTIVE_INITIAL_FAILURE_DELAY=0",
		"FLAPJACK_EXECUTIVE_REPEAT_FAILURE_DELAY=0",
		"FLAPJACK_NOTIFIER_DEFAULT_INTERVAL=1s",
		"FLAPJACK_GATEWAYS_JABBER_SERVER=127.0.0.1",
		"FLAPJACK_GATEWAYS_JABBER_PORT=" + strconv.Itoa(xs.Port),
		"FLAPJACK_GATEWAYS_JABBER_JABBERID=" + bot,
		"FLAPJACK_GATEWAYS_JABBER_PASSWORD=" + botPassword,
		"FLAPJACK_GATEWAYS_JABBER_ROOMS=" + room,
		"FLAPJACK_GATEWAYS_JABBER_TLS=plain",
		"FLAPJACK_GATEWAYS_JABBER_ALLOW_PLAINTEXT=true",
		"FLAPJACK_GATEWAYS_JABBER_RECONNECT_MIN=100ms",
		"FLAPJACK_GATEWAYS_JABBER_RECONNECT_MAX=1s",
		"FLAPJACK_GATEWAYS_PAGERDUTY_EVENTS_BASE_URL=" + pd.URL(),
		"FLAPJACK_GATEWAYS_PAGERDUTY_ACK_POLL_INTERVAL=0",
		"FLAPJACK_GATEWAYS_RETRY_MAX_ATTEMPTS=6",
		"FLAPJACK_GATEWAYS_RETRY_FIRST_BACKOFF=100ms",
		"FLAPJACK_GATEWAYS_RETRY_MAX_BACKOFF=1s",
	}
	executive := &stageRunner{t: t, name: "executive", stage: "executive", args: []string{"executive"}, env: env}
	notifier := &stageRunner{t: t, name: "notifier", stage: "notifier", args: []string{"notifier"}, env: env}
	jabber := &stageRunner{t: t, name: "gateway jabber", stage: "jabber_gateway", args: []string{"gateway", "jabber"}, env: env}
	pagerduty := &stageRunner{t: t, name: "gateway pagerduty", stage: "pagerduty_gateway", args: []string{"gateway", "pagerduty"}, env: env}
	stages := []*stageRunner{executive, notifier, jabber, pagerduty}
	for _, s := range stages {
		s.start()
	}
	for _, s := range stages {
		s.current().WaitLine(t, 15*time.Second, "stage started")
	}
	jabber.current().WaitLine(t, 15*time.Second, "connected to the XMPP server")

	// ---- the stream, with kills ----
	// How long after a stage has claimed something a "busy" kill may wait: about as long as
	// the stage takes over one burst.
	jitter := map[string]time.Duration{
		"executive": 3 * time.Millisecond, "notifier": 15 * time.Millisecond,
		"jabber_gateway": 40 * time.Millisecond, "pagerduty_gateway": 120 * time.Millisecond,
	}
	plans := shuffledKills(rng, stages, killsPerStage, 2, crashEvents-3, jitter)
	base := time.Now().Unix() - 3600
	var expected [crashChecks][crashEvents]streamEvent
	for c := 0; c < crashChecks; c++ {
		for k := 0; k < crashEvents; k++ {
			expected[c][k] = flipEvent("crash", c, k, base)
		}
	}
	streamStart := time.Now()
	producer := pool.Get()
	defer producer.Close()
	for k := 0; k < crashEvents; k++ {
		time.Sleep(time.Until(streamStart.Add(time.Duration(k) * crashTick)))
		for c := 0; c < crashChecks; c++ {
			producer.Send("LPUSH", keys.Events(), expected[c][k].JSON())
		}
		if err := producer.Flush(); err != nil {
			t.Fatal(err)
		}
		for c := 0; c < crashChecks; c++ {
			if _, err := producer.Receive(); err != nil {
				t.Fatalf("LPUSH: %v", err)
			}
		}
		if plan, ok := plans[k]; ok {
			plan.stage.kill(t, pool, keys, plan)
		}
	}
	streamTook := time.Since(streamStart)
	totalEvents := crashChecks * crashEvents

	// ---- wait until everything is through ----
	queues := []string{keys.Events(), keys.Notifications(), keys.Queue("jabber_notifications"), keys.Queue("pagerduty_notifications")}
	var report deliveryReport
	drained := waitUntil(90*time.Second, 200*time.Millisecond, func() bool {
		left, err := processingLeft(pool)
		if err != nil || len(left) > 0 || !queuesEmpty(pool, queues...) {
			return false
		}
		report = analyseDeliveries(expected[:], ada.Messages(), pd, bot, room)
		return report.complete()
	})
	drainTook := time.Since(streamStart) - streamTook
	// Anything delivered late (a duplicate) would show now.
	time.Sleep(1500 * time.Millisecond)
	report = analyseDeliveries(expected[:], ada.Messages(), pd, bot, room)
	if !drained {
		left, _ := processingLeft(pool)
		depth := map[string]int{}
		for _, q := range queues {
			depth[q] = mustInt(t, pool, "LLEN", q)
		}
		t.Errorf("not drained within 90 s after the stream: queues %v, processing lists %v, missing deliveries:\n%s",
			depth, left, strings.Join(report.missing, "\n"))
	}
	for _, s := range stages {
		if p := s.current(); p.Exited() {
			t.Errorf("%s exited by itself (code %d):\n%s", s.name, p.ExitCode(), p.Tail(40))
		}
	}
	if alive, err := ada.Alive(); !alive {
		t.Fatalf("the person's XMPP connection dropped during the test: %v", err)
	}

	// ---- (a) every event is reflected, exactly once ----
	for c := 0; c < crashChecks; c++ {
		last := expected[c][crashEvents-1]
		id := last.ID()
		if n := mustInt(t, pool, "LLEN", keys.States(id)); n != crashEvents {
			t.Errorf("%s: %d state changes recorded, want %d (one per event)", id, n, crashEvents)
		}
		check, err := redis.StringMap(do(pool, "HGETALL", keys.Check(id)))
		if err != nil {
			t.Fatal(err)
		}
		if check["summary"] != last.Summary || check["state"] != last.State {
			t.Errorf("%s: state %q summary %q, want the last event's %q %q", id, check["state"], check["summary"], last.State, last.Summary)
		}
	}
	counters, err := redis.StringMap(do(pool, "HGETALL", keys.EventCounters()))
	if err != nil {
		t.Fatal(err)
	}
	ok, _ := strconv.Atoi(counters["ok"])
	failure, _ := strconv.Atoi(counters["failure"])
	if all, _ := strconv.Atoi(counters["all"]); all != totalEvents || ok+failure != totalEvents {
		t.Errorf("event_counters %v: want all = ok + failure = %d (each event applied exactly once)", counters, totalEvents)
	}

	// ---- (b) exactly the expected notifications and alerts were produced, each once ----
	problems, recoveries := crashEvents/2, crashEvents/2
	for c := 0; c < crashChecks; c++ {
		id := expected[c][0].ID()
		if n := mustInt(t, pool, "LLEN", keys.NotificationHistory(id, schema.NotificationProblem)); n != problems {
			t.Errorf("%s: %d problem notifications recorded, want %d", id, n, problems)
		}
		if n := mustInt(t, pool, "LLEN", keys.NotificationHistory(id, schema.NotificationRecovery)); n != recoveries {
			t.Errorf("%s: %d recovery notifications recorded, want %d", id, n, recoveries)
		}
	}
	queued := analyseQueued(t, expected[:], tap, keys)
	for _, p := range queued.problems {
		t.Error(p)
	}

	// ---- (c) every due alert reached its peer; (d) duplicates ----
	for _, m := range report.missing {
		t.Errorf("never delivered: %s", m)
	}
	for _, u := range report.unexpected {
		t.Errorf("unexpected delivery: %s", u)
	}
	_, violations, aborted := pd.snapshot()
	for _, v := range violations {
		t.Errorf("PagerDuty contract violation: %s", v)
	}
	if report.jabberDuplicates > jabber.kills {
		t.Errorf("the Jabber gateway repeated %d messages in %d kills: at most one per kill is allowed (%v)",
			report.jabberDuplicates, jabber.kills, report.jabberDuplicateList)
	}
	if report.pagerdutyDuplicates > pagerduty.kills {
		t.Errorf("the PagerDuty gateway repeated %d events in %d kills: at most one per kill is allowed (%v)",
			report.pagerdutyDuplicates, pagerduty.kills, report.pagerdutyDuplicateList)
	}

	// ---- (e) nothing is left claimed or dead-lettered; dead instances are forgotten ----
	if left, err := processingLeft(pool); err != nil || len(left) > 0 {
		t.Errorf("processing lists not empty: %v %v", left, err)
	}
	for _, s := range stages {
		for _, p := range s.all {
			if n := mustInt(t, pool, "LLEN", keys.Processing(s.stage, instance(p))); n != 0 {
				t.Errorf("%s pid %d: processing list holds %d items", s.name, p.PID(), n)
			}
		}
		members, err := redis.Strings(do(pool, "SMEMBERS", keys.Instances(s.stage)))
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{instance(s.current())}; !slices.Equal(members, want) {
			t.Errorf("%s_instances = %v, want only the live instance %v (dead ones forgotten)", s.stage, members, want)
		}
	}
	if dl := deadLetters(t, pool); len(dl) > 0 {
		t.Errorf("dead letters: %v", dl)
	}

	// ---- numbers ----
	for _, s := range stages {
		t.Logf("%-18s killed %d times; %d kills caught claimed items (%d items recovered by the restarted instance)",
			s.name, s.kills, s.inFlight, s.items)
	}
	t.Logf("%d events (%d checks x %d) streamed in %v, drained %v later; %d notifications, %d alerts queued",
		totalEvents, crashChecks, crashEvents, streamTook.Round(time.Millisecond), drainTook.Round(time.Millisecond),
		queued.notifications, queued.alerts)
	t.Logf("duplicates: executive 0, notifier 0 (each notification and alert queued once); Jabber gateway %d in %d kills %v; PagerDuty gateway %d in %d kills %v; aborted PagerDuty requests %d",
		report.jabberDuplicates, jabber.kills, report.jabberDuplicateList, report.pagerdutyDuplicates, pagerduty.kills,
		report.pagerdutyDuplicateList, aborted)

	stopAll(t, stages)
	if left, err := processingLeft(pool); err != nil || len(left) > 0 {
		t.Errorf("processing lists not empty after SIGTERM: %v %v", left, err)
	}
	if t.Failed() {
		for _, s := range stages {
			t.Logf("last lines of %s (pid %d):\n%s", s.name, s.current().PID(), s.current().Tail(25))
		}
	}
	t.Logf("TestCrashesLoseNothing took %v", time.Since(began).Round(time.Millisecond))
}

// deliveryReport compares what the peers received with what the stream makes due.
type deliveryReport struct {
	missing                []string
	unexpected             []string
	jabberDuplicates       int
	jabberDuplicateList    []string
	pagerdutyDuplicates    int
	pagerdutyDuplicateList []string
}

func (r deliveryReport) complete() bool { return len(r.missing) == 0 }

// analyseDeliveries checks the person's Jabber messages (a chat from the bot and a groupchat
// in the room per event) and the PagerDuty events (per check, in order: a trigger per
// critical, a resolve per ok; a repeat shows as the same event twice in a row).
func analyseDeliveries(expected [][crashEvents]streamEvent, msgs []testprosody.Message, pd *pagerDutyServer, bot, room string) deliveryReport {
	var r deliveryReport
	byKey := map[string]streamEvent{}
	for _, evs := range expected {
		for _, e := range evs {
			byKey[e.Summary] = e
		}
	}
	// Jabber
	got := map[string]int{}
	for _, m := range msgs {
		if !strings.HasPrefix(m.Text, "Problem: ") && !strings.HasPrefix(m.Text, "Recovery: ") {
			continue // the bot's greetings in the room
		}
		sm := summaryRE.FindStringSubmatch(m.Text)
		var e streamEvent
		ok := sm != nil
		if ok {
			e, ok = byKey[sm[0]]
		}
		wantPrefix := "Problem: "
		if ok && e.State == schema.StateOK {
			wantPrefix = "Recovery: "
		}
		fromOK := (m.Type == "chat" && strings.HasPrefix(m.From, bot+"/")) || (m.Type == "groupchat" && m.From == room+"/flapjack")
		if !ok || !strings.HasPrefix(m.Text, wantPrefix) || !fromOK || !strings.Contains(m.Text, fmt.Sprintf(`"%s" on %s`, e.Check, e.Entity)) {
			r.unexpected = append(r.unexpected, fmt.Sprintf("jabber %s from %s: %q", m.Type, m.From, m.Text))
			continue
		}
		got[m.Type+"|"+e.Summary]++
	}
	for _, evs := range expected {
		for _, e := range evs {
			for _, typ := range []string{"chat", "groupchat"} {
				switch n := got[typ+"|"+e.Summary]; {
				case n == 0:
					r.missing = append(r.missing, fmt.Sprintf("jabber %s for %s (%s)", typ, e.Summary, e.State))
				case n > 1:
					r.jabberDuplicates += n - 1
					r.jabberDuplicateList = append(r.jabberDuplicateList, fmt.Sprintf("%s %s x%d", typ, e.Summary, n))
				}
			}
		}
	}
	// PagerDuty
	accepted, _, _ := pd.snapshot()
	seq := map[string][]string{}
	for _, d := range accepted {
		token := "resolve"
		switch d.Action {
		case "trigger":
			sm := summaryRE.FindStringSubmatch(d.Summary)
			if sm == nil || d.RoutingKey != routingKey {
				r.unexpected = append(r.unexpected, fmt.Sprintf("pagerduty %s %s: %q", d.Action, d.DedupKey, d.Summary))
				continue
			}
			token = "trigger " + sm[0]
		case "resolve":
		default:
			r.unexpected = append(r.unexpected, fmt.Sprintf("pagerduty %s %s", d.Action, d.DedupKey))
			continue
		}
		seq[d.DedupKey] = append(seq[d.DedupKey], token)
	}
	for _, evs := range expected {
		id := evs[0].ID()
		var want []string
		for _, e := range evs {
			if e.State == schema.StateOK {
				want = append(want, "resolve")
			} else {
				want = append(want, "trigger "+e.Summary)
			}
		}
		gotSeq := seq[id]
		collapsed := slices.Compact(slices.Clone(gotSeq))
		if d := len(gotSeq) - len(collapsed); d > 0 {
			r.pagerdutyDuplicates += d
			for i := 1; i < len(gotSeq); i++ {
				if gotSeq[i] == gotSeq[i-1] {
					r.pagerdutyDuplicateList = append(r.pagerdutyDuplicateList, id+" "+gotSeq[i])
				}
			}
		}
		if !slices.Equal(collapsed, want) {
			if len(collapsed) < len(want) && slices.Equal(collapsed, want[:len(collapsed)]) {
				r.missing = append(r.missing, fmt.Sprintf("pagerduty %s: %d of %d events so far", id, len(collapsed), len(want)))
			} else {
				r.missing = append(r.missing, fmt.Sprintf("pagerduty %s: got %v, want %v", id, collapsed, want))
			}
		}
	}
	return r
}

// queuedReport is what the executive and the notifier queued, from the push tap.
type queuedReport struct {
	notifications, alerts int
	problems              []string
}

// analyseQueued checks that the executive queued exactly one notification per event and the
// notifier exactly one alert per event, contact and medium, each with its own id.
func analyseQueued(t *testing.T, expected [][crashEvents]streamEvent, tap *pushTap, keys schema.Keys) queuedReport {
	t.Helper()
	var r queuedReport
	byKey := map[string]streamEvent{}
	for _, evs := range expected {
		for _, e := range evs {
			byKey[e.Summary] = e
		}
	}
	notes := map[string]int{}
	for _, raw := range tap.values(keys.Notifications()) {
		r.notifications++
		n, err := schema.ParseNotification([]byte(raw))
		e, ok := byKey[schema.Deref(n.Summary)]
		wantType := schema.NotificationProblem
		if ok && e.State == schema.StateOK {
			wantType = schema.NotificationRecovery
		}
		if err != nil || !ok || n.EventID != e.ID() || n.Type != wantType {
			r.problems = append(r.problems, fmt.Sprintf("unexpected notification queued: %s (%v)", raw, err))
			continue
		}
		notes[e.Summary]++
	}
	alerts := map[string]int{}
	ids := map[string]int{}
	for _, q := range []string{"jabber_notifications", "pagerduty_notifications"} {
		for _, raw := range tap.values(keys.Queue(q)) {
			r.alerts++
			var a schema.Alert
			if err := json.Unmarshal([]byte(raw), &a); err != nil {
				r.problems = append(r.problems, fmt.Sprintf("unreadable alert on %s: %s", q, raw))
				continue
			}
			hash, _, _ := strings.Cut(a.ID, "-")
			ids[hash]++
			alerts[a.Media+"|"+a.ContactID+"|"+schema.Deref(a.Summary)]++
		}
	}
	var dupNotes, dupAlerts []string
	for _, evs := range expected {
		for _, e := range evs {
			if n := notes[e.Summary]; n != 1 {
				dupNotes = append(dupNotes, fmt.Sprintf("%s x%d", e.Summary, n))
			}
			for _, target := range []string{"jabber|ada", "jabber|ops-room", "pagerduty|ada"} {
				if n := alerts[target+"|"+e.Summary]; n != 1 {
					dupAlerts = append(dupAlerts, fmt.Sprintf("%s %s x%d", target, e.Summary, n))
				}
			}
		}
	}
	sort.Strings(dupNotes)
	sort.Strings(dupAlerts)
	if len(dupNotes) > 0 {
		r.problems = append(r.problems, fmt.Sprintf("the executive did not queue exactly one notification per event: %v", dupNotes))
	}
	if len(dupAlerts) > 0 {
		r.problems = append(r.problems, fmt.Sprintf("the notifier did not queue exactly one alert per event, contact and medium: %v", dupAlerts))
	}
	for hash, n := range ids {
		if n > 1 {
			r.problems = append(r.problems, fmt.Sprintf("alert id %s queued %d times", hash, n))
		}
	}
	return r
}
