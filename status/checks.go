package status

import (
	"cmp"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/model/views"
	"github.com/flapjackgo/flapjack/schema"
)

// DefaultLimit is how many checks a listing shows unless told otherwise.
const DefaultLimit = 50

// statusChunk is how many checks one facts script reads (as readFailing does).
const statusChunk = 500

// CheckQuery selects checks for the on-call views: `flapjack status` (failing checks under the
// health summary) and `flapjack checks [--failing] [--entity RE] [--check RE] [--tag T]`.
type CheckQuery struct {
	// FailingOnly lists the members of failed_checks; otherwise every current check (members of
	// current_checks:ENTITY) and every failing one.
	FailingOnly bool
	// Entity and Check are Go RE2 patterns matched anywhere in the entity and check names
	// (anchor them with ^ and $); "" matches everything. Entity names are stored lower-cased.
	Entity, Check string
	// Tag keeps checks whose entity carries the tag (entity_tag:TAG, as imported) or whose
	// rule-matching tags hold it (the entity name split at the first dot and the check name's
	// words, lower-cased: schema.TagSet). "" keeps everything. Checks have no stored tags of
	// their own: Flapjack 1.x's check_tag:TAG sets hold no check ids.
	Tag string
	// Limit is how many rows to return: 0 means DefaultLimit, a negative value every row.
	Limit int
}

// Validate compiles the patterns, so a caller can report a bad one before touching Redis.
func (q CheckQuery) Validate() error {
	_, err := q.compile()
	return err
}

type matcher struct {
	entity, check *regexp.Regexp
	tag           string
}

func (q CheckQuery) compile() (matcher, error) {
	var m matcher
	var err error
	if q.Entity != "" {
		if m.entity, err = regexp.Compile(q.Entity); err != nil {
			return m, fmt.Errorf("entity pattern: %w", err)
		}
	}
	if q.Check != "" {
		if m.check, err = regexp.Compile(q.Check); err != nil {
			return m, fmt.Errorf("check pattern: %w", err)
		}
	}
	m.tag = q.Tag
	return m, nil
}

func (m matcher) filters() bool { return m.entity != nil || m.check != nil || m.tag != "" }

func (m matcher) names(r model.CheckRef) bool {
	return (m.entity == nil || m.entity.MatchString(r.Entity)) && (m.check == nil || m.check.MatchString(r.Check))
}

// derivedTag reports whether tag is one of the check's rule-matching tags that need no storage.
func derivedTag(r model.CheckRef, tag string) bool {
	return slices.Contains(schema.TagSet(&schema.Event{Entity: r.Entity, Check: r.Check}, nil), tag)
}

func (q CheckQuery) limit() int {
	switch {
	case q.Limit == 0:
		return DefaultLimit
	case q.Limit < 0:
		return -1
	}
	return q.Limit
}

// CheckRow is one line of a listing.
type CheckRow struct {
	Entity string `json:"entity"`
	Check  string `json:"check"`
	State  string `json:"state"` // "" when the check has no stored state
	// Since is the check's last state change (unix seconds; 0 = unknown).
	Since   int64  `json:"since"`
	Summary string `json:"summary"`
	// Acknowledged: unscheduled maintenance covers now. InMaintenance: scheduled maintenance does.
	Acknowledged  bool `json:"acknowledged"`
	InMaintenance bool `json:"in_maintenance"`
	// Stale: the check's ttl ran out with no result since (docs/decisions.md D19); StaleTTL is that ttl.
	Stale    bool  `json:"stale,omitempty"`
	StaleTTL int64 `json:"stale_ttl,omitempty"`
}

// CheckList is a page of a listing: the most recently changed checks first, and how many
// checks matched in all (Total - len(Checks) more were left out).
type CheckList struct {
	Checks      []CheckRow `json:"checks"`
	Total       int64      `json:"total"`
	FailingOnly bool       `json:"failing_only"`
}

