// Package staleness owns results that stop arriving (docs/decisions.md D19): which ttl a check's result
// sets (the event's own `ttl`, else executive.ttl_by_check, else executive.default_ttl), and the
// tick that finds checks whose ttl ran out — through the sorted set stale_deadlines, never a
// scan of all checks — and queues one `unknown` result per silence period for the executive,
// which then treats it like any other failing result. The executive arms a deadline within a
// real result's own atomic writes (checkstate.ArmStale).
package staleness

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/flapjackgo/flapjack/internal/humantime"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/schema"
)

// Rule gives the checks whose ENTITY:CHECK matches Pattern a default ttl (0: none).
type Rule struct {
	Pattern *regexp.Regexp
	TTL     int64
}

// Policy decides the ttl of a result that carries none.
type Policy struct {
	Default int64 // seconds; 0 = off
	Rules   []Rule
}

// ParseRules reads executive.ttl_by_check entries, each `REGEX=DURATION` (split at the last
// `=`; the duration in seconds, a Go duration or Flapjack's words; 0 exempts the checks).
func ParseRules(entries []string) ([]Rule, error) {
	rules := make([]Rule, 0, len(entries))
	for _, entry := range entries {
		i := strings.LastIndexByte(entry, '=')
		if i <= 0 {
			return nil, fmt.Errorf("%q is not REGEX=DURATION", entry)
		}
		re, err := regexp.Compile(entry[:i])
		if err != nil {
			return nil, fmt.Errorf("%q: %w", entry, err)
		}
		ttl, err := TTLSeconds(strings.TrimSpace(entry[i+1:]))
		if err != nil {
			return nil, fmt.Errorf("%q: %w", entry, err)
		}
		rules = append(rules, Rule{Pattern: re, TTL: ttl})
	}
	return rules, nil
}

// TTLSeconds reads a ttl setting: whole seconds from 0 (none) to schema.MaxTTL.
func TTLSeconds(text string) (int64, error) {
	d, err := humantime.Parse(text)
	if err != nil {
		return 0, err
	}
	return DurationSeconds(d)
}

// DurationSeconds checks a ttl given as a duration.
func DurationSeconds(d time.Duration) (int64, error) {
	if d < 0 || d%time.Second != 0 || d > schema.MaxTTL*time.Second {
		return 0, fmt.Errorf("a ttl is whole seconds from 0 to %d, got %v", schema.MaxTTL, d)
	}
	return int64(d / time.Second), nil
}

// TTL is the ttl a real result sets for its check: its own, else the first matching rule's,
// else the default (0: none).
func (p Policy) TTL(ev *schema.Event) int64 {
	if ev.HasTTL {
		return ev.TTL
	}
	if len(p.Rules) > 0 {
		id := ev.ID()
		for _, r := range p.Rules {
			if r.Pattern.MatchString(id) {
				return r.TTL
			}
		}
	}
	return p.Default
}

// Arm adds to a real service result's writes the deadline its ttl sets; stale results and
// results without a ttl add nothing.
func (p Policy) Arm(ops *model.Ops, keys schema.Keys, ev *schema.Event, now int64) {
	if ev.Stale {
		return
	}
	if ttl := p.TTL(ev); ttl > 0 {
		checkstate.ArmStale(ops, keys, ev.ID(), schema.StaleEntry{TTL: ttl, Last: now, Tags: ev.Tags})
	}
}

// Summary is a stale result's summary: "stale: no result for 5 minutes (ttl 300 s)".
func Summary(silent, ttl int64) string {
	return fmt.Sprintf("stale: no result for %s (ttl %d s)", humantime.Words(time.Duration(silent)*time.Second), ttl)
}
