package main

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"time"
)

// reportReads: the JSON API's reads over 1,000 checks with a state history (each check
// changes state several times), against a real `flapjack receiver http`: ms per request of
// GET /status_report/checks, /outage_report/checks and /downtime_report/checks (every current
// check) and GET /checks, then GET /checks over 10,000 checks.
func (b *bench) reportReads() error {
	env, err := startRedis()
	if err != nil {
		return err
	}
	defer env.close()
	const checks, rounds, requests = 1000, 10, 30
	fmt.Printf("== JSON API reads over %d checks with %d events each (state changes in their history), %d requests per route\n", checks, rounds, requests)
	gen := func(i int) string {
		c, round := i%checks, i/checks
		state := "ok"
		if (c+round)%4 == 0 {
			state = "critical"
		}
		return serviceEvent(fmt.Sprintf("host-%d.example.com", c/10), fmt.Sprintf("check-%d", c%10), state, base+int64(round*60))
	}
	if err := env.push(checks*rounds, gen); err != nil {
		return err
	}
	if _, err := b.runExecutives(env, checks*rounds, 1); err != nil {
		return err
	}
	addr := freeAddr()
	srv, err := b.start(append([]string{"FLAPJACK_REDIS_URL=" + env.url, "FLAPJACK_HTTP_ADDR=" + addr}, quietEnv...), "receiver", "http")
	if err != nil {
		return err
	}
	defer srv.stop()
	go io.Copy(io.Discard, srv.stdout)
	root := "http://" + addr
	if err := waitReady(root+"/readyz", 30*time.Second); err != nil {
		return err
	}
	window := url.Values{"start_time": {time.Unix(base, 0).Format(time.RFC3339)},
		"end_time": {time.Unix(base+int64(rounds*60), 0).Format(time.RFC3339)}}.Encode()
	for _, path := range []string{"/status_report/checks", "/outage_report/checks?" + window, "/downtime_report/checks?" + window, "/checks"} {
		if err := b.timeRoute(root, path, checks, requests); err != nil {
			return err
		}
	}
	// GET /checks is the one read a client makes of everything: time it over 10,000 checks.
	const allChecks = 10000
	more := func(i int) string {
		c := checks + i
		return serviceEvent(fmt.Sprintf("host-%d.example.com", c/10), fmt.Sprintf("check-%d", c%10), "ok", base)
	}
	if err := env.push(allChecks-checks, more); err != nil {
		return err
	}
	if _, err := b.runExecutives(env, allChecks-checks, 1); err != nil {
		return err
	}
	return b.timeRoute(root, "/checks", allChecks, requests)
}

// timeRoute times GETs of path and adds its row.
func (b *bench) timeRoute(root, path string, checks, requests int) error {
	samples, status, size, err := timeGets(root+path, requests)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("GET %s: status %d", path, status)
	}
	p50, p95, p99 := percentiles(samples)
	fmt.Printf("   GET %s over %d checks: p50/p95/p99 %.1f / %.1f / %.1f ms per request (%d KiB)\n", trimQuery(path), checks, p50, p95, p99, size/1024)
	b.add(row{scenario: fmt.Sprintf("GET %s, %d checks", trimQuery(path), checks), target: "< 200 ms",
		eventsPerSec: math.NaN(), p50: p50, p95: p95, p99: p99, note: fmt.Sprintf("%d requests, %d KiB each", requests, size/1024)})
	return nil
}

func trimQuery(path string) string {
	if u, err := url.Parse(path); err == nil {
		return u.Path
	}
	return path
}

// waitReady polls u until it answers 200.
func waitReady(u string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(u); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready within %v", u, timeout)
}

// timeGets times n sequential GETs of u (after one warm-up), reading each body whole.
func timeGets(u string, n int) (samples []time.Duration, status, size int, err error) {
	for i := 0; i <= n; i++ {
		started := time.Now()
		resp, err := http.Get(u)
		if err != nil {
			return nil, 0, 0, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, 0, 0, err
		}
		took := time.Since(started)
		status, size = resp.StatusCode, len(body)
		if status != http.StatusOK {
			return nil, status, size, nil
		}
		if i > 0 {
			samples = append(samples, took)
		}
	}
	return samples, status, size, nil
}
