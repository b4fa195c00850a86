package status

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/schema"
)

// Escalation is one escalation ladder in progress.
type Escalation struct {
	Policy     string   `json:"policy"`
	Check      string   `json:"check"`
	StepsFired int      `json:"steps_fired"`
	Steps      int      `json:"steps"` // in the policy now (0: the policy was removed)
	StartedAt  int64    `json:"started_at"`
	NextDue    int64    `json:"next_step_due"` // 0: no step to come
	Alerted    []string `json:"alerted"`
}

// ReadEscalations reads the ladders in progress, soonest next step first, at most limit (0:
// all), and how many there are.
func ReadEscalations(conn redis.Conn, keys schema.Keys, limit int) ([]Escalation, int64, error) {
	ladders, total, err := roster.EscalationsInProgress(conn, keys, limit)
	if err != nil || len(ladders) == 0 {
		return nil, total, err
	}
	policies, _, err := roster.EscalationPolicies(conn, keys)
	if err != nil {
		return nil, 0, err
	}
	steps := map[string]int{}
	for _, p := range policies {
		steps[p.ID] = len(p.Steps)
	}
	out := make([]Escalation, len(ladders))
	for i, l := range ladders {
		out[i] = Escalation{Policy: l.PolicyID, Check: l.CheckID, StepsFired: l.Fired, Steps: steps[l.PolicyID],
			StartedAt: l.StartedAt, NextDue: l.NextDue, Alerted: l.Alerted}
		if out[i].Alerted == nil {
			out[i].Alerted = []string{}
		}
	}
	return out, total, nil
}

// WriteEscalations prints the escalations in progress (nothing when there are none).
func (s Snapshot) WriteEscalations(w io.Writer) error {
	if len(s.Escalations) == 0 {
		return nil
	}
	now := time.Unix(s.Time, 0)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "\nescalations in progress\t%d\n", s.EscalationsTotal)
	fmt.Fprintln(tw, "CHECK\tPOLICY\tSTEP\tSTARTED\tNEXT STEP\tALERTED")
	for _, e := range s.Escalations {
		next := "none (last step fired)"
		if e.NextDue > 0 {
			next = "step " + fmt.Sprint(min(e.StepsFired+1, e.Steps)) + " in " + Compact(time.Unix(e.NextDue, 0).Sub(now))
			if e.NextDue <= s.Time {
				next = "step " + fmt.Sprint(min(e.StepsFired+1, e.Steps)) + " due now"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d of %d\t%s ago\t%s\t%s\n", e.Check, e.Policy, e.StepsFired, e.Steps,
			Compact(now.Sub(time.Unix(e.StartedAt, 0))), next, strings.Join(e.Alerted, ", "))
	}
	if more := s.EscalationsTotal - int64(len(s.Escalations)); more > 0 {
		fmt.Fprintf(tw, "... and %d more\n", more)
	}
	return tw.Flush()
}
