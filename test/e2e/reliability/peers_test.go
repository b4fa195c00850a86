package reliability

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/testing/testpagerduty"
)

// ---- PagerDuty Events API v2 ----

// pdDelivery is one event the PagerDuty server accepted.
type pdDelivery struct {
	RoutingKey string
	DedupKey   string
	Action     string
	Summary    string // payload.summary ("" for acknowledge and resolve)
	At         time.Time
}

// pagerDutyServer is a local Events API v2 endpoint that checks the contract as PagerDuty does
// (a request breaking it is answered 400 and recorded as a violation), accepts valid events
// with 202 and records them. It records an event as soon as it is valid and answers after a
// random delay (up to maxDelay): PagerDuty has the event even if the client dies before the
// answer arrives, which is the window in which a gateway may repeat one delivery.
type pagerDutyServer struct {
	srv      *httptest.Server
	maxDelay time.Duration

	mu         sync.Mutex
	rng        *rand.Rand
	accepted   []pdDelivery
	violations []string
	aborted    int // requests whose body never arrived whole (client killed mid-request)
}

func newPagerDutyServer(t *testing.T, seed uint64, maxDelay time.Duration) *pagerDutyServer {
	t.Helper()
	s := &pagerDutyServer{maxDelay: maxDelay, rng: rand.New(rand.NewPCG(seed, 7))}
	mux := http.NewServeMux()
	mux.HandleFunc(testpagerduty.V2Path, s.enqueue)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.violation("unexpected %s %s", r.Method, r.URL.Path)
		http.NotFound(w, r)
	})
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the events_base_url to configure.
func (s *pagerDutyServer) URL() string { return s.srv.URL }

func (s *pagerDutyServer) violation(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.violations = append(s.violations, fmt.Sprintf(format, args...))
}

func (s *pagerDutyServer) enqueue(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		// The client died while sending: nothing was delivered, nothing to answer.
		s.mu.Lock()
		s.aborted++
		s.mu.Unlock()
		return
	}
	ev, problems := testpagerduty.CheckV2(r, body)
	if len(problems) > 0 {
		s.violation("%s", strings.Join(problems, "; "))
		testpagerduty.WriteInvalid(w, problems)
		return
	}
	d := pdDelivery{RoutingKey: ev.RoutingKey, DedupKey: *ev.DedupKey, Action: ev.EventAction, At: time.Now()}
	if ev.Payload != nil {
		d.Summary = ev.Payload.Summary
	}
	s.mu.Lock()
	s.accepted = append(s.accepted, d)
	delay := time.Duration(0)
	if s.maxDelay > 0 {
		delay = time.Duration(s.rng.Int64N(int64(s.maxDelay)))
	}
	s.mu.Unlock()
	time.Sleep(delay)
	testpagerduty.WriteAccepted(w, d.DedupKey)
}

func (s *pagerDutyServer) snapshot() (accepted []pdDelivery, violations []string, aborted int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]pdDelivery(nil), s.accepted...), append([]string(nil), s.violations...), s.aborted
}

// ---- Redis MONITOR: every push onto the watched lists ----

// pushTap watches a Redis server with MONITOR and records every value RPUSHed or LPUSHed onto
// the watched keys of one database, by anyone, scripts included. It shows what the stages
// queued, even after the next stage has consumed it.
type pushTap struct {
	conn    redis.Conn
	db      string
	watched map[string]bool
	done    chan struct{}

	mu     sync.Mutex
	pushes map[string][]string
	err    error
}

func startPushTap(t *testing.T, addr string, db int, keys ...string) *pushTap {
	t.Helper()
	conn, err := redis.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("monitor: %v", err)
	}
	tap := &pushTap{conn: conn, db: strconv.Itoa(db), watched: map[string]bool{}, done: make(chan struct{}),
		pushes: map[string][]string{}}
	for _, k := range keys {
		tap.watched[k] = true
	}
	if ok, err := redis.String(conn.Do("MONITOR")); err != nil || ok != "OK" {
		t.Fatalf("MONITOR: %v %v", ok, err)
	}
	go func() {
		defer close(tap.done)
		for {
			line, err := redis.String(conn.Receive())
			if err != nil {
				tap.mu.Lock()
				tap.err = err
				tap.mu.Unlock()
				return
			}
			tap.observe(line)
		}
	}()
	t.Cleanup(tap.close)
	return tap
}

func (tap *pushTap) close() {
	_ = tap.conn.Close()
	<-tap.done
}

// observe parses `1700000000.123456 [0 lua] "RPUSH" "key" "value" ...`.
func (tap *pushTap) observe(line string) {
	open := strings.IndexByte(line, '[')
	end := strings.IndexByte(line, ']')
	if open < 0 || end < open {
		return
	}
	db, _, _ := strings.Cut(line[open+1:end], " ")
	if db != tap.db {
		return
	}
	args, ok := parseMonitorArgs(line[end+1:])
	if !ok || len(args) < 3 {
		return
	}
	cmd := strings.ToUpper(args[0])
	if (cmd != "RPUSH" && cmd != "LPUSH") || !tap.watched[args[1]] {
		return
	}
	tap.mu.Lock()
	tap.pushes[args[1]] = append(tap.pushes[args[1]], args[2:]...)
	tap.mu.Unlock()
}

// values returns everything pushed onto key so far, in order.
func (tap *pushTap) values(key string) []string {
	tap.mu.Lock()
	defer tap.mu.Unlock()
	return append([]string(nil), tap.pushes[key]...)
}

// parseMonitorArgs splits the quoted, escaped arguments of a MONITOR line (Redis's sdscatrepr:
// \\ \" \n \r \t \a \b and \xHH).
func parseMonitorArgs(s string) ([]string, bool) {
	var args []string
	i := 0
	for {
		for i < len(s) && s[i] == ' ' {
			i++
		}
		if i >= len(s) {
			return args, true
		}
		if s[i] != '"' {
			return nil, false
		}
		i++
		var b strings.Builder
		for {
			if i >= len(s) {
				return nil, false
			}
			c := s[i]
			if c == '"' {
				i++
				break
			}
			if c != '\\' {
				b.WriteByte(c)
				i++
				continue
			}
			if i+1 >= len(s) {
				return nil, false
			}
			switch s[i+1] {
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'a':
				b.WriteByte('\a')
			case 'b':
				b.WriteByte('\b')
			case 'x':
				if i+3 >= len(s) {
					return nil, false
				}
				v, err := strconv.ParseUint(s[i+2:i+4], 16, 8)
				if err != nil {
					return nil, false
				}
				b.WriteByte(byte(v))
				i += 2
			default:
				b.WriteByte(s[i+1])
			}
			i += 2
		}
		args = append(args, b.String())
	}
}
