package reliability

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/events"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/schema"
)

// TestEscalationStepsOnceThroughNotifierKills: two `flapjack notifier` processes fire the
// escalation steps of many failing checks (ada at once, bob after 3 s, carol after 6 s) while one
// of them is SIGKILLed again and again in the middle of its ticks, i.e. between deciding a
// step and writing it, and restarted. Every step of every check is alerted exactly once.
func TestEscalationStepsOnceThroughNotifierKills(t *testing.T) {
	const checks = 1500 // three writes of 500 steps per due time
	seed := testSeed(t)
	rng := rand.New(rand.NewPCG(seed, 25))
	srv := testredis.StartServer(t)
	db := srv.NewDB(t)
	keys := schema.NewKeys("")
	ctx := context.Background()
	for _, id := range []string{"ada", "bob", "carol"} {
		db.Do(t, "SADD", keys.AllContacts(), id)
		db.Do(t, "HSET", keys.Contact(id), "first_name", id)
		db.Do(t, "HSET", keys.ContactMedia(id), "sms", "+44770090"+id)
	}
	conn := db.Conn(t)
	defer conn.Close()
	res, err := roster.PutEscalationPolicies(ctx, conn, keys, []roster.EscalationPolicy{{ID: "oncall", Steps: []roster.EscalationStep{
		{Delay: 0, Contacts: []string{"ada"}}, {Delay: 3, Contacts: []string{"bob"}}, {Delay: 6, Contacts: []string{"carol"}}}}},
		roster.ReplaceOptions{})
	if err != nil || len(res.Problems) > 0 {
		t.Fatalf("put policy: %v %v", err, res.Problems)
	}
	env := []string{"FLAPJACK_REDIS_URL=" + db.URL(), "FLAPJACK_LOG_FORMAT=json", "FLAPJACK_EXECUTIVE_INITIAL_FAILURE_DELAY=0s"}
	executive := &stageRunner{t: t, name: "executive", stage: "executive", args: []string{"executive"}, env: env}
	steady := &stageRunner{t: t, name: "notifier", stage: "notifier", args: []string{"notifier"}, env: env}
	killed := &stageRunner{t: t, name: "notifier", stage: "notifier", args: []string{"notifier"}, env: env}
	for _, s := range []*stageRunner{executive, steady, killed} {
		s.start().WaitLine(t, 15*time.Second, "stage started")
	}
	pub := events.NewPublisher(db.Pool, keys, "events")
	now := time.Now().Unix()
	for i := range checks {
		for _, state := range []string{"ok", "critical"} {
			raw := fmt.Sprintf(`{"entity":"app-%04d","check":"load","type":"service","state":%q,"time":%d}`, i, state, now)
			if _, err := pub.PublishRaw(ctx, []byte(raw)); err != nil {
				t.Fatal(err)
			}
		}
	}

	// Kill the second notifier at random moments, and whenever it has just written a batch of
	// steps while more are due (a tick takes at most 500 ladders per write, so it is then
	// deciding the next batch): a kill between claim and send.
	midTick := 0
	deadline := time.Now().Add(8 * time.Second)
	nextRandom := time.Now().Add(time.Duration(200+rng.IntN(600)) * time.Millisecond)
	seen := 0
	for time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
		p := killed.current()
		fired := strings.Count(p.Text(true), "escalation step fired")
		due, _ := redis.Int(db.Do(t, "ZCOUNT", keys.EscalationsDue(), "-inf", time.Now().Unix()), nil)
		busy := fired > seen && due > 0
		seen = fired
		if !busy && time.Now().Before(nextRandom) {
			continue
		}
		p.Kill()
		if busy {
			midTick++
		}
		killed.start().WaitLine(t, 15*time.Second, "stage started")
		seen, nextRandom = 0, time.Now().Add(time.Duration(200+rng.IntN(600))*time.Millisecond)
	}
	if midTick == 0 {
		t.Fatal("no kill landed while the killed notifier was firing due steps")
	}

	want := checks * 3
	var got map[string]int
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if got = escalationAlerts(t, db, keys); len(got) == want {
			break
		}
	}
	time.Sleep(2 * time.Second) // a repeat would come from a later tick
	got = escalationAlerts(t, db, keys)
	for i := range checks {
		for step, who := range []string{"ada", "bob", "carol"} {
			k := fmt.Sprintf("app-%04d:load %s %d", i, who, step+1)
			if got[k] != 1 {
				t.Errorf("%s: %d alerts, want 1", k, got[k])
			}
		}
	}
	if len(got) != want {
		t.Errorf("%d distinct escalation alerts, want %d", len(got), want)
	}
	t.Logf("%d kills landed mid-tick; %d escalation alerts", midTick, len(got))
}

// escalationAlerts counts the alerts on sms_notifications by check, contact and step.
func escalationAlerts(t *testing.T, db *testredis.DB, keys schema.Keys) map[string]int {
	raws, err := redis.Strings(db.Do(t, "LRANGE", keys.Queue("sms_notifications"), 0, -1), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, raw := range raws {
		a, err := schema.ParseAlert([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		if a.Escalation == nil {
			continue
		}
		out[fmt.Sprintf("%s %s %d", a.EventID, a.ContactID, a.Escalation.Step)]++
	}
	return out
}
