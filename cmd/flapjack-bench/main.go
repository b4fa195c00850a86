// Command flapjack-bench measures flapjack (`make bench`): it starts its own redis-server, runs
// the real flapjack binary as separate processes over generated event streams, and prints
// events/s, latency percentiles, peak RSS, Redis memory, Redis commands and round trips per
// event, and the CPU per event of flapjack and of Redis, next to redis-benchmark's figures on
// the same machine (and on the same Redis, as a ratio that drifts less than absolute rates on a
// shared machine). With --baseline, an older build is measured in the same run, side by side.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

type options struct {
	binary   string
	baseline string
	events   int
	checks   int
	quick    bool
	only     string
	latency  time.Duration
	commands bool
}

func main() {
	var o options
	flag.StringVar(&o.binary, "binary", "bin/flapjack", "the flapjack binary to measure")
	flag.StringVar(&o.baseline, "baseline", "", "an older flapjack binary measured in the same run, its figures printed beside the current ones (executive, scaling, pipeline, server, latency)")
	flag.IntVar(&o.events, "events", 1_000_000, "events in the executive throughput scenario")
	flag.IntVar(&o.checks, "checks", 100_000, "checks in the executive throughput scenario")
	flag.BoolVar(&o.quick, "quick", false, "ten times smaller streams (a smoke run)")
	flag.StringVar(&o.only, "only", "", "comma-separated scenarios to run (ceiling,executive,floor,checks,history,scaling,pipeline,server,latency,reports,web,nagios,stale,whatif,escalation,schedules)")
	flag.DurationVar(&o.latency, "latency-duration", 20*time.Second, "length of the latency run at 1,000 events/s")
	flag.BoolVar(&o.commands, "commands", false, "print Redis's time per command for each measured run (where the time goes)")
	flag.Parse()
	if o.quick {
		o.events /= 10
		o.checks /= 10
		o.latency /= 4
	}
	if _, err := os.Stat(o.binary); err != nil {
		fatalf("no flapjack binary at %s (run `make build` first): %v", o.binary, err)
	}
	builds := []build{{name: "this build", binary: o.binary}}
	if o.baseline != "" {
		if _, err := os.Stat(o.baseline); err != nil {
			fatalf("no baseline binary at %s: %v", o.baseline, err)
		}
		builds = []build{{name: "baseline", binary: o.baseline}, builds[0]}
	}
	b := &bench{o: o}
	fmt.Printf("flapjack benchmark, %s\n%s\n\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"), machine())
	// compared scenarios run once per build, the baseline first, so both meet the same machine
	// within minutes of each other.
	scenarios := []struct {
		name     string
		run      func() error
		compared bool
	}{
		{"ceiling", b.ceiling, false},
		{"executive", b.executiveThroughput, true},
		{"floor", b.floor, false},
		{"checks", b.checksIndependence, false},
		{"history", b.historyIndependence, false},
		{"scaling", b.twoExecutives, true},
		{"pipeline", b.pipeline, true},
		{"server", b.server, true},
		{"latency", b.latencyRuns, true},
		{"reports", b.reportReads, false},
		{"web", b.webReads, false},
		{"nagios", b.nagiosIntake, false},
		{"stale", b.staleTicks, false},
		{"whatif", b.whatifRun, false},
		{"escalation", b.escalationTick, false},
		{"schedules", b.scheduleRouting, false},
	}
	for _, s := range scenarios {
		if o.only != "" && !strings.Contains(","+o.only+",", ","+s.name+",") {
			continue
		}
		runs := builds[len(builds)-1:]
		if s.compared {
			runs = builds
		}
		for _, bl := range runs {
			b.build, b.o.binary = bl.name, bl.binary
			if len(runs) > 1 {
				fmt.Printf("-- %s (%s)\n", bl.name, bl.binary)
			}
			if err := s.run(); err != nil {
				fatalf("%s (%s): %v", s.name, bl.name, err)
			}
		}
	}
	b.printSummary()
}

// build is one flapjack binary measured.
type build struct{ name, binary string }

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "flapjack-bench: "+format+"\n", args...)
	os.Exit(1)
}

// machine describes where the figures come from.
func machine() string {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "model name") {
				model = strings.TrimSpace(strings.SplitN(l, ":", 2)[1])
				break
			}
		}
	}
	mem := ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		mem = strings.Fields(strings.SplitN(string(b), "\n", 2)[0])[1] + " kB RAM"
	}
	redisVersion := "redis-server not found"
	if out, err := exec.Command("redis-server", "--version").Output(); err == nil {
		redisVersion = strings.TrimSpace(string(out))
	}
	return fmt.Sprintf("machine: %s, %d cores, %s; %s; %s", model, runtime.NumCPU(), mem, runtime.Version(), redisVersion)
}
