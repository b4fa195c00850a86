package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/schema"
)

// bench holds the results of the scenarios run.
type bench struct {
	o     options
	rows  []row
	build string // the build being measured, "this build" or "baseline"
}

// add appends a row of the build being measured.
func (b *bench) add(r row) {
	r.build = b.build
	b.rows = append(b.rows, r)
}

// row is one line of the summary table.
type row struct {
	scenario, target string
	build            string
	eventsPerSec     float64
	p50, p95, p99    float64 // milliseconds; NaN when not measured
	rssMiB           float64
	redisMiB         float64
	cmdsPerEvent     float64
	tripsPerEvent    float64
	redisUsPerEvent  float64
	execUsPerEvent   float64 // CPU of the flapjack processes per event
	vsLpush          float64 // events/s over redis-benchmark LPUSH (50 clients, unpipelined) on the same Redis
	note             string
}

// redisEnv is a private redis-server and a pool on it.
type redisEnv struct {
	srv  *testredis.Server
	pool *redis.Pool
	url  string
	keys schema.Keys
}

func startRedis() (*redisEnv, error) {
	srv, err := testredis.Launch()
	if err != nil {
		return nil, err
	}
	pool := testredis.Pool(srv.Addr, 0)
	pool.MaxActive = 16
	return &redisEnv{srv: srv, pool: pool, url: "redis://" + srv.Addr + "/0", keys: schema.NewKeys("")}, nil
}

func (r *redisEnv) close() {
	r.pool.Close()
	r.srv.Stop()
}

func (r *redisEnv) do(cmd string, args ...any) (any, error) {
	c := r.pool.Get()
	defer c.Close()
	return c.Do(cmd, args...)
}

// push LPUSHes events in large pipelined commands; gen returns the i-th event.
func (r *redisEnv) push(n int, gen func(i int) string) error {
	c := r.pool.Get()
	defer c.Close()
	const per = 500
	pending := 0
	for i := 0; i < n; i += per {
		args := []any{r.keys.Events()}
		for j := i; j < min(i+per, n); j++ {
			args = append(args, gen(j))
		}
		if err := c.Send("LPUSH", args...); err != nil {
			return err
		}
		pending++
		if pending == 64 {
			if err := drain(c, pending); err != nil {
				return err
			}
			pending = 0
		}
	}
	return drain(c, pending)
}

func drain(c redis.Conn, n int) error {
	if err := c.Flush(); err != nil {
		return err
	}
	for ; n > 0; n-- {
		if _, err := c.Receive(); err != nil {
			return err
		}
	}
	return nil
}

// stats is a snapshot of Redis counters used to compute per-event costs.
type stats struct {
	calls   map[string]int64
	usec    map[string]int64
	cpu     float64 // used_cpu_user + used_cpu_sys, seconds
	memory  int64
	scripts int64
}