// candidate is a check selected for a listing, with the time it is ordered by.
type candidate struct {
	ref   model.CheckRef
	order int64
}

// ReadChecks lists the checks q selects at now, most recent state change first (ties: check id
// descending, Redis's order), at most q's limit of them, with the number that matched. Failing
// checks are ordered by their failed_checks score (when they last changed into a failing
// state), the others by check:ID last_change.
//
// Round trips: without filters the failing view costs four (count and page of failed_checks,
// then views.CheckStatuses and checkstate.ReadStaleness for the page); filters and the full listing read the candidates
// (one, or three for the full listing), a tag adds one, the full listing one per thousand
// candidates for their last change, and the rows take two or three per 500; never one per check.
func ReadChecks(conn redis.Conn, keys schema.Keys, q CheckQuery, now time.Time) (CheckList, error) {
	m, err := q.compile()
	if err != nil {
		return CheckList{}, err
	}
	limit := q.limit()
	list := CheckList{FailingOnly: q.FailingOnly, Checks: []CheckRow{}}
	var cands []candidate
	switch {
	case q.FailingOnly && !m.filters():
		failed, total, err := views.RecentFailedChecks(conn, keys, limit)
		if err != nil {
			return list, err
		}
		list.Total = total
		for _, f := range failed {
			cands = append(cands, candidate{f.CheckRef, f.Since})
		}
	default:
		if cands, err = readCandidates(conn, keys, q.FailingOnly, m); err != nil {
			return list, err
		}
		list.Total = int64(len(cands))
		if limit >= 0 && len(cands) > limit {
			cands = cands[:limit]
		}
	}
	if len(cands) == 0 {
		return list, nil
	}
	refs := make([]model.CheckRef, len(cands))
	for i, c := range cands {
		refs[i] = c.ref
	}
	// Each facts script reads a bounded number of checks, so a long listing never blocks Redis
	// for long.
	for start := 0; start < len(refs); start += statusChunk {
		chunk := refs[start:min(start+statusChunk, len(refs))]
		statuses, err := views.CheckStatuses(conn, keys, now, chunk)
		if err != nil {
			return list, err
		}
		stale, err := checkstate.ReadStaleness(conn, keys, now.Unix(), chunk)
		if err != nil {
			return list, err
		}
		for i, s := range statuses {
			since := s.LastChange
			if since == 0 {
				since = cands[start+i].order
			}
			row := CheckRow{Entity: s.Entity, Check: s.Check, State: s.State, Since: since,
				Summary: s.Summary, Acknowledged: s.InUnscheduledMaintenance(), InMaintenance: s.InScheduledMaintenance()}
			if stale[i].Stale {
				row.Stale, row.StaleTTL = true, stale[i].TTL
			}
			list.Checks = append(list.Checks, row)
		}
	}
	return list, nil
}

// readCandidates selects and orders every check a filtered or full listing matches.
func readCandidates(conn redis.Conn, keys schema.Keys, failingOnly bool, m matcher) ([]candidate, error) {
	failed, _, err := views.RecentFailedChecks(conn, keys, -1)
	if err != nil {
		return nil, err
	}
	var cands []candidate
	seen := map[string]bool{}
	for _, f := range failed {
		if m.names(f.CheckRef) {
			cands = append(cands, candidate{f.CheckRef, f.Since})
			seen[f.ID()] = true
		}
	}
	if !failingOnly {
		current, err := checkstate.AllCurrentChecks(conn, keys)
		if err != nil {
			return nil, err
		}
		for _, r := range current {
			if !seen[r.ID()] && m.names(r) {
				cands = append(cands, candidate{ref: r})
				seen[r.ID()] = true
			}
		}
	}
	if m.tag != "" {
		if cands, err = keepTagged(conn, keys, m.tag, cands); err != nil {
			return nil, err
		}
	}
	if !failingOnly {
		refs := make([]model.CheckRef, len(cands))
		for i, c := range cands {
			refs[i] = c.ref
		}
		changes, err := views.LastChanges(conn, keys, refs)
		if err != nil {
			return nil, err
		}
		for i := range cands {
			if changes[i] > 0 {
				cands[i].order = changes[i]
			}
		}
	}
	slices.SortFunc(cands, func(a, b candidate) int {
		if c := cmp.Compare(b.order, a.order); c != 0 {
			return c
		}
		return strings.Compare(b.ref.ID(), a.ref.ID())
	})
	return cands, nil
}

