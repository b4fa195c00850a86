package reliability

import (
	"bytes"
	"encoding/json"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/testing/testbinary"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/schema"
)

// replyCutter is a TCP proxy in front of Redis that can lose one reply: once armed, the first
// non-empty reply to a BLMOVE is dropped and the connection cut, after Redis carried the command
// out. That is what a stage sees when Redis, or the network, dies between executing a claim and
// answering it (with appendfsync always, between the fsync and the reply): the item sits in the
// stage's processing list, and the stage only got an error.
type replyCutter struct {
	t     *testing.T
	ln    net.Listener
	redis string

	mu      sync.Mutex
	armed   bool
	cut     chan struct{}
	blmoves int // BLMOVE commands relayed so far
}

func newReplyCutter(t *testing.T, redisAddr string) *replyCutter {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &replyCutter{t: t, ln: ln, redis: redisAddr, cut: make(chan struct{})}
	go p.serve()
	t.Cleanup(func() { ln.Close() })
	return p
}

func (p *replyCutter) addr() string { return p.ln.Addr().String() }

// arm makes the proxy cut the next non-empty BLMOVE reply; the returned channel closes then.
func (p *replyCutter) arm() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.armed = true
	return p.cut
}

func (p *replyCutter) serve() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", p.redis)
		if err != nil {
			client.Close()
			continue
		}
		go p.pipe(client, server)
	}
}

// pipe relays one connection. Commands go through untouched; the client's last command name is
// noted, so a reply can be recognised as a BLMOVE's (redigo sends one command at a time on a
// blocking call).
func (p *replyCutter) pipe(client, server net.Conn) {
	var mu sync.Mutex
	last := ""
	closeBoth := func() { client.Close(); server.Close() }
	go func() {
		defer closeBoth()
		buf := make([]byte, 64<<10)
		for {
			n, err := client.Read(buf)
			if n > 0 {
				mu.Lock()
				last = ""
				if bytes.Contains(bytes.ToUpper(buf[:n]), []byte("\r\nBLMOVE\r\n")) {
					last = "BLMOVE"
					p.mu.Lock()
					p.blmoves++
					p.mu.Unlock()
				}
				mu.Unlock()
				if _, err := server.Write(buf[:n]); err != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	defer closeBoth()
	buf := make([]byte, 64<<10)
	for {
		n, err := server.Read(buf)
		if n > 0 {
			mu.Lock()
			blmove := last == "BLMOVE"
			mu.Unlock()
			reply := buf[:n]
			empty := bytes.HasPrefix(reply, []byte("$-1")) || bytes.HasPrefix(reply, []byte("*-1")) || bytes.HasPrefix(reply, []byte("_"))
			if blmove && !empty && p.take() {
				return // the reply is lost, the connection cut
			}
			if _, err := client.Write(reply); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// blocked waits until the stage sends its next BLMOVE, so an item pushed now is taken by it.
func (p *replyCutter) blocked(timeout time.Duration) bool {
	p.mu.Lock()
	seen := p.blmoves
	p.mu.Unlock()
	return waitUntil(timeout, 5*time.Millisecond, func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.blmoves > seen
	})
}

// take disarms the proxy; true when it was armed.
func (p *replyCutter) take() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.armed {
		return false
	}
	p.armed = false
	close(p.cut)
	return true
}

// TestLostRepliesLoseNothing: for each stage, Redis moves an item into the stage's processing
// list but the reply never arrives (the connection is cut). The stage keeps running, so no peer
// will ever recover that list: the stage itself must go back to it. Each item must be finished
// within a few seconds and every processing list end empty.
func TestLostRepliesLoseNothing(t *testing.T) {
	db := testredis.New(t)
	keys := schema.NewKeys("")
	db.Do(t, "HSET", keys.Contact("oncall"), "first_name", "On")
	db.Do(t, "HSET", keys.ContactMedia("oncall"), "log", "stdout")
	db.Do(t, "SADD", keys.ContactsFor(schema.AllContactsID), "oncall")

	summary := "the reply to this claim was lost"
	notification, _ := json.Marshal(schema.Notification{EventID: "lost-reply:notifier", State: schema.StateCritical,
		Summary: &summary, Type: schema.NotificationProblem, Severity: schema.SeverityCritical})
	alert, _ := json.Marshal(schema.Alert{Media: "log", Address: "stdout", ID: "lost-reply-1", ContactID: "oncall",
		EventID: "lost-reply:gateway", State: schema.StateCritical, Summary: &summary, NotificationType: schema.NotificationProblem})

	cases := []struct {
		name, stage string
		args        []string
		queue, item string
		done        func(p *testbinary.Process) bool
	}{
		{"executive", "executive", []string{"executive"}, keys.Events(),
			`{"entity":"lost-reply","check":"executive","type":"service","state":"critical","summary":"lost"}`,
			func(*testbinary.Process) bool {
				s, _ := redis.String(do(db.Pool, "HGET", keys.Check("lost-reply:executive"), "state"))
				return s == schema.StateCritical
			}},
		{"notifier", "notifier", []string{"notifier"}, keys.Notifications(), string(notification),
			func(*testbinary.Process) bool {
				n, _ := redis.Int(do(db.Pool, "LLEN", keys.Queue("log_notifications")))
				return n == 1
			}},
		{"gateway", "log_gateway", []string{"gateway", "log"}, keys.Queue("log_notifications"), string(alert),
			func(p *testbinary.Process) bool {
				for _, l := range p.Texts(false) {
					if strings.HasPrefix(l, "ALERT Problem: ") && strings.Contains(l, summary) {
						return true
					}
				}
				return false
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Leftovers of the previous stage (its outputs) would be taken by this one.
			db.Do(t, "DEL", keys.Notifications(), keys.Queue("log_notifications"))
			proxy := newReplyCutter(t, db.Server.Addr)
			url := strings.Replace(db.URL(), db.Server.Addr, proxy.addr(), 1)
			p := testbinary.Start(t, []string{"FLAPJACK_REDIS_URL=" + url, "FLAPJACK_LOG_FORMAT=json",
				"FLAPJACK_INSTANCE_HEARTBEAT=1s", "FLAPJACK_EXECUTIVE_INITIAL_FAILURE_DELAY=0"}, c.args...)
			p.WaitLine(t, 15*time.Second, "stage started")
			cut := proxy.arm()
			// Push while the stage blocks in BLMOVE (1 s each), so BLMOVE is what takes the item.
			if !proxy.blocked(5 * time.Second) {
				t.Fatalf("the %s never waited on its queue:\n%s", c.name, p.Tail(20))
			}
			time.Sleep(20 * time.Millisecond)
			db.Do(t, "RPUSH", c.queue, c.item)
			select {
			case <-cut:
			case <-time.After(10 * time.Second):
				t.Fatalf("the %s never claimed the item:\n%s", c.name, p.Tail(20))
			}
			processing := keys.Processing(c.stage, instance(p))
			finished := waitUntil(10*time.Second, 50*time.Millisecond, func() bool {
				n, err := redis.Int(do(db.Pool, "LLEN", processing))
				return err == nil && n == 0 && c.done(p)
			})
			if !finished {
				n, _ := redis.Int(do(db.Pool, "LLEN", processing))
				t.Errorf("the %s lost the reply to its claim and never finished the item: %s holds %d item(s) 10 s later, "+
					"while the %s runs on (no peer will recover a live instance's list)\n%s",
					c.name, processing, n, c.name, p.Tail(10))
			}
			if code := p.Terminate(20 * time.Second); code != 0 {
				t.Errorf("exit %d after SIGTERM", code)
			}
		})
	}
}