func (r *redisEnv) snapshot() (stats, error) {
	s := stats{calls: map[string]int64{}, usec: map[string]int64{}}
	info, err := redis.String(r.do("INFO", "all"))
	if err != nil {
		return s, err
	}
	re := regexp.MustCompile(`^cmdstat_([a-z|_]+):calls=(\d+),usec=(\d+)`)
	var user, sys float64
	for _, l := range strings.Split(info, "\r\n") {
		if m := re.FindStringSubmatch(l); m != nil {
			n, _ := strconv.ParseInt(m[2], 10, 64)
			s.calls[m[1]] = n
			u, _ := strconv.ParseInt(m[3], 10, 64)
			s.usec[m[1]] = u
		}
		if v, ok := strings.CutPrefix(l, "used_cpu_user:"); ok {
			user, _ = strconv.ParseFloat(v, 64)
		}
		if v, ok := strings.CutPrefix(l, "used_cpu_sys:"); ok {
			sys, _ = strconv.ParseFloat(v, 64)
		}
		if v, ok := strings.CutPrefix(l, "used_memory:"); ok {
			s.memory, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	s.cpu = user + sys
	s.scripts = s.calls["evalsha"] + s.calls["eval"]
	return s, nil
}

// roundTripCommands are commands flapjack stages send themselves and never from a script, so
// their count is the requests a stage made (pipelined ones share a round trip, so this is an
// upper bound on round trips).
var roundTripCommands = []string{"evalsha", "eval", "blmove", "multi", "hgetall", "smembers", "lrange", "ping", "select"}

// costs turns two snapshots into per-event figures: all commands Redis executed (scripts'
// inner commands included), the commands flapjack sent itself (round trips; a script call is
// one), and Redis CPU.
func costs(before, after stats, events int) (cmds, trips, redisUs float64) {
	total := int64(0)
	for name, n := range after.calls {
		if name == "info" || name == "config|resetstat" {
			continue
		}
		total += n - before.calls[name]
	}
	rt := int64(0)
	for _, name := range roundTripCommands {
		rt += after.calls[name] - before.calls[name]
	}
	e := float64(events)
	scripts := float64(after.scripts - before.scripts)
	return (float64(total) - scripts) / e, float64(rt) / e, (after.cpu - before.cpu) * 1e6 / e
}

// proc is a running flapjack process.
type proc struct {
	cmd     *exec.Cmd
	started time.Time
	stderr  *bytes.Buffer
	stdout  io.ReadCloser
	done    chan struct{}
	mu      sync.Mutex
}

func (b *bench) start(env []string, args ...string) (*proc, error) {
	cmd := exec.Command(b.o.binary, args...)
	cmd.Env = append(os.Environ(), env...)
	p := &proc{cmd: cmd, stderr: &bytes.Buffer{}, done: make(chan struct{})}
	cmd.Stderr = &lockedWriter{w: p.stderr, mu: &p.mu}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p.stdout = out
	p.started = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() { cmd.Wait(); close(p.done) }()
	return p, nil
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// cpu is the CPU time (user + system) the process used, after it exited.
func (p *proc) cpu() time.Duration {
	return p.cmd.ProcessState.UserTime() + p.cmd.ProcessState.SystemTime()
}

// wait waits for the process to exit and returns its wall time and peak RSS in MiB.
func (p *proc) wait(timeout time.Duration) (time.Duration, float64, error) {
	go io.Copy(io.Discard, p.stdout)
	select {
	case <-p.done:
	case <-time.After(timeout):
		p.cmd.Process.Kill()
		<-p.done
		return 0, 0, fmt.Errorf("%v did not finish within %v", p.cmd.Args, timeout)
	}
	took := time.Since(p.started)
	if !p.cmd.ProcessState.Success() {
		p.mu.Lock()
		defer p.mu.Unlock()
		return took, 0, fmt.Errorf("%v failed: %v\n%s", p.cmd.Args, p.cmd.ProcessState, tail(p.stderr.String(), 20))
	}
	return took, peakRSS(p.cmd.ProcessState), nil
}

// stop sends SIGTERM and waits.
func (p *proc) stop() float64 {
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
	return peakRSS(p.cmd.ProcessState)
}

func peakRSS(st *os.ProcessState) float64 {
	if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
		return float64(ru.Maxrss) / 1024 // Linux reports kilobytes
	}
	return math.NaN()
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func freeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fatalf("no free port: %v", err)
	}
	defer l.Close()
	return l.Addr().String()
}

// histogram is the executive's flapjack_event_processing_seconds, scraped from /metrics.
type histogram struct {
	bounds []float64
	counts []float64 // cumulative
}

// scrapeHistogram reads a Prometheus histogram from a /metrics endpoint.
func scrapeHistogram(addr, name string) (histogram, error) {
	var h histogram
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return h, err
	}
	defer resp.Body.Close()
	re := regexp.MustCompile(`^` + name + `_bucket\{.*le="([^"]+)"\} (\S+)`)
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		m := re.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		le, _ := strconv.ParseFloat(m[1], 64)
		if m[1] == "+Inf" {
			le = math.Inf(1)
		}
		n, _ := strconv.ParseFloat(m[2], 64)
		h.bounds = append(h.bounds, le)
		h.counts = append(h.counts, n)
	}
	return h, sc.Err()
}

// since is h without what earlier, a scrape of the same histogram, had counted.
func (h histogram) since(earlier histogram) histogram {
	if len(earlier.counts) != len(h.counts) {
		return h
	}
	out := histogram{bounds: h.bounds, counts: make([]float64, len(h.counts))}
	for i := range h.counts {
		out.counts[i] = h.counts[i] - earlier.counts[i]
	}
	return out
}

// quantile interpolates linearly inside the bucket holding the q-quantile (as Prometheus's
// histogram_quantile does); the result is in milliseconds.
func (h histogram) quantile(q float64) float64 {
	if len(h.counts) == 0 || h.counts[len(h.counts)-1] == 0 {
		return math.NaN()
	}
	rank := q * h.counts[len(h.counts)-1]
	prevBound, prevCount := 0.0, 0.0
	for i, c := range h.counts {
		if c >= rank {
			upper := h.bounds[i]
			if math.IsInf(upper, 1) {
				return prevBound * 1000
			}
			if c == prevCount {
				return upper * 1000
			}
			return (prevBound + (upper-prevBound)*(rank-prevCount)/(c-prevCount)) * 1000
		}
		prevBound, prevCount = h.bounds[i], c
	}
	return math.NaN()
}

