package whatif

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/flapjackgo/flapjack/schema"
)

// A replay is a chain of round trips between whatif and its scratch server, using about one
// core between the two however many checks it decides. The checks are therefore split into
// disjoint groups, each replayed in scratch spaces of its own, concurrently. That is exact
// while no decision about one check reads another: every group is ticked at the seconds of the
// other groups' lines, so its clock stops where a single replay's would, and the alerts are
// compared in one order whatever the grouping. Rollup thresholds couple the checks alerting a
// contact's medium: with any, the history is replayed as one group.

// minGroupChecks is the fewest checks worth a group of their own: a group costs two scratch
// servers and a copy of the configuration.
const minGroupChecks = 25

// groupCount chooses how many groups the checks are replayed in, and says why when it is not
// the plain single replay. The scratch spaces of the first group already hold both scenarios'
// configuration.
func groupCount(ctx context.Context, o Options, checks int) (int, string, error) {
	if o.OpenSpaces == nil {
		return 1, "", nil
	}
	n := o.Groups
	if n <= 0 {
		n = min(runtime.NumCPU(), checks/minGroupChecks)
	}
	if n <= 1 {
		return 1, "", nil
	}
	for i, sc := range []Scenario{o.Baseline, o.Candidate} {
		contacts, err := readScenarioContacts(ctx, sc.Space)
		if err != nil {
			return 0, "", err
		}
		for _, c := range contacts {
			for _, m := range c.Media {
				if m.RollupThreshold != nil && *m.RollupThreshold > 0 {
					return 1, fmt.Sprintf("the %s has a rollup threshold (contact %s, %s): rollup couples the checks alerting a contact's medium, so they are replayed as one group, not %d concurrent ones",
						[]string{"live configuration", "candidate"}[i], c.ID, m.Name, n), nil
				}
			}
		}
	}
	return n, fmt.Sprintf("%d checks replayed in %d concurrent groups", checks, n), nil
}

// openGroups prepares the runs of every group: the first in the spaces of o, the others in
// spaces opened with o.OpenSpaces holding the same configuration. The returned function closes
// what was opened, also on an error.
func openGroups(ctx context.Context, o Options, live *liveConfig, n int) ([][2]*run, func(), error) {
	runs := make([][2]*run, n)
	runs[0] = [2]*run{{sc: o.Baseline}, {sc: o.Candidate}}
	closers := make([]func(), n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for g := 1; g < n; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			spaces, closer, err := o.OpenSpaces(ctx)
			if err != nil {
				errs[g] = fmt.Errorf("open the scratch spaces of group %d: %w", g+1, err)
				return
			}
			closers[g] = closer
			base, cand := o.Baseline, o.Candidate
			base.Space, cand.Space = spaces[0], spaces[1]
			runs[g] = [2]*run{{sc: base}, {sc: cand}}
			_, errs[g] = configure(ctx, o, live, base.Space, cand.Space)
		}()
	}
	wg.Wait()
	closeAll := func() {
		for _, c := range closers {
			if c != nil {
				c()
			}
		}
	}
	for _, err := range errs {
		if err != nil {
			return nil, closeAll, err
		}
	}
	for _, g := range runs {
		for _, r := range g {
			r.in = make(chan []item, 16)
		}
	}
	return runs, closeAll, nil
}

// chunkItems is how many items the feeder hands a run at once.
const chunkItems = 256

// feeder hands each line to the group of its check, and a tick to every other group at each
// second's first line: a single replay runs the previous second's batch, the staleness
// deadlines and the escalation steps due at that line, and every group must do the same at
// the same point of its own lines. The group owning the first line does it with that line.
type feeder struct {
	runs    [][2]*run
	group   map[string]int
	next    int
	pending [][]item
	second  int64
	started bool
}

func newFeeder(runs [][2]*run) *feeder {
	return &feeder{runs: runs, group: map[string]int{}, pending: make([][]item, len(runs))}
}

func (f *feeder) feed(l line) {
	g, ok := f.group[l.checkID]
	if !ok {
		g = f.next % len(f.runs)
		f.next++
		f.group[l.checkID] = g
	}
	if !f.started || l.at != f.second {
		f.started, f.second = true, l.at
		for other := range f.runs {
			if other != g {
				f.add(other, item{at: l.at})
			}
		}
	}
	f.add(g, item{at: l.at, raw: l.raw})
}

func (f *feeder) add(g int, it item) {
	f.pending[g] = append(f.pending[g], it)
	if len(f.pending[g]) >= chunkItems {
		f.send(g)
	}
}

// send hands a group's pending items to its two runs (which only read them).
func (f *feeder) send(g int) {
	for _, r := range f.runs[g] {
		r.in <- f.pending[g]
	}
	f.pending[g] = make([]item, 0, chunkItems)
}

func (f *feeder) close() {
	for g, runs := range f.runs {
		if len(f.pending[g]) > 0 {
			f.send(g)
		}
		for _, r := range runs {
			close(r.in)
		}
	}
}

// sortAlerts puts a run's alerts in one order, whatever the order the groups produced them in:
// by time, then by what the report shows of them.
func sortAlerts(alerts []schema.Alert) {
	slices.SortStableFunc(alerts, func(a, b schema.Alert) int {
		ra, rb := alertKey(&a), alertKey(&b)
		return cmp.Or(cmp.Compare(ra.Time, rb.Time), cmp.Compare(ra.Entity, rb.Entity), cmp.Compare(ra.Check, rb.Check),
			cmp.Compare(ra.Type, rb.Type), cmp.Compare(ra.State, rb.State), cmp.Compare(ra.Contact, rb.Contact),
			cmp.Compare(ra.Medium, rb.Medium), cmp.Compare(ra.Step, rb.Step), cmp.Compare(ra.Policy, rb.Policy))
	})
}

// alertKey is alertRef without its formatted time.
func alertKey(a *schema.Alert) AlertRef {
	entity, check := a.EntityCheck()
	ref := AlertRef{Entity: entity, Check: check, Type: a.AlertType(), State: a.State, Contact: a.ContactID, Medium: a.Media}
	if a.Time != nil {
		ref.Time = *a.Time
	}
	if a.Escalation != nil {
		ref.Step, ref.Policy = a.Escalation.Step, a.Escalation.PolicyID
	}
	return ref
}