// keepTagged keeps the candidates whose entity carries tag or whose derived tags hold it.
func keepTagged(conn redis.Conn, keys schema.Keys, tag string, cands []candidate) ([]candidate, error) {
	var entities []string
	seen := map[string]bool{}
	for _, c := range cands {
		if !seen[c.ref.Entity] {
			seen[c.ref.Entity] = true
			entities = append(entities, c.ref.Entity)
		}
	}
	tagged, err := views.EntitiesTagged(conn, keys, tag, entities)
	if err != nil {
		return nil, err
	}
	kept := cands[:0]
	for _, c := range cands {
		if tagged[c.ref.Entity] || derivedTag(c.ref, tag) {
			kept = append(kept, c)
		}
	}
	return kept, nil
}

// WriteChecks prints a listing as a table for people: one line per check, its state with how
// long it has held ("critical for 12m"), [ack] when acknowledged, [maint] in scheduled
// maintenance, [stale] when its results stopped arriving (its ttl ran out), its summary, and
// "and N more" when the listing was cut.
func WriteChecks(w io.Writer, l CheckList, now time.Time) error {
	if len(l.Checks) == 0 && l.Total == 0 {
		what := "no checks"
		if l.FailingOnly {
			what = "no failing checks"
		}
		_, err := fmt.Fprintln(w, what)
		return err
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ENTITY\tCHECK\tSTATE\tSUMMARY")
	for _, r := range l.Checks {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", oneLine(r.Entity, 60), oneLine(r.Check, 60), stateText(r, now), oneLine(r.Summary, 100))
	}
	if more := l.Total - int64(len(l.Checks)); more > 0 {
		fmt.Fprintf(tw, "and %d more\n", more)
	}
	return tw.Flush()
}

func stateText(r CheckRow, now time.Time) string {
	var b strings.Builder
	switch {
	case r.State == "":
		b.WriteString("no state")
	case r.Since > 0:
		b.WriteString(r.State + " for " + Compact(now.Sub(time.Unix(r.Since, 0))))
	default:
		b.WriteString(r.State)
	}
	if r.Acknowledged {
		b.WriteString(" [ack]")
	}
	if r.InMaintenance {
		b.WriteString(" [maint]")
	}
	if r.Stale {
		b.WriteString(" [stale]")
	}
	return b.String()
}

// Compact renders a duration in at most two units for tables: "45s", "12m", "3h5m", "2d4h".
// Negative durations (clock skew) read as "0s".
func Compact(d time.Duration) string {
	s := int64(d / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", max(s, 0))
	case s < 3600:
		return fmt.Sprintf("%dm", s/60)
	case s < 86400:
		return twoUnits(s/3600, "h", s%3600/60, "m")
	}
	return twoUnits(s/86400, "d", s%86400/3600, "h")
}

func twoUnits(a int64, ua string, b int64, ub string) string {
	if b == 0 {
		return fmt.Sprintf("%d%s", a, ua)
	}
	return fmt.Sprintf("%d%s%d%s", a, ua, b, ub)
}

// oneLine makes text safe for one table cell: control characters and runs of white space become
// one space, and text longer than limit runes is cut with "…".
func oneLine(s string, limit int) string {
	var b strings.Builder
	space, n := false, 0
	for _, r := range strings.TrimSpace(s) {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			space = true
			continue
		}
		if space {
			b.WriteByte(' ')
			n++
			space = false
		}
		if n >= limit {
			return b.String() + "…"
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}
