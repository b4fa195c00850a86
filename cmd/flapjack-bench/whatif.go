package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/model/roster"
)

// whatifRun: `flapjack whatif` over a recorded history. The history is recorded through the
// live path with simulated time (`flapjack replay` with executive.archive_events on): checks
// reporting once a minute, each failing for 10 minutes every 6 hours. Then whatif replays it
// twice (baseline and a candidate initial_failure_delay) from the archive and from state
// history, with the default scratch (a private redis-server per run) and with --scratch-redis. The archive's Redis
// memory per event is measured to size a week of 1,000 checks.
func (b *bench) whatifRun() error {
	// 1,000 checks as in the target (one event a minute each), over fewer hours
	checks, hours := 1000, 2
	if b.o.quick {
		checks, hours = 100, 1
	}
	events := checks * hours * 60
	fmt.Printf("== whatif over %d checks x %d h at one event a minute (%d events)\n", checks, hours, events)
	live, err := startRedis()
	if err != nil {
		return err
	}
	defer live.close()
	conn := live.pool.Get()
	_, err = roster.SeedContact(context.Background(), conn, live.keys, roster.ContactData{ID: "oncall",
		ContactInfo: roster.ContactInfo{FirstName: "On", LastName: "Call", Timezone: "UTC"},
		Media:       []roster.Medium{{Name: "email", Address: "oncall@example.com"}}}, true)
	conn.Close()
	if err != nil {
		return err
	}
	start := (base - int64(hours)*3600) / 3600 * 3600
	f, err := os.CreateTemp("", "flapjack-bench-whatif-*.jsonl")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	w := bufio.NewWriter(f)
	for m := 0; m < hours*60; m++ {
		for c := 0; c < checks; c++ {
			state := "ok"
			if (m+c*7)%360 < 10 {
				state = "critical"
			}
			fmt.Fprintln(w, serviceEvent(fmt.Sprintf("host-%d.example.com", c/10), fmt.Sprintf("check-%d", c%10), state, start+int64(m*60)))
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	f.Close()
	memBefore, err := usedMemory(live)
	if err != nil {
		return err
	}
	env := append([]string{"FLAPJACK_REDIS_URL=" + live.url, "FLAPJACK_EXECUTIVE_ARCHIVE_EVENTS=true",
		"FLAPJACK_EXECUTIVE_EVENTS_ARCHIVE_MAXAGE=720h", "FLAPJACK_NOTIFIER_EMAIL_QUEUE=email_notifications"}, quietEnv...)
	rec, err := b.start(env, "replay", "--input", f.Name())
	if err != nil {
		return err
	}
	took, rss, err := rec.wait(time.Hour)
	if err != nil {
		return err
	}
	r := runResult{took: took, rss: rss, eventsPerSec: float64(events) / took.Seconds()}
	b.record("whatif: record (replay, archive on)", "–", r, 0, fmt.Sprintf("%d events", events))
	fmt.Printf("   recorded with `flapjack replay`: %.0f events/s\n", r.eventsPerSec)
	archiveBytes, archived, err := archiveSize(live)
	if err != nil {
		return err
	}
	memAfter, _ := usedMemory(live)
	perEvent := float64(archiveBytes) / float64(archived)
	week := 1000 * 7 * 24 * 60
	fmt.Printf("   archive: %d events in %d bytes (MEMORY USAGE), %.0f bytes/event; whole database grew %.1f MiB\n",
		archived, archiveBytes, perEvent, float64(memAfter-memBefore)/(1<<20))
	fmt.Printf("   a week of 1,000 checks at one event a minute (%d events) would take %.1f GiB of Redis for the archive\n",
		week, perEvent*float64(week)/(1<<30))

	scratch, err := startRedis()
	if err != nil {
		return err
	}
	defer scratch.close()
	from, until := time.Unix(start, 0).UTC().Format(time.RFC3339), time.Unix(start+int64(hours)*3600-1, 0).UTC().Format(time.RFC3339)
	for _, run := range []struct {
		source, scratch string
		all             bool
	}{{"archive", "", false}, {"archive", "", true}, {"archive", scratch.url, false}, {"state_history", "", false}, {"state_history", "", true}} {
		args := []string{"whatif", "--from", from, "--until", until, "--source", run.source,
			"--set", "executive.initial_failure_delay=5m", "--format", "json"}
		where := "private scratch servers"
		if run.scratch != "" {
			args = append(args, "--scratch-redis", run.scratch)
			where = "--scratch-redis (one server)"
		}
		if run.all {
			args = append(args, "--all-events")
			where += ", --all-events"
		}
		p, report, took, err := b.runWhatif(env[:1], args...)
		if err != nil {
			return err
		}
		lines := countLines(report)
		r := runResult{took: took, rss: peakRSS(p.cmd.ProcessState), eventsPerSec: float64(events) / took.Seconds()}
		tenM := 10_080_000 / r.eventsPerSec
		note := fmt.Sprintf("%s; %d events of history in %.1f s; 10 M events ≈ %.1f min", where, events, took.Seconds(), tenM/60)
		b.record("whatif from "+run.source, map[string]string{"archive": "10 M events < 10 min", "state_history": "< 1 min"}[run.source], r, 0, note)
		fmt.Printf("   whatif --source %s, %s: %.1f s, %.0f events of history/s, peak RSS %.0f MiB, %d report lines; 10 M events ≈ %.1f min\n",
			run.source, where, took.Seconds(), r.eventsPerSec, r.rss, lines, tenM/60)
	}
	return b.whatifWeekOfStates()
}

// whatifWeekOfStates: the state-history path over the target, a week of 1,000 checks
// reporting once a minute (10,080,000 events, of which only state changes are recorded). The
// history is written on the documented keys as the executive writes it (a state change every
// time a check starts or stops failing: 10 minutes every 6 hours) with a decision record
// showing 60 s repeats, so whatif synthesises the failing minutes between changes.
func (b *bench) whatifWeekOfStates() error {
	checks, days := 1000, 7
	if b.o.quick {
		checks = 100
	}
	events := checks * days * 24 * 60
	fmt.Printf("== whatif from state history: %d checks x %d days at one event a minute (%d events, state changes recorded)\n", checks, days, events)
	live, err := startRedis()
	if err != nil {
		return err
	}
	defer live.close()
	c := live.pool.Get()
	defer c.Close()
	if _, err := roster.SeedContact(context.Background(), c, live.keys, roster.ContactData{ID: "oncall",
		ContactInfo: roster.ContactInfo{FirstName: "On", LastName: "Call", Timezone: "UTC"},
		Media:       []roster.Medium{{Name: "email", Address: "oncall@example.com"}}}, true); err != nil {
		return err
	}
	k := live.keys
	start := (base - int64(days)*86400) / 3600 * 3600
	end := start + int64(days)*86400 - 60
	pending := 0
	send := func(cmd string, args ...any) error {
		c.Send(cmd, args...)
		if pending++; pending == 5000 {
			pending = 0
			return drain(c, 5000)
		}
		return nil
	}
	for n := 0; n < checks; n++ {
		entity, check := fmt.Sprintf("host-%d.example.com", n/10), fmt.Sprintf("check-%d", n%10)
		id := entity + ":" + check
		state := ""
		for m := int64(0); m < int64(days)*24*60; m++ {
			next := "ok"
			if (m+int64(n)*7)%360 < 10 {
				next = "critical"
			}
			if next == state {
				continue
			}
			state = next
			ts := start + m*60
			for _, op := range [][]any{{"RPUSH", k.States(id), ts}, {"ZADD", k.SortedStateTimestamps(id), ts, ts},
				{"SET", k.StateAt(id, ts), state}, {"SET", k.SummaryAt(id, ts), "generated " + state}} {
				if err := send(op[0].(string), op[1:]...); err != nil {
					return err
				}
			}
		}
		explain := `{"time":%d,"stage":"executive","type":"service","state":"critical","verdict":"notified","notification":"problem","severity":"critical"}`
		for _, op := range [][]any{
			{"HSET", k.Check(id), "state", state, "last_update", end},
			{"ZADD", k.AllChecks(), end, id}, {"ZADD", k.AllChecksFor(entity), end, check},
			{"LPUSH", k.Explain(id), fmt.Sprintf(explain, end-120), fmt.Sprintf(explain, end-60)},
		} {
			if err := send(op[0].(string), op[1:]...); err != nil {
				return err
			}
		}
	}
	if err := drain(c, pending); err != nil {
		return err
	}
	p, report, took, err := b.runWhatif([]string{"FLAPJACK_REDIS_URL=" + live.url}, "whatif", "--from", time.Unix(start, 0).UTC().Format(time.RFC3339),
		"--until", time.Unix(end, 0).UTC().Format(time.RFC3339), "--source", "state_history",
		"--set", "executive.initial_failure_delay=5m", "--format", "json")
	if err != nil {
		return err
	}
	var rep struct {
		History  int `json:"history_lines"`
		Replayed int `json:"lines_replayed"`
	}
	if err := json.Unmarshal(report, &rep); err != nil {
		return fmt.Errorf("whatif report: %w", err)
	}
	r := runResult{took: took, rss: peakRSS(p.cmd.ProcessState), eventsPerSec: float64(events) / took.Seconds()}
	// the whatif process's CPU with its scratch redis-servers' (its children, waited for)
	cpu := p.cmd.ProcessState.UserTime() + p.cmd.ProcessState.SystemTime()
	note := fmt.Sprintf("a week of %d checks (%d events; %d lines rebuilt, %d replayed twice) in %.1f s, %.0f s of CPU", checks, events, rep.History, rep.Replayed, took.Seconds(), cpu.Seconds())
	b.record("whatif from state_history, a week", "< 1 min", r, 0, note)
	fmt.Printf("   %s, peak RSS %.0f MiB\n", note, r.rss)
	return nil
}

func usedMemory(r *redisEnv) (int64, error) {
	info, err := redis.String(r.do("INFO", "memory"))
	if err != nil {
		return 0, err
	}
	var n int64
	for _, l := range strings.Split(info, "\r\n") {
		if _, err := fmt.Sscanf(l, "used_memory:%d", &n); err == nil {
			return n, nil
		}
	}
	return 0, fmt.Errorf("no used_memory in INFO")
}

// archiveSize sums MEMORY USAGE and LLEN of the events_archive keys.
func archiveSize(r *redisEnv) (bytes, events int64, err error) {
	keys, err := redis.Strings(r.do("SMEMBERS", r.keys.KnownEventsArchiveKeys()))
	if err != nil {
		return 0, 0, err
	}
	for _, k := range keys {
		n, err := redis.Int64(r.do("MEMORY", "USAGE", k, "SAMPLES", 0))
		if err != nil {
			return 0, 0, err
		}
		l, err := redis.Int64(r.do("LLEN", k))
		if err != nil {
			return 0, 0, err
		}
		bytes += n
		events += l
	}
	if events == 0 {
		return 0, 0, fmt.Errorf("the recording archived nothing")
	}
	return bytes, events, nil
}

func countLines(b []byte) int {
	n := 0
	for _, c := range b {
		if c == '\n' {
			n++
		}
	}
	return n
}

// runWhatif runs a flapjack command (whatif) to its end and returns its standard output and how
// long it took; a failed run is an error with the end of its standard error.
func (b *bench) runWhatif(env []string, args ...string) (*proc, []byte, time.Duration, error) {
	p, err := b.start(env, args...)
	if err != nil {
		return nil, nil, 0, err
	}
	out := make(chan []byte, 1)
	go func() { text, _ := io.ReadAll(p.stdout); out <- text }()
	<-p.done
	took := time.Since(p.started)
	report := <-out
	if !p.cmd.ProcessState.Success() {
		return nil, nil, 0, fmt.Errorf("whatif failed: %s", tail(p.stderr.String(), 20))
	}
	return p, report, took, nil
}
