package whatif

import (
	"context"
	"fmt"
	"net"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/executive"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/schema"
)

// seedStateWeek writes a week of state history for n checks reporting once a minute, each
// failing 10 minutes every 6 hours, as the executive records it (state changes only, with a
// decision record showing 60 s repeats): cmd/flapjack-bench's week, in a test database.
func seedStateWeek(tb testing.TB, db *testredis.DB, n int) (from, until time.Time) {
	tb.Helper()
	c := db.Conn(tb)
	defer c.Close()
	k := schema.NewKeys("")
	if _, err := roster.SeedContact(context.Background(), c, k, roster.ContactData{ID: "oncall",
		ContactInfo: roster.ContactInfo{FirstName: "On", LastName: "Call", Timezone: "UTC"},
		Media:       []roster.Medium{{Name: "email", Address: "oncall@example.com"}}}, true); err != nil {
		tb.Fatal(err)
	}
	start := weekStart.Unix()
	end := start + 7*86400 - 60
	pending := 0
	send := func(cmd string, args ...any) {
		c.Send(cmd, args...)
		pending++
	}
	for i := 0; i < n; i++ {
		entity, check := fmt.Sprintf("host-%d.example.com", i/10), fmt.Sprintf("check-%d", i%10)
		id := entity + ":" + check
		state := ""
		for m := int64(0); m < 7*24*60; m++ {
			next := "ok"
			if (m+int64(i)*7)%360 < 10 {
				next = "critical"
			}
			if next == state {
				continue
			}
			state = next
			ts := start + m*60
			send("RPUSH", k.States(id), ts)
			send("ZADD", k.SortedStateTimestamps(id), ts, ts)
			send("SET", k.StateAt(id, ts), state)
			send("SET", k.SummaryAt(id, ts), "generated "+state)
		}
		explain := `{"time":%d,"stage":"executive","type":"service","state":"critical","verdict":"notified","notification":"problem","severity":"critical"}`
		send("HSET", k.Check(id), "state", state, "last_update", end)
		send("ZADD", k.AllChecks(), end, id)
		send("ZADD", k.AllChecksFor(entity), end, check)
		send("LPUSH", k.Explain(id), fmt.Sprintf(explain, end-120), fmt.Sprintf(explain, end-60))
	}
	if err := c.Flush(); err != nil {
		tb.Fatal(err)
	}
	for ; pending > 0; pending-- {
		if _, err := c.Receive(); err != nil {
			tb.Fatal(err)
		}
	}
	return time.Unix(start, 0), time.Unix(end, 0)
}

// countingConn counts the writes to a scratch server: one per request sent, pipelined or not,
// so the count is the round trips, the figure that decides the time on a busy machine.
type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	c.n.Add(1)
	return c.Conn.Write(p)
}

// BenchmarkStateHistoryWeek: a week of WHATIF_BENCH_CHECKS (default 100) checks rebuilt from
// state history, baseline and a candidate initial_failure_delay, each scenario on its own
// redis-server as `flapjack whatif` runs them. Reports the round trips, this process's CPU and
// the scratch servers' CPU per replayed line (go test -bench StateHistoryWeek -benchtime 1x ./whatif).
// The checks are split into groups as `flapjack whatif` splits them; WHATIF_BENCH_GROUPS sets
// how many (1 = one replay per scenario).
func BenchmarkStateHistoryWeek(b *testing.B) {
	checks := 100
	if s := os.Getenv("WHATIF_BENCH_CHECKS"); s != "" {
		var err error
		if checks, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	// the flapjack command's garbage collector target (cmd/flapjack/gc.go)
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	live := testredis.New(b)
	from, until := seedStateWeek(b, live, checks)
	cand := executive.DefaultConfig()
	cand.InitialFailureDelay = 5 * time.Minute
	for b.Loop() {
		o := Options{Live: live.Pool, LiveKeys: schema.NewKeys(""), Identity: queue.Identity{Host: "bench", PID: 1},
			History:   History{From: from, Until: until, Source: SourceStates, RepeatInterval: time.Minute},
			Baseline:  Scenario{Executive: executive.DefaultConfig(), Notifier: notifierConfig()},
			Candidate: Scenario{Executive: cand, Notifier: notifierConfig()}}
		var trips atomic.Int64
		var spaces []Space
		open := func() [2]Space {
			var pair [2]Space
			for i := range pair {
				network, addr := "tcp", ""
				if os.Getenv("WHATIF_BENCH_UNIX") != "" {
					network, addr = "unix", fmt.Sprintf("%s/s%d.sock", b.TempDir(), len(spaces)+i)
					testredis.StartServer(b, "--unixsocket", addr)
				} else {
					addr = testredis.StartServer(b).Addr
				}
				pair[i] = Space{Keys: schema.NewKeys(""), Pool: &redis.Pool{MaxIdle: 8, Dial: func() (redis.Conn, error) {
					return redis.Dial(network, addr, redis.DialNetDial(func(network, a string) (net.Conn, error) {
						c, err := net.Dial(network, a)
						return countingConn{c, &trips}, err
					}))
				}}}
			}
			spaces = append(spaces, pair[:]...)
			return pair
		}
		first := open()
		o.Baseline.Space, o.Candidate.Space = first[0], first[1]
		o.OpenSpaces = func(context.Context) ([2]Space, func(), error) { return open(), func() {}, nil }
		if s := os.Getenv("WHATIF_BENCH_GROUPS"); s != "" {
			var err error
			if o.Groups, err = strconv.Atoi(s); err != nil {
				b.Fatal(err)
			}
		}
		cpu := processCPU()
		rep, err := Run(context.Background(), o)
		if err != nil {
			b.Fatal(err)
		}
		cpu = processCPU() - cpu
		var redisCPU float64
		for _, sp := range spaces {
			redisCPU += serverCPU(b, sp.Pool)
		}
		lines := float64(rep.Replayed)
		b.ReportMetric(lines, "lines")
		b.ReportMetric(float64(rep.Baseline.Alerts), "alerts")
		b.ReportMetric(float64(len(spaces)/2), "groups")
		b.ReportMetric(float64(trips.Load())/lines/2, "round-trips/line/run")
		b.ReportMetric(cpu.Seconds()*1e6/lines, "whatif-cpu-µs/line")
		b.ReportMetric(redisCPU*1e6/lines, "redis-cpu-µs/line")
	}
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// serverCPU is the CPU seconds a scratch redis-server has used.
func serverCPU(tb testing.TB, pool *redis.Pool) float64 {
	c := pool.Get()
	defer c.Close()
	info, err := redis.String(c.Do("INFO", "cpu"))
	if err != nil {
		tb.Fatal(err)
	}
	var total float64
	for _, l := range strings.Split(info, "\r\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && (k == "used_cpu_sys" || k == "used_cpu_user") {
			f, _ := strconv.ParseFloat(v, 64)
			total += f
		}
	}
	return total
}