// percentiles of raw samples, in milliseconds.
func percentiles(samples []time.Duration) (p50, p95, p99 float64) {
	if len(samples) == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	sort.Slice(samples, func(i, j int) bool { return samples[i] < samples[j] })
	at := func(q float64) float64 {
		i := int(math.Ceil(q*float64(len(samples)))) - 1
		return float64(samples[max(i, 0)]) / float64(time.Millisecond)
	}
	return at(0.50), at(0.95), at(0.99)
}

// waitEmpty polls until every list is empty (or timeout).
func (r *redisEnv) waitEmpty(timeout time.Duration, lists ...string) error {
	deadline := time.Now().Add(timeout)
	for {
		left := int64(0)
		for _, l := range lists {
			n, err := redis.Int64(r.do("LLEN", l))
			if err != nil {
				return err
			}
			left += n
		}
		if left == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d items still queued after %v", left, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (b *bench) printSummary() {
	if len(b.rows) == 0 {
		return
	}
	fmt.Println("\n| scenario | build | target | events/s | ÷ LPUSH | p50 ms | p95 ms | p99 ms | peak RSS MiB | Redis MiB | Redis cmds/event | requests/event | Redis µs/event | flapjack µs/event | notes |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	num := func(v float64, prec int) string {
		if math.IsNaN(v) || v == 0 {
			return "–"
		}
		return strconv.FormatFloat(v, 'f', prec, 64)
	}
	for _, r := range b.rows {
		fmt.Printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.scenario, r.build, r.target,
			num(r.eventsPerSec, 0), num(r.vsLpush, 2), num(r.p50, 2), num(r.p95, 2), num(r.p99, 2), num(r.rssMiB, 1), num(r.redisMiB, 1),
			num(r.cmdsPerEvent, 1), num(r.tripsPerEvent, 3), num(r.redisUsPerEvent, 1), num(r.execUsPerEvent, 1), r.note)
	}
	fmt.Println("\nThe machine is shared: absolute rates drift between runs; CPU per event and the ratio to LPUSH on the same Redis compare better.")
}

// lpushRate runs redis-benchmark LPUSH (50 clients, unpipelined) against env's server: the
// yardstick events/s are divided by, measured on the same Redis just before and after a run.
func lpushRate(env *redisEnv) (float64, error) {
	port := env.srv.Addr[strings.LastIndexByte(env.srv.Addr, ':')+1:]
	out, err := exec.Command("redis-benchmark", "-p", port, "-t", "lpush", "-c", "50", "-n", "200000", "-P", "1", "--csv").Output()
	if err != nil {
		return 0, fmt.Errorf("redis-benchmark: %w", err)
	}
	recs, err := csv.NewReader(strings.NewReader(string(out))).ReadAll()
	if err != nil || len(recs) < 2 || len(recs[1]) < 2 {
		return 0, fmt.Errorf("redis-benchmark: unexpected output %q", out)
	}
	rps, err := strconv.ParseFloat(recs[1][1], 64)
	if err != nil {
		return 0, fmt.Errorf("redis-benchmark: %w", err)
	}
	env.do("DEL", "mylist") // redis-benchmark's key
	return rps, nil
}

// printCommands shows, per command, calls and Redis time per event between two snapshots.
func printCommands(before, after stats, events int) {
	type line struct {
		name        string
		calls, usec float64
	}
	var lines []line
	for name, n := range after.calls {
		calls := float64(n - before.calls[name])
		usec := float64(after.usec[name] - before.usec[name])
		if calls > 0 {
			lines = append(lines, line{name, calls / float64(events), usec / float64(events)})
		}
	}
	sort.Slice(lines, func(i, j int) bool { return lines[i].usec > lines[j].usec })
	fmt.Printf("   %-20s %12s %12s\n", "command", "calls/event", "µs/event")
	for _, l := range lines {
		fmt.Printf("   %-20s %12.3f %12.2f\n", l.name, l.calls, l.usec)
	}
	fmt.Printf("   (total Redis CPU %.1f µs/event; script time includes the commands it runs)\n", (after.cpu-before.cpu)*1e6/float64(events))
}
