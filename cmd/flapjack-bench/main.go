// Command flapjack-bench measures flapjack (`make bench`): it starts its own redis-server, runs
// the real flapjack binary as separate processes over generated event streams, and prints
// events/s, latency percentiles, peak RSS, Redis memory, and Redis commands and round trips per
// event, next to redis-benchmark's figure on the same machine as the ceiling.
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
	flag.IntVar(&o.events, "events", 1_000_000, "events in the executive throughput scenario")
	flag.IntVar(&o.checks, "checks", 100_000, "checks in the executive throughput scenario")
	flag.BoolVar(&o.quick, "quick", false, "ten times smaller streams (a smoke run)")
	flag.StringVar(&o.only, "only", "", "comma-separated scenarios to run (ceiling,executive,checks,history,scaling,pipeline,latency,reports,nagios,stale,whatif,escalation)")
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
	b := &bench{o: o}
	fmt.Printf("flapjack benchmark, %s\n%s\n\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"), machine())
	scenarios := []struct {
		name string
		run  func() error
	}{
		{"ceiling", b.ceiling},
		{"executive", b.executiveThroughput},
		{"checks", b.checksIndependence},
		{"history", b.historyIndependence},
		{"scaling", b.twoExecutives},
		{"pipeline", b.pipeline},
		{"latency", b.latencyRun},
		{"reports", b.reportReads},
		{"nagios", b.nagiosIntake},
		{"stale", b.staleTicks},
		{"whatif", b.whatifRun},
		{"escalation", b.escalationTick},
	}
	for _, s := range scenarios {
		if o.only != "" && !strings.Contains(","+o.only+",", ","+s.name+",") {
			continue
		}
		if err := s.run(); err != nil {
			fatalf("%s: %v", s.name, err)
		}
	}
	b.printSummary()
}

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
